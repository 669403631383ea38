/* stat.h: per-group statistics items (the local values behind memory.stat and
 * memory.numa_stat) and their hierarchical sums. Owns the numbers only; the
 * order, names and units of the rendered files belong to src/fs. */
#ifndef MEMCGFS_STAT_H
#define MEMCGFS_STAT_H

#include <stdatomic.h>
#include <stddef.h>

/* Page-state items are in pages; event items are counts. */
enum stat_item {
	STAT_CACHE,
	STAT_RSS,
	STAT_RSS_HUGE,
	STAT_SHMEM,
	STAT_MAPPED_FILE,
	STAT_DIRTY,
	STAT_WRITEBACK,
	STAT_REFAULT_ANON,
	STAT_REFAULT_FILE,
	STAT_SWAP,
	STAT_SWAPCACHED,
	STAT_PGPGIN,
	STAT_PGPGOUT,
	STAT_PGFAULT,
	STAT_PGMAJFAULT,
	STAT__COUNT
};

enum stat_lru {
	LRU_INACTIVE_ANON,
	LRU_ACTIVE_ANON,
	LRU_INACTIVE_FILE,
	LRU_ACTIVE_FILE,
	LRU_UNEVICTABLE,
	/* seed topic 4's LRU_IMMEDIATE (RFC only, m.immediate_list): file
	 * pages reclaim marked, under writeback; never scanned */
	LRU_IMMEDIATE,
	LRU__COUNT
};

/* Statistics are kept in shards (the kernel keeps them per CPU), so that
 * threads charging one group neither fight over a cache line nor pay for
 * a locked instruction: up to STAT_SHARDS - 1 threads own a shard each,
 * the others share one with atomic adds. A read sums the shards. */
#define STAT_SHARDS 8

struct stat_shard {
	atomic_long v[STAT__COUNT];
} __attribute__((aligned(64)));

struct mcg_group;

/* Subtree sums by walking every group under g (the invariant checker's,
 * held against rstat's). */
long stat_total_walk(struct mcg_group *g, enum stat_item it);
long stat_lru_total_walk(struct mcg_group *g, enum stat_lru l, int node);
/* The lists in mask (a bit per enum stat_lru) of g's subtree, summed per
 * node into out[nodes], in one walk. */
void stat_lru_nodes(struct mcg_group *g, unsigned mask, long *out);

/* Add delta to item it of a group's shards (stat_add in internal.h). */
#define STAT_SHARED 0                 /* the shard shared with atomic adds */
extern __thread int stat_my_shard;    /* this thread's, -1: none claimed yet */
void stat_shard_add_slow(struct stat_shard *st, enum stat_item it, long delta);

/* This thread's own shard of st (its items), or NULL while it has none. */
static inline atomic_long *stat_shard_own(struct stat_shard *st)
{
	int s = stat_my_shard;

	return s > STAT_SHARED ? st[s].v : NULL;
}

/* Add to item it of the thread's own shard (own = stat_shard_own(...)):
 * nobody else writes it, so no locked instruction is needed. */
static inline void stat_own_add(atomic_long *own, enum stat_item it, long delta)
{
	atomic_store_explicit(&own[it], atomic_load_explicit(&own[it], memory_order_relaxed) + delta,
			      memory_order_relaxed);
}

static inline void stat_shard_add(struct stat_shard *st, enum stat_item it, long delta)
{
	atomic_long *own = stat_shard_own(st);

	if (__builtin_expect(!own, 0))
		stat_shard_add_slow(st, it, delta);
	else
		stat_own_add(own, it, delta);
}

#endif
