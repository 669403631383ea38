/* reclaim.h: taking pages back from a group's subtree (direct reclaim on a
 * failed charge, limit shrinking, force_empty, global shortage). Owns
 * the scan: second-chance aging, active/inactive balance, the anon/file
 * ratio from swappiness. Never charges. */
#ifndef MEMCGFS_RECLAIM_H
#define MEMCGFS_RECLAIM_H

#include <stdbool.h>
#include <stdint.h>

struct mcg_engine;
struct mcg_group;

enum reclaim_ctx {
	RECLAIM_DIRECT,      /* a charge failed */
	RECLAIM_LIMIT,       /* limit write, force_empty */
	RECLAIM_GLOBAL,      /* the simulated machine ran out of pages */
	RECLAIM_BACKGROUND,  /* watermark workers */
};

/* Reclaim up to nr pages from g's subtree. Returns pages reclaimed. */
long reclaim_subtree(struct mcg_group *g, long nr, bool may_swap, enum reclaim_ctx ctx);

/* The machine ran short (§5.9): reclaim from the groups furthest over their
 * soft limits first, largest excess first, each until its excess is gone
 * or a quarter of it was reclaimed; stop once something came back or after
 * two fruitless picks. Returns pages reclaimed (0: nobody is over). */
long reclaim_soft_limits(struct mcg_engine *e, long nr);

/* Evict a clean page of g that the caller has isolated (writeback's
 * immediate reclaim): true if it went, else it is back on its list. */
bool reclaim_isolated_page(struct mcg_group *g, uint32_t idx);

#endif
