/* reclaim.c: page reclaim from a group's subtree. Priorities from 12 down to
 * 0 scan (list size >> priority) pages; active lists are aged into the
 * inactive ones, inactive pages get a second chance when referenced, and the
 * anon/file split follows the swappiness of the group reclaimed from (in
 * 2.6.24's era, one LRU: both types alike, interleaved). Each
 * call gives every node a share of its want proportional to the node's
 * share of the subtree's pages, every pass visits each node still short of
 * its share, and lists are scanned through the priority-shift accumulators
 * of seed topic 5 (seed 5.2, 5.3), so that pressure follows node sizes.
 * The machine's zones (zone.c) reclaim one node of every group at a time
 * (reclaim_zone), in 2.6.3's scan or through the accumulators. Pages
 * are isolated under the lruvec lock and decided with no lock held, so an
 * owner may free a page concurrently (it is then finished here). With
 * the machine's disk, anon pages go to swap through the swap cache and
 * the eras' waits apply (docs/design.md, "The block device"); in 3.2's
 * era direct reclaim leaves dirty file pages to the flusher, which it
 * wakes through the engine's fl_kick (it never calls the flusher). Never
 * charges; sleeps only through the environment's sleep: in the writeback
 * device's wait (wb_wait) for a page marked for reclaim under writeback,
 * as legacy memcg reclaim does, for a full request queue (wb_submit), and
 * in the congestion nap (reclaim_congestion_nap). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine/charge_core.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
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
	long stop;                  /* this lruvec is done when reclaimed reaches it */
	long reclaimed;
	/* proportional: each node's share of want (node_want) and what it
	 * gave (node_got), for the whole call; 0 nodes: the fixed walk */
	unsigned nodes;
	long node_want[PAGE_MAX_NODES], node_got[PAGE_MAX_NODES];
	long scanned;
	bool may_swap;
	bool global;                /* the machine's reclaim (from the root) */
	/* a zone's reclaim (reclaim_zone): the accumulators off, and each
	 * lruvec scans at least floor pages (2.6.3's max_scan floor) */
	bool no_acc;
	long floor;
	unsigned swappiness;
	enum reclaim_ctx ctx;       /* the index of the pg_scanned counts */
	int prio;                   /* of the pass under way */
	bool at_wb_end;             /* the device's immediate reclaim, no scan */
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

/* Put back a file page reclaim keeps for later: dirty (just handed to the
 * writeback device) or under writeback. It is marked for reclaim (counted
 * as nr_vmscan_immediate_reclaim) and, with the immediate list (seed 4.3),
 * waits there while its writeback lasts, out of reclaim's way. */
static void reclaim_putback_marked(struct reclaim_ctl *rc, struct mcg_group *g, uint32_t idx)
{
	struct page *p = &rc->e->pages.pages[idx];
	struct lru_vec *v = lru_vec_of(rc->e, g, idx);
	bool doomed, listed = false;

	if (!rc->at_wb_end)           /* a scan's, not writeback end's */
		wb_note_marked(rc->e);
	spin_lock(&v->lock);
	doomed = p->kind & PS_DOOMED;
	p->kind &= (uint8_t)~(PS_ISOLATED | PS_DOOMED);
	if (!doomed) {
		p->flags |= PG_RECLAIM;
		if (rc->e->m.immediate_list && (p->flags & PG_WRITEBACK)) {
			p->kind |= PS_IMMEDIATE;
			listed = true;
		}
		lru_link(rc->e, g, idx);
	}
	spin_unlock(&v->lock);
	if (listed)
		wb_note_listed(rc->e);
	if (doomed)
		charge_release_page(rc->e, g, idx, false);
}

/* The immediate list's pages whose writeback end was never seen (the
 * seed's rescue: NR_IMMEDIATE is 0, the list is not): back to their own
 * lists, each counted as rescued. In this engine a page carries its list,
 * so nothing should ever need it: the count is a correctness check. */
static void reclaim_rescue(struct reclaim_ctl *rc, struct mcg_group *g, unsigned node)
{
	struct lru_vec *v = &g->lruvec[node];
	struct page *pg = rc->e->pages.pages;
	long n = 0;

	spin_lock(&v->lock);
	while (v->nr_immediate_wb == 0 && v->list[LRU_IMMEDIATE].tail != PAGE_NONE) {
		uint32_t idx = v->list[LRU_IMMEDIATE].tail;

		lru_unlink(rc->e, g, idx);
		pg[idx].kind &= (uint8_t)~PS_IMMEDIATE;
		lru_link(rc->e, g, idx);
		n++;
	}
	spin_unlock(&v->lock);
	if (n)
		wb_note_rescued(rc->e, n);
}

/* Decide one isolated inactive page. Returns true when it was reclaimed. */
static bool reclaim_isolated_page(struct mcg_group *g, uint32_t idx);

/* With the machine's disk, an anon page goes to swap through the swap
 * cache (shrink_page_list's add_to_swap and pageout): a slot cached for
 * it, and the page, still charged, written to the slot's place on the
 * disk and put back marked for reclaim; when the write is done it rotates
 * to the inactive tail, and a later scan frees it (swap_cache_reuse). No
 * reclaimer gets the page back before the disk has written it. Returns
 * false: nothing is freed now. */
static bool reclaim_swap_write(struct reclaim_ctl *rc, struct mcg_group *g, uint32_t idx)
{
	struct mcg_engine *e = rc->e;
	uint32_t slot = swap_out_cached(e, idx);

	if (slot == SWAP_NONE) {
		reclaim_putback(rc, g, idx, PG_ACTIVE, 0);
		return false;
	}
	pgstate_swapcache(e, idx, true);
	pgstate_flags(e, idx, PG_WRITEBACK | PG_RECLAIM, PG_DIRTY);
	wb_submit(e, idx, wb_swap_pos(slot));
	reclaim_putback_marked(rc, g, idx);
	return false;
}

/* may_write_to_queue (2.6 to 3.x): only kswapd (PF_SWAPWRITE) and the
 * background reclaimers write to a congested queue; direct reclaim keeps
 * the page for later (pageout's PAGE_KEEP). Today's kernels have no such
 * skip. Without the machine's disk nothing is congested. An anon page is
 * kept before it gets a slot (the kernel adds it to swap first, and keeps
 * it dirty in the swap cache). */
static bool reclaim_may_write(const struct reclaim_ctl *rc)
{
	struct mcg_engine *e = rc->e;

	return !e->blk || e->m.era == MCG_ERA_TODAY || rc->ctx != RECLAIM_DIRECT ||
	       !blk_congested(e, env_now(&e->env), BLK_WRITE);
}

/* 3.2's shrink_page_list: direct reclaim never writes a file page
 * ("mm: vmscan: do not writeback filesystem pages in direct reclaim"),
 * nor does kswapd at the first priorities (DEF_PRIORITY - 2 and above):
 * the page is marked PG_reclaim and kept for the flusher, which reclaim
 * wakes (reclaim_subtree). Only with the machine's flusher. */
static bool reclaim_leaves_to_flusher(const struct reclaim_ctl *rc)
{
	return rc->e->m.era == MCG_ERA_3_2 && rc->e->flusher &&
	       (rc->ctx == RECLAIM_DIRECT || rc->prio >= RECLAIM_PRIO_DEF - 2);
}

static bool reclaim_page(struct reclaim_ctl *rc, struct mcg_group *g, uint32_t idx, bool anon)
{
	struct mcg_engine *e = rc->e;
	struct page *p = &e->pages.pages[idx];
	struct lru_vec *v = lru_vec_of(e, g, idx);
	uint32_t slot = SWAP_NONE;
	uint8_t flags, kind;
	bool doomed, reused = false;

	/* accesses may still set bits of an isolated page: read them locked */
	spin_lock(&v->lock);
	flags = p->flags;
	kind = p->kind;
	spin_unlock(&v->lock);
	if (flags & PG_REFERENCED) {
		/* second chance: used since it was last looked at */
		reclaim_putback(rc, g, idx, PG_ACTIVE, PG_REFERENCED);
		return false;
	}
	if ((flags & PG_WRITEBACK) && rc->ctx == RECLAIM_DIRECT && !rc->global &&
	    e->m.era == MCG_ERA_TODAY) {
		/* memcg reclaim waits for a page it marked (legacy memcg has
		 * no dirty throttling; since 3.6, "memcg: prevent OOM with too
		 * many dirty pages"); it comes back clean. The machine's
		 * reclaim never waits (the kernel's global reclaim marks the
		 * page and moves on), nor did memcg reclaim before 3.6 (the
		 * older eras). Anon pages are under writeback only on their
		 * way to swap, with the machine's disk */
		wb_wait(e, idx, reclaim_isolated_page);
		spin_lock(&v->lock);
		flags = p->flags;
		spin_unlock(&v->lock);
	}
	if (flags & PG_WRITEBACK) {
		reclaim_putback_marked(rc, g, idx);
		return false;
	}
	if (!anon && (flags & PG_DIRTY) && reclaim_leaves_to_flusher(rc)) {
		/* 3.2: marked for immediate reclaim and kept, dirty, for the
		 * flusher to write (nr_vmscan_immediate_reclaim), before any
		 * question of the queue (pageout's may_write_to_queue) */
		reclaim_putback_marked(rc, g, idx);
		return false;
	}
	if (!reclaim_may_write(rc) &&
	    (anon ? rc->may_swap && !(kind & PS_SWAPCACHE) : (flags & PG_DIRTY) != 0)) {
		/* a page that needs a write, and the queue is congested */
		reclaim_putback(rc, g, idx, 0, 0);
		return false;
	}
	if (!anon && (flags & PG_DIRTY)) {
		/* Reclaim does not write pages: it hands them to the writeback
		 * device and finds them again, clean, after it is done. */
		pgstate_flags(e, idx, PG_WRITEBACK | PG_RECLAIM, PG_DIRTY);
		wb_submit(e, idx, p->owner);
		reclaim_putback_marked(rc, g, idx);
		return false;
	}
	if (anon) {
		/* a page whose copy in swap is still good goes back to its
		 * slot without a write (the swap cache) */
		if (rc->may_swap && pgstate_swapcache(e, idx, false) &&
		    (slot = swap_cache_reuse(g, idx)) != SWAP_NONE)
			reused = true;
		else if (rc->may_swap && e->blk)
			return reclaim_swap_write(rc, g, idx);
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

/* Scan up to nr pages of an inactive list; returns how many it scanned. */
static long reclaim_inactive(struct reclaim_ctl *rc, struct mcg_group *g, unsigned node,
			     enum stat_lru inactive, long nr)
{
	struct lru_vec *v = &g->lruvec[node];
	struct page *pg = rc->e->pages.pages;
	bool anon = inactive == LRU_INACTIVE_ANON;
	long scanned = 0;

	while (nr > 0 && rc->reclaimed < rc->stop) {
		uint32_t batch[RECLAIM_CLUSTER];
		int n = 0;

		/* isolate no more than is still wanted, so reclaim stops on target */
		long room = rc->stop - rc->reclaimed;

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
		scanned += n;
		rc->scanned += n;
		atomic_fetch_add(&g->pg_scanned[rc->ctx], n);
		atomic_fetch_add(&v->pgscan, n);
		for (int i = 0; i < n; i++)
			if (reclaim_page(rc, g, batch[i], anon)) {
				rc->reclaimed++;
				rc->node_got[node]++;
				atomic_fetch_add(&g->pg_reclaimed[rc->ctx], 1);
				atomic_fetch_add(&v->pgsteal, 1);
			}
	}
	return scanned;
}

/* The priority-shift accumulator (seed 5.3): each pass adds (size >> prio) + 1
 * to the list's count, and once it reaches a cluster that many pages are
 * scanned; small lists are still scanned, slowly (the + 1). */
static long reclaim_accumulate(struct lru_vec *v, int type, long scan)
{
	long n;

	spin_lock(&v->lock);
	v->nr_scan[type] += scan + 1;
	n = v->nr_scan[type];
	if (n >= RECLAIM_CLUSTER)
		v->nr_scan[type] = 0;
	spin_unlock(&v->lock);
	return n >= RECLAIM_CLUSTER ? n : 0;
}

/* What a pass took from the accumulator but did not scan (it stopped on
 * its target) goes back, up to the list's size. */
static void reclaim_unaccumulate(struct lru_vec *v, int type, long left, long size)
{
	spin_lock(&v->lock);
	v->nr_scan[type] += left;
	if (v->nr_scan[type] > size)
		v->nr_scan[type] = size;
	spin_unlock(&v->lock);
}

static void reclaim_lruvec(struct reclaim_ctl *rc, struct mcg_group *g, unsigned node, int prio)
{
	long ia = stat_lru_local(g, LRU_INACTIVE_ANON, (int)node);
	long aa = stat_lru_local(g, LRU_ACTIVE_ANON, (int)node);
	long ifl = stat_lru_local(g, LRU_INACTIVE_FILE, (int)node);
	long af = stat_lru_local(g, LRU_ACTIVE_FILE, (int)node);
	bool swap = rc->may_swap && rc->swappiness > 0 && swap_nr_free(rc->e) > 0;
	bool acc = prio > 0 && !rc->no_acc;
	/* 2.6.24's group has one LRU of both types: each page has the same
	 * pressure, at any swappiness but 0 (swappiness only decided whether
	 * mapped pages left the active list, which at the default 60 a group
	 * mostly of mapped pages always let them) */
	bool one_lru = rc->e->m.era == MCG_ERA_2_6_24;
	unsigned sw = one_lru ? 100 : rc->swappiness;
	/* swappiness 100 scans both types alike; 0 no anon; 200 no file */
	long anon_scan = swap ? ((ia + aa) >> prio) * sw / 100 : 0;
	long file_scan = ((ifl + af) >> prio) * (200 - (swap ? sw : 0)) / 100;
	long file_done = 0, anon_done = 0;

	rc->prio = prio;

	if (prio == 0) {        /* the last pass looks at everything it may */
		anon_scan = swap ? ia + aa : 0;
		file_scan = ifl + af;
	} else if (rc->floor > anon_scan + file_scan) {
		/* raised to the floor, shared as the two were (or by size) */
		long a = anon_scan, f = file_scan;

		if (a + f == 0) {
			a = swap ? ia + aa : 0;
			f = ifl + af;
		}
		if (a + f > 0) {
			anon_scan = (long)((__int128)rc->floor * a / (a + f));
			file_scan = rc->floor - anon_scan;
		}
	} else if (acc) {
		struct lru_vec *v = &g->lruvec[node];

		anon_scan = swap && ia + aa ? reclaim_accumulate(v, 0, anon_scan) : 0;
		file_scan = ifl + af ? reclaim_accumulate(v, 1, file_scan) : 0;
	}
	/* keep the inactive lists at least as long as the active ones, aging
	 * (active size >> priority) pages a pass */
	if (file_scan && af > ifl)
		reclaim_age_active(rc, g, node, LRU_ACTIVE_FILE, prio ? af >> prio : af);
	if (anon_scan && aa > ia)
		reclaim_age_active(rc, g, node, LRU_ACTIVE_ANON, prio ? aa >> prio : aa);
	if (atomic_load_explicit(&g->lruvec[node].size[LRU_IMMEDIATE], memory_order_relaxed))
		reclaim_rescue(rc, g, node);
	if (one_lru && file_scan && anon_scan) {
		/* one list: the two types' pages come interleaved, in
		 * clusters shared as their counts to scan are */
		long cf = RECLAIM_CLUSTER * file_scan / (file_scan + anon_scan), ca;

		cf = cf < 1 ? 1 : cf > RECLAIM_CLUSTER - 1 ? RECLAIM_CLUSTER - 1 : cf;
		ca = RECLAIM_CLUSTER - cf;
		bool fe = false, ae = false;    /* a list found empty */

		while (rc->reclaimed < rc->stop &&
		       ((!fe && file_done < file_scan) || (!ae && anon_done < anon_scan))) {
			/* a type done leaves the whole cluster to the other */
			long wf = ae || anon_done >= anon_scan ? RECLAIM_CLUSTER : cf;
			long wa = fe || file_done >= file_scan ? RECLAIM_CLUSTER : ca;
			long f = fe ? 0 : file_scan - file_done < wf ? file_scan - file_done : wf;
			long a = ae ? 0 : anon_scan - anon_done < wa ? anon_scan - anon_done : wa;
			long df = f > 0 ? reclaim_inactive(rc, g, node, LRU_INACTIVE_FILE, f) : 0;
			long da = a > 0 && rc->reclaimed < rc->stop ?
				reclaim_inactive(rc, g, node, LRU_INACTIVE_ANON, a) : 0;

			file_done += df;
			anon_done += da;
			if (rc->reclaimed >= rc->stop)
				break;
			/* short of what was asked, not on target: empty */
			fe |= df < f;
			ae |= da < a;
		}
	} else {
		if (file_scan)
			file_done = reclaim_inactive(rc, g, node, LRU_INACTIVE_FILE, file_scan);
		if (anon_scan && rc->reclaimed < rc->stop)
			anon_done = reclaim_inactive(rc, g, node, LRU_INACTIVE_ANON, anon_scan);
	}
	if (acc && file_scan && file_done < file_scan)
		reclaim_unaccumulate(&g->lruvec[node], 1, file_scan - file_done, ifl + af);
	if (acc && anon_scan && anon_done < anon_scan)
		reclaim_unaccumulate(&g->lruvec[node], 0, anon_scan - anon_done, ia + aa);
}

/* Seed 5.2: each node is asked, for the whole call, for a share of want
 * proportional to its share of the subtree's reclaimable pages (on a full
 * machine, its size), rounded up; every pass goes on to every node still
 * short of its share, even when an earlier one gave enough, and a node
 * that is done gives no more. A machine of one node leaves nodes at 0:
 * the walk then goes through the nodes in order until the want is met. */
static void reclaim_shares(struct reclaim_ctl *rc, struct mcg_group *top)
{
	unsigned nodes = rc->e->pages.nr_nodes;
	unsigned mask = 1u << LRU_INACTIVE_FILE | 1u << LRU_ACTIVE_FILE;
	long size[PAGE_MAX_NODES], total = 0;

	rc->nodes = 0;
	if (nodes == 1)
		return;
	/* what this reclaim may take: anon only with swap */
	if (rc->may_swap && rc->swappiness > 0 && swap_nr_free(rc->e) > 0)
		mask |= 1u << LRU_INACTIVE_ANON | 1u << LRU_ACTIVE_ANON;
	stat_lru_nodes(top, mask, size);
	for (unsigned n = 0; n < nodes; n++)
		total += size[n];
	if (total == 0)
		return;
	for (unsigned n = 0; n < nodes; n++)
		rc->node_want[n] = (long)(((__int128)rc->want * size[n] + total - 1) / total);
	rc->nodes = nodes;
}

/* One pass over g's nodes at prio. At priority 0, the last pass, the
 * shares are lifted: any node may make up what another could not give. */
static void reclaim_group(struct reclaim_ctl *rc, struct mcg_group *g, int prio)
{
	if (!rc->nodes || prio == 0) {
		rc->stop = rc->want;
		for (unsigned n = 0; n < rc->e->pages.nr_nodes && rc->reclaimed < rc->want; n++)
			reclaim_lruvec(rc, g, n, prio);
		return;
	}
	for (unsigned n = 0; n < rc->nodes && rc->reclaimed < rc->want; n++) {
		if (rc->node_got[n] >= rc->node_want[n])
			continue;
		rc->stop = rc->reclaimed + rc->node_want[n] - rc->node_got[n];
		reclaim_lruvec(rc, g, n, prio);
	}
	rc->stop = rc->want;
}

void reclaim_node_counts(struct mcg_group *g, unsigned node, long *scanned, long *stolen)
{
	*scanned = atomic_load(&g->lruvec[node].pgscan);
	*stolen = atomic_load(&g->lruvec[node].pgsteal);
}

/* The device's immediate reclaim (wb_reclaim_fn): page idx of g, isolated
 * by the device, freed now if it can be. */
static bool reclaim_isolated_page(struct mcg_group *g, uint32_t idx)
{
	/* an anon page here was written to swap: it goes to its slot */
	bool anon = (g->eng->pages.pages[idx].kind & PK_MASK) != PK_FILE;
	struct reclaim_ctl rc = { .e = g->eng, .want = 1, .stop = 1, .ctx = RECLAIM_DIRECT,
				  .may_swap = anon, .at_wb_end = true };

	return reclaim_page(&rc, g, idx, anon);
}

void reclaim_wb_complete(struct mcg_engine *e)
{
	wb_complete(e, reclaim_isolated_page);
}

int mcg_era_parse(const char *name, enum mcg_era *era)
{
	static const char *const names[] = { "today", "2.6.24", "2.6.39", "3.2" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*era = (enum mcg_era)i;
			return 0;
		}
	return -EINVAL;
}

/* Direct reclaim fell short after a pass below DEF_PRIORITY - 2 that
 * scanned: does do_try_to_free_pages nap here? 2.6.24: congestion_wait,
 * for a group's reclaim as for the machine's; 2.6.37 to 3.x:
 * wait_iff_congested, only while the write queue is congested; today's
 * throttle (reclaim_throttle) is stood for by the nap, for the machine's
 * reclaim only, memcg reclaim waiting on writeback instead. */
static bool reclaim_naps(const struct reclaim_ctl *rc)
{
	struct mcg_engine *e = rc->e;

	switch (e->m.era) {
	case MCG_ERA_2_6_24:
		return true;
	case MCG_ERA_2_6_39:
	case MCG_ERA_3_2:
		return blk_congested(e, env_now(&e->env), BLK_WRITE);
	default:
		return rc->global;
	}
}

void reclaim_congestion_nap(struct mcg_engine *e)
{
	uint64_t now, wake;

	if (!e->blk)
		return;
	now = env_now(&e->env);
	wake = blk_congestion_wait(e, now, BLK_CONGESTION_WAIT_NS);
	env_sleep(&e->env, wake - now);  /* a simulated clock moves by it */
	wb_complete(e, reclaim_isolated_page);
}

/* 3.2's do_try_to_free_pages, after each priority's pass (before its
 * nap): once direct reclaim has scanned more than writeback_threshold,
 * 1.5 times its nr_to_reclaim, which is always SWAP_CLUSTER_MAX there (48
 * pages), it wakes the flusher for as many pages as it scanned so far
 * (wakeup_flusher_threads(total_scanned)), every pass. (A soft-limit
 * reclaim, which 3.2 ran without do_try_to_free_pages, wakes it too
 * here.) */
static void reclaim_wake_flusher(const struct reclaim_ctl *rc)
{
	struct mcg_engine *e = rc->e;
	uint64_t none = 0, now;

	if (e->m.era != MCG_ERA_3_2 || !e->flusher || rc->ctx != RECLAIM_DIRECT ||
	    rc->reclaimed >= rc->want || rc->scanned <= RECLAIM_CLUSTER + RECLAIM_CLUSTER / 2)
		return;
	atomic_fetch_add(&e->fl_kick, rc->scanned);
	now = env_now(&e->env);
	atomic_compare_exchange_strong(&e->fl_kick_at, &none, now ? now : 1);
}

long reclaim_subtree(struct mcg_group *top, long nr, bool may_swap, enum reclaim_ctx ctx)
{
	struct reclaim_ctl rc = {
		.e = top->eng, .want = nr, .may_swap = may_swap, .global = mcg_root(top),
		.swappiness = mcg_swappiness(top), .ctx = ctx,
	};
	int prio;

	wb_complete(rc.e, reclaim_isolated_page);
	if (nr <= 0)
		return 0;
	reclaim_shares(&rc, top);
	/* Limit reclaim with swappiness 0 may still not swap (§3.13). */
	for (prio = RECLAIM_PRIO_DEF; prio >= 0 && rc.reclaimed < nr; prio--) {
		struct mcg_group *g = NULL;
		long scanned = rc.scanned;

		while (rc.reclaimed < nr && (g = mcg_iter(top, g)))
			reclaim_group(&rc, g, prio);
		if (g)
			mcg_put(g);       /* stopped early: the walk's last */
		reclaim_wake_flusher(&rc);
		if (ctx == RECLAIM_DIRECT && rc.reclaimed < nr && rc.scanned > scanned &&
		    prio < RECLAIM_PRIO_DEF - 2 && reclaim_naps(&rc))
			reclaim_congestion_nap(rc.e);
	}
	/* vmpressure: what this reclaim aimed at top found, and how deep it
	 * had to go (the last priority it scanned at) */
	if (rc.scanned && rc.e->own.ops->pressure_event)
		rc.e->own.ops->pressure_event(top, rc.scanned, rc.reclaimed, prio < 0 ? 0 : prio + 1,
					      rc.e->own.arg);
	return rc.reclaimed;
}

/* One pass of 3.2's shrink_zone over node n at prio, every group's pages
 * there (the zone's lists), for an allocation of order > 3: at
 * DEF_PRIORITY it scans each list's share to the end; below, it stops
 * once the pass has reclaimed SWAP_CLUSTER_MAX. */
static void reclaim_order_pass(struct reclaim_ctl *rc, unsigned n, int prio)
{
	struct mcg_group *g = NULL;

	rc->stop = prio < RECLAIM_PRIO_DEF ? rc->reclaimed + RECLAIM_CLUSTER : LONG_MAX;
	while (rc->reclaimed < rc->stop && (g = mcg_iter(rc->e->root, g)))
		reclaim_lruvec(rc, g, n, prio);
	if (g)
		mcg_put(g);
}

/* should_continue_reclaim for RECLAIM_MODE_COMPACTION, as Mel Gorman's
 * series left it ("when reclaiming for compaction, ensure there are
 * sufficient free pages available", the seed's freemore): a pass that
 * reclaimed nothing ends it; else it goes on while the reclaim has
 * taken fewer than 2 << order pages and node n's inactive lists (anon
 * only with swap) hold more than that, then until compaction could run. */
static bool reclaim_order_continue(struct reclaim_ctl *rc, unsigned n, int order,
				   long pass_reclaimed)
{
	long want = 2L << order, size[PAGE_MAX_NODES];
	unsigned mask = 1u << LRU_INACTIVE_FILE;

	if (!pass_reclaimed)
		return false;
	if (swap_nr_free(rc->e) > 0)
		mask |= 1u << LRU_INACTIVE_ANON;
	stat_lru_nodes(rc->e->root, mask, size);
	if (rc->reclaimed < want && size[n] > want)
		return true;
	return page_compact_suitable(&rc->e->pages, n, order) == PAGE_COMPACT_SKIPPED;
}

/* compaction_ready (the series' "check if reclaim should really abort
 * even if compaction_ready() is true for one zone"): node n has enough
 * free pages for compaction, high mark + balance gap + 2 << order, so
 * reclaim leaves it alone. Asks the deferral, as the kernel's does. */
static bool reclaim_order_ready(struct mcg_engine *e, unsigned n, int order)
{
	struct page_pool *pp = &e->pages;
	const struct page_node *pn = &pp->node[n];
	long gap = (page_node_size(pp, n) + 99) / 100;   /* KSWAPD_ZONE_BALANCE_GAP_RATIO */
	bool ok;

	if (gap > pn->wm_low)
		gap = pn->wm_low;
	ok = page_node_free(pp, n) > pn->wm_high + gap + (2L << order);
	if (page_compact_deferred(pp, n))
		return ok;
	return page_compact_suitable(pp, n, order) != PAGE_COMPACT_SKIPPED && ok;
}

long reclaim_for_order(struct mcg_engine *e, unsigned node, int order)
{
	struct reclaim_ctl rc = {
		.e = e, .want = RECLAIM_CLUSTER, .may_swap = true, .global = true,
		.swappiness = mcg_swappiness(e->root), .ctx = RECLAIM_DIRECT, .no_acc = true,
	};
	unsigned nodes = e->pages.nr_nodes;
	int prio;

	wb_complete(e, reclaim_isolated_page);
	for (prio = RECLAIM_PRIO_DEF; prio >= 0 && rc.reclaimed < rc.want; prio--) {
		long scanned = rc.scanned;

		for (unsigned i = 0; i < nodes; i++) {
			unsigned n = (node + i) % nodes;
			long before;

			if (reclaim_order_ready(e, n, order))
				continue;
			do {
				before = rc.reclaimed;
				reclaim_order_pass(&rc, n, prio);
			} while (reclaim_order_continue(&rc, n, order, rc.reclaimed - before));
		}
		reclaim_wake_flusher(&rc);
		if (rc.reclaimed < rc.want && rc.scanned > scanned && prio < RECLAIM_PRIO_DEF - 2 &&
		    reclaim_naps(&rc))
			reclaim_congestion_nap(e);
	}
	return rc.reclaimed;
}

/* g's inactive pages on node zone */
static long reclaim_zone_inactive(const struct mcg_group *g, unsigned zone)
{
	return stat_lru_local(g, LRU_INACTIVE_ANON, (int)zone) +
	       stat_lru_local(g, LRU_INACTIVE_FILE, (int)zone);
}

long reclaim_zone(struct mcg_engine *e, unsigned zone, long nr, int prio, bool accumulate,
		  enum reclaim_ctx ctx, long *scanned)
{
	struct reclaim_ctl rc = {
		.e = e, .want = nr, .stop = nr, .may_swap = true, .global = true,
		.swappiness = mcg_swappiness(e->root), .ctx = ctx, .no_acc = !accumulate,
	};
	struct mcg_group *g = NULL;
	long inactive = 0, floor = 0;   /* (2.6.3's scan only) */

	wb_complete(e, reclaim_isolated_page);
	if (nr <= 0 || zone >= e->pages.nr_nodes)
		return 0;
	if (!accumulate) {
		/* 2.6.3: max_scan is the zone's inactive pages >> priority, and
		 * at least twice what is asked for; shared by its lruvecs in
		 * proportion to their inactive pages */
		while ((g = mcg_iter(e->root, g)))
			inactive += reclaim_zone_inactive(g, zone);
		floor = inactive >> prio > 2 * nr ? inactive >> prio : 2 * nr;
		if (ctx == RECLAIM_BACKGROUND && floor < RECLAIM_CLUSTER)
			floor = RECLAIM_CLUSTER;      /* kswapd's floor in 2.6.3 */
	}
	while (rc.reclaimed < nr && (g = mcg_iter(e->root, g))) {
		long mine = floor ? reclaim_zone_inactive(g, zone) : 0;

		rc.floor = inactive > 0 && mine < inactive ?
			   (long)((__int128)floor * mine / inactive) : floor;
		reclaim_lruvec(&rc, g, zone, prio);
	}
	if (g)
		mcg_put(g);
	*scanned += rc.scanned;
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
