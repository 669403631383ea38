/* compaction.c: memory compaction and the huge-page slow path (issue 22,
 * item 6), in 3.2's terms as Mel Gorman's series of December 2011 left
 * them (the seed's freemore, column (b) of B4).
 *
 * A node's pageblocks are compacted by two scanners: the migration
 * scanner goes up from the node's first block, taking each page on an
 * LRU that may move (isolate_migratepages), and the free scanner comes
 * down from the last, taking free pages of the blocks above it to move
 * them to (isolate_freepages); each page moved leaves its block, which
 * becomes a huge page once all its pages are free. Compaction ends with
 * a free block (COMPACT_PARTIAL) or when the scanners meet with none
 * (COMPACT_COMPLETE, a failure). What may
 * move: pages on an LRU, not isolated, unevictable, mlocked, in the swap
 * cache (the engine keeps a slot's page by index) or under writeback;
 * asynchronous compaction (the fault's first try) moves no dirty page
 * either (ISOLATE_CLEAN, and in the series a dirty page whose filesystem
 * would block), synchronous compaction does (migratepage keeps it dirty).
 * A moved page keeps its charge, group, node and flags, and goes to the
 * head of its list (putback_lru_page). Not modelled: migrate types (every
 * block is movable), the fragmentation index (page.h), lock contention's
 * abort of asynchronous compaction, the 10 passes of migrate_pages.
 *
 * Runs in a replay's one thread (m.thp is a replay's): a page's group is
 * read by id without a reference, which a concurrent free could race.
 * Lock order: a lruvec's lock alone; the migrate hook takes the space's
 * and an object's lock, and under them the lruvec's (pgstate_migrate),
 * with nothing held here. Never charges; reclaims only through
 * reclaim_for_order. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engine/charge_core.h"
#include "engine/compaction.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/page.h"
#include "engine/reclaim.h"

struct compact_state {
	atomic_long thp_alloc, thp_fallback, stall, success, fail, moved, move_failed;
	atomic_long reclaims;
};

int compact_init(struct mcg_engine *e)
{
	if (!e->m.thp)
		return 0;
	if (!(e->compact = calloc(1, sizeof(*e->compact))))
		return -ENOMEM;
	return page_pool_blocks(&e->pages);
}

void compact_destroy(struct mcg_engine *e)
{
	free(e->compact);
	e->compact = NULL;
}

/* Take page idx off its LRU for migration: its group, or NULL when it
 * may not move (*busy: it is dirty or under writeback, a page the
 * migration would have failed on). */
static struct mcg_group *compact_isolate(struct mcg_engine *e, uint32_t idx, bool sync, bool *busy)
{
	struct page *p = &e->pages.pages[idx];
	unsigned id = p->memcg, kind;
	struct mcg_group *g;
	struct lru_vec *v;
	bool ok;

	*busy = false;
	if (!id)
		return NULL;              /* not charged yet, or not a group's */
	g = mcg_by_id_pinned(e, id);
	if (!g)
		return NULL;
	v = lru_vec_of(e, g, idx);
	spin_lock(&v->lock);
	kind = p->kind & PK_MASK;
	ok = p->memcg == id && (kind == PK_ANON || kind == PK_FILE || kind == PK_SHMEM) &&
	     !(p->kind & (PS_ISOLATED | PS_DOOMED | PS_SWAPCACHE | PS_IMMEDIATE)) &&
	     !(p->flags & (PG_UNEVICTABLE | PG_MLOCKED));
	if (ok && ((p->flags & PG_WRITEBACK) || (!sync && (p->flags & PG_DIRTY)))) {
		ok = false;
		*busy = true;
	}
	if (ok) {
		lru_unlink(e, g, idx);
		p->kind |= PS_ISOLATED;
	}
	spin_unlock(&v->lock);
	return ok ? g : NULL;
}

/* An isolated page back on its list, or finished if its owner freed it. */
static void compact_putback(struct mcg_engine *e, struct mcg_group *g, uint32_t idx)
{
	struct page *p = &e->pages.pages[idx];
	struct lru_vec *v = lru_vec_of(e, g, idx);
	bool doomed;

	spin_lock(&v->lock);
	doomed = p->kind & PS_DOOMED;
	p->kind &= (uint8_t)~(PS_ISOLATED | PS_DOOMED);
	if (!doomed)
		lru_link(e, g, idx);
	spin_unlock(&v->lock);
	if (doomed)
		charge_release_page(e, g, idx, false);
}

/* The free scanner: the next free page below *cursor and above block mb
 * (taken), or PAGE_NONE when the scanners have met. */
static uint32_t compact_free_page(struct page_pool *pp, uint32_t *cursor, uint32_t mb)
{
	uint32_t floor = (mb + 1) << PAGE_BLOCK_ORDER;

	while (*cursor > floor) {
		uint32_t idx = --*cursor;

		if (page_is_free(pp, idx) && page_take_at(pp, idx))
			return idx;
	}
	return PAGE_NONE;
}

int compact_node(struct mcg_engine *e, unsigned n, int order, bool sync)
{
	struct compact_state *cs = e->compact;
	struct page_pool *pp = &e->pages;
	enum page_compact s;
	uint32_t mb, end, cursor;

	if (!cs || n >= pp->nr_nodes)
		return PAGE_COMPACT_SKIPPED;
	if ((s = page_compact_suitable(pp, n, order)) != PAGE_COMPACT_CONTINUE)
		return (int)s;
	page_node_blocks(pp, n, &mb, &end);
	cursor = end << PAGE_BLOCK_ORDER;
	for (; mb + 1 < end && cursor > (mb + 1) << PAGE_BLOCK_ORDER; mb++) {
		for (uint32_t i = 0; i < PAGE_BLOCK; i++) {
			uint32_t old = (mb << PAGE_BLOCK_ORDER) + i, nw;
			struct mcg_group *g;
			bool busy;

			if (page_is_free(pp, old))
				continue;
			if (!(g = compact_isolate(e, old, sync, &busy))) {
				if (busy)
					atomic_fetch_add(&cs->move_failed, 1);
				continue;
			}
			if ((nw = compact_free_page(pp, &cursor, mb)) == PAGE_NONE) {
				compact_putback(e, g, old);
				return PAGE_COMPACT_CONTINUE;
			}
			if (!e->migrate(e->pages.pages[old].owner, old, nw, e->evict_arg)) {
				page_free(pp, nw);
				compact_putback(e, g, old);
				continue;
			}
			/* nobody refers to old now: it is free, its charge nw's */
			page_free(pp, old);
			compact_putback(e, g, nw);
			atomic_fetch_add(&cs->moved, 1);
		}
		if (page_block_free(pp, mb) == PAGE_BLOCK)
			return PAGE_COMPACT_PARTIAL;
	}
	return PAGE_COMPACT_CONTINUE;
}

/* __alloc_pages_direct_compact: unless the preferred node's compaction
 * is deferred (*deferred), compaction of each node from node on until one
 * has a free block (try_to_compact_pages, a COMPACTSTALL), then the
 * allocation; a failure after compaction ran defers the preferred node's
 * next ones, when synchronous. */
static uint32_t compact_direct(struct mcg_engine *e, unsigned node, bool sync, bool *deferred)
{
	struct compact_state *cs = e->compact;
	unsigned nodes = e->pages.nr_nodes;
	int best = PAGE_COMPACT_SKIPPED;
	uint32_t idx;

	if (page_compact_deferred(&e->pages, node)) {
		*deferred = true;
		return PAGE_NONE;
	}
	atomic_fetch_add(&cs->stall, 1);
	for (unsigned i = 0; i < nodes; i++) {
		int r = compact_node(e, (node + i) % nodes, PAGE_BLOCK_ORDER, sync);

		if (r > best)
			best = r;
		if (r == PAGE_COMPACT_PARTIAL)
			break;
	}
	if (best == PAGE_COMPACT_SKIPPED)
		return PAGE_NONE;
	if ((idx = page_alloc_block(&e->pages, node)) != PAGE_NONE) {
		page_compact_reset(&e->pages, node);
		atomic_fetch_add(&cs->success, 1);
		return idx;
	}
	atomic_fetch_add(&cs->fail, 1);
	if (sync)
		page_compact_defer(&e->pages, node);
	return PAGE_NONE;
}

uint32_t compact_alloc_huge(struct mcg_engine *e, unsigned node)
{
	bool deferred = false;
	uint32_t idx;

	if (!e->compact)
		return PAGE_NONE;
	node %= e->pages.nr_nodes;
	if ((idx = page_alloc_block(&e->pages, node)) != PAGE_NONE ||
	    (idx = compact_direct(e, node, false, &deferred)) != PAGE_NONE)
		return idx;
	/* the series' "do not call direct reclaim for THP allocations while
	 * compaction is deferred" */
	if (deferred)
		return PAGE_NONE;
	atomic_fetch_add(&e->compact->reclaims, 1);
	reclaim_for_order(e, node, PAGE_BLOCK_ORDER);
	if ((idx = page_alloc_block(&e->pages, node)) != PAGE_NONE)
		return idx;
	/* __GFP_NORETRY: no retry after reclaim; compaction once more,
	 * synchronous */
	return compact_direct(e, node, true, &deferred);
}

void compact_count_thp(struct mcg_engine *e, bool allocated)
{
	if (e->compact)
		atomic_fetch_add(allocated ? &e->compact->thp_alloc : &e->compact->thp_fallback, 1);
}

void mcg_compact_counts(struct mcg_engine *e, struct mcg_compact_counts *c)
{
	struct compact_state *cs = e->compact;

	*c = (struct mcg_compact_counts){ 0 };
	if (!cs)
		return;
	c->thp_fault_alloc = atomic_load(&cs->thp_alloc);
	c->thp_fault_fallback = atomic_load(&cs->thp_fallback);
	c->compact_stall = atomic_load(&cs->stall);
	c->compact_success = atomic_load(&cs->success);
	c->compact_fail = atomic_load(&cs->fail);
	c->compact_pages_moved = atomic_load(&cs->moved);
	c->compact_move_failed = atomic_load(&cs->move_failed);
	c->reclaim_for_order = atomic_load(&cs->reclaims);
}
