/* charge.h: charging groups and pages (§5.4, seed topic 3): the
 * try-charge loop (the stock, the counters, the reclaim throttle, direct
 * reclaim, retries, the OOM killer), kernel memory, and a new page's
 * charge. The stock, the batches and a page's release are the charge
 * core's (charge_core.h), uncharging and the group's end uncharge.h's;
 * this header includes both for its callers. Never picks pages to
 * reclaim (reclaim.c) or victims (oom.c). */
#ifndef MEMCGFS_CHARGE_H
#define MEMCGFS_CHARGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/charge_core.h"
#include "engine/oom_wait.h"
#include "engine/page.h"
#include "engine/uncharge.h"

struct mcg_engine;
struct mcg_group;

/* Charge n pages to g from simulated CPU cpu: stock, batch, then direct
 * reclaim and retries, OOM as mode says (NULL: the default). 0, -ENOMEM,
 * or -EBUSY when the environment's throttle_slot refused a reclaim slot.
 * The root is never charged. */
int charge_try(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode);

/* Kernel memory of g's tasks (page tables, stacks; no page of ours): as
 * cgroup v1 does, it is charged to memory and memsw (with reclaim) and to
 * kmem. 0, or -ENOMEM (nothing charged). */
int charge_kmem(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode);

/* A new page of kind for g, charged as mode says (NULL: the default), on
 * g's LRU. flags may carry PG_DIRTY, PG_MAPPED, PG_MLOCKED. Returns the
 * page or -ENOMEM. */
long charge_new_page(struct mcg_group *g, unsigned cpu, unsigned node, enum page_kind kind,
		     uint32_t owner, uint8_t flags, struct charge_mode *mode);

#ifdef MCG_BENCH
/* bench/ only (seed B3): this thread's charges that reached the charge
 * path (not the root's, not without accounting) and those the stock
 * served, since the last call, which resets them. */
struct charge_bench_counts {
	long charges, stock_hits;
};
void charge_bench_take(struct charge_bench_counts *out);
#endif

#endif
