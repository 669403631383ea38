/* page_state.c: changing a charged page's state (page_state.h) under its
 * lruvec's lock, with its group's statistics and LRU list kept right.
 * Never charges, uncharges or frees a page. */
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/page_state.h"

static inline void pgstate_add_delta(void *d, enum stat_item it, long v)
{
	((long *)d)[it] += v;
}

static inline void pgstate_add_shard(void *st, enum stat_item it, long v)
{
	stat_shard_add(st, it, v);
}

void pgstate_stat_delta(const struct page *p, long *d, long sign)
{
	pgstate_items(p, sign, pgstate_add_delta, d);
}

void pgstate_stats_apply(struct mcg_group *g, const long *d, long sign)
{
	for (int i = 0; i < STAT__COUNT; i++)
		if (d[i])
			stat_add(g, (enum stat_item)i, d[i] * sign);
}

__attribute__((noinline)) void pgstate_account_shared(struct mcg_group *g, const struct page *p,
						      long sign, enum stat_item event)
{
	pgstate_items(p, sign, pgstate_add_shard, g->stat);
	if (event != STAT__COUNT)
		stat_shard_add(g->stat, event, 1);
}

/* Caller holds the lruvec lock. A page changes lists only when its
 * flags put it on another (activated, unevictable), linked at the head;
 * a flag that leaves it where it is (dirty, referenced) keeps its place,
 * as in the kernel. The immediate list counts its pages under writeback:
 * one that starts or ends writeback there is relinked for the count. */
static void pgstate_flags_locked(struct mcg_engine *e, struct mcg_group *g, uint32_t idx,
				     uint8_t set, uint8_t clear)
{
	struct page *p = &e->pages.pages[idx];
	struct page after = *p;
	enum stat_lru was = lru_of(p);
	bool relink;

	after.flags = (uint8_t)((p->flags | set) & ~clear);
	relink = !(p->kind & PS_ISOLATED) &&
		 (lru_of(&after) != was ||
		  (was == LRU_IMMEDIATE && ((p->flags ^ after.flags) & PG_WRITEBACK)));
	pgstate_stats(g, p, -1);
	if (relink)
		lru_unlink(e, g, idx);
	p->flags = after.flags;
	if (relink)
		lru_link(e, g, idx);
	pgstate_stats(g, p, 1);
}

void pgstate_flags(struct mcg_engine *e, uint32_t idx, uint8_t set, uint8_t clear)
{
	struct mcg_group *g = mcg_by_id_pinned(e, e->pages.pages[idx].memcg);
	struct lru_vec *v = lru_vec_of(e, g, idx);

	spin_lock(&v->lock);
	pgstate_flags_locked(e, g, idx, set, clear);
	spin_unlock(&v->lock);
}

bool pgstate_swapcache(struct mcg_engine *e, uint32_t idx, bool on)
{
	struct page *p = &e->pages.pages[idx];
	struct mcg_group *g = mcg_by_id_pinned(e, p->memcg);
	struct lru_vec *v = lru_vec_of(e, g, idx);
	bool was;

	spin_lock(&v->lock);
	was = p->kind & PS_SWAPCACHE;
	if (was != on) {
		pgstate_stats(g, p, -1);
		p->kind ^= PS_SWAPCACHE;
		pgstate_stats(g, p, 1);
	}
	spin_unlock(&v->lock);
	return was;
}

uint8_t pgstate_accessed(struct mcg_engine *e, uint32_t idx, uint8_t set)
{
	struct page *p = &e->pages.pages[idx];
	struct mcg_group *g = mcg_by_id_pinned(e, p->memcg);
	struct lru_vec *v = lru_vec_of(e, g, idx);
	uint8_t clear = 0, was;

	spin_lock(&v->lock);
	was = p->flags;
	if ((p->kind & PK_MASK) == PK_ANON)
		set &= (uint8_t)~(PG_DIRTY | PG_MAPPED);   /* page-cache states */
	else if ((p->kind & PK_MASK) == PK_SHMEM)
		set &= (uint8_t)~PG_DIRTY;   /* shmem is never accounted dirty */
	if ((p->flags & PG_REFERENCED) && !(p->flags & PG_ACTIVE)) {
		set |= PG_ACTIVE;
		clear |= PG_REFERENCED;
	} else {
		set |= PG_REFERENCED;
	}
	pgstate_flags_locked(e, g, idx, set, clear);
	spin_unlock(&v->lock);
	return was;
}

int pgstate_start_writeback(struct mcg_engine *e, uint32_t idx)
{
	struct page *p = &e->pages.pages[idx];
	struct mcg_group *g = mcg_by_id_pinned(e, p->memcg);
	struct lru_vec *v = lru_vec_of(e, g, idx);
	int ret = 0;

	spin_lock(&v->lock);
	if (p->flags & PG_DIRTY) {
		ret = -1;
		if (!(p->flags & PG_WRITEBACK) && !(p->kind & PS_ISOLATED)) {
			/* in place: set_page_writeback moves no page (neither
			 * flag changes its list) */
			pgstate_stats(g, p, -1);
			p->flags = (uint8_t)((p->flags | PG_WRITEBACK) & ~PG_DIRTY);
			pgstate_stats(g, p, 1);
			ret = 1;
		}
	}
	spin_unlock(&v->lock);
	return ret;
}

void pgstate_migrate(struct mcg_engine *e, uint32_t old, uint32_t nw)
{
	struct page *po = &e->pages.pages[old];
	struct mcg_group *g = mcg_by_id_pinned(e, po->memcg);
	struct lru_vec *v = lru_vec_of(e, g, old);

	spin_lock(&v->lock);
	e->pages.pages[nw] = *po;
	e->pages.pages[nw].prev = PAGE_NONE;
	e->pages.pages[nw].next = PAGE_NONE;
	spin_unlock(&v->lock);
}
