/* page.h: the simulated machine's pages: one 16-byte descriptor per page,
 * preallocated, with per-node free lists. Owns allocation, freeing and the
 * descriptor layout; never charges, never touches an LRU list's order. */
#ifndef MEMCGFS_PAGE_H
#define MEMCGFS_PAGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/spin.h"

#define PAGE_NONE UINT32_MAX

enum page_kind {
	PK_FREE,
	PK_ANON,
	PK_FILE,
	PK_SHMEM,
};
#define PK_MASK      0x0f
/* States kept in the upper bits of the kind byte, under the lruvec lock. */
#define PS_ISOLATED  0x10   /* taken off its LRU by reclaim */
#define PS_DOOMED    0x20   /* freed by its owner while isolated */
#define PS_SWAPCACHE 0x40   /* an anon page whose copy in swap is still good */
#define PS_IMMEDIATE 0x80   /* on its lruvec's immediate list (seed topic 4) */

enum page_flag {
	PG_ACTIVE      = 1 << 0,
	PG_REFERENCED  = 1 << 1,
	PG_DIRTY       = 1 << 2,
	PG_WRITEBACK   = 1 << 3,
	PG_RECLAIM     = 1 << 4,
	PG_MAPPED      = 1 << 5,
	PG_MLOCKED     = 1 << 6,
	PG_UNEVICTABLE = 1 << 7,
};

/* 16 bytes. The node is implied by the index (each node owns a range), the
 * LRU list by kind and flags. */
struct page {
	uint32_t prev, next;   /* LRU (or free-list) links, page indexes */
	uint16_t memcg;        /* owning group's id; 0 while free */
	uint8_t flags;         /* enum page_flag */
	uint8_t kind;          /* enum page_kind | PS_* states */
	uint32_t owner;        /* who maps it: a task's or a file's number */
};

struct page_node {
	spin_t lock;
	uint32_t bump;         /* [bump, node_end) were never used */
	uint32_t free_head;    /* freed pages, linked through next */
	long nr_free;          /* both kinds */
	/* a zone's watermarks (page_pool_set_watermarks; all 0 without):
	 * written once, before any allocation */
	long wm_min, wm_low, wm_high;
	long reclaim_batch;    /* zone-balancing-batching's share of 32 */
	/* with pageblocks: the zone's compaction deferral (2.6.35's
	 * compact_considered and compact_defer_shift), under lock */
	unsigned compact_considered, compact_defer_shift;
} __attribute__((aligned(64)));   /* one per node, each on its own lines */

/* Pageblocks (huge pages, issue 22 item 6): 2^9 pages, the order of a
 * huge page and of x86's pageblock_order. */
#define PAGE_BLOCK_ORDER 9
#define PAGE_BLOCK       (1u << PAGE_BLOCK_ORDER)

#define PAGE_CHUNK_SHIFT 16   /* node lookup granule: 64 Ki pages */

#define PAGE_MAX_NODES 64

struct page_pool {
	struct page *pages;
	uint32_t nr_pages;
	unsigned nr_nodes;
	struct page_node *node;
	uint8_t *chunk_node;   /* node of each granule's first page */
	/* Node n has pages [node_end[n - 1], node_end[n]) (from 0 for n = 0):
	 * read on every page operation, written only at init, so kept apart
	 * from the nodes' busy free-list lines (read beside another CPU's
	 * lock, it halved 2-thread throughput). */
	uint32_t node_end[PAGE_MAX_NODES];
	/* With pageblocks (page_pool_blocks): each block's free pages and a
	 * bit per page, set while it is free, written under its node's lock;
	 * the free lists are then doubly linked (prev), so that a chosen
	 * page can leave its list. NULL without. */
	uint16_t *block_free;
	uint64_t *free_bit;
};

/* -ENOMEM, -EINVAL (no pages, or more than 2^32 - 1; sizes that do not
 * add up to nr_pages). node_pages: each node's pages, or NULL (or all 0)
 * for nr_pages split evenly. Memory is reserved, not touched: descriptors
 * become resident as pages are first used. */
int page_pool_init(struct page_pool *pp, long nr_pages, unsigned nr_nodes, const long *node_pages);
/* The pages of node n (free or not). */
static inline long page_node_size(const struct page_pool *pp, unsigned n)
{
	return (long)pp->node_end[n] - (n ? (long)pp->node_end[n - 1] : 0);
}
void page_pool_destroy(struct page_pool *pp);

/* A free page of node (modulo the node count; or of any node, trying
 * node first), or PAGE_NONE. */
uint32_t page_alloc(struct page_pool *pp, unsigned node);
void page_free(struct page_pool *pp, uint32_t idx);
/* The same for n pages, taking each node's lock once per run of its pages. */
void page_free_many(struct page_pool *pp, const uint32_t *idx, int n);

static inline unsigned page_node_of(const struct page_pool *pp, uint32_t idx)
{
	unsigned n;

	if (pp->nr_nodes == 1)
		return 0;
	/* a granule starts in one node and may end in the next few */
	n = pp->chunk_node[idx >> PAGE_CHUNK_SHIFT];
	while (idx >= pp->node_end[n])
		n++;
	return n;
}

long page_nr_free(struct page_pool *pp);

/* Pageblocks, for huge pages: before any allocation, every page goes on
 * its node's free list (taken lowest first, as the bump pointer would
 * have), and the blocks' free counts are kept from then on. A block that
 * straddles two nodes is never a huge page. 0 or -ENOMEM. */
int page_pool_blocks(struct page_pool *pp);
/* The first page of a wholly free pageblock, all of whose pages are
 * taken, from node (modulo the node count) or else the others in turn, as
 * page_alloc; none that would leave its node under its min mark (the slow
 * path's ALLOC_WMARK_MIN; 0 without zones). PAGE_NONE: none. */
uint32_t page_alloc_block(struct page_pool *pp, unsigned node);
/* Take free page idx (compaction's free scanner): false if it is not free. */
bool page_take_at(struct page_pool *pp, uint32_t idx);
static inline bool page_is_free(const struct page_pool *pp, uint32_t idx)
{
	return __atomic_load_n(&pp->free_bit[idx >> 6], __ATOMIC_RELAXED) >> (idx & 63) & 1;
}
static inline long page_block_free(const struct page_pool *pp, uint32_t block)
{
	return __atomic_load_n(&pp->block_free[block], __ATOMIC_RELAXED);
}
/* Node n's pageblocks that lie wholly in it: [*first, *end). */
void page_node_blocks(const struct page_pool *pp, unsigned n, uint32_t *first, uint32_t *end);
/* Node n has a wholly free pageblock (an order-9 allocation would succeed). */
bool page_node_has_block(const struct page_pool *pp, unsigned n);

/* 3.2's compaction_suitable for an allocation of 2^order pages from node n
 * (zone_watermark_ok at order 0 against the low mark + 2 << order, free
 * pages above it): SKIPPED when the node has too few free pages for
 * compaction to work with; PARTIAL when a free block is there already;
 * else CONTINUE. The fragmentation index is not modelled: with enough
 * pages free and no free block the memory is taken to be fragmented (an
 * index above extfrag_threshold), as it is where order-0 pages are freed
 * one by one. */
enum page_compact { PAGE_COMPACT_SKIPPED, PAGE_COMPACT_CONTINUE, PAGE_COMPACT_PARTIAL };
enum page_compact page_compact_suitable(const struct page_pool *pp, unsigned n, int order);
/* 2.6.35's compaction deferral of node n (the zone's): deferred counts a
 * consideration and says whether compaction is still skipped (1 <<
 * defer_shift considerations after a failure); defer follows a failed
 * synchronous compaction (the shift grows to at most 6), reset a
 * success. */
bool page_compact_deferred(struct page_pool *pp, unsigned n);
void page_compact_defer(struct page_pool *pp, unsigned n);
void page_compact_reset(struct page_pool *pp, unsigned n);
/* Node n's free pages, read without its lock (a watermark check's view). */
long page_node_free(struct page_pool *pp, unsigned n);

/* Zones (seed topic 5): each node is a zone, node 0 the one allocations
 * try first (ZONE_NORMAL), the last the fallback (ZONE_DMA). Sets every
 * zone's watermarks from min_free pages as 2.6.3's setup_per_zone_pages_min
 * did: pages_min its share of min_free by size, pages_low twice that,
 * pages_high three times; and zone-balancing-batching's reclaim_batch, its
 * share of 32 pages by size, at least 4. Before any allocation. */
void page_pool_set_watermarks(struct page_pool *pp, long min_free);

enum page_wmark { PAGE_WM_MIN, PAGE_WM_LOW, PAGE_WM_HIGH };

/* A page from the zones from node on, through 2.6.3's "incremental min":
 * zone i of the walk gives a page only while its free pages are at least
 * 1 plus the sum of the watermarks (which) of zones 0..i of the walk, so
 * a fallback zone keeps the reserve the zones before it would have kept.
 * PAGE_NONE when every zone is at or under its mark. */
uint32_t page_alloc_wmark(struct page_pool *pp, unsigned node, enum page_wmark which);

#endif
