/* page.c: the page descriptor array and its per-node free lists. The array
 * is mapped, not written, at start: a descriptor costs memory only once its
 * page has been used. With pageblocks (huge pages) every page starts on
 * the free lists, which are then doubly linked, with each block's free
 * count, a bit per free page, and the zones' compaction deferral. Never
 * knows about groups beyond the id it stores. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/page.h"

int page_pool_init(struct page_pool *pp, long nr_pages, unsigned nr_nodes, const long *node_pages)
{
	long sum = 0;

	memset(pp, 0, sizeof(*pp));
	if (nr_pages <= 0 || nr_pages >= (long)PAGE_NONE || nr_nodes == 0 ||
	    nr_nodes > PAGE_MAX_NODES || (long)nr_nodes > nr_pages)
		return -EINVAL;
	for (unsigned n = 0; node_pages && n < nr_nodes; n++) {
		if (node_pages[n] < 0 || (node_pages[n] == 0 && sum))
			return -EINVAL;
		sum += node_pages[n];
	}
	if (sum && (sum != nr_pages || node_pages[nr_nodes - 1] == 0))
		return -EINVAL;
	if (!sum)
		node_pages = NULL;        /* split evenly */
	/* Anonymous mappings come zeroed and lazily backed. */
	pp->pages = mmap(NULL, (size_t)nr_pages * sizeof(struct page), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pp->pages == MAP_FAILED) {
		pp->pages = NULL;
		return -ENOMEM;
	}
	pp->node = aligned_alloc(64, nr_nodes * sizeof(*pp->node));
	if (pp->node)
		memset(pp->node, 0, nr_nodes * sizeof(*pp->node));
	if (!pp->node) {
		munmap(pp->pages, (size_t)nr_pages * sizeof(struct page));
		return -ENOMEM;
	}
	pp->nr_pages = (uint32_t)nr_pages;
	pp->nr_nodes = nr_nodes;
	pp->chunk_node = malloc(((size_t)nr_pages >> PAGE_CHUNK_SHIFT) + 1);
	if (!pp->chunk_node) {
		munmap(pp->pages, (size_t)nr_pages * sizeof(struct page));
		free(pp->node);
		memset(pp, 0, sizeof(*pp));
		return -ENOMEM;
	}
	for (unsigned n = 0; n < nr_nodes; n++) {
		struct page_node *pn = &pp->node[n];
		uint32_t first = n ? pp->node_end[n - 1] : 0;

		spin_init(&pn->lock);
		pp->node_end[n] = node_pages ? first + (uint32_t)node_pages[n] :
			(uint32_t)((uint64_t)nr_pages * (n + 1) / nr_nodes);
		/* Freed pages are reused first; never-used ones come from a
		 * bump pointer, so the untouched tail costs nothing. */
		pn->bump = first;
		pn->free_head = PAGE_NONE;
		pn->nr_free = pp->node_end[n] - first;
	}
	for (uint32_t c = 0, n = 0; c <= pp->nr_pages >> PAGE_CHUNK_SHIFT; c++) {
		while ((c << PAGE_CHUNK_SHIFT) >= pp->node_end[n] && n + 1 < nr_nodes)
			n++;
		pp->chunk_node[c] = (uint8_t)n;
	}
	return 0;
}

void page_pool_destroy(struct page_pool *pp)
{
	if (!pp->pages)
		return;
	munmap(pp->pages, (size_t)pp->nr_pages * sizeof(struct page));
	free(pp->node);
	free(pp->chunk_node);
	free(pp->block_free);
	free(pp->free_bit);
	memset(pp, 0, sizeof(*pp));
}

/* With pageblocks: free page idx leaves pn's free list, its bit and its
 * block's count (a bitmap word or a block may span two nodes, two locks);
 * the caller counts it out of nr_free. Caller holds pn->lock. */
static void page_unlink_free(struct page_pool *pp, struct page_node *pn, uint32_t idx)
{
	struct page *p = &pp->pages[idx];

	if (p->prev != PAGE_NONE)
		pp->pages[p->prev].next = p->next;
	else
		pn->free_head = p->next;
	if (p->next != PAGE_NONE)
		pp->pages[p->next].prev = p->prev;
	__atomic_fetch_and(&pp->free_bit[idx >> 6], ~(1ull << (idx & 63)), __ATOMIC_RELAXED);
	__atomic_fetch_sub(&pp->block_free[idx >> PAGE_BLOCK_ORDER], 1, __ATOMIC_RELAXED);
}

/* A free page of pn, if pn has at least need free pages (1: any). nr_free
 * is written under the lock and read without it (page_node_free). */
static uint32_t page_take_above(struct page_pool *pp, struct page_node *pn, long need)
{
	uint32_t idx = PAGE_NONE;

	spin_lock(&pn->lock);
	if (pn->nr_free >= need) {
		if (pn->free_head != PAGE_NONE) {
			idx = pn->free_head;
			if (pp->block_free)
				page_unlink_free(pp, pn, idx);
			else
				pn->free_head = pp->pages[idx].next;
		} else if (pn->bump < pp->node_end[pn - pp->node]) {
			idx = pn->bump++;
		}
		if (idx != PAGE_NONE)
			__atomic_store_n(&pn->nr_free, pn->nr_free - 1, __ATOMIC_RELAXED);
	}
	spin_unlock(&pn->lock);
	if (idx != PAGE_NONE)
		pp->pages[idx] = (struct page){ .prev = PAGE_NONE, .next = PAGE_NONE };
	return idx;
}

uint32_t page_alloc(struct page_pool *pp, unsigned node)
{
	for (unsigned i = 0; i < pp->nr_nodes; i++, node++) {
		uint32_t idx;

		if (node >= pp->nr_nodes)
			node %= pp->nr_nodes;
		if ((idx = page_take_above(pp, &pp->node[node], 1)) != PAGE_NONE)
			return idx;
	}
	return PAGE_NONE;
}

/* Caller holds pn->lock, pn being idx's node. */
static void page_free_locked(struct page_pool *pp, struct page_node *pn, uint32_t idx)
{
	pp->pages[idx].kind = PK_FREE;
	pp->pages[idx].memcg = 0;
	pp->pages[idx].flags = 0;
	pp->pages[idx].next = pn->free_head;
	if (pp->block_free) {
		pp->pages[idx].prev = PAGE_NONE;
		if (pn->free_head != PAGE_NONE)
			pp->pages[pn->free_head].prev = idx;
		/* (a bitmap word or a block may span two nodes, two locks) */
		__atomic_fetch_or(&pp->free_bit[idx >> 6], 1ull << (idx & 63), __ATOMIC_RELAXED);
		__atomic_fetch_add(&pp->block_free[idx >> PAGE_BLOCK_ORDER], 1, __ATOMIC_RELAXED);
	}
	pn->free_head = idx;
	__atomic_store_n(&pn->nr_free, pn->nr_free + 1, __ATOMIC_RELAXED);
}

void page_free(struct page_pool *pp, uint32_t idx)
{
	struct page_node *pn = &pp->node[page_node_of(pp, idx)];

	spin_lock(&pn->lock);
	page_free_locked(pp, pn, idx);
	spin_unlock(&pn->lock);
}

void page_free_many(struct page_pool *pp, const uint32_t *idx, int n)
{
	struct page_node *held = NULL;

	for (int i = 0; i < n; i++) {
		struct page_node *pn = &pp->node[page_node_of(pp, idx[i])];

		if (pn != held) {         /* one node lock at a time */
			if (held)
				spin_unlock(&held->lock);
			spin_lock(&pn->lock);
			held = pn;
		}
		page_free_locked(pp, pn, idx[i]);
	}
	if (held)
		spin_unlock(&held->lock);
}

long page_node_free(struct page_pool *pp, unsigned n)
{
	return __atomic_load_n(&pp->node[n].nr_free, __ATOMIC_RELAXED);
}

void page_pool_set_watermarks(struct page_pool *pp, long min_free)
{
	for (unsigned n = 0; n < pp->nr_nodes; n++) {
		struct page_node *pn = &pp->node[n];
		long size = page_node_size(pp, n);

		pn->wm_min = (long)((__int128)min_free * size / pp->nr_pages);
		pn->wm_low = pn->wm_min * 2;
		pn->wm_high = pn->wm_min * 3;
		pn->reclaim_batch = (long)((__int128)size * 32 / pp->nr_pages);
		if (pn->reclaim_batch < 4)
			pn->reclaim_batch = 4;
	}
}

static long page_mark(const struct page_node *pn, enum page_wmark which)
{
	return which == PAGE_WM_MIN ? pn->wm_min : which == PAGE_WM_LOW ? pn->wm_low : pn->wm_high;
}

uint32_t page_alloc_wmark(struct page_pool *pp, unsigned node, enum page_wmark which)
{
	long min = 1;

	for (unsigned i = 0; i < pp->nr_nodes; i++, node++) {
		struct page_node *pn;
		uint32_t idx;

		if (node >= pp->nr_nodes)
			node %= pp->nr_nodes;
		pn = &pp->node[node];
		min += page_mark(pn, which);
		if ((idx = page_take_above(pp, pn, min)) != PAGE_NONE)
			return idx;
	}
	return PAGE_NONE;
}

long page_nr_free(struct page_pool *pp)
{
	long n = 0;

	for (unsigned i = 0; i < pp->nr_nodes; i++) {
		spin_lock(&pp->node[i].lock);
		n += pp->node[i].nr_free;
		spin_unlock(&pp->node[i].lock);
	}
	return n;
}

int page_pool_blocks(struct page_pool *pp)
{
	uint32_t nblocks = (pp->nr_pages + PAGE_BLOCK - 1) >> PAGE_BLOCK_ORDER;

	if (pp->block_free)
		return -EINVAL;
	pp->block_free = calloc(nblocks, sizeof(*pp->block_free));
	pp->free_bit = calloc((pp->nr_pages + 63) / 64, sizeof(*pp->free_bit));
	if (!pp->block_free || !pp->free_bit) {
		free(pp->block_free);
		free(pp->free_bit);
		pp->block_free = NULL;
		pp->free_bit = NULL;
		return -ENOMEM;
	}
	for (unsigned n = 0; n < pp->nr_nodes; n++)
		if (pp->node[n].bump != (n ? pp->node_end[n - 1] : 0) ||
		    pp->node[n].free_head != PAGE_NONE)
			return -EINVAL;           /* only before any allocation */
	for (unsigned n = 0; n < pp->nr_nodes; n++) {
		struct page_node *pn = &pp->node[n];
		uint32_t end = pp->node_end[n];

		/* pushed from the top, so taken from the bottom */
		while (end > pn->bump)
			page_free_locked(pp, pn, --end);
		pn->bump = pp->node_end[n];
		pn->nr_free = page_node_size(pp, n);
	}
	return 0;
}

void page_node_blocks(const struct page_pool *pp, unsigned n, uint32_t *first, uint32_t *end)
{
	uint32_t start = n ? pp->node_end[n - 1] : 0;

	*first = (start + PAGE_BLOCK - 1) >> PAGE_BLOCK_ORDER;
	*end = pp->node_end[n] >> PAGE_BLOCK_ORDER;
	if (*end < *first)
		*end = *first;
}

bool page_node_has_block(const struct page_pool *pp, unsigned n)
{
	uint32_t b, end;

	if (!pp->block_free)
		return false;
	for (page_node_blocks(pp, n, &b, &end); b < end; b++)
		if (page_block_free(pp, b) == PAGE_BLOCK)
			return true;
	return false;
}

/* A wholly free block of node n, taken, or PAGE_NONE. */
static uint32_t page_take_block(struct page_pool *pp, unsigned n)
{
	struct page_node *pn = &pp->node[n];
	uint32_t b, end, first = PAGE_NONE;

	spin_lock(&pn->lock);
	for (page_node_blocks(pp, n, &b, &end); pn->nr_free - PAGE_BLOCK >= pn->wm_min && b < end; b++)
		if (page_block_free(pp, b) == PAGE_BLOCK) {
			first = b << PAGE_BLOCK_ORDER;
			for (uint32_t i = 0; i < PAGE_BLOCK; i++)
				page_unlink_free(pp, pn, first + i);
			__atomic_store_n(&pn->nr_free, pn->nr_free - PAGE_BLOCK, __ATOMIC_RELAXED);
			break;
		}
	spin_unlock(&pn->lock);
	for (uint32_t i = 0; first != PAGE_NONE && i < PAGE_BLOCK; i++)
		pp->pages[first + i] = (struct page){ .prev = PAGE_NONE, .next = PAGE_NONE };
	return first;
}

uint32_t page_alloc_block(struct page_pool *pp, unsigned node)
{
	if (!pp->block_free)
		return PAGE_NONE;
	/* as page_alloc: node first, then the others in turn */
	for (unsigned i = 0; i < pp->nr_nodes; i++) {
		uint32_t idx = page_take_block(pp, (node + i) % pp->nr_nodes);

		if (idx != PAGE_NONE)
			return idx;
	}
	return PAGE_NONE;
}

bool page_take_at(struct page_pool *pp, uint32_t idx)
{
	struct page_node *pn;
	bool taken;

	if (!pp->block_free || idx >= pp->nr_pages)
		return false;
	pn = &pp->node[page_node_of(pp, idx)];
	spin_lock(&pn->lock);
	taken = page_is_free(pp, idx);
	if (taken) {
		page_unlink_free(pp, pn, idx);
		__atomic_store_n(&pn->nr_free, pn->nr_free - 1, __ATOMIC_RELAXED);
	}
	spin_unlock(&pn->lock);
	if (taken)
		pp->pages[idx] = (struct page){ .prev = PAGE_NONE, .next = PAGE_NONE };
	return taken;
}

enum page_compact page_compact_suitable(const struct page_pool *pp, unsigned n, int order)
{
	if (__atomic_load_n(&pp->node[n].nr_free, __ATOMIC_RELAXED) <=
	    pp->node[n].wm_low + (2L << order))
		return PAGE_COMPACT_SKIPPED;
	return page_node_has_block(pp, n) ? PAGE_COMPACT_PARTIAL : PAGE_COMPACT_CONTINUE;
}

#define PAGE_COMPACT_MAX_DEFER_SHIFT 6   /* COMPACT_MAX_DEFER_SHIFT */

bool page_compact_deferred(struct page_pool *pp, unsigned n)
{
	struct page_node *pn = &pp->node[n];
	unsigned limit;
	bool deferred;

	spin_lock(&pn->lock);
	limit = 1u << pn->compact_defer_shift;
	if (++pn->compact_considered > limit)
		pn->compact_considered = limit;
	deferred = pn->compact_considered < limit;
	spin_unlock(&pn->lock);
	return deferred;
}

void page_compact_defer(struct page_pool *pp, unsigned n)
{
	struct page_node *pn = &pp->node[n];

	spin_lock(&pn->lock);
	pn->compact_considered = 0;
	if (pn->compact_defer_shift < PAGE_COMPACT_MAX_DEFER_SHIFT)
		pn->compact_defer_shift++;
	spin_unlock(&pn->lock);
}

void page_compact_reset(struct page_pool *pp, unsigned n)
{
	struct page_node *pn = &pp->node[n];

	spin_lock(&pn->lock);
	pn->compact_considered = 0;
	pn->compact_defer_shift = 0;
	spin_unlock(&pn->lock);
}
