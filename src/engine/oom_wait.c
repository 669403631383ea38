/* oom_wait.c: the OOM wait queue (oom_wait.h). A charge under
 * oom_kill_disable sleeps on one condition per engine until a wake bumps
 * its generation; a wait with a cancel test also wakes every
 * OOM_CANCEL_MS on the environment's clock to ask it. Lock order: the
 * queue's lock alone; nothing is called under it but the cancel test.
 * Never kills, charges or reclaims. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/oom_wait.h"

struct oom_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_int waiters;
	unsigned long wakeups;        /* generation: bumped by every wake */
};

int oom_init(struct mcg_engine *e)
{
	struct oom_state *os = calloc(1, sizeof(*os));

	if (!os)
		return -ENOMEM;
	pthread_mutex_init(&os->lock, NULL);
	env_cond_init(&os->cond);
	e->oom = os;
	return 0;
}

void oom_destroy(struct mcg_engine *e)
{
	if (!e->oom)
		return;
	pthread_mutex_destroy(&e->oom->lock);
	pthread_cond_destroy(&e->oom->cond);
	free(e->oom);
	e->oom = NULL;
}

void oom_wake(struct mcg_engine *e)
{
	struct oom_state *os = e->oom;

	if (!os || atomic_load(&os->waiters) == 0)
		return;
	pthread_mutex_lock(&os->lock);
	os->wakeups++;
	pthread_cond_broadcast(&os->cond);
	pthread_mutex_unlock(&os->lock);
}

/* The wait of a thread with a cancel test wakes every OOM_CANCEL_MS to
 * ask it: nothing else would wake a task whose owner died. */
#define OOM_CANCEL_MS 50

static void oom_cond_wait(struct mcg_engine *e, struct oom_state *os, const struct charge_mode *mode)
{
	if (!mode || !mode->cancelled) {
		pthread_cond_wait(&os->cond, &os->lock);
		return;
	}
	env_cond_wait_until(&e->env, &os->cond, &os->lock,
			    env_now(&e->env) + OOM_CANCEL_MS * 1000000ull);
}

bool oom_wait_room(struct mcg_group *over, const struct charge_mode *mode)
{
	struct oom_state *os = over->eng->oom;
	unsigned long gen;
	bool cancelled = false;

	pthread_mutex_lock(&os->lock);
	atomic_fetch_add(&os->waiters, 1);
	gen = os->wakeups;
	/* re-check under the lock: a limit raised or the killer enabled
	 * before we slept must not be missed */
	while (gen == os->wakeups && atomic_load(&over->oom_kill_disable) &&
	       pc_usage(&over->cnt[MCG_MEM]) >= pc_max(&over->cnt[MCG_MEM]) &&
	       !(cancelled = mode && mode->cancelled && mode->cancelled(mode->cancel_arg)))
		oom_cond_wait(over->eng, os, mode);
	atomic_fetch_sub(&os->waiters, 1);
	pthread_mutex_unlock(&os->lock);
	return !cancelled;
}
