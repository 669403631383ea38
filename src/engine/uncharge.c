/* uncharge.c: charges going back (uncharge.h): a group's counters, the
 * usage events every CHARGE_EVENTS_TARGET pages, the wake of those who
 * wait for room (the OOM wait queue, throttled reclaimers), and a removed
 * group's end once its last charge is gone (uncharge_reap), whoever drops
 * it: a page, a stock, a batch, a swap slot, a move, the mkdir charge of
 * a child; and the end of a reaped group's structures, two of the host
 * kernel's grace periods later, on a worker of its own. Never charges,
 * never reclaims. Lock order: tree_lock (the reap), then id_lock through
 * the last mcg_put; the throttle's lock alone; the frees' lock is never
 * held while uncharging. */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/oom_wait.h"
#include "engine/softlimit.h"
#include "engine/uncharge.h"

#define CHARGE_EVENTS_TARGET    128   /* THRESHOLDS_EVENTS_TARGET */

static __thread long charge_nevents;

int uncharge_init(struct mcg_engine *e)
{
	if (!(e->throttle = calloc(1, sizeof(*e->throttle))))
		return -ENOMEM;
	pthread_mutex_init(&e->throttle->lock, NULL);
	pthread_cond_init(&e->throttle->cond, NULL);
	if (!(e->frees = calloc(1, sizeof(*e->frees))))
		return -ENOMEM;
	pthread_mutex_init(&e->frees->lock, NULL);
	pthread_cond_init(&e->frees->wake, NULL);
	pthread_cond_init(&e->frees->idle, NULL);
	e->frees->tail = &e->frees->head;
	return 0;
}

/* g's structures go: its mkdir charge off its parent (which a dying
 * parent waited for), and the tree's reference. */
static void uncharge_free_structs(struct mcg_group *g)
{
	long n = g->mkdir_kmem;

	g->mkdir_kmem = 0;
	uncharge_kmem(g->parent, n);
	mcg_put(g);                      /* the tree's reference */
}

/* The kernel frees a removed memcg's structures (mem_cgroup_css_free)
 * once its css is released and an RCU grace period has passed after that
 * (css_release_work_fn queues the free with queue_rcu_work), and the
 * release itself follows the kill of its reference count, which waits
 * for another (percpu_ref_kill_and_confirm): two grace periods, shared,
 * as call_rcu's callbacks are, by every group reaped meanwhile. */
static void *uncharge_frees_main(void *arg)
{
	struct mcg_engine *e = arg;
	struct uncharge_frees *f = e->frees;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct mcg_group *batch;
		unsigned n = 0;

		while (!f->head && !f->stop)
			pthread_cond_wait(&f->wake, &f->lock);
		if (!f->head)
			break;
		batch = f->head;
		f->head = NULL;
		f->tail = &f->head;
		pthread_mutex_unlock(&f->lock);
		if (env_grace(&e->env) == 0)
			env_grace(&e->env);
		while (batch) {
			struct mcg_group *g = batch;

			batch = g->free_next;
			g->free_next = NULL;
			uncharge_free_structs(g);
			n++;
		}
		pthread_mutex_lock(&f->lock);
		f->pending -= n;
		if (!f->pending)
			pthread_cond_broadcast(&f->idle);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* g was reaped: its structures go two grace periods from now, or at once
 * (no workers, no grace periods to wait for, no worker to be had, or the
 * engine going). */
static void uncharge_free_later(struct mcg_group *g)
{
	struct mcg_engine *e = g->eng;
	struct uncharge_frees *f = e->frees;
	bool later = false;

	if (f && env_has_workers(&e->env) && e->env.ops->grace) {
		pthread_mutex_lock(&f->lock);
		if (!f->stop && !f->started)
			f->started = env_start_worker(&e->env, &f->thread, uncharge_frees_main, e) == 0;
		if ((later = f->started && !f->stop)) {
			*f->tail = g;
			f->tail = &g->free_next;
			f->pending++;
			pthread_cond_signal(&f->wake);
		}
		pthread_mutex_unlock(&f->lock);
	}
	if (!later)
		uncharge_free_structs(g);
}

void uncharge_frees_stop(struct mcg_engine *e)
{
	struct uncharge_frees *f = e->frees;
	bool started;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	started = f->started;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	if (started)
		pthread_join(f->thread, NULL);   /* (it frees what it has first) */
	f->started = false;
}

void uncharge_destroy(struct mcg_engine *e)
{
	if (e->frees) {                  /* (stopped first: mcg_engine_free) */
		pthread_mutex_destroy(&e->frees->lock);
		pthread_cond_destroy(&e->frees->wake);
		pthread_cond_destroy(&e->frees->idle);
		free(e->frees);
		e->frees = NULL;
	}
	if (!e->throttle)
		return;
	pthread_mutex_destroy(&e->throttle->lock);
	pthread_cond_destroy(&e->throttle->cond);
	free(e->throttle);
	e->throttle = NULL;
}

void uncharge_frees_wait(struct mcg_engine *e)
{
	struct uncharge_frees *f = e->frees;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	while (f->pending)
		pthread_cond_wait(&f->idle, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

/* n pages were charged to or uncharged from g (counters up to date): every
 * CHARGE_EVENTS_TARGET of them on this thread, thresholds are checked. */
void uncharge_events(struct mcg_group *g, long n)
{
	struct mcg_engine *e = g->eng;

	if (!e->own.ops->usage_event || (charge_nevents += n) < CHARGE_EVENTS_TARGET)
		return;
	charge_nevents = 0;
	e->own.ops->usage_event(g, e->own.arg);
}
void uncharge_throttle_wake(struct mcg_engine *e)
{
	struct charge_throttle *t = e->throttle;

	if (!t || atomic_load(&t->waiters) == 0)
		return;
	pthread_mutex_lock(&t->lock);
	t->gen++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void uncharge_counters(struct mcg_group *g, long n, bool keep_memsw)
{
	pc_uncharge(&g->cnt[MCG_MEM], n);
	if (!keep_memsw)
		pc_uncharge(&g->cnt[MCG_MEMSW], n);
}

__attribute__((noinline)) void uncharge_pages(struct mcg_group *g, long n, bool keep_memsw)
{
	/* the root is never charged, nor anything without accounting */
	if (mcg_root(g) || mcg_no_accounting(g->eng))
		return;
	uncharge_counters(g, n, keep_memsw);
	uncharge_events(g, n);
	oom_wake(g->eng);
	uncharge_throttle_wake(g->eng);
}

/* Anything that still needs g: charges, or pages and slots (which exist
 * without charges in the root and with accounting off). */
static bool uncharge_charged(const struct mcg_group *g)
{
	return pc_usage(&g->cnt[MCG_MEM]) || pc_usage(&g->cnt[MCG_MEMSW]) ||
	       stat_local(g, STAT_RSS) || stat_local(g, STAT_CACHE) || stat_local(g, STAT_SWAP);
}

void uncharge_reap(struct mcg_group *g)
{
	struct mcg_engine *e = g->eng;

	while (g && g->removed) {
		struct mcg_group *parent = g->parent;
		bool gone = false;

		pthread_rwlock_wrlock(&e->tree_lock);
		if (g->linked && !g->children && !uncharge_charged(g)) {
			/* Dekker with charge_new_page: we publish reaped, then
			 * look for charges again; a charger charges, then looks
			 * at reaped. At least one of the two sees the other. */
			atomic_store(&g->reaped, true);
			if (!uncharge_charged(g)) {
				rstat_forget(g);  /* its sums stay with its parent */
				mcg_unlink(g);
				soft_forget(g);   /* before the tree's reference goes */
				gone = true;
			} else {
				atomic_store(&g->reaped, false);
			}
		}
		pthread_rwlock_unlock(&e->tree_lock);
		if (!gone)
			return;
		if (g->mkdir_kmem) {
			/* its structures go (§11.5), later: the parent's
			 * charge with them, which reaps the parent if it
			 * waited for this (g still pins it) */
			uncharge_free_later(g);
			return;
		}
		mcg_put(g);               /* the tree's reference */
		g = parent;               /* a dying parent may have waited for it */
	}
}

/* The counters kernel memory is charged to. */
static const enum mcg_counter uncharge_kmem_cnt[] = { MCG_MEM, MCG_MEMSW, MCG_KMEM };

/* n pages of kernel memory at g's own level of the counters go to its
 * parent's level (the ancestors above hold them already; an unlinked
 * counter, use_hierarchy 0, gives them to the parent's chain). */
static void uncharge_kmem_up(struct mcg_group *g, long n)
{
	struct mcg_group *p = g->parent;

	for (size_t i = 0; i < sizeof(uncharge_kmem_cnt) / sizeof(uncharge_kmem_cnt[0]); i++) {
		enum mcg_counter c = uncharge_kmem_cnt[i];

		if (g->cnt[c].parent == &p->cnt[c]) {
			pc_uncharge_upto(&g->cnt[c], n, &p->cnt[c]);
		} else {
			pc_uncharge(&g->cnt[c], n);
			pc_charge(&p->cnt[c], n);
		}
	}
}

/* delta pages on g's own kernel memory, unless g has moved it: false
 * then (what moved, and what comes after, is an ancestor's) */
static bool uncharge_kmem_local(struct mcg_group *g, long delta)
{
	bool moved;

	spin_lock(&g->kmem_lock);
	if (!(moved = atomic_load(&g->kmem_moved)))
		atomic_fetch_add(&g->kmem_local, delta);
	spin_unlock(&g->kmem_lock);
	return !moved;
}

/* n pages of kernel memory, charged at g's level, become g's own: its
 * kmem_local, or, once g has moved its kernel memory, its parent's (and
 * so on up); the root keeps none (it is never charged): off its counters.
 * Returns the first group they left (NULL: none). */
static struct mcg_group *uncharge_kmem_adopt(struct mcg_group *g, long n)
{
	struct mcg_group *left = NULL;

	while (!mcg_root(g)) {
		if (uncharge_kmem_local(g, n))
			return left;
		uncharge_kmem_up(g, n);
		left = left ? left : g;
		g = g->parent;
	}
	for (size_t i = 0; i < sizeof(uncharge_kmem_cnt) / sizeof(uncharge_kmem_cnt[0]); i++)
		pc_uncharge(&g->cnt[uncharge_kmem_cnt[i]], n);
	return left;
}

void uncharge_kmem_charged(struct mcg_group *g, long n)
{
	/* a charge that raced g's removal: g's reap (which saw it) is
	 * looked at again now that it went up */
	struct mcg_group *left = uncharge_kmem_adopt(g, n);

	if (left && atomic_load(&left->removed))
		uncharge_reap(left);
}

struct mcg_group *uncharge_kmem_owner(struct mcg_group *g)
{
	while (!mcg_root(g) && atomic_load(&g->kmem_moved))
		g = g->parent;
	return g;
}

void uncharge_kmem_reparent(struct mcg_group *g)
{
	long n;

	if (mcg_root(g) || !prof_has(&g->eng->m.prof, PF_KMEM_REPARENT))
		return;
	spin_lock(&g->kmem_lock);
	atomic_store(&g->kmem_moved, true);
	n = atomic_exchange(&g->kmem_local, 0);
	spin_unlock(&g->kmem_lock);
	if (n <= 0)
		return;
	uncharge_kmem_up(g, n);
	(void)uncharge_kmem_adopt(g->parent, n);
}

void uncharge_kmem(struct mcg_group *g, long n)
{
	struct mcg_group *was = g;

	if (mcg_root(g) || mcg_no_accounting(g->eng) || n <= 0)
		return;
	/* (the group that holds it now: g, or the ancestor it moved to;
	 * the root keeps none) */
	while (!uncharge_kmem_local(g, -n) && !mcg_root(g = g->parent))
		;
	if (!mcg_root(g)) {
		pc_uncharge(&g->cnt[MCG_KMEM], n);
		uncharge_pages(g, n, false);
		if (atomic_load(&g->removed))
			uncharge_reap(g);
	}
	/* a removed group whose child's structures this was (uncharge.c's
	 * free) may go now, though its kernel memory moved */
	if (was != g && atomic_load(&was->removed))
		uncharge_reap(was);
}

