// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test-only preload, loaded after libumad2sim.so.
 *
 * umad2sim's receive thread locks the mutex of whichever agent is
 * registered for an incoming MAD's class; for a class nobody registered
 * that is a NULL-based pointer, and the process dies. Returning EINVAL
 * for such addresses makes the thread drop the MAD instead. Real mutexes
 * are never below the first page.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

typedef int (*mutex_fn)(pthread_mutex_t *);

static mutex_fn real_lock, real_unlock;

static int bogus(const void *p)
{
	return (uintptr_t)p < 4096;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (bogus(m))
		return EINVAL;
	if (!real_lock)
		real_lock = (mutex_fn)dlsym(RTLD_NEXT, "pthread_mutex_lock");
	return real_lock(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (bogus(m))
		return EINVAL;
	if (!real_unlock)
		real_unlock = (mutex_fn)dlsym(RTLD_NEXT, "pthread_mutex_"
							 "unlock");
	return real_unlock(m);
}
