/* reclaim.c: page reclaim from a group's subtree. Priorities from 12 down to
 * 0 scan (list size >> priority) pages; active lists are aged into the
 * inactive ones, inactive pages get a second chance when referenced, and the
 * anon/file split follows the swappiness of the group reclaimed from. Pages
 * are isolated under the lruvec lock and decided with no lock held, so an
 * owner may free a page concurrently (it is then finished here). Never
 * charges and never sleeps on a device. */
#include <stdlib.h>

#include "engine/charge.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/memcg.h"
#include "engine/page_state.h"
#include "engine/reclaim.h"
#include "engine/softlimit.h"
#include "engine/swap.h"
#include "engine/writeback.h"

#define RECLAIM_PRIO_DEF 12
#define RECLAIM_CLUSTER  32     /* SWAP_CLUSTER_MAX: pages isolated at a time */

struct reclaim_ctl {
	struct mcg_engine *e;
	long want;
	long reclaimed;
	long scanned;
	bool may_swap;
	unsigned swappiness;
	enum reclaim_ctx ctx;       /* the index of the pg_scanned counts */
};

/* Move up to nr pages from the tail of the active list to the inactive
 * list, clearing their referenced bit (they must earn it again). */
static void reclaim_age_active(struct reclaim_ctl *rc, struct mcg_group *g, unsigned node,
			       enum stat_lru active, long nr)
{
	struct lru_vec *v = &g->lruvec[node];
	struct page *pg = rc->e->pages.pages;

	spin_lock(&v->lock);
	while (nr-- > 0 && v->list[active].tail != PAGE_NONE) {
		uint32_t idx = v->list[active].tail;

		lru_unlink(rc->e, g, idx);
		pg[idx].flags &= (uint8_t)~(PG_ACTIVE | PG_REFERENCED);
		lru_link(rc->e, g, idx);
	}
	spin_unlock(&v->lock);
}

/* Put an isolated page back (or finish it if its owner freed it). */
static void reclaim_putback(struct reclaim_ctl *rc, struct mcg_group *g, uint32_t idx,
			    uint8_t set, uint8_t clear)
{
	struct page *p = &rc->e->pages.pages[idx];
	struct lru_vec *v = lru_vec_of(rc->e, g, idx);
	bool doomed;

	spin_lock(&v->lock);
	doomed = p->kind & PS_DOOMED;
	p->kind &= (uint8_t)~(PS_ISOLATED | PS_DOOMED);
	if (!doomed) {
		p->flags = (uint8_t)((p->flags | set) & ~clear);
		lru_link(rc->e, g, idx);
	}
	spin_unlock(&v->lock);
	if (doomed)
		charge_release_page(rc->e, g, idx, false);
}

/* Decide one isolated inactive page. Returns true when it was reclaimed. */
static bool reclaim_page(struct reclaim_ctl *rc, struct mcg_group *g, uint32_t idx, bool anon)
{
	struct mcg_engine *e = rc->e;
	struct page *p = &e->pages.pages[idx];
	struct lru_vec *v = lru_vec_of(e, g, idx);
	uint32_t slot = SWAP_NONE;
	uint8_t flags;
	bool doomed, reused = false;

	/* accesses may still set bits of an isolated page: read them locked */
	spin_lock(&v->lock);
	flags = p->flags;
	spin_unlock(&v->lock);
	if (flags & PG_REFERENCED) {
		/* second chance: used since it was last looked at */
		reclaim_putback(rc, g, idx, PG_ACTIVE, PG_REFERENCED);
		return false;
	}
	if (!anon && (flags & PG_WRITEBACK) && rc->ctx == RECLAIM_DIRECT) {
		/* memcg reclaim waits for a page it marked (legacy memcg has
		 * no dirty throttling); it comes back clean */
		wb_wait(e, idx);
		spin_lock(&v->lock);
		flags = p->flags;
		spin_unlock(&v->lock);
	}
	if (!anon && (flags & PG_WRITEBACK)) {
		reclaim_putback(rc, g, idx, PG_RECLAIM, 0);
		return false;
	}
	if (!anon && (flags & PG_DIRTY)) {
		/* Reclaim does not write pages: it hands them to the writeback
		 * device and finds them again, clean, after it is done. */
		pgstate_flags(e, idx, PG_WRITEBACK | PG_RECLAIM, PG_DIRTY);
		wb_submit(e, idx);
		reclaim_putback(rc, g, idx, 0, 0);
		return false;
	}
	if (anon) {
		/* a page whose copy in swap is still good goes back to its
		 * slot without a write (the swap cache) */
		if (rc->may_swap && pgstate_swapcache(e, idx, false) &&
		    (slot = swap_cache_reuse(g, idx)) != SWAP_NONE)
			reused = true;
		else if (!rc->may_swap || (slot = swap_out(g)) == SWAP_NONE) {
			reclaim_putback(rc, g, idx, PG_ACTIVE, 0);
			return false;
		}
	}
	if (!e->evict(p->owner, idx, slot, e->evict_arg)) {
		if (slot != SWAP_NONE)
			reused ? swap_cache_unreuse(e, slot) : swap_cancel(e, slot);
		reclaim_putback(rc, g, idx, PG_ACTIVE, 0);
		return false;
	}
	spin_lock(&v->lock);
	doomed = p->kind & PS_DOOMED;
	p->kind &= (uint8_t)~(PS_ISOLATED | PS_DOOMED);
	spin_unlock(&v->lock);
	if (doomed && slot != SWAP_NONE) {
		/* freed by its owner meanwhile: nothing left to keep in swap */
		reused ? swap_cache_unreuse(e, slot) : swap_cancel(e, slot);
		slot = SWAP_NONE;
	}
	charge_release_page(e, g, idx, slot != SWAP_NONE);
	return true;
}

static void reclaim_inactive(struct reclaim_ctl *rc, struct mcg_group *g, unsigned node,
			     enum stat_lru inactive, long nr)
{
	struct lru_vec *v = &g->lruvec[node];
	struct page *pg = rc->e->pages.pages;
	bool anon = inactive == LRU_INACTIVE_ANON;

	while (nr > 0 && rc->reclaimed < rc->want) {
		uint32_t batch[RECLAIM_CLUSTER];
		int n = 0;

		/* isolate no more than is still wanted, so reclaim stops on target */
		long room = rc->want - rc->reclaimed;

		spin_lock(&v->lock);
		while (n < RECLAIM_CLUSTER && n < nr && n < room &&
		       v->list[inactive].tail != PAGE_NONE) {
			uint32_t idx = v->list[inactive].tail;

			lru_unlink(rc->e, g, idx);
			pg[idx].kind |= PS_ISOLATED;
			batch[n++] = idx;
		}
		spin_unlock(&v->lock);
		if (n == 0)
			break;
		nr -= n;
		rc->scanned += n;
		atomic_fetch_add(&g->pg_scanned[rc->ctx], n);
		for (int i = 0; i < n; i++)
			if (reclaim_page(rc, g, batch[i], anon)) {
				rc->reclaimed++;
				atomic_fetch_add(&g->pg_reclaimed[rc->ctx], 1);
			}
	}
}

static void reclaim_lruvec(struct reclaim_ctl *rc, struct mcg_group *g, unsigned node, int prio)
{
	long ia = stat_lru_local(g, LRU_INACTIVE_ANON, (int)node);
	long aa = stat_lru_local(g, LRU_ACTIVE_ANON, (int)node);
	long ifl = stat_lru_local(g, LRU_INACTIVE_FILE, (int)node);
	long af = stat_lru_local(g, LRU_ACTIVE_FILE, (int)node);
	bool swap = rc->may_swap && rc->swappiness > 0 && swap_nr_free(rc->e) > 0;
	/* swappiness 100 scans both types alike; 0 no anon; 200 no file */
	long anon_scan = swap ? ((ia + aa) >> prio) * rc->swappiness / 100 : 0;
	long file_scan = ((ifl + af) >> prio) * (200 - (swap ? rc->swappiness : 0)) / 100;

	if (prio == 0) {        /* the last pass looks at everything it may */
		anon_scan = swap ? ia + aa : 0;
		file_scan = ifl + af;
	}
	/* keep the inactive lists at least as long as the active ones, aging
	 * (active size >> priority) pages a pass */
	if (file_scan && af > ifl)
		reclaim_age_active(rc, g, node, LRU_ACTIVE_FILE, prio ? af >> prio : af);
	if (anon_scan && aa > ia)
		reclaim_age_active(rc, g, node, LRU_ACTIVE_ANON, prio ? aa >> prio : aa);
	if (file_scan)
		reclaim_inactive(rc, g, node, LRU_INACTIVE_FILE, file_scan);
	if (anon_scan && rc->reclaimed < rc->want)
		reclaim_inactive(rc, g, node, LRU_INACTIVE_ANON, anon_scan);
}

bool reclaim_isolated_page(struct mcg_group *g, uint32_t idx)
{
	struct reclaim_ctl rc = { .e = g->eng, .want = 1, .ctx = RECLAIM_DIRECT };

	return reclaim_page(&rc, g, idx, false);
}

long reclaim_subtree(struct mcg_group *top, long nr, bool may_swap, enum reclaim_ctx ctx)
{
	struct reclaim_ctl rc = {
		.e = top->eng, .want = nr, .may_swap = may_swap,
		.swappiness = mcg_swappiness(top), .ctx = ctx,
	};
	int prio;

	wb_complete(rc.e);
	if (nr <= 0)
		return 0;
	/* Limit reclaim with swappiness 0 may still not swap (§3.13). */
	for (prio = RECLAIM_PRIO_DEF; prio >= 0 && rc.reclaimed < nr; prio--) {
		struct mcg_group *g = NULL;

		while (rc.reclaimed < nr && (g = mcg_iter(top, g)))
			for (unsigned n = 0; n < rc.e->pages.nr_nodes && rc.reclaimed < nr; n++)
				reclaim_lruvec(&rc, g, n, prio);
		if (g)
			mcg_put(g);       /* stopped early: the walk's last */
	}
	/* vmpressure: what this reclaim aimed at top found, and how deep it
	 * had to go (the last priority it scanned at) */
	if (rc.scanned && rc.e->own.ops->pressure_event)
		rc.e->own.ops->pressure_event(top, rc.scanned, rc.reclaimed, prio < 0 ? 0 : prio + 1,
					      rc.e->own.arg);
	return rc.reclaimed;
}

long reclaim_soft_limits(struct mcg_engine *e, long nr)
{
	long total = 0;
	int fruitless = 0;

	for (int loops = 0; loops < 100 && fruitless < 2 && total == 0; loops++) {
		long excess, want, got;
		/* the largest excess, from the soft-limit order */
		struct mcg_group *g = soft_pick(e, &excess);

		if (!g)
			break;
		/* until the excess is gone, or a quarter of it came back */
		want = excess / 4 > nr ? excess / 4 : nr;
		if (want > excess)
			want = excess;
		got = reclaim_subtree(g, want, true, RECLAIM_DIRECT);
		total += got;
		fruitless += got == 0;
		mcg_put(g);
	}
	return total;
}
