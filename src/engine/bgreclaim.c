/* bgreclaim.c: background reclaim. A pool of workers (not one thread per
 * group: idle groups cost nothing) takes queued groups and reclaims their
 * subtrees from above the high watermark down to the low one. A pass that
 * frees nothing (anon without swap, say) puts the group on a delayed list
 * with a doubling back-off (10 ms .. 1 s): no thread spins. rmdir'ed
 * groups are dropped from the queue. Background reclaim moves neither
 * failcnt nor allocstall. Lock order: bgr lock alone; reclaim runs without
 * it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "engine/bgreclaim.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/reclaim.h"

#define BGR_BATCH       32
#define BGR_DELAY_MIN   10000000ull      /* 10 ms */
#define BGR_DELAY_MAX   1000000000ull    /* 1 s */
#define BGR_WORKERS_MAX 4

struct bgr_item {
	struct mcg_group *g;          /* referenced */
	uint64_t due;                 /* 0: now */
	uint64_t delay;
	bool started;                 /* manual mode: a run is under way */
	struct bgr_item *next;
};

struct bgr_pool {
	const struct mcg_env *env;    /* the engine's: clock and workers */
	pthread_mutex_t lock;
	pthread_cond_t cond;          /* work, or a stop */
	pthread_cond_t idle;          /* nothing queued or running */
	struct bgr_item *queue;       /* due now, FIFO order by insertion */
	struct bgr_item *delayed;
	int running;
	bool stop;
	int want;                     /* workers to start, at the first enqueue */
	int nthreads;                 /* started (after any daemonizing fork) */
	pthread_t thread[BGR_WORKERS_MAX];
};

static void *bgr_main(void *arg);


long bgr_wmark(struct mcg_group *g, enum bgr_mark m)
{
	long limit = pc_max(&g->cnt[MCG_MEM]);
	long eh = atomic_load(&g->wmark[BGR_HIGH]), el = atomic_load(&g->wmark[BGR_LOW]);
	long ah, al;

	if (mcg_root(g))
		return PC_MAX;
	/* automatic: limit - limit/64 and limit - limit/16, in whole pages */
	ah = limit == PC_MAX ? PC_MAX : limit * 63 / 64;
	al = limit == PC_MAX ? PC_MAX : limit * 15 / 16;
	if (m == BGR_HIGH)
		return eh >= 0 ? eh : (el >= 0 && el > ah ? el : ah);
	return el >= 0 ? el : (eh >= 0 && eh < al ? eh : al);
}

long bgr_wmark_explicit(struct mcg_group *g, enum bgr_mark m)
{
	return atomic_load(&g->wmark[m]);
}

int bgr_set_wmark(struct mcg_group *g, enum bgr_mark m, long pages, bool automatic)
{
	long limit, other;
	int err = 0;

	if (mcg_root(g))
		return -EINVAL;
	pthread_mutex_lock(&g->lock);
	limit = pc_max(&g->cnt[MCG_MEM]);
	other = atomic_load(&g->wmark[m == BGR_HIGH ? BGR_LOW : BGR_HIGH]);
	if (automatic)
		atomic_store(&g->wmark[m], -1);
	else if (pages > limit)
		err = -EINVAL;
	else if (other >= 0 && (m == BGR_HIGH ? other > pages : pages > other))
		err = -EINVAL;        /* conflicts with the other explicit value */
	else
		atomic_store(&g->wmark[m], pages);
	pthread_mutex_unlock(&g->lock);
	if (!err)
		bgr_check(g);         /* a lower mark may start reclaim at once */
	return err;
}

void bgr_limit_changed(struct mcg_group *g, long limit)
{
	long eh = atomic_load(&g->wmark[BGR_HIGH]), el = atomic_load(&g->wmark[BGR_LOW]);

	/* the administrator's limit wins: clamp, keeping low <= high */
	if (eh > limit)
		atomic_store(&g->wmark[BGR_HIGH], eh = limit);
	if (el > limit)
		atomic_store(&g->wmark[BGR_LOW], el = limit);
	if (eh >= 0 && el > eh)
		atomic_store(&g->wmark[BGR_LOW], eh);
}

/* Caller holds p->lock. */
static void bgr_enqueue(struct bgr_pool *p, struct bgr_item *it)
{
	/* Workers start with the first work, so that a daemon which forks
	 * into the background after building its engine still has them. */
	while (p->nthreads < p->want &&
	       env_start_worker(p->env, &p->thread[p->nthreads], bgr_main, p) == 0)
		p->nthreads++;
	struct bgr_item **pp = it->due ? &p->delayed : &p->queue;

	while (*pp && (!it->due || (*pp)->due <= it->due))
		pp = &(*pp)->next;
	it->next = *pp;
	*pp = it;
	pthread_cond_signal(&p->cond);
}

void bgr_check(struct mcg_group *g)
{
	struct bgr_pool *p = g->eng->bgr;

	if (!p)
		return;
	for (; g && !mcg_root(g); g = g->parent) {
		struct bgr_item *it;

		if (pc_usage(&g->cnt[MCG_MEM]) <= bgr_wmark(g, BGR_HIGH) ||
		    atomic_exchange(&g->bgr_queued, true))
			continue;
		if (!(it = calloc(1, sizeof(*it)))) {
			atomic_store(&g->bgr_queued, false);
			continue;
		}
		mcg_get(g);
		it->g = g;
		it->delay = BGR_DELAY_MIN;
		pthread_mutex_lock(&p->lock);
		bgr_enqueue(p, it);
		pthread_mutex_unlock(&p->lock);
	}
}

/* One run: reclaim g's subtree down to its low watermark. false when a
 * pass freed nothing and usage is still above low. */
static bool bgr_run(struct mcg_group *g)
{
	atomic_fetch_add(&g->bgr_runs, 1);
	for (;;) {
		long over = pc_usage(&g->cnt[MCG_MEM]) - bgr_wmark(g, BGR_LOW);

		if (over <= 0 || atomic_load(&g->removed))
			return true;
		if (reclaim_subtree(g, over < BGR_BATCH ? over : BGR_BATCH, true, RECLAIM_BACKGROUND) == 0)
			return false;
	}
}

/* Delayed items whose time came join the queue. Caller holds p->lock. */
static void bgr_promote(struct bgr_pool *p, uint64_t now)
{
	while (p->delayed && p->delayed->due <= now) {
		struct bgr_item *it = p->delayed;

		p->delayed = it->next;
		it->due = 0;
		bgr_enqueue(p, it);
	}
}

/* A pass made no progress: due again after the item's delay, which
 * doubles up to BGR_DELAY_MAX. */
static void bgr_backoff(struct bgr_item *it, uint64_t now)
{
	it->due = now + it->delay;
	it->delay = it->delay * 2 > BGR_DELAY_MAX ? BGR_DELAY_MAX : it->delay * 2;
}

/* The group's work is done (or the pool goes): it may be queued again. */
static void bgr_item_done(struct bgr_item *it)
{
	atomic_store(&it->g->bgr_queued, false);
	mcg_put(it->g);
	free(it);
}

static void *bgr_main(void *arg)
{
	struct bgr_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct bgr_item *it;
		uint64_t now = env_now(p->env);

		bgr_promote(p, now);
		if (p->stop)
			break;
		if (!p->queue) {
			/* idle: nothing queued or running (delayed work waits) */
			if (!p->running)
				pthread_cond_broadcast(&p->idle);
			if (p->delayed) {
				env_cond_wait_until(p->env, &p->cond, &p->lock, p->delayed->due);
			} else {
				pthread_cond_wait(&p->cond, &p->lock);
			}
			continue;
		}
		it = p->queue;
		p->queue = it->next;
		p->running++;
		pthread_mutex_unlock(&p->lock);
		if (!atomic_load(&it->g->removed) && !bgr_run(it->g)) {
			/* no progress: back off, growing, and try again later */
			bgr_backoff(it, env_now(p->env));
			pthread_mutex_lock(&p->lock);
			p->running--;
			bgr_enqueue(p, it);
			continue;
		}
		bgr_item_done(it);
		pthread_mutex_lock(&p->lock);
		p->running--;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int bgr_init(struct mcg_engine *e)
{
	struct bgr_pool *p;

	if (!e->m.watermarks)
		return 0;
	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->env = &e->env;
	pthread_mutex_init(&p->lock, NULL);
	env_cond_init(&p->cond);
	pthread_cond_init(&p->idle, NULL);
	p->want = e->m.cpus / 4 + 1 > BGR_WORKERS_MAX ? BGR_WORKERS_MAX : (int)e->m.cpus / 4 + 1;
	if (!env_has_workers(&e->env))
		p->want = 0;          /* bgr_step does the work, in simulated time */
	e->bgr = p;
	return 0;
}

static void bgr_free_list(struct bgr_item *it)
{
	while (it) {
		struct bgr_item *n = it->next;

		bgr_item_done(it);
		it = n;
	}
}

void bgr_destroy(struct mcg_engine *e)
{
	struct bgr_pool *p = e->bgr;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nthreads; i++)
		pthread_join(p->thread[i], NULL);
	bgr_free_list(p->queue);
	bgr_free_list(p->delayed);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->idle);
	free(p);
	e->bgr = NULL;
}

void bgr_quiesce(struct mcg_engine *e)
{
	struct bgr_pool *p = e->bgr;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	while (p->queue || p->running)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

/* Unlink it from the queue. Caller holds p->lock. */
static void bgr_unqueue(struct bgr_pool *p, struct bgr_item *it)
{
	for (struct bgr_item **pp = &p->queue; *pp; pp = &(*pp)->next)
		if (*pp == it) {
			*pp = it->next;
			return;
		}
}

int bgr_step(struct mcg_engine *e, uint64_t *next_due)
{
	struct bgr_pool *p = e->bgr;
	uint64_t now = env_now(&e->env);
	struct bgr_item *it;
	long over, got;
	struct mcg_group *g;

	*next_due = UINT64_MAX;
	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	bgr_promote(p, now);
	if (!(it = p->queue)) {
		if (p->delayed)
			*next_due = p->delayed->due;
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	pthread_mutex_unlock(&p->lock);
	g = it->g;
	over = pc_usage(&g->cnt[MCG_MEM]) - bgr_wmark(g, BGR_LOW);
	if (over > 0 && !atomic_load(&g->removed)) {
		if (!it->started) {
			it->started = true;
			atomic_fetch_add(&g->bgr_runs, 1);
		}
		got = reclaim_subtree(g, over < BGR_BATCH ? over : BGR_BATCH, true, RECLAIM_BACKGROUND);
		if (got == 0) {
			/* no progress: back off in simulated time */
			pthread_mutex_lock(&p->lock);
			bgr_unqueue(p, it);
			it->started = false;
			bgr_backoff(it, now);
			bgr_enqueue(p, it);
			pthread_mutex_unlock(&p->lock);
			return 1;
		}
		if (pc_usage(&g->cnt[MCG_MEM]) > bgr_wmark(g, BGR_LOW))
			return 1;         /* more next step */
	}
	pthread_mutex_lock(&p->lock);
	bgr_unqueue(p, it);
	pthread_mutex_unlock(&p->lock);
	bgr_item_done(it);
	return 1;
}
