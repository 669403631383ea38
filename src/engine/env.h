/* env.h: the engine's environment: its one clock, its waits and its worker
 * threads. Every place in the engine that reads time, waits for time to
 * pass or starts a thread goes through the struct mcg_env given to
 * mcg_engine_new, as SQLite's VFS carries a database's clock and sleep:
 * one ops table, one argument. The real environment (env_real) is the
 * machine's monotonic clock, nanosleep and pthreads; a replay passes
 * simulated time and no workers. Timed waits on a condition go through
 * env_cond_init and env_cond_wait_until. Owns no state of its own; never
 * does I/O. */
#ifndef MEMCGFS_ENGINE_ENV_H
#define MEMCGFS_ENGINE_ENV_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct mcg_group;

/* Each op gets the environment's one argument last, as the owner's hooks
 * do (engine.h). */
struct mcg_env_ops {
	/* The engine's clock: ns, never going back. With workers it must be
	 * CLOCK_MONOTONIC's (their timed waits are on that clock). */
	uint64_t (*now)(void *arg);
	/* Let ns of that clock pass (a writeback wait): the real environment
	 * sleeps; a simulated one advances or accounts its time. */
	void (*sleep)(uint64_t ns, void *arg);
	/* Start fn(fn_arg) on a thread of its own: 0 or -errno. NULL: the
	 * engine has no workers and a single thread charges it, so nothing
	 * could wake a waiting charge: background reclaim runs only in
	 * bgr_step, an oom_kill_disable OOM fails the charge, and direct
	 * reclaim is not throttled unless throttle_slot is given. */
	int (*start_worker)(pthread_t *t, void *(*fn)(void *), void *fn_arg, void *arg);
	/* Throttled direct reclaim asks for one of over's reclaim slots;
	 * false makes the charge fail with -EBUSY (the caller retries when
	 * its clock says a slot is free). NULL: the engine throttles by
	 * waiting, when it has workers (a real machine). */
	bool (*throttle_slot)(struct mcg_group *over, void *arg);
	/* A full memory barrier on every thread of the process before it
	 * returns (membarrier): the far side of the hierarchical statistics'
	 * lock-free marks (rstat.h). 0, or -errno when it cannot, and then
	 * every update fences instead. NULL: one thread charges; nothing to
	 * order. */
	int (*sync_threads)(void *arg);
	/* Wait for one grace period of the host kernel's RCU (membarrier's
	 * MEMBARRIER_CMD_GLOBAL waits for one): a removed group's structures
	 * are freed two of them after its last charge goes, as the kernel
	 * frees a removed memcg's (uncharge.c). 0, or -errno when it cannot
	 * (then they are freed at once). NULL: at once. */
	int (*grace)(void *arg);
};

struct mcg_env {
	const struct mcg_env_ops *ops;
	void *arg;
};

/* The machine's: CLOCK_MONOTONIC, nanosleep, pthread_create. */
extern const struct mcg_env env_real;

/* ns on the environment's clock */
static inline uint64_t env_now(const struct mcg_env *env)
{
	return env->ops->now(env->arg);
}

static inline void env_sleep(const struct mcg_env *env, uint64_t ns)
{
	env->ops->sleep(ns, env->arg);
}

/* Several threads may charge, and a waiting one can be woken. */
static inline bool env_has_workers(const struct mcg_env *env)
{
	return env->ops->start_worker != NULL;
}

/* A condition a worker may wait on with a deadline of the environment's
 * clock (env_cond_wait_until): on CLOCK_MONOTONIC, as that clock is. */
static inline void env_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

/* Waits on C (made by env_cond_init), M held, until woken or the
 * environment's clock reaches DEADLINE (ns). */
static inline void env_cond_wait_until(const struct mcg_env *env, pthread_cond_t *c,
				       pthread_mutex_t *m, uint64_t deadline)
{
	struct timespec ts = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };

	(void)env;  /* (workers imply the machine's clock: env_real's) */
	pthread_cond_timedwait(c, m, &ts);
}

/* One grace period of the host's RCU passed: 0, or -errno (none waited). */
static inline int env_grace(const struct mcg_env *env)
{
	return env->ops->grace ? env->ops->grace(env->arg) : -ENOSYS;
}

static inline int env_start_worker(const struct mcg_env *env, pthread_t *t, void *(*fn)(void *),
				   void *fn_arg)
{
	return env->ops->start_worker ? env->ops->start_worker(t, fn, fn_arg, env->arg) : -ENOSYS;
}

#endif
