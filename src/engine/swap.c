/* swap.c: swap slots with their owning group id. A swapped-out page keeps
 * its memsw charge (it now stands for the slot) and counts in the group's
 * swap statistic until the slot is released. Never touches an LRU. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/swap.h"
#include "engine/uncharge.h"

int swap_init(struct mcg_engine *e, long nr_slots)
{
	struct swap_dev *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	e->swap = s;
	pthread_mutex_init(&s->lock, NULL);
	if (nr_slots <= 0)
		return 0;
	if (nr_slots >= (long)SWAP_NONE)
		return -EINVAL;
	s->memcg = calloc((size_t)nr_slots, sizeof(*s->memcg));
	s->used = calloc(((size_t)nr_slots + 63) / 64, sizeof(*s->used));
	for (s->cache_mask = 1; s->cache_mask < 2 * (uint32_t)nr_slots; s->cache_mask <<= 1)
		;
	s->cache_page = malloc((size_t)s->cache_mask * sizeof(*s->cache_page));
	s->cache_slot = malloc((size_t)s->cache_mask * sizeof(*s->cache_slot));
	if (!s->memcg || !s->used || !s->cache_page || !s->cache_slot)
		return -ENOMEM;
	memset(s->cache_page, 0xff, (size_t)s->cache_mask * sizeof(*s->cache_page));
	s->cache_mask--;
	if (nr_slots % 64)    /* the last word's bits past the end: never free */
		s->used[nr_slots / 64] = ~0ull << (nr_slots % 64);
	s->nr_slots = (uint32_t)nr_slots;
	s->nr_free = nr_slots;
	return 0;
}

void swap_destroy(struct mcg_engine *e)
{
	struct swap_dev *s = e->swap;

	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->memcg);
	free(s->used);
	free(s->cache_page);
	free(s->cache_slot);
	free(s);
	e->swap = NULL;
}

/* The first free slot at or after from, wrapping once, or SWAP_NONE. */
static uint32_t swap_next_free(const struct swap_dev *s, uint32_t from)
{
	uint32_t words = (s->nr_slots + 63) / 64;

	for (uint32_t n = 0; n <= words; n++) {
		uint32_t w = (from / 64 + n) % words;
		uint64_t free = ~s->used[w];

		if (!n)
			free &= ~0ull << (from % 64);     /* from on, in the first word */
		if (free)
			return w * 64 + (uint32_t)__builtin_ctzll(free);
	}
	return SWAP_NONE;
}

/* The first run of SWAP_CLUSTER free slots (aligned) at or after from,
 * wrapping once, or SWAP_NONE. */
static uint32_t swap_free_cluster(const struct swap_dev *s, uint32_t from)
{
	uint32_t clusters = s->nr_slots / SWAP_CLUSTER, per = SWAP_CLUSTER / 64;

	for (uint32_t n = 0; n < clusters; n++) {
		uint32_t c = (from / SWAP_CLUSTER + n) % clusters, w = c * per, i;

		for (i = 0; i < per && !s->used[w + i]; i++)
			;
		if (i == per)
			return c * SWAP_CLUSTER;
	}
	return SWAP_NONE;
}

/* A free slot, or SWAP_NONE. Caller holds s->lock. After the kernel's
 * scan_swap_map: slots are taken in ascending order from a cursor, and
 * every SWAP_CLUSTER slots the cursor moves to a run of that many free
 * slots when there is one, so that pages swapped out one after the other
 * have neighbouring slots and their writes follow each other on the disk
 * (a free list would scatter them). Simplified: the runs are aligned and
 * looked for from the cursor on, where 2.6.24 took any run, looked for
 * from the lowest free slot. */
static uint32_t swap_slot_take(struct swap_dev *s)
{
	uint32_t slot;

	if (!s->nr_free)
		return SWAP_NONE;
	if (!s->cluster_left) {
		s->cluster_left = SWAP_CLUSTER;
		if ((slot = swap_free_cluster(s, s->cursor)) != SWAP_NONE)
			s->cursor = slot;
	}
	if ((slot = swap_next_free(s, s->cursor)) == SWAP_NONE)
		return SWAP_NONE;
	s->used[slot / 64] |= 1ull << (slot % 64);
	s->cursor = slot + 1 < s->nr_slots ? slot + 1 : 0;
	s->cluster_left--;
	s->nr_free--;
	return slot;
}

uint32_t swap_out(struct mcg_group *g)
{
	struct swap_dev *s = g->eng->swap;
	uint32_t slot;

	pthread_mutex_lock(&s->lock);
	slot = swap_slot_take(s);
	if (slot != SWAP_NONE) {
		s->outs++;
		s->memcg[slot] = (uint16_t)g->id;
	}
	pthread_mutex_unlock(&s->lock);
	if (slot != SWAP_NONE) {
		mcg_get(g);               /* a slot pins its group, as a page does */
		stat_add(g, STAT_SWAP, 1);
	}
	return slot;
}

/* A slot of group id has no owner any more: its statistic, its memsw
 * charge (when uncharge) and its reference on the group go. */
static void swap_disown(struct mcg_engine *e, unsigned id, bool uncharge)
{
	struct mcg_group *g = mcg_by_id(e, id);

	if (!g)
		return;
	stat_add(g, STAT_SWAP, -1);
	if (uncharge && !mcg_root(g) && !mcg_no_accounting(e))
		pc_uncharge(&g->cnt[MCG_MEMSW], 1);
	mcg_put(g);                       /* the slot's */
	if (g->removed)
		uncharge_reap(g);
	mcg_put(g);                       /* ours */
}

/* Free again. Caller holds s->lock. */
static void swap_slot_push(struct swap_dev *s, uint32_t slot)
{
	s->used[slot / 64] &= ~(1ull << (slot % 64));
	s->nr_free++;
}

static void swap_free_slot(struct mcg_engine *e, uint32_t slot, bool uncharge)
{
	struct swap_dev *s = e->swap;
	unsigned id;

	pthread_mutex_lock(&s->lock);
	id = s->memcg[slot];
	s->memcg[slot] = 0;
	swap_slot_push(s, slot);
	pthread_mutex_unlock(&s->lock);
	swap_disown(e, id, uncharge);
}

/* A counter of the device, read under its lock. */
static long swap_read(struct mcg_engine *e, const long *field)
{
	long n;

	pthread_mutex_lock(&e->swap->lock);
	n = *field;
	pthread_mutex_unlock(&e->swap->lock);
	return n;
}

void swap_release(struct mcg_engine *e, uint32_t slot)
{
	swap_free_slot(e, slot, true);
}

void swap_cancel(struct mcg_engine *e, uint32_t slot)
{
	pthread_mutex_lock(&e->swap->lock);
	e->swap->outs--;                   /* never written after all */
	pthread_mutex_unlock(&e->swap->lock);
	swap_free_slot(e, slot, false);
}

long swap_outs(struct mcg_engine *e)
{
	return swap_read(e, &e->swap->outs);
}

long swap_nr_free(struct mcg_engine *e)
{
	return swap_read(e, &e->swap->nr_free);
}

unsigned swap_owner(struct mcg_engine *e, uint32_t slot)
{
	unsigned id;

	pthread_mutex_lock(&e->swap->lock);
	id = e->swap->memcg[slot];
	pthread_mutex_unlock(&e->swap->lock);
	return id;
}

bool swap_move(struct mcg_engine *e, uint32_t slot, struct mcg_group *src, struct mcg_group *dst)
{
	bool moved = false;

	pthread_mutex_lock(&e->swap->lock);
	if (e->swap->memcg[slot] == src->id) {
		e->swap->memcg[slot] = (uint16_t)dst->id;
		moved = true;
	}
	pthread_mutex_unlock(&e->swap->lock);
	if (moved) {
		stat_add(src, STAT_SWAP, -1);
		stat_add(dst, STAT_SWAP, 1);
		mcg_get(dst);             /* the slot pins its new group */
		mcg_put(src);
	}
	return moved;
}

/* The bucket page hashes to. */
static uint32_t swap_cache_home(const struct swap_dev *s, uint32_t page)
{
	return (page * 2654435761u) & s->cache_mask;
}

/* The cache's bucket of page: its own, or the empty one where it would
 * go. Caller holds the lock. */
static uint32_t swap_cache_find(struct swap_dev *s, uint32_t page)
{
	uint32_t i = swap_cache_home(s, page);

	while (s->cache_page[i] != SWAP_NONE && s->cache_page[i] != page)
		i = (i + 1) & s->cache_mask;
	return i;
}

/* Remove page's entry (backward-shift deletion: no tombstones); its slot or
 * SWAP_NONE. Caller holds the lock. */
static uint32_t swap_cache_remove(struct swap_dev *s, uint32_t page)
{
	uint32_t i, j, slot;

	if (!s->cache_page)
		return SWAP_NONE;
	i = swap_cache_find(s, page);
	if (s->cache_page[i] == SWAP_NONE)
		return SWAP_NONE;
	slot = s->cache_slot[i];
	s->nr_cached--;
	for (j = (i + 1) & s->cache_mask; s->cache_page[j] != SWAP_NONE; j = (j + 1) & s->cache_mask) {
		uint32_t home = swap_cache_home(s, s->cache_page[j]);

		/* move j back into the hole at i unless its home lies in (i, j] */
		if (((j - home) & s->cache_mask) >= ((j - i) & s->cache_mask)) {
			s->cache_page[i] = s->cache_page[j];
			s->cache_slot[i] = s->cache_slot[j];
			i = j;
		}
	}
	s->cache_page[i] = SWAP_NONE;
	return slot;
}

/* page's copy is in slot (a page has one entry at most). Caller holds the
 * lock. */
static void swap_cache_insert(struct swap_dev *s, uint32_t page, uint32_t slot)
{
	uint32_t i = swap_cache_find(s, page);

	s->cache_page[i] = page;
	s->cache_slot[i] = slot;
	s->nr_cached++;
}

bool swap_cache_keep(struct mcg_engine *e, uint32_t slot, uint32_t page)
{
	struct swap_dev *s = e->swap;
	unsigned id;

	pthread_mutex_lock(&s->lock);
	/* vm_swap_full: with half the device in use, swap-ins free their slot */
	if (s->nr_free * 2 < (long)s->nr_slots) {
		pthread_mutex_unlock(&s->lock);
		swap_release(e, slot);
		return false;
	}
	id = s->memcg[slot];
	s->memcg[slot] = 0;               /* allocated, charged to nobody */
	swap_cache_insert(s, page, slot);
	pthread_mutex_unlock(&s->lock);
	swap_disown(e, id, true);         /* the page's memsw stands for both now */
	return true;
}

uint32_t swap_out_cached(struct mcg_engine *e, uint32_t page)
{
	struct swap_dev *s = e->swap;
	uint32_t slot = SWAP_NONE;

	pthread_mutex_lock(&s->lock);
	if (s->cache_page && (slot = swap_slot_take(s)) != SWAP_NONE) {
		s->outs++;
		swap_cache_insert(s, page, slot);
	}
	pthread_mutex_unlock(&s->lock);
	return slot;
}

uint32_t swap_cache_reuse(struct mcg_group *g, uint32_t page)
{
	struct swap_dev *s = g->eng->swap;
	uint32_t slot;

	pthread_mutex_lock(&s->lock);
	if ((slot = swap_cache_remove(s, page)) != SWAP_NONE)
		s->memcg[slot] = (uint16_t)g->id;
	pthread_mutex_unlock(&s->lock);
	if (slot != SWAP_NONE) {
		mcg_get(g);
		stat_add(g, STAT_SWAP, 1);
	}
	return slot;
}

void swap_cache_unreuse(struct mcg_engine *e, uint32_t slot)
{
	swap_free_slot(e, slot, false);
}

void swap_cache_drop(struct mcg_engine *e, uint32_t page)
{
	struct swap_dev *s = e->swap;
	uint32_t slot;

	pthread_mutex_lock(&s->lock);
	if ((slot = swap_cache_remove(s, page)) != SWAP_NONE)
		swap_slot_push(s, slot);
	pthread_mutex_unlock(&s->lock);
}

long swap_nr_cached(struct mcg_engine *e)
{
	return swap_read(e, &e->swap->nr_cached);
}
