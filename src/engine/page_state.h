/* page_state.h: a charged page's state as its group sees it: the
 * statistics items its kind and flags count in, its flags and swap-cache
 * state changed with the statistics and LRU list kept right, and an access
 * (mark_page_accessed). Below charge, reclaim, writeback, move and vm,
 * which all change page state; never charges, uncharges or frees a page. */
#ifndef MEMCGFS_PAGE_STATE_H
#define MEMCGFS_PAGE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/page.h"
#include "engine/stat.h"

/* The one list of the statistics items a page counts in: add(arg, item,
 * sign) for each. Always inlined, so each caller's add is inlined too. */
static inline __attribute__((always_inline))
void pgstate_items(const struct page *p, long sign, void (*add)(void *, enum stat_item, long),
		   void *arg)
{
	unsigned kind = p->kind & PK_MASK;
	bool cache = kind == PK_FILE || kind == PK_SHMEM;

	add(arg, kind == PK_ANON ? STAT_RSS : STAT_CACHE, sign);
	if (kind == PK_SHMEM)
		add(arg, STAT_SHMEM, sign);
	if (p->kind & PS_SWAPCACHE)
		add(arg, STAT_SWAPCACHED, sign);
	if (cache && (p->flags & PG_MAPPED))
		add(arg, STAT_MAPPED_FILE, sign);
	if (cache && (p->flags & PG_DIRTY))
		add(arg, STAT_DIRTY, sign);
	if (p->flags & PG_WRITEBACK)
		add(arg, STAT_WRITEBACK, sign);
}

static inline void pgstate_add_own(void *own, enum stat_item it, long v)
{
	stat_own_add(own, it, v);
}

/* (a thread without a shard of its own) */
void pgstate_account_shared(struct mcg_group *g, const struct page *p, long sign,
			    enum stat_item event);

/* A page's items added to g's statistics (sign ±1), and event (PGPGIN or
 * PGPGOUT) once unless it is STAT__COUNT: on the charge path, so inline,
 * into the thread's own shard. The _unmarked form leaves the rstat mark
 * to a store that follows it on the same group (charge.c: lru_add). */
static inline void pgstate_account_unmarked(struct mcg_group *g, const struct page *p, long sign,
					    enum stat_item event)
{
	atomic_long *own = stat_shard_own(g->stat);

	/* per-node dirty limits: the node's dirty and writeback page cache */
	if (__builtin_expect(g->eng->m.node_dirty_ratio != 0, 0) &&
	    (p->flags & (PG_DIRTY | PG_WRITEBACK)) && (p->kind & PK_MASK) != PK_ANON)
		atomic_fetch_add_explicit(&g->eng->node_dirty[page_node_of(&g->eng->pages,
						(uint32_t)(p - g->eng->pages.pages))], sign,
					  memory_order_relaxed);

	if (!own) {
		pgstate_account_shared(g, p, sign, event);
		return;
	}
	pgstate_items(p, sign, pgstate_add_own, own);
	if (event != STAT__COUNT)
		stat_own_add(own, event, 1);
}

static inline void pgstate_account(struct mcg_group *g, const struct page *p, long sign,
				   enum stat_item event)
{
	pgstate_account_unmarked(g, p, sign, event);
	rstat_updated(&g->rs);
}

/* Statistics a page of this kind and these flags contributes (±1 each). */
static inline void pgstate_stats(struct mcg_group *g, const struct page *p, long sign)
{
	pgstate_account(g, p, sign, STAT__COUNT);
}

/* The same, summed into d[STAT__COUNT] (for bulk moves), and applied. */
void pgstate_stat_delta(const struct page *p, long *d, long sign);
void pgstate_stats_apply(struct mcg_group *g, const long *d, long sign);

/* Change a charged page's flags, keeping its statistics and LRU list
 * right (a page isolated by reclaim keeps its place with reclaim). */
void pgstate_flags(struct mcg_engine *e, uint32_t idx, uint8_t set, uint8_t clear);

/* An access (mark_page_accessed): a referenced inactive page is promoted,
 * others get the referenced bit; set is added (dirty, mapped) for page
 * cache. All decided under the lruvec lock; returns the flags before. */
uint8_t pgstate_accessed(struct mcg_engine *e, uint32_t idx, uint8_t set);   /* the old flags */

/* The flusher's test: a dirty page not under writeback nor held by
 * reclaim goes under writeback (clean), where it is on its list: 1; a
 * dirty page that cannot (written or held already): -1; a clean one: 0. */
int pgstate_start_writeback(struct mcg_engine *e, uint32_t idx);

/* Set or clear a page's swap-cache state (its statistic follows); the
 * state it had. */
bool pgstate_swapcache(struct mcg_engine *e, uint32_t idx, bool on);

/* Page migration (compaction.c, through the owner's migrate hook, under
 * the owner's lock): isolated page old's descriptor, state and charge
 * become free page nw's, still isolated, on the same node; old is left
 * for its freeing. */
void pgstate_migrate(struct mcg_engine *e, uint32_t old, uint32_t nw);

#endif
