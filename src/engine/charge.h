/* charge.h: charging and uncharging groups and pages (§5.4, §5.6, seed
 * topic 3): the per-CPU stock of pre-charged pages, batched uncharge, and
 * the try-charge loop with direct reclaim and retries. Owns the stock and
 * the batch record; never picks pages to reclaim (reclaim.c) or victims
 * (oom.c). */
#ifndef MEMCGFS_CHARGE_H
#define MEMCGFS_CHARGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/page.h"
#include "engine/spin.h"

struct mcg_engine;
struct mcg_group;

/* One per simulated CPU; padded so CPUs do not share a cache line. */
struct charge_stock {
	spin_t lock;
	struct mcg_group *g;       /* referenced while it holds pages */
	long nr;
#ifdef MCG_BENCH
	long bench_max;            /* the largest nr since charge_bench_stock_max */
#endif
} __attribute__((aligned(64)));

/* Throttled direct reclaim (seed topic 1): how many tasks may reclaim on
 * one group at a time, with cpus simulated CPUs. */
static inline unsigned charge_reclaim_slots(unsigned cpus)
{
	return cpus / 4 + 1;
}

int charge_init(struct mcg_engine *e);
void charge_destroy(struct mcg_engine *e);

/* How a charge may wait for room under oom_kill_disable, passed down with
 * each charge as the kernel passes gfp_t (never per-thread state). A task's
 * owner keeps one per task (vm_object_set_mode) and serialises the task's
 * charges; NULL is the default: wait until there is room. */
struct charge_mode {
	/* Fail the charge instead of waiting: a thread that serves many
	 * tasks (the mirror's) must not sleep for one of them. */
	bool nowait;
	/* Asked at least every 50 ms while waiting: true ends the wait with
	 * a failed charge (the task the charge is for is gone). */
	bool (*cancelled)(void *arg);
	void *cancel_arg;
	/* Out, with nowait: the group whose oom_kill_disable failed the
	 * last charge, referenced (the owner puts it), or left as it was. */
	struct mcg_group *over;
};

/* Charge n pages to g from simulated CPU cpu: stock, batch, then direct
 * reclaim and retries, OOM as mode says (NULL: the default). 0, -ENOMEM,
 * or -EBUSY when the environment's throttle_slot refused a reclaim slot.
 * The root is never charged. */
int charge_try(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode);
/* Return n pages of memory (and memsw unless keep_memsw, as on swap-out). */
void charge_uncharge(struct mcg_group *g, long n, bool keep_memsw);
/* Give back stocked pages of g's subtree (all groups for g == NULL). */
void charge_drain(struct mcg_engine *e, struct mcg_group *g);
/* Pages currently parked in stocks, for the invariant checker. */
long charge_stocked(struct mcg_engine *e, struct mcg_group *g);

/* Kernel memory of g's tasks (page tables, stacks; no page of ours): as
 * cgroup v1 does, it is charged to memory and memsw (with reclaim) and to
 * kmem. 0, or -ENOMEM (nothing charged). */
int charge_kmem(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode);
void charge_kmem_uncharge(struct mcg_group *g, long n);

/* A batch of uncharges and page frees (an unmap, an exit), a local of the
 * caller's passed down explicitly, as the kernel passes its uncharge
 * gather: uncharges of one group are summed and applied once, and freed
 * pages go back to the pool together under one free-list lock per node
 * (as release_pages does), at charge_batch_end, when the group changes or
 * when the list is full. */
#define CHARGE_BATCH_FREE 64
struct charge_batch {
	struct mcg_engine *e;
	struct mcg_group *g;          /* referenced while pages are pending */
	long pages;
	long memsw;
	int nfree;
	uint32_t free[CHARGE_BATCH_FREE];   /* released, not yet in the pool */
};
void charge_batch_begin(struct charge_batch *b, struct mcg_engine *e);
void charge_batch_end(struct charge_batch *b);

/* A new page of kind for g, charged as mode says (NULL: the default), on
 * g's LRU. flags may carry PG_DIRTY, PG_MAPPED, PG_MLOCKED. Returns the
 * page or -ENOMEM. */
long charge_new_page(struct mcg_group *g, unsigned cpu, unsigned node, enum page_kind kind,
		     uint32_t owner, uint8_t flags, struct charge_mode *mode);
/* Free a page: off the LRU, statistics, uncharge, into b (NULL: at once). */
void charge_free_page(struct mcg_engine *e, uint32_t idx, struct charge_batch *b);

/* The end of a page's life once it is off its LRU: statistics, uncharge
 * (keeping memsw when its content went to swap), back to the pool. */
void charge_release_page(struct mcg_engine *e, struct mcg_group *g, uint32_t idx, bool keep_memsw);

#ifdef MCG_BENCH
/* bench/ only (seed B3): this thread's charges that reached the charge
 * path (not the root's, not without accounting) and those the stock
 * served, since the last call, which resets them. */
struct charge_bench_counts {
	long charges, stock_hits;
};
void charge_bench_take(struct charge_bench_counts *out);
/* The sum over CPUs of the largest stock each held since the last call
 * (which resets them): a bound on the pages charged ahead of use at any
 * one moment. */
long charge_bench_stock_max(struct mcg_engine *e);
#endif

#endif
