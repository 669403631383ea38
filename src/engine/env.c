/* env.c: the real environment (env.h): the machine's monotonic clock,
 * nanosleep, pthreads and membarrier. Owns nothing; never does I/O. */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

static int env_membarrier_ok = -ENOSYS;
static pthread_once_t env_membarrier_once = PTHREAD_ONCE_INIT;

static void env_membarrier_register(void)
{
	env_membarrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) ?
			    -errno : 0;
}

static int env_real_sync_threads(void *arg)
{
	pthread_once(&env_membarrier_once, env_membarrier_register);
	if (env_membarrier_ok)
		return env_membarrier_ok;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) ? -errno : 0;
}

/* MEMBARRIER_CMD_GLOBAL is synchronize_rcu() in the kernel (about 16 to
 * 24 ms on a HZ=250 machine, measured on these) */
static int env_real_grace(void *arg)
{
	(void)arg;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -errno : 0;
}

static const struct mcg_env_ops env_real_ops = {
	.now = env_real_now,
	.sleep = env_real_sleep,
	.start_worker = env_real_start_worker,
	.sync_threads = env_real_sync_threads,
	.grace = env_real_grace,
};

const struct mcg_env env_real = { &env_real_ops, NULL };
