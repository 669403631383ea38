/* charge_core.h: what the charge path (charge.h) and every uncharger
 * share (§5.6, seed topic 3): the per-CPU stock of pre-charged pages, the
 * uncharge batch, and the end of a page's life. Owns the stock and the
 * batch record; never charges a counter, never reclaims. */
#ifndef MEMCGFS_CHARGE_CORE_H
#define MEMCGFS_CHARGE_CORE_H

#include <stdbool.h>
#include <stdint.h>

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

int charge_core_init(struct mcg_engine *e);
void charge_core_destroy(struct mcg_engine *e);

/* The stock of simulated CPU cpu: take n pages of g from it (true), or
 * park n pages charged ahead for g in it (what it held for another group,
 * or past the batch, goes back). */
bool charge_stock_consume(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n);
void charge_stock_refill(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n);
/* Give back stocked pages of g's subtree (all groups for g == NULL). */
void charge_drain(struct mcg_engine *e, struct mcg_group *g);
/* Pages currently parked in stocks, for the invariant checker. */
long charge_stocked(struct mcg_engine *e, struct mcg_group *g);

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

/* Free a page: off the LRU, statistics, uncharge, into b (NULL: at once). */
void charge_free_page(struct mcg_engine *e, uint32_t idx, struct charge_batch *b);
/* The end of a page's life once it is off its LRU: statistics, uncharge
 * (keeping memsw when its content went to swap), back to the pool. */
void charge_release_page(struct mcg_engine *e, struct mcg_group *g, uint32_t idx, bool keep_memsw);

#ifdef MCG_BENCH
/* The sum over CPUs of the largest stock each held since the last call
 * (which resets them): a bound on the pages charged ahead of use at any
 * one moment (bench/ only, seed B3). */
long charge_bench_stock_max(struct mcg_engine *e);
#endif

#endif
