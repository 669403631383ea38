/* swap.h: the simulated swap device: slots that remember which group owns
 * them (like swap_cgroup). Owns slot allocation and the memsw/swap
 * accounting of swapped pages; never moves page contents (there are none). */
#ifndef MEMCGFS_SWAP_H
#define MEMCGFS_SWAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

#define SWAP_NONE UINT32_MAX
#define SWAP_CLUSTER 256          /* SWAPFILE_CLUSTER */

struct mcg_engine;
struct mcg_group;

struct swap_dev {
	pthread_mutex_t lock;
	uint32_t nr_slots;
	uint64_t *used;           /* a bit per slot: taken */
	uint32_t cursor;          /* the next slot to try (cluster_next) */
	unsigned cluster_left;    /* slots before looking for a free run */
	long nr_free;
	uint16_t *memcg;          /* owner id per slot, 0 when free */
	long outs;                /* pages written out (swap_out, less cancels) */
	/* The swap cache: resident pages whose slot still holds their copy
	 * (swapped in by a read), page -> slot, open addressing. The slot is
	 * allocated but charged to nobody (owner 0). */
	uint32_t *cache_page, *cache_slot;
	uint32_t cache_mask;      /* capacity - 1 (a power of two) */
	long nr_cached;
};

int swap_init(struct mcg_engine *e, long nr_slots);
void swap_destroy(struct mcg_engine *e);
/* A slot for a page of g being swapped out (its memsw charge stays and now
 * stands for the slot), or SWAP_NONE when swap is full or absent. */
uint32_t swap_out(struct mcg_group *g);
/* The slot is gone (freed, or its page came back in): memsw uncharged. */
void swap_release(struct mcg_engine *e, uint32_t slot);
/* A swap-out that did not happen: the slot goes, the page keeps its memsw
 * charge. */
void swap_cancel(struct mcg_engine *e, uint32_t slot);
long swap_nr_free(struct mcg_engine *e);

/* Swap cache (swapcached in memory.stat). At a read swap-in of page from
 * slot: while swap is under half full, the slot's memsw charge and
 * statistic go (as swap_release) but the slot stays, cached for the page;
 * false when it was released instead. */
bool swap_cache_keep(struct mcg_engine *e, uint32_t slot, uint32_t page);
/* A swap-out through the swap cache (with the machine's disk): a slot
 * for resident page, cached for it and charged to nobody (the page's memsw
 * stands for both) while its write is in flight; a later scan frees the
 * page through swap_cache_reuse. SWAP_NONE when swap is full or absent. */
uint32_t swap_out_cached(struct mcg_engine *e, uint32_t page);
/* Reclaim swaps a cached page out again: its slot, now owned (charged
 * statistic and group reference) by g, without a write; or SWAP_NONE. */
uint32_t swap_cache_reuse(struct mcg_group *g, uint32_t page);
/* The page was written or freed: its cached slot is freed. */
void swap_cache_drop(struct mcg_engine *e, uint32_t page);
/* Undo swap_cache_reuse when the page stays after all (no write, no
 * charge change: the slot is freed). */
void swap_cache_unreuse(struct mcg_engine *e, uint32_t slot);
long swap_nr_cached(struct mcg_engine *e);
/* Move-charge: hand slot from src to dst (statistic and the slot's group
 * reference; the caller moves the memsw charge). false if src did not own
 * it. */
bool swap_move(struct mcg_engine *e, uint32_t slot, struct mcg_group *src, struct mcg_group *dst);
/* Owner group id of a slot, for move-charge and checks. */
unsigned swap_owner(struct mcg_engine *e, uint32_t slot);

#endif
