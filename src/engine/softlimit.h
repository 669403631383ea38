/* softlimit.h: the groups over their soft limits, in order of excess
 * (§5.9), so that global reclaim finds the largest excess without walking
 * the tree. Owns that order and its keys; never reclaims, never charges,
 * and holds its lock over nothing but the order. */
#ifndef MEMCGFS_SOFTLIMIT_H
#define MEMCGFS_SOFTLIMIT_H

#include <stddef.h>

struct mcg_engine;
struct mcg_group;

int soft_init(struct mcg_engine *e);
void soft_destroy(struct mcg_engine *e);

/* g was linked under its parent (mcg_create, with tree_lock held for
 * writing): it takes its place in the walk order that breaks ties. */
void soft_link(struct mcg_group *g);

/* g's usage went up (a charge reached the counters, a move pre-charged
 * them): g and each ancestor its memory counter charges that is now
 * further over its soft limit than its key allows get a new key. Lock-free
 * unless one does. */
void soft_charged(struct mcg_group *g);

/* g's soft limit was written: its key is its excess now. */
void soft_limit_changed(struct mcg_group *g);

/* g was reaped (mcg_reap, with tree_lock held for writing): it leaves the
 * order for good, before it can be freed. */
void soft_forget(struct mcg_group *g);

/* The group with the largest excess over its soft limit now (usage minus
 * soft limit, the root never), referenced, with that excess in *excess
 * (pages); NULL and 0 when no group is over. Of groups with equal excess,
 * the first in mcg_iter's pre-order walk from the root, as the walk this
 * replaces chose. O(log n) when the keys are tight (see softlimit.c). */
struct mcg_group *soft_pick(struct mcg_engine *e, long *excess);

/* The invariant checker: the order is a heap, every member's key bounds
 * its excess, and every linked group over its soft limit is a member.
 * Quiescent engines only. 0, or -1 with msg filled. */
int soft_check(struct mcg_engine *e, char *msg, size_t len);

#endif
