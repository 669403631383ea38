/* rstat.c: the changed-group lists and the flush of rstat.h. Every list
 * and every node's last/pending array is under the engine's rstat lock; a
 * node's total is written there and read anywhere. Never walks the group
 * tree itself (only the changed lists) and never walks pages. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/rstat.h"
#include "engine/stat.h"

struct rstat_state {
	pthread_mutex_t lock;         /* a leaf: nothing is taken under it */
	bool fence;                   /* no thread barrier: updaters fence */
	unsigned n;                   /* items per node: stat items, then LRU sizes */
	atomic_long flushed;          /* nodes flushed so far (rstat_flushed) */
};

int rstat_init(struct mcg_engine *e)
{
	struct rstat_state *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return -ENOMEM;
	pthread_mutex_init(&rs->lock, NULL);
	rs->n = STAT__COUNT + LRU__COUNT * e->m.nodes;
	/* a single-threaded environment orders nothing; otherwise the
	 * barrier must work, or every update fences */
	rs->fence = e->env.ops->sync_threads && e->env.ops->sync_threads(e->env.arg) != 0;
	e->rstat = rs;
	return 0;
}

void rstat_destroy(struct mcg_engine *e)
{
	if (!e->rstat)
		return;
	pthread_mutex_destroy(&e->rstat->lock);
	free(e->rstat);
	e->rstat = NULL;
}

int rstat_node_init(struct mcg_group *g)
{
	struct rstat_node *n = &g->rs;
	unsigned k = g->eng->rstat->n;

	n->g = g;
	n->fence = g->eng->rstat->fence;
	n->parent = g->parent ? &g->parent->rs : NULL;
	n->last = calloc(k, sizeof(*n->last));
	n->pending = calloc(k, sizeof(*n->pending));
	n->total = calloc(k, sizeof(*n->total));
	if (!n->last || !n->pending || !n->total) {
		rstat_node_free(g);
		return -ENOMEM;
	}
	return 0;
}

void rstat_node_free(struct mcg_group *g)
{
	free(g->rs.last);
	free(g->rs.pending);
	free(g->rs.total);
	g->rs.last = g->rs.pending = NULL;
	g->rs.total = NULL;
}

/* The group's own value of item i, now. */
static long rstat_local(const struct mcg_group *g, unsigned i)
{
	unsigned node, l;

	if (i < STAT__COUNT)
		return stat_local(g, (enum stat_item)i);
	i -= STAT__COUNT;
	node = i / LRU__COUNT;
	l = i % LRU__COUNT;
	return stat_lru_local(g, (enum stat_lru)l, (int)node);
}

void rstat_queue(struct rstat_node *n)
{
	struct rstat_state *rs = n->g->eng->rstat;

	pthread_mutex_lock(&rs->lock);
	/* up to the first ancestor already queued (its ancestors are too) */
	for (; n && !n->dead && !atomic_load_explicit(&n->queued, memory_order_relaxed); n = n->parent) {
		atomic_store_explicit(&n->queued, true, memory_order_relaxed);
		if (n->parent) {
			n->prev = NULL;
			n->next = n->parent->children;
			if (n->next)
				n->next->prev = n;
			n->parent->children = n;
		}
	}
	pthread_mutex_unlock(&rs->lock);
}

/* Unqueue n's changed subtree, appending it in post-order to *tail. */
static void rstat_collect(struct rstat_node *n, struct rstat_node ***tail)
{
	while (n->children) {
		struct rstat_node *c = n->children;

		n->children = c->next;
		c->next = c->prev = NULL;
		rstat_collect(c, tail);
	}
	atomic_store_explicit(&n->queued, false, memory_order_relaxed);
	n->flush_next = NULL;
	**tail = n;
	*tail = &n->flush_next;
}

/* Caller holds the lock; top is queued. */
static void rstat_flush_locked(struct mcg_engine *e, struct rstat_node *top)
{
	struct rstat_state *rs = e->rstat;
	struct rstat_node *list = NULL, **tail = &list;

	/* top leaves its parent's list; the parent stays queued */
	if (top->parent) {
		if (top->prev)
			top->prev->next = top->next;
		else
			top->parent->children = top->next;
		if (top->next)
			top->next->prev = top->prev;
		top->next = top->prev = NULL;
	}
	rstat_collect(top, &tail);
	for (struct rstat_node *n = list; n; n = n->flush_next)
		atomic_fetch_add_explicit(&rs->flushed, 1, memory_order_relaxed);
	/* Every update stored before a mark was cleared is visible from here
	 * on, and every later one sees the mark clear and queues again. */
	atomic_thread_fence(memory_order_seq_cst);
	if (e->env.ops->sync_threads && !rs->fence)
		e->env.ops->sync_threads(e->env.arg);
	for (struct rstat_node *n = list; n; n = n->flush_next) {
		for (unsigned i = 0; i < rs->n; i++) {
			long cur = rstat_local(n->g, i), d = cur - n->last[i] + n->pending[i];

			n->last[i] = cur;
			n->pending[i] = 0;
			if (!d)
				continue;
			atomic_store_explicit(&n->total[i],
					      atomic_load_explicit(&n->total[i], memory_order_relaxed) + d,
					      memory_order_relaxed);
			if (n->parent)
				n->parent->pending[i] += d;
		}
	}
}

static void rstat_flush(struct mcg_group *g)
{
	struct rstat_state *rs = g->eng->rstat;

	if (!atomic_load_explicit(&g->rs.queued, memory_order_acquire))
		return;                   /* nothing under g changed */
	pthread_mutex_lock(&rs->lock);
	if (atomic_load_explicit(&g->rs.queued, memory_order_relaxed))
		rstat_flush_locked(g->eng, &g->rs);
	pthread_mutex_unlock(&rs->lock);
}

void rstat_forget(struct mcg_group *g)
{
	struct rstat_state *rs = g->eng->rstat;
	struct rstat_node *n = &g->rs;

	pthread_mutex_lock(&rs->lock);
	if (atomic_load_explicit(&n->queued, memory_order_relaxed))
		rstat_flush_locked(g->eng, n);
	/* g's deltas are in its parent's pending now, and the parent queued
	 * since g was; from here on g's updates are not queued */
	n->dead = true;
	pthread_mutex_unlock(&rs->lock);
}

long rstat_item(struct mcg_group *g, enum stat_item it)
{
	rstat_flush(g);
	return atomic_load_explicit(&g->rs.total[it], memory_order_relaxed);
}

long rstat_lru(struct mcg_group *g, enum stat_lru l, int node)
{
	long sum = 0;

	rstat_flush(g);
	if (node >= 0)
		return atomic_load_explicit(&g->rs.total[STAT__COUNT + (unsigned)node * LRU__COUNT + l],
					    memory_order_relaxed);
	for (unsigned k = 0; k < g->eng->m.nodes; k++)
		sum += atomic_load_explicit(&g->rs.total[STAT__COUNT + k * LRU__COUNT + l],
					    memory_order_relaxed);
	return sum;
}

long rstat_flushed(const struct mcg_engine *e)
{
	return atomic_load_explicit(&e->rstat->flushed, memory_order_relaxed);
}
