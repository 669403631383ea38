/* names.c: the name index of names.h, a chained hash of the live groups by
 * parent and name, its bucket array doubled when it holds more groups than
 * buckets and halved when it holds fewer than a quarter, so that a tree
 * taken down gives its buckets back. Never walks the group tree, never
 * takes a lock (the caller holds tree_lock). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/env.h"
#include "engine/internal.h"
#include "engine/names.h"

#define NAMES_MIN_BUCKETS 64u

struct name_index {
	struct mcg_group **bucket;    /* [nbuckets], chained by name_next */
	unsigned nbuckets;            /* a power of two */
	unsigned n;                   /* groups in the index */
	uint64_t seed;                /* this engine's: see names_hash */
};

/* The name's bytes and the parent's id (unique among live groups) under
 * a seed of this engine's making, then a final avalanche. Names are the
 * users' (a delegated group's owner makes its children): with a fixed
 * hash they could pick names that share one chain, and make every mkdir
 * in that directory walk them all. The seed changes only where a group
 * sits in the index, never an order anyone sees. */
static uint32_t names_hash(const struct name_index *ni, const struct mcg_group *parent,
			   const char *name)
{
	uint64_t h = ni->seed ^ ((uint64_t)parent->id * 0x9e3779b97f4a7c15ull);

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull + (h >> 29);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

int names_init(struct mcg_engine *e)
{
	struct name_index *ni = calloc(1, sizeof(*ni));

	if (!ni || !(ni->bucket = calloc(NAMES_MIN_BUCKETS, sizeof(*ni->bucket)))) {
		free(ni);
		return -ENOMEM;
	}
	ni->nbuckets = NAMES_MIN_BUCKETS;
	/* the clock at start and where this engine lies (ASLR): nothing a
	 * user of the mount can read */
	ni->seed = env_now(&e->env) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)ni;
	e->names = ni;
	return 0;
}

void names_destroy(struct mcg_engine *e)
{
	if (e->names)
		free(e->names->bucket);
	free(e->names);
	e->names = NULL;
}

/* Rehash into nb buckets; on failure the index stays as it was. */
static void names_resize(struct name_index *ni, unsigned nb)
{
	struct mcg_group **b = calloc(nb, sizeof(*b));

	if (!b)
		return;
	for (unsigned i = 0; i < ni->nbuckets; i++)
		for (struct mcg_group *g = ni->bucket[i], *next; g; g = next) {
			uint32_t h = names_hash(ni, g->parent, g->name) & (nb - 1);

			next = g->name_next;
			g->name_next = b[h];
			b[h] = g;
		}
	free(ni->bucket);
	ni->bucket = b;
	ni->nbuckets = nb;
}

struct mcg_group *names_find(struct mcg_engine *e, const struct mcg_group *parent,
			     const char *name)
{
	struct name_index *ni = e->names;

	for (struct mcg_group *g = ni->bucket[names_hash(ni, parent, name) & (ni->nbuckets - 1)]; g;
	     g = g->name_next)
		if (g->parent == parent && strcmp(g->name, name) == 0)
			return g;
	return NULL;
}

void names_add(struct mcg_engine *e, struct mcg_group *g)
{
	struct name_index *ni = e->names;
	uint32_t h;

	if (++ni->n > ni->nbuckets && ni->nbuckets < (1u << 30))
		names_resize(ni, ni->nbuckets * 2);
	h = names_hash(ni, g->parent, g->name) & (ni->nbuckets - 1);
	g->name_next = ni->bucket[h];
	ni->bucket[h] = g;
}

void names_del(struct mcg_engine *e, struct mcg_group *g)
{
	struct name_index *ni = e->names;
	struct mcg_group **pp = &ni->bucket[names_hash(ni, g->parent, g->name) & (ni->nbuckets - 1)];

	while (*pp && *pp != g)
		pp = &(*pp)->name_next;
	if (!*pp)
		return;                   /* (not in it) */
	*pp = g->name_next;
	g->name_next = NULL;
	if (--ni->n < ni->nbuckets / 4 && ni->nbuckets > NAMES_MIN_BUCKETS)
		names_resize(ni, ni->nbuckets / 2);
}

unsigned names_count(const struct mcg_engine *e)
{
	return e->names->n;
}
