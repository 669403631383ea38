/* lru.h: per-group, per-node LRU lists (inactive/active anon and file,
 * unevictable, and seed topic 4's immediate list), doubly linked through the page descriptors. Owns list
 * membership and the LRU sizes behind memory.stat; never decides what to
 * reclaim (reclaim.c does) and never charges. */
#ifndef MEMCGFS_LRU_H
#define MEMCGFS_LRU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/page.h"
#include "engine/rstat.h"
#include "engine/spin.h"
#include "engine/stat.h"

struct mcg_engine;
struct mcg_group;

struct lru_list {
	uint32_t head, tail;   /* head: most recently added */
};

/* One per (group, node), on its own cache lines. The sizes change only
 * under lock but are read without it. */
struct lru_vec {
	spin_t lock;
	struct lru_list list[LRU__COUNT];
	atomic_long size[LRU__COUNT];
	struct rstat_node *rs;        /* its group's: a size change marks it */
	/* reclaim.c's: the priority-shift accumulators of the anon [0] and
	 * file [1] lists (under lock), and pages scanned and stolen here */
	long nr_scan[2];
	atomic_long pgscan, pgsteal;
	/* pages on the immediate list still under writeback (the seed's
	 * NR_IMMEDIATE): 0 with pages there means they are stranded */
	long nr_immediate_wb;
} __attribute__((aligned(64)));

/* Add delta to the size of list l. Written under v->lock only and read
 * without it, so no locked add is needed. The _unmarked form leaves the
 * rstat mark to a statistics store that follows on the same group. */
static inline void lru_size_add_unmarked(struct lru_vec *v, enum stat_lru l, long delta)
{
	atomic_store_explicit(&v->size[l],
			      atomic_load_explicit(&v->size[l], memory_order_relaxed) + delta,
			      memory_order_relaxed);
}

static inline void lru_size_add(struct lru_vec *v, enum stat_lru l, long delta)
{
	lru_size_add_unmarked(v, l, delta);
	rstat_updated(v->rs);
}

int lru_vecs_init(struct mcg_group *g, unsigned nodes);
void lru_vecs_destroy(struct mcg_group *g, unsigned nodes);

/* The list a page belongs on, from its kind and flags. */
enum stat_lru lru_of(const struct page *p);

/* Locked wrappers. */
void lru_add(struct mcg_engine *e, struct mcg_group *g, uint32_t idx);

/* Caller holds the lruvec lock of (g, node of idx). */
void lru_link(struct mcg_engine *e, struct mcg_group *g, uint32_t idx);
void lru_unlink(struct mcg_engine *e, struct mcg_group *g, uint32_t idx);
/* The same, given v = lru_vec_of(e, g, idx), whose lock the caller holds. */
void lru_del(struct mcg_engine *e, struct lru_vec *v, uint32_t idx);
/* lru_del for a page whose release (statistics, then the rstat mark)
 * follows at once: charge_free_page. */
void lru_del_unmarked(struct mcg_engine *e, struct lru_vec *v, uint32_t idx);
/* At the tail: the next page reclaim looks at (rotation after writeback). */
void lru_link_tail(struct mcg_engine *e, struct mcg_group *g, uint32_t idx);
/* Move idx from src's list to the same list of dst (the page changes
 * owner); the caller holds both lruvec locks of that node and adjusts the
 * sizes itself (lru_size_add), in bulk. Returns the list. */
enum stat_lru lru_transfer(struct mcg_engine *e, struct mcg_group *src, struct mcg_group *dst,
			   uint32_t idx);
struct lru_vec *lru_vec_of(struct mcg_engine *e, struct mcg_group *g, uint32_t idx);

#endif
