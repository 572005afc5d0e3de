// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AgentX subagent's published status: one record under a mutex.
 */
#include <pthread.h>

#include "agentx_status.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibw_agentx_status published;

const char *ibw_agentx_state_str(enum ibw_agentx_state s)
{
	switch (s) {
	case IBW_AGENTX_DISABLED:
		return "disabled";
	case IBW_AGENTX_CONNECTING:
		return "connecting";
	case IBW_AGENTX_CONNECTED:
		return "connected";
	case IBW_AGENTX_WAITING:
		return "waiting";
	}
	return "unknown";
}

void ibw_agentx_status_publish(const struct ibw_agentx_status *st)
{
	pthread_mutex_lock(&lock);
	published = *st;
	pthread_mutex_unlock(&lock);
}

void ibw_agentx_status_get(struct ibw_agentx_status *st)
{
	pthread_mutex_lock(&lock);
	*st = published;
	pthread_mutex_unlock(&lock);
}
