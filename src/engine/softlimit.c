/* softlimit.c: the order of the groups over their soft limits (§5.9), a
 * binary max-heap by excess, so that global reclaim picks the largest
 * excess in O(log n) instead of walking every group. Never reclaims, never
 * charges; its lock is held over the heap alone and nothing is called
 * under it (lock order: docs/design.md, `soft_heap.lock`).
 *
 * Keys are upper bounds, tightened when looked at. A member's key is at
 * least its excess (usage minus soft limit) whenever the usage went up
 * through soft_charged; uncharges lower the excess and leave the key.
 * soft_pick takes the top, computes the excess: if the key was loose it
 * sets the key to the excess and looks again; the first top whose excess
 * reaches its key is the largest, since every other excess is at most its
 * key. A charge that raises a key raises it SOFT_SLACK pages above the
 * excess, so that a group over its limit takes the lock once in that many
 * pages of growth (the kernel refreshes its tree once per 1024 events,
 * §5.9); a pick then tightens at most the keys within that distance of
 * the largest excess. The invariant checker (check.c) reads the heap under
 * its lock. One order per engine: soft-limit reclaim reclaims a
 * group's whole subtree on every node, so the kernel's per-node trees
 * would all give the same answer. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/softlimit.h"

#define SOFT_SLACK 64              /* pages a charge's key runs ahead */

int soft_init(struct mcg_engine *e)
{
	struct soft_heap *h = calloc(1, sizeof(*h));

	if (!h || !(h->heap = calloc(MCG_ID_MAX, sizeof(*h->heap)))) {
		free(h);
		return -ENOMEM;
	}
	pthread_mutex_init(&h->lock, NULL);
	e->soft = h;
	return 0;
}

void soft_destroy(struct mcg_engine *e)
{
	struct soft_heap *h = e->soft;

	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h->heap);
	free(h);
	e->soft = NULL;
}

void soft_link(struct mcg_group *g)
{
	/* tree_lock (write) serialises links: no atomic needed */
	g->soft_seq = ++g->eng->soft->linked;
}

long soft_excess(struct mcg_group *g)
{
	return pc_usage(&g->cnt[MCG_MEM]) - atomic_load(&g->soft_limit);
}

/* a comes before b (a != b) in mcg_iter's pre-order walk: an ancestor
 * before its descendants, and of two siblings the one linked last, since
 * mcg_create puts a new child at the head of its parent's list. Parents
 * and soft_seq never change, so two linked groups keep their order. */
static bool soft_walk_before(const struct mcg_group *a, const struct mcg_group *b)
{
	while (a->depth > b->depth)
		if ((a = a->parent) == b)
			return false;
	while (b->depth > a->depth)
		if ((b = b->parent) == a)
			return true;
	while (a->parent != b->parent) {
		a = a->parent;
		b = b->parent;
	}
	return a->soft_seq > b->soft_seq;
}

/* a belongs above b: a larger key, or the same key and first in the walk. */
bool soft_above(const struct mcg_group *a, const struct mcg_group *b)
{
	long ka = atomic_load_explicit(&a->soft_key, memory_order_relaxed);
	long kb = atomic_load_explicit(&b->soft_key, memory_order_relaxed);

	return ka != kb ? ka > kb : soft_walk_before(a, b);
}

static void soft_place(struct soft_heap *h, unsigned i, struct mcg_group *g)
{
	h->heap[i] = g;
	g->soft_pos = i + 1;
}

static void soft_sift_up(struct soft_heap *h, unsigned i)
{
	struct mcg_group *g = h->heap[i];

	while (i > 0 && soft_above(g, h->heap[(i - 1) / 2])) {
		soft_place(h, i, h->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	soft_place(h, i, g);
}

static void soft_sift_down(struct soft_heap *h, unsigned i)
{
	struct mcg_group *g = h->heap[i];

	for (;;) {
		unsigned c = 2 * i + 1;

		if (c >= h->nr)
			break;
		if (c + 1 < h->nr && soft_above(h->heap[c + 1], h->heap[c]))
			c++;
		if (!soft_above(h->heap[c], g))
			break;
		soft_place(h, i, h->heap[c]);
		i = c;
	}
	soft_place(h, i, g);
}

/* Caller holds h->lock; g is a member. */
static void soft_remove_locked(struct soft_heap *h, struct mcg_group *g)
{
	unsigned i = g->soft_pos - 1;
	struct mcg_group *last = h->heap[--h->nr];

	g->soft_pos = 0;
	atomic_store_explicit(&g->soft_key, 0, memory_order_relaxed);
	if (last == g)
		return;
	soft_place(h, i, last);
	soft_sift_up(h, i);
	soft_sift_down(h, last->soft_pos - 1);
}

/* Caller holds h->lock; g is not reaped. A key of 0 or less takes g out. */
static void soft_set_key_locked(struct soft_heap *h, struct mcg_group *g, long key)
{
	long old = atomic_load_explicit(&g->soft_key, memory_order_relaxed);

	if (key <= 0) {
		if (g->soft_pos)
			soft_remove_locked(h, g);
		return;
	}
	atomic_store_explicit(&g->soft_key, key, memory_order_relaxed);
	if (!g->soft_pos) {
		soft_place(h, h->nr++, g);
		soft_sift_up(h, h->nr - 1);
	} else if (key > old) {
		soft_sift_up(h, g->soft_pos - 1);
	} else {
		soft_sift_down(h, g->soft_pos - 1);
	}
}

void soft_charged(struct mcg_group *g)
{
	struct soft_heap *h = g->eng->soft;

	/* up the counters this charge went through (use_hierarchy 0 leaves a
	 * child's counter unlinked from its parent's) */
	for (; g && !mcg_root(g); g = g->cnt[MCG_MEM].parent ? g->parent : NULL) {
		long x;

		/* racy, but a charger that misses a concurrent raise sees its
		 * own usage under the lock: the key ends up above both */
		if (soft_excess(g) <= atomic_load_explicit(&g->soft_key, memory_order_relaxed))
			continue;
		pthread_mutex_lock(&h->lock);
		/* a reaped group is out for good; the reaper re-reads usage
		 * after it sets reaped, so a charge it missed never lands here */
		if (g->soft_pos != SOFT_GONE &&
		    (x = soft_excess(g)) > atomic_load_explicit(&g->soft_key, memory_order_relaxed))
			soft_set_key_locked(h, g, x + SOFT_SLACK);
		pthread_mutex_unlock(&h->lock);
	}
}

void soft_limit_changed(struct mcg_group *g)
{
	struct soft_heap *h = g->eng->soft;

	if (mcg_root(g))
		return;                   /* never picked (§5.9: the root gives last) */
	pthread_mutex_lock(&h->lock);
	if (g->soft_pos != SOFT_GONE)
		soft_set_key_locked(h, g, soft_excess(g));
	pthread_mutex_unlock(&h->lock);
}

void soft_forget(struct mcg_group *g)
{
	struct soft_heap *h = g->eng->soft;

	pthread_mutex_lock(&h->lock);
	if (g->soft_pos && g->soft_pos != SOFT_GONE)
		soft_remove_locked(h, g);
	g->soft_pos = SOFT_GONE;
	pthread_mutex_unlock(&h->lock);
}

struct mcg_group *soft_pick(struct mcg_engine *e, long *excess)
{
	struct soft_heap *h = e->soft;
	struct mcg_group *g = NULL;

	pthread_mutex_lock(&h->lock);
	/* Each round takes a member out or lowers its key to its excess; a
	 * member's key goes up only with its usage. The bound stops a top
	 * that charges faster than it is looked at from keeping us here. */
	for (unsigned rounds = 2 * h->nr + 1; h->nr > 0 && rounds > 0; rounds--) {
		long x;

		g = h->heap[0];
		x = soft_excess(g);
		if (x >= atomic_load_explicit(&g->soft_key, memory_order_relaxed) || rounds == 1) {
			if (x > 0) {
				mcg_get(g);       /* a member is linked: the tree holds it */
				*excess = x;
				pthread_mutex_unlock(&h->lock);
				return g;
			}
		}
		soft_set_key_locked(h, g, x);    /* tighter, or out when x <= 0 */
	}
	pthread_mutex_unlock(&h->lock);
	*excess = 0;
	return NULL;
}
