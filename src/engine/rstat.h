/* rstat.h: hierarchical statistics kept the way the kernel's rstat keeps
 * them. Each group has the sums of its subtree as of the last flush; an
 * update marks the group (and the path to the root, until a marked
 * ancestor) as changed, and a read of a subtree's sums first flushes only
 * the changed groups under it, bottom-up. A read of an unchanged subtree is
 * a copy of cached sums, whatever the number of groups. Covers the
 * statistics items (stat.h) and the LRU sizes per node. Never walks pages,
 * never renders text.
 *
 * The mark is a relaxed load on the update path. Its race with a flush
 * (an update's store still in its CPU's buffer while the flush clears the
 * mark) is closed by the flush, not by the updater: the flush clears the
 * marks, then asks the environment for a barrier on every thread of the
 * process (sync_threads: membarrier), then reads. Without that barrier the
 * updaters fence (rstat_node.fence). */
#ifndef MEMCGFS_RSTAT_H
#define MEMCGFS_RSTAT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "engine/stat.h"

struct mcg_engine;
struct mcg_group;

/* One per group (rstat_lock for everything but queued and total). */
struct rstat_node {
	atomic_bool queued;           /* changed since its last flush; implies its parent is */
	bool fence;                   /* updaters fence (no thread barrier) */
	bool dead;                    /* reaped: updates are no longer queued */
	struct mcg_group *g;
	struct rstat_node *parent;    /* NULL at the root */
	struct rstat_node *children;  /* queued children */
	struct rstat_node *next, *prev;   /* among the parent's queued children */
	struct rstat_node *flush_next;    /* the flush's post-order */
	long *last;                   /* [n] local values at the last flush */
	long *pending;                /* [n] flushed children's deltas not yet added */
	atomic_long *total;           /* [n] subtree sums as of the last flush */
};

/* The engine's flush lock and barrier choice. */
struct rstat_state;
int rstat_init(struct mcg_engine *e);
void rstat_destroy(struct mcg_engine *e);

/* A new group's node (g's parent's node already made); 0 or -ENOMEM. */
int rstat_node_init(struct mcg_group *g);
void rstat_node_free(struct mcg_group *g);
/* g is being reaped (tree_lock held for writing): what it changed goes to
 * its parent's sums, which keep it (as the kernel's keep a dead child's
 * events), and it leaves the changed lists. */
void rstat_forget(struct mcg_group *g);

void rstat_queue(struct rstat_node *n);

/* An item or an LRU size of n's group changed (after the store). */
static inline void rstat_updated(struct rstat_node *n)
{
	if (__builtin_expect(n->fence, 0))
		atomic_thread_fence(memory_order_seq_cst);
	else
		atomic_signal_fence(memory_order_seq_cst);   /* the flush's barrier pairs */
	if (!atomic_load_explicit(&n->queued, memory_order_relaxed))
		rstat_queue(n);
}

/* How many group nodes all flushes so far went through (tests, benchmarks:
 * a read of an unchanged subtree adds none). */
long rstat_flushed(const struct mcg_engine *e);

#endif
