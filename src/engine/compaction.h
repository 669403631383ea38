/* compaction.h: huge pages' allocation (issue 22, item 6): the slow path
 * of a transparent huge page fault, memory compaction by pageblock, and
 * their counters. Owns compaction and the huge-page counts; never
 * charges, never picks pages to reclaim (reclaim.c does). */
#ifndef MEMCGFS_COMPACTION_H
#define MEMCGFS_COMPACTION_H

#include <stdbool.h>
#include <stdint.h>

struct mcg_engine;

/* With m.thp: pageblocks on the page pool and the counters. 0 or -ENOMEM. */
int compact_init(struct mcg_engine *e);
void compact_destroy(struct mcg_engine *e);

/* A huge page (PAGE_BLOCK free pages, taken) for a fault on node's CPU,
 * as 3.2's __alloc_pages_slowpath found one for GFP_TRANSHUGE (no kswapd,
 * no retry) with Mel Gorman's series: a free block from node on; else
 * asynchronous compaction; else, unless compaction is deferred, direct
 * reclaim for the order and a free block; else synchronous compaction.
 * PAGE_NONE: the fault falls back to a base page (counted). */
uint32_t compact_alloc_huge(struct mcg_engine *e, unsigned node);

/* Compact node n for a block of 2^order pages: 0 COMPACT_SKIPPED (too few
 * free pages), 1 COMPACT_CONTINUE ended without a free block (the
 * scanners met), 2 COMPACT_PARTIAL (a free block is there). sync:
 * dirty page cache may move too; asynchronous compaction leaves it (and
 * nothing under writeback ever moves). For tests and the slow path. */
int compact_node(struct mcg_engine *e, unsigned n, int order, bool sync);

/* A huge page charged or given up: the counts. */
void compact_count_thp(struct mcg_engine *e, bool allocated);

#endif
