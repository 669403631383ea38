/* softlimit.h: the groups over their soft limits, in order of excess
 * (§5.9), so that global reclaim finds the largest excess without walking
 * the tree. Owns that order and its keys; never reclaims, never charges,
 * and holds its lock over nothing but the order. */
#ifndef MEMCGFS_SOFTLIMIT_H
#define MEMCGFS_SOFTLIMIT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct mcg_engine;
struct mcg_group;

#define SOFT_GONE UINT_MAX         /* soft_pos of a reaped group */

/* The order itself (the invariant checker reads it under its lock). */
struct soft_heap {
	pthread_mutex_t lock;          /* the heap, every soft_pos and soft_key */
	unsigned nr;
	unsigned long linked;          /* soft_seq of the last group linked */
	struct mcg_group **heap;       /* [MCG_ID_MAX]: ids bound the groups */
};

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

/* g was reaped (uncharge_reap, with tree_lock held for writing): it leaves the
 * order for good, before it can be freed. */
void soft_forget(struct mcg_group *g);

/* The group with the largest excess over its soft limit now (usage minus
 * soft limit, the root never), referenced, with that excess in *excess
 * (pages); NULL and 0 when no group is over. Of groups with equal excess,
 * the first in mcg_iter's pre-order walk from the root, as the walk this
 * replaces chose. O(log n) when the keys are tight (see softlimit.c). */
struct mcg_group *soft_pick(struct mcg_engine *e, long *excess);

/* g's excess over its soft limit (pages; negative when under). */
long soft_excess(struct mcg_group *g);
/* a belongs above b in the order: a larger key, or the same key and
 * first in mcg_iter's walk. */
bool soft_above(const struct mcg_group *a, const struct mcg_group *b);

#endif
