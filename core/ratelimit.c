// SPDX-License-Identifier: BSD-2-Clause
#include "ratelimit.h"

void ibw_ratelimit_init(struct ibw_ratelimit *rl, unsigned n,
			uint64_t period_us, unsigned burst, uint64_t now_us)
{
	rl->tokens = burst;
	rl->burst = burst;
	rl->n = n;
	rl->period_us = (double)period_us;
	rl->last_us = now_us;
}

int ibw_ratelimit_take(struct ibw_ratelimit *rl, uint64_t now_us)
{
	if (now_us > rl->last_us && rl->period_us > 0) {
		rl->tokens +=
			(double)(now_us - rl->last_us) * rl->n / rl->period_us;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
	}
	if (now_us > rl->last_us)
		rl->last_us = now_us;
	if (rl->tokens < 1.0)
		return 0;
	rl->tokens -= 1.0;
	return 1;
}
