/* uncharge.c: charges going back (uncharge.h): a group's counters, the
 * usage events every CHARGE_EVENTS_TARGET pages, the wake of those who
 * wait for room (the OOM wait queue, throttled reclaimers), and a removed
 * group's end once its last charge is gone (uncharge_reap), whoever drops
 * it: a page, a stock, a batch, a swap slot, a move, the mkdir charge of
 * a child. Never charges, never reclaims. Lock order: tree_lock (the
 * reap), then id_lock through the last mcg_put; the throttle's lock
 * alone. */
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
	return 0;
}

void uncharge_destroy(struct mcg_engine *e)
{
	if (!e->throttle)
		return;
	pthread_mutex_destroy(&e->throttle->lock);
	pthread_cond_destroy(&e->throttle->cond);
	free(e->throttle);
	e->throttle = NULL;
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
			/* its structures go (§11.5): the parent's charge with
			 * them, which reaps the parent if it waited for this
			 * (g still pins it) */
			long n = g->mkdir_kmem;

			g->mkdir_kmem = 0;
			uncharge_kmem(parent, n);
			mcg_put(g);       /* the tree's reference */
			return;
		}
		mcg_put(g);               /* the tree's reference */
		g = parent;               /* a dying parent may have waited for it */
	}
}

void uncharge_kmem(struct mcg_group *g, long n)
{
	if (mcg_root(g) || mcg_no_accounting(g->eng) || n <= 0)
		return;
	atomic_fetch_sub(&g->kmem_local, n);
	pc_uncharge(&g->cnt[MCG_KMEM], n);
	uncharge_pages(g, n, false);
	if (atomic_load(&g->removed))
		uncharge_reap(g);
}

