/* stat.c: statistics items of each group and their sums over a subtree.
 * Owns the arithmetic only; never renders text and never walks pages. */
#include "engine/memcg.h"
#include "engine/stat.h"

static atomic_uint stat_next_shard;
static __thread int stat_my_shard = -1;

static int stat_shard_of_thread(void)
{
	if (stat_my_shard < 0)
		stat_my_shard = (int)(atomic_fetch_add(&stat_next_shard, 1) % STAT_SHARDS);
	return stat_my_shard;
}

long stat_local(const struct mcg_group *g, enum stat_item it)
{
	long sum = 0;

	for (int s = 0; s < STAT_SHARDS; s++)
		sum += atomic_load_explicit(&g->stat[s].v[it], memory_order_relaxed);
	return sum;
}

void stat_add(struct mcg_group *g, enum stat_item it, long delta)
{
	atomic_fetch_add_explicit(&g->stat[stat_shard_of_thread()].v[it], delta,
				  memory_order_relaxed);
}

long stat_lru_local(const struct mcg_group *g, enum stat_lru l, int node)
{
	long sum = 0;

	if (node >= 0)
		return atomic_load_explicit(&g->lruvec[node].size[l], memory_order_relaxed);
	for (unsigned n = 0; n < g->eng->cfg.nodes; n++)
		sum += atomic_load_explicit(&g->lruvec[n].size[l], memory_order_relaxed);
	return sum;
}

void stat_lru_add(struct mcg_group *g, enum stat_lru l, int node, long delta)
{
	atomic_fetch_add_explicit(&g->lruvec[node].size[l], delta, memory_order_relaxed);
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
