/* stat.c: statistics items of each group and their sums over a subtree.
 * Owns the arithmetic only; never renders text and never walks pages. */
#include "engine/memcg.h"
#include "engine/stat.h"

long stat_local(const struct mcg_group *g, enum stat_item it)
{
	return atomic_load_explicit(&g->stat[it], memory_order_relaxed);
}

void stat_add(struct mcg_group *g, enum stat_item it, long delta)
{
	atomic_fetch_add_explicit(&g->stat[it], delta, memory_order_relaxed);
}

static atomic_long *stat_lru_slot(const struct mcg_group *g, enum stat_lru l, int node)
{
	return &g->lru[(size_t)node * LRU__COUNT + l];
}

long stat_lru_local(const struct mcg_group *g, enum stat_lru l, int node)
{
	long sum = 0;

	if (node >= 0)
		return atomic_load_explicit(stat_lru_slot(g, l, node), memory_order_relaxed);
	for (unsigned n = 0; n < g->eng->cfg.nodes; n++)
		sum += atomic_load_explicit(stat_lru_slot(g, l, (int)n), memory_order_relaxed);
	return sum;
}

void stat_lru_add(struct mcg_group *g, enum stat_lru l, int node, long delta)
{
	atomic_fetch_add_explicit(stat_lru_slot(g, l, node), delta, memory_order_relaxed);
}

/* Subtree sums walk groups (dying ones included, §3.9), never pages. Caller
 * must not hold tree_lock. */
static long stat_walk(const struct mcg_group *g, long (*get)(const struct mcg_group *, int, int),
		      int a, int b)
{
	long sum = get(g, a, b);

	for (const struct mcg_group *c = g->children; c; c = c->sibling)
		sum += stat_walk(c, get, a, b);
	return sum;
}

static long stat_get_item(const struct mcg_group *g, int it, int unused)
{
	(void)unused;
	return stat_local(g, (enum stat_item)it);
}

static long stat_get_lru(const struct mcg_group *g, int l, int node)
{
	return stat_lru_local(g, (enum stat_lru)l, node);
}

long stat_total(struct mcg_group *g, enum stat_item it)
{
	long sum;

	pthread_rwlock_rdlock(&g->eng->tree_lock);
	sum = stat_walk(g, stat_get_item, it, 0);
	pthread_rwlock_unlock(&g->eng->tree_lock);
	return sum;
}

long stat_lru_total(struct mcg_group *g, enum stat_lru l, int node)
{
	long sum;

	pthread_rwlock_rdlock(&g->eng->tree_lock);
	sum = stat_walk(g, stat_get_lru, l, node);
	pthread_rwlock_unlock(&g->eng->tree_lock);
	return sum;
}
