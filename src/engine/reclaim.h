/* reclaim.h: taking pages back from a group's subtree (direct reclaim on a
 * failed charge, limit shrinking, force_empty, global shortage). Owns
 * the scan: second-chance aging, active/inactive balance, the anon/file
 * ratio from swappiness. Never charges. */
#ifndef MEMCGFS_RECLAIM_H
#define MEMCGFS_RECLAIM_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;

/* Whose thread reclaims: all that the reason for a reclaim changes. It
 * decides how the pages are counted (the index of mcg_group.pg_scanned
 * and pg_reclaimed, shown by the memory.stat extension keys) and whether
 * reclaim waits for the writeback of a page it marked. */
enum reclaim_ctx {
	/* The thread that needs the memory, for a charge over a limit, a
	 * limit write or force_empty, a move's destination, or the machine
	 * running out of pages (soft limits first). Counted as direct
	 * (pg_scan, pg_pgsteal), as the kernel counts every reclaim outside
	 * kswapd in pgscan_direct; a group's waits for writeback (legacy
	 * memcg), the machine's (from the root) does not, as the kernel's
	 * global reclaim does not. */
	RECLAIM_DIRECT,
	/* The watermark workers: counted as background (kswapd_pgscan,
	 * kswapd_steal); never waits for writeback. */
	RECLAIM_BACKGROUND,
};

/* Reclaim up to nr pages from g's subtree. Returns pages reclaimed. */
long reclaim_subtree(struct mcg_group *g, long nr, bool may_swap, enum reclaim_ctx ctx);

/* The machine's reclaim of one zone (zone.c, seed topic 5): up to nr pages
 * from every group's pages of node zone, at priority prio. accumulate:
 * through the priority-shift accumulators (seed 5.3); otherwise 2.6.3's
 * shrink_zone, scanning at least max(inactive >> prio, 2 nr) pages of the
 * zone's inactive lists. Adds the pages scanned to *scanned; returns the
 * pages reclaimed. */
long reclaim_zone(struct mcg_engine *e, unsigned zone, long nr, int prio, bool accumulate,
		  enum reclaim_ctx ctx, long *scanned);

/* 3.2's try_to_free_pages for a huge page's allocation (order >
 * PAGE_ALLOC_COSTLY_ORDER, reclaim for compaction), from node on, as Mel
 * Gorman's series left it (the seed's (b)): from DEF_PRIORITY down until
 * SWAP_CLUSTER_MAX pages came back, each node not yet ready for
 * compaction shrunk in passes while should_continue_reclaim says so
 * (2 << order pages, then until compaction could run). Returns the pages
 * reclaimed. */
long reclaim_for_order(struct mcg_engine *e, unsigned node, int order);

/* The machine ran short (§5.9): reclaim from the groups furthest over their
 * soft limits first, largest excess first, each until its excess is gone
 * or a quarter of it was reclaimed; stop once something came back or after
 * two fruitless picks. Returns pages reclaimed (0: nobody is over). */
long reclaim_soft_limits(struct mcg_engine *e, long nr);

/* Complete the writeback due by now, reclaiming at once the pages the
 * immediate policy hands back (seed topic 4). Cheap when nothing is due. */
void reclaim_wb_complete(struct mcg_engine *e);

/* The machine's direct reclaim fell short after a pass below priority
 * DEF_PRIORITY - 2 that scanned: try_to_free_pages' "take a nap, wait for
 * some writeback to complete" (congestion_wait(WRITE, HZ/10), 2.6 to
 * 5.15), through the environment's sleep; then the writeback due by its
 * end completes. Only with the machine's disk (blkdev.c); else nothing. */
void reclaim_congestion_nap(struct mcg_engine *e);

#endif
