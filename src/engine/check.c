/* check.c: recount everything from the pages up and compare with the
 * counters, statistics and LRU lists. Slow by design (it walks every page
 * and list); never used on a hot path. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/charge_core.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/names.h"
#include "engine/softlimit.h"
#include "engine/swap.h"

struct check_count {
	long anon, file, shmem, mapped, dirty, lru[LRU__COUNT], swap, stocked, cached;
};

int check_fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Walk g's lists: every linked page must be g's, on the list its flags
 * imply, not isolated, and the lengths must match the LRU statistics. */
static int check_lists(struct mcg_engine *e, struct mcg_group *g, char *msg, size_t len)
{
	struct page *pg = e->pages.pages;

	for (unsigned n = 0; n < e->pages.nr_nodes; n++)
		for (int l = 0; l < LRU__COUNT; l++) {
			long count = 0;
			uint32_t prev = PAGE_NONE;

			for (uint32_t i = g->lruvec[n].list[l].head; i != PAGE_NONE; i = pg[i].next) {
				if (pg[i].memcg != g->id || (int)lru_of(&pg[i]) != l ||
				    pg[i].prev != prev || page_node_of(&e->pages, i) != n ||
				    (pg[i].kind & PS_ISOLATED))
					return check_fail(msg, len, "group %u: page %u misplaced on list %d",
							  g->id, i, l);
				prev = i;
				count++;
			}
			if (count != stat_lru_local(g, l, (int)n))
				return check_fail(msg, len, "group %u node %u list %d: %ld linked, %ld counted",
						  g->id, n, l, count, stat_lru_local(g, l, (int)n));
		}
	return 0;
}

/* Usage expected at g from its own pages, slots and stock plus those of its
 * linked children; checks every group on the way. Returns -1 on mismatch. */
static int check_group(struct mcg_engine *e, struct mcg_group *g, struct check_count *counts,
		       long *mem_out, long *memsw_out, char *msg, size_t len)
{
	struct check_count *c = &counts[g->id];
	long own = c->anon + c->file + c->shmem + c->stocked + atomic_load(&g->kmem_local);
	long kids = 0, kids_sw = 0, kids_kmem = 0, want, want_sw;

	if (stat_local(g, STAT_RSS) != c->anon ||
	    stat_local(g, STAT_CACHE) != c->file + c->shmem ||
	    stat_local(g, STAT_SHMEM) != c->shmem ||
	    stat_local(g, STAT_MAPPED_FILE) != c->mapped ||
	    stat_local(g, STAT_DIRTY) != c->dirty ||
	    stat_local(g, STAT_SWAPCACHED) != c->cached ||
	    stat_local(g, STAT_SWAP) != c->swap)
		return check_fail(msg, len, "group %u: statistics disagree with its pages "
				  "(rss %ld/%ld cache %ld/%ld swap %ld/%ld swapcached %ld/%ld)", g->id,
				  stat_local(g, STAT_RSS), c->anon, stat_local(g, STAT_CACHE),
				  c->file + c->shmem, stat_local(g, STAT_SWAP), c->swap,
				  stat_local(g, STAT_SWAPCACHED), c->cached);
	if (check_lists(e, g, msg, len))
		return -1;
	for (struct mcg_group *k = g->children; k; k = k->sibling) {
		long km, ks;

		if (check_group(e, k, counts, &km, &ks, msg, len))
			return -1;
		if (k->cnt[MCG_MEM].parent == &g->cnt[MCG_MEM]) {
			kids += km;
			kids_sw += ks;
		}
		if (k->cnt[MCG_KMEM].parent == &g->cnt[MCG_KMEM])
			kids_kmem += pc_usage(&k->cnt[MCG_KMEM]);
	}
	if (!mcg_no_accounting(e) && !mcg_root(g) &&
	    pc_usage(&g->cnt[MCG_KMEM]) != atomic_load(&g->kmem_local) + kids_kmem)
		return check_fail(msg, len, "group %u: kmem %ld, charges say %ld", g->id,
				  pc_usage(&g->cnt[MCG_KMEM]), atomic_load(&g->kmem_local) + kids_kmem);
	*mem_out = own + kids;
	*memsw_out = own + c->swap + kids_sw;
	/* The root is never charged directly: its counters see its children. */
	want = mcg_root(g) ? kids : *mem_out;
	want_sw = mcg_root(g) ? kids_sw : *memsw_out;
	if (!mcg_no_accounting(e) &&
	    (pc_usage(&g->cnt[MCG_MEM]) != want || pc_usage(&g->cnt[MCG_MEMSW]) != want_sw))
		return check_fail(msg, len, "group %u: usage %ld/%ld, pages say %ld/%ld", g->id,
				  pc_usage(&g->cnt[MCG_MEM]), pc_usage(&g->cnt[MCG_MEMSW]), want, want_sw);
	return 0;
}

/* The flushed hierarchical sums (rstat) of every group equal a walk of its
 * subtree, for the page-state items and every LRU size (event items keep
 * what reaped groups counted, so a walk finds less). */
static const enum stat_item check_state_items[] = {
	STAT_CACHE, STAT_RSS, STAT_RSS_HUGE, STAT_SHMEM, STAT_MAPPED_FILE, STAT_DIRTY,
	STAT_WRITEBACK, STAT_SWAP, STAT_SWAPCACHED,
};

static int check_rstat(struct mcg_engine *e, char *msg, size_t len)
{
	struct mcg_group *g = NULL;

	while ((g = mcg_iter(e->root, g))) {
		for (size_t i = 0; i < sizeof(check_state_items) / sizeof(check_state_items[0]); i++) {
			enum stat_item it = check_state_items[i];
			long got = rstat_item(g, it), want = stat_total_walk(g, it);

			if (got != want) {
				mcg_put(g);
				return check_fail(msg, len, "group %u: item %d sums to %ld, a walk to %ld",
						  g->id, it, got, want);
			}
		}
		for (int n = 0; n < (int)e->m.nodes; n++)
			for (int l = 0; l < LRU__COUNT; l++) {
				long got = rstat_lru(g, l, n), want = stat_lru_total_walk(g, l, n);

				if (got != want) {
					mcg_put(g);
					return check_fail(msg, len,
							  "group %u node %d list %d: sums to %ld, a walk to %ld",
							  g->id, n, l, got, want);
				}
			}
	}
	return 0;
}

/* The name index holds every live group but the root, each found by its
 * parent and name, and no other; each children list (dying groups' too)
 * is doubly linked. */
static int check_names(struct mcg_engine *e, char *msg, size_t len)
{
	struct mcg_group *g = NULL;
	unsigned live = 0;
	int err = 0;

	while (!err && (g = mcg_iter(e->root, g))) {
		pthread_rwlock_rdlock(&e->tree_lock);
		for (struct mcg_group **pp = &g->children; *pp && !err; pp = &(*pp)->sibling)
			if ((*pp)->sib_pp != pp)
				err = check_fail(msg, len, "group %u: children list broken at %u",
						 g->id, (*pp)->id);
		if (!err && g != e->root && !g->removed && (++live, names_find(e, g->parent, g->name) != g))
			err = check_fail(msg, len, "group %u (%s): not found by its name", g->id, g->name);
		pthread_rwlock_unlock(&e->tree_lock);
	}
	if (g)
		mcg_put(g);                   /* (stopped early) */
	if (!err && live != names_count(e))
		err = check_fail(msg, len, "name index: %u groups, %u live", names_count(e), live);
	return err;
}

/* Caller holds tree_lock and h->lock. */
static int check_soft_group(struct soft_heap *h, struct mcg_group *g, char *msg, size_t len)
{
	if (!mcg_root(g) && soft_excess(g) > 0 && (!g->soft_pos || g->soft_pos == SOFT_GONE))
		return check_fail(msg, len, "group %u: %ld over its soft limit, not in the order",
				 g->id, soft_excess(g));
	for (struct mcg_group *k = g->children; k; k = k->sibling)
		if (check_soft_group(h, k, msg, len))
			return -1;
	return 0;
}

int check_soft_order(struct mcg_engine *e, char *msg, size_t len)
{
	struct soft_heap *h = e->soft;
	int err = 0;

	/* lock order (docs/design.md): tree_lock, then soft_heap.lock */
	pthread_rwlock_rdlock(&e->tree_lock);
	pthread_mutex_lock(&h->lock);
	for (unsigned i = 0; i < h->nr && !err; i++) {
		struct mcg_group *g = h->heap[i];
		long key = atomic_load(&g->soft_key);

		if (g->soft_pos != i + 1 || mcg_root(g) || !g->linked)
			err = check_fail(msg, len, "soft order: slot %u holds group %u (at %u)", i,
					g->id, g->soft_pos);
		else if (key <= 0 || key < soft_excess(g))
			err = check_fail(msg, len, "group %u: soft key %ld, excess %ld", g->id, key,
					soft_excess(g));
		else if (i > 0 && soft_above(g, h->heap[(i - 1) / 2]))
			err = check_fail(msg, len, "soft order: group %u above its parent slot", g->id);
	}
	if (!err)
		err = check_soft_group(h, e->root, msg, len);
	pthread_mutex_unlock(&h->lock);
	pthread_rwlock_unlock(&e->tree_lock);
	return err;
}

int check_invariants(struct mcg_engine *e, char *msg, size_t len)
{
	struct check_count *counts = calloc(MCG_ID_MAX + 1, sizeof(*counts));
	struct page *pg = e->pages.pages;
	long mem, memsw, cached = 0, slots;
	int err;

	if (!counts)
		return check_fail(msg, len, "out of memory");
	for (uint32_t i = 0; i < e->pages.nr_pages; i++) {
		struct check_count *c;

		if (!pg[i].memcg)
			continue;
		c = &counts[pg[i].memcg];
		switch (pg[i].kind & PK_MASK) {
		case PK_ANON: c->anon++; break;
		case PK_FILE: c->file++; break;
		case PK_SHMEM: c->shmem++; break;
		}
		c->cached += !!(pg[i].kind & PS_SWAPCACHE);
		cached += !!(pg[i].kind & PS_SWAPCACHE);
		if ((pg[i].kind & PK_MASK) != PK_ANON) {
			c->mapped += !!(pg[i].flags & PG_MAPPED);
			c->dirty += !!(pg[i].flags & PG_DIRTY);
		}
	}
	for (uint32_t s = 0; s < e->swap->nr_slots; s++)
		if (e->swap->memcg[s])
			counts[e->swap->memcg[s]].swap++;
	/* every cached slot belongs to a page in the swap cache */
	if (cached != (slots = swap_nr_cached(e))) {
		free(counts);
		return check_fail(msg, len, "swap cache: %ld pages, %ld cached slots", cached, slots);
	}
	for (unsigned cpu = 0; cpu < e->m.cpus; cpu++)
		if (e->stock[cpu].g)
			counts[e->stock[cpu].g->id].stocked += e->stock[cpu].nr;
	pthread_rwlock_rdlock(&e->tree_lock);
	err = check_group(e, e->root, counts, &mem, &memsw, msg, len);
	pthread_rwlock_unlock(&e->tree_lock);
	free(counts);
	if (!err)
		err = check_rstat(e, msg, len);
	if (!err)
		err = check_names(e, msg, len);
	return err ? err : check_soft_order(e, msg, len);
}
