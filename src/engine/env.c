/* env.c: the real environment (env.h): the machine's monotonic clock,
 * nanosleep and pthreads. Owns nothing; never does I/O. */
#include <errno.h>
#include <time.h>

#include "engine/env.h"

static uint64_t env_real_now(void *arg)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void env_real_sleep(uint64_t ns, void *arg)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int env_real_start_worker(pthread_t *t, void *(*fn)(void *), void *fn_arg, void *arg)
{
	return -pthread_create(t, NULL, fn, fn_arg);
}

static const struct mcg_env_ops env_real_ops = {
	.now = env_real_now,
	.sleep = env_real_sleep,
	.start_worker = env_real_start_worker,
};

const struct mcg_env env_real = { &env_real_ops, NULL };
