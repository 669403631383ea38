/* stat.c: statistics items of each group, in per-thread shards, and their
 * sums over a subtree by a full walk (the checker's; the sums read on the
 * file surface are rstat.c's). Owns the arithmetic only; never renders
 * text, never walks pages, never calls rstat (which sits above it). */
#include <pthread.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/stat.h"

/* Shard ownership. Shard STAT_SHARED takes atomic adds from any thread;
 * every other shard belongs to one thread at a time, which alone writes
 * it, with a plain load and store (the kernel's per-CPU counters: no
 * locked instruction). A thread claims a free shard at its first update
 * and gives it back when it exits; the next owner goes on from the same
 * values. The claim (acquire) and the release order the two owners. */
static atomic_uint stat_owned = 1u << STAT_SHARED;   /* bitmap: taken shards */
static pthread_key_t stat_key;
static pthread_once_t stat_key_once = PTHREAD_ONCE_INIT;
__thread int stat_my_shard = -1;

/* At the owner's exit (its thread-specific key's destructor, in the
 * exiting thread). Anything the thread still adds goes to the shared
 * shard. */
static void stat_shard_release(void *arg)
{
	unsigned s = (unsigned)((uintptr_t)arg - 1);

	stat_my_shard = STAT_SHARED;
	atomic_fetch_and_explicit(&stat_owned, ~(1u << s), memory_order_release);
}

static void stat_key_init(void)
{
	if (pthread_key_create(&stat_key, stat_shard_release))
		stat_key = (pthread_key_t)-1;
}

static int stat_shard_claim(void)
{
	unsigned owned = atomic_load_explicit(&stat_owned, memory_order_relaxed);

	pthread_once(&stat_key_once, stat_key_init);
	if (stat_key == (pthread_key_t)-1)
		return STAT_SHARED;
	while (owned != (1u << STAT_SHARDS) - 1) {
		unsigned s = (unsigned)__builtin_ctz(~owned);

		if (atomic_compare_exchange_weak_explicit(&stat_owned, &owned, owned | 1u << s,
							  memory_order_acquire, memory_order_relaxed)) {
			if (pthread_setspecific(stat_key, (void *)(uintptr_t)(s + 1)) == 0)
				return (int)s;
			stat_shard_release((void *)(uintptr_t)(s + 1));
			return STAT_SHARED;
		}
	}
	return STAT_SHARED;           /* more updating threads than shards */
}

long stat_local(const struct mcg_group *g, enum stat_item it)
{
	long sum = 0;

	for (int s = 0; s < STAT_SHARDS; s++)
		sum += atomic_load_explicit(&g->stat[s].v[it], memory_order_relaxed);
	return sum;
}

/* The first update of a thread, or one by a thread without a shard. */
void stat_shard_add_slow(struct stat_shard *st, enum stat_item it, long delta)
{
	if (stat_my_shard < 0)
		stat_my_shard = stat_shard_claim();
	if (stat_my_shard != STAT_SHARED)
		stat_shard_add(st, it, delta);
	else
		atomic_fetch_add_explicit(&st[STAT_SHARED].v[it], delta, memory_order_relaxed);
}

long stat_lru_local(const struct mcg_group *g, enum stat_lru l, int node)
{
	long sum = 0;

	if (node >= 0)
		return atomic_load_explicit(&g->lruvec[node].size[l], memory_order_relaxed);
	for (unsigned n = 0; n < g->eng->m.nodes; n++)
		sum += atomic_load_explicit(&g->lruvec[n].size[l], memory_order_relaxed);
	return sum;
}

/* The same sums by a walk of every group (dying ones included, §3.9),
 * for the invariant checker: rstat's flushed sums must equal it for the
 * page-state items and LRU sizes. Caller must not hold tree_lock. */
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

long stat_total_walk(struct mcg_group *g, enum stat_item it)
{
	long sum;

	pthread_rwlock_rdlock(&g->eng->tree_lock);
	sum = stat_walk(g, stat_get_item, it, 0);
	pthread_rwlock_unlock(&g->eng->tree_lock);
	return sum;
}

static void stat_walk_nodes(const struct mcg_group *g, unsigned mask, unsigned nodes, long *out)
{
	for (unsigned n = 0; n < nodes; n++)
		for (int l = 0; l < LRU__COUNT; l++)
			if (mask & (1u << l))
				out[n] += atomic_load_explicit(&g->lruvec[n].size[l], memory_order_relaxed);
	for (const struct mcg_group *c = g->children; c; c = c->sibling)
		stat_walk_nodes(c, mask, nodes, out);
}

void stat_lru_nodes(struct mcg_group *g, unsigned mask, long *out)
{
	unsigned nodes = g->eng->m.nodes;

	for (unsigned n = 0; n < nodes; n++)
		out[n] = 0;
	pthread_rwlock_rdlock(&g->eng->tree_lock);
	stat_walk_nodes(g, mask, nodes, out);
	pthread_rwlock_unlock(&g->eng->tree_lock);
}

long stat_lru_total_walk(struct mcg_group *g, enum stat_lru l, int node)
{
	long sum;

	pthread_rwlock_rdlock(&g->eng->tree_lock);
	sum = stat_walk(g, stat_get_lru, l, node);
	pthread_rwlock_unlock(&g->eng->tree_lock);
	return sum;
}
