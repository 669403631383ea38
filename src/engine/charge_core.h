/* charge_core.h: what the charge path (charge.h) and every uncharger
 * share (§5.4, §5.6, seed topic 3): the per-CPU stock of pre-charged pages, the
 * uncharge batch, and the end of a page's life. Owns the stock and the
 * batch record; never charges a counter, never reclaims. */
#ifndef MEMCGFS_CHARGE_CORE_H
#define MEMCGFS_CHARGE_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
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

/* The stock's batch in pages: the profile's (§7), or the bench's. */
long charge_batch_pages(const struct mcg_engine *e);

int charge_core_init(struct mcg_engine *e);
void charge_core_destroy(struct mcg_engine *e);

/* The stock of simulated CPU cpu: take n pages of g from it (true), or
 * park n pages charged ahead for g in it (what it held for another group,
 * or past the batch, goes back). */
bool charge_stock_consume(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n);
void charge_stock_refill(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n);
/* Give back stocked pages of g's subtree (all groups for g == NULL). */
void charge_drain(struct mcg_engine *e, struct mcg_group *g);

/* The end of a page's life once it is off its LRU: statistics, uncharge
 * (keeping memsw when its content went to swap), back to the pool. */
void charge_release_page(struct mcg_engine *e, struct mcg_group *g, uint32_t idx, bool keep_memsw);


#endif
