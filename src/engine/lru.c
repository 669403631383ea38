/* lru.c: LRU list membership. Each (group, node) pair has six lists under
 * one spinlock (stat.h's enum stat_lru); the sizes are the group's LRU statistics. Never scans and
 * never frees a page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"

int lru_vecs_init(struct mcg_group *g, unsigned nodes)
{
	g->lruvec = aligned_alloc(64, nodes * sizeof(*g->lruvec));
	if (!g->lruvec)
		return -ENOMEM;
	memset(g->lruvec, 0, nodes * sizeof(*g->lruvec));
	for (unsigned n = 0; n < nodes; n++) {
		spin_init(&g->lruvec[n].lock);
		g->lruvec[n].rs = &g->rs;
		for (int l = 0; l < LRU__COUNT; l++)
			g->lruvec[n].list[l].head = g->lruvec[n].list[l].tail = PAGE_NONE;
	}
	return 0;
}

void lru_vecs_destroy(struct mcg_group *g, unsigned nodes)
{
	if (!g->lruvec)
		return;
	(void)nodes;
	free(g->lruvec);
	g->lruvec = NULL;
}

enum stat_lru lru_of(const struct page *p)
{
	bool active = p->flags & PG_ACTIVE;

	if (p->flags & (PG_UNEVICTABLE | PG_MLOCKED))
		return LRU_UNEVICTABLE;
	if (p->kind & PS_IMMEDIATE)
		return LRU_IMMEDIATE;
	if ((p->kind & PK_MASK) == PK_FILE)
		return active ? LRU_ACTIVE_FILE : LRU_INACTIVE_FILE;
	/* anon and shmem are swap-backed: the anon lists */
	return active ? LRU_ACTIVE_ANON : LRU_INACTIVE_ANON;
}

struct lru_vec *lru_vec_of(struct mcg_engine *e, struct mcg_group *g, uint32_t idx)
{
	return &g->lruvec[page_node_of(&e->pages, idx)];
}

/* Link idx at the head (most recent) or the tail (next to be scanned) of
 * the list its flags imply in v, its node's lruvec, without touching the
 * sizes. */
static inline __attribute__((always_inline))
enum stat_lru lru_link_raw(struct page *pg, struct lru_vec *v, uint32_t idx, bool tail)
{
	struct page *p = &pg[idx];
	enum stat_lru l = lru_of(p);
	struct lru_list *list = &v->list[l];
	uint32_t *end = tail ? &list->tail : &list->head;
	uint32_t *other = tail ? &list->head : &list->tail;

	if (l == LRU_IMMEDIATE && (p->flags & PG_WRITEBACK))
		v->nr_immediate_wb++;

	p->prev = tail ? *end : PAGE_NONE;
	p->next = tail ? PAGE_NONE : *end;
	if (*end != PAGE_NONE) {
		if (tail)
			pg[*end].next = idx;
		else
			pg[*end].prev = idx;
	} else {
		*other = idx;
	}
	*end = idx;
	return l;
}

static inline __attribute__((always_inline))
enum stat_lru lru_unlink_raw(struct page *pg, struct lru_vec *v, uint32_t idx)
{
	struct page *p = &pg[idx];
	enum stat_lru l = lru_of(p);
	struct lru_list *list = &v->list[l];

	if (l == LRU_IMMEDIATE && (p->flags & PG_WRITEBACK))
		v->nr_immediate_wb--;
	if (p->prev != PAGE_NONE)
		pg[p->prev].next = p->next;
	else
		list->head = p->next;
	if (p->next != PAGE_NONE)
		pg[p->next].prev = p->prev;
	else
		list->tail = p->prev;
	p->prev = p->next = PAGE_NONE;
	return l;
}

enum stat_lru lru_transfer(struct mcg_engine *e, struct mcg_group *src, struct mcg_group *dst,
			   uint32_t idx)
{
	unsigned node = page_node_of(&e->pages, idx);

	lru_unlink_raw(e->pages.pages, &src->lruvec[node], idx);
	return lru_link_raw(e->pages.pages, &dst->lruvec[node], idx, false);
}

void lru_link(struct mcg_engine *e, struct mcg_group *g, uint32_t idx)
{
	struct lru_vec *v = lru_vec_of(e, g, idx);

	lru_size_add(v, lru_link_raw(e->pages.pages, v, idx, false), 1);
}

void lru_link_tail(struct mcg_engine *e, struct mcg_group *g, uint32_t idx)
{
	struct lru_vec *v = lru_vec_of(e, g, idx);

	lru_size_add(v, lru_link_raw(e->pages.pages, v, idx, true), 1);
}

void lru_unlink(struct mcg_engine *e, struct mcg_group *g, uint32_t idx)
{
	lru_del(e, lru_vec_of(e, g, idx), idx);
}

void lru_del(struct mcg_engine *e, struct lru_vec *v, uint32_t idx)
{
	lru_size_add(v, lru_unlink_raw(e->pages.pages, v, idx), -1);
}

void lru_del_unmarked(struct mcg_engine *e, struct lru_vec *v, uint32_t idx)
{
	lru_size_add_unmarked(v, lru_unlink_raw(e->pages.pages, v, idx), -1);
}

void lru_add(struct mcg_engine *e, struct mcg_group *g, uint32_t idx)
{
	struct lru_vec *v = lru_vec_of(e, g, idx);

	spin_lock(&v->lock);
	lru_size_add(v, lru_link_raw(e->pages.pages, v, idx, false), 1);
	spin_unlock(&v->lock);
}
