/* charge_core.c: what the charge path and every uncharger share
 * (charge_core.h): the per-CPU stock of pre-charged pages (one cached
 * group per CPU, at most batch-1 pages, so the over-charge is bounded by
 * ncpus * (batch - 1)), the uncharge batches the caller passes down, and
 * the end of a page's life (off its LRU, uncharged, back to the pool).
 * Never charges a counter (the stock is refilled by the charge path,
 * charge.c), never reclaims. Lock order: a stock lock alone; the group it
 * held is put after it is dropped. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/charge_core.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/oom_wait.h"
#include "engine/page_state.h"
#include "engine/swap.h"
#include "engine/uncharge.h"

long charge_batch_pages(const struct mcg_engine *e)
{
#ifdef MCG_BENCH
	if (e->m.bench_batch)
		return (long)e->m.bench_batch;
#endif
	return (long)prof_charge_batch(&e->m.prof);
}

int charge_core_init(struct mcg_engine *e)
{
	e->stock = aligned_alloc(64, e->m.cpus * sizeof(*e->stock));
	if (!e->stock)
		return -ENOMEM;
	memset(e->stock, 0, e->m.cpus * sizeof(*e->stock));
	for (unsigned c = 0; c < e->m.cpus; c++)
		spin_init(&e->stock[c].lock);
	return 0;
}

void charge_core_destroy(struct mcg_engine *e)
{
	if (!e->stock)
		return;
	charge_drain(e, NULL);
	free(e->stock);
	e->stock = NULL;
}

/* Caller holds s->lock. The group the stock held, whose reference passes
 * to the caller for charge_stock_put once the lock is dropped, or NULL. */
static struct mcg_group *charge_stock_drain_locked(struct charge_stock *s)
{
	struct mcg_group *g = s->g;

	if (!g)
		return NULL;
	if (s->nr)
		uncharge_counters(g, s->nr, false);
	s->g = NULL;
	s->nr = 0;
	return g;
}

/* The stocked pages may have been a removed group's last charges: reap
 * it (the stock's reference still holds it), then drop that reference. */
static void charge_stock_put(struct mcg_group *g)
{
	if (!g)
		return;
	if (atomic_load(&g->removed))
		uncharge_reap(g);
	mcg_put(g);
}

bool charge_stock_consume(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n)
{
	struct charge_stock *s = &e->stock[cpu];
	bool hit = false;

	spin_lock(&s->lock);
	if (s->g == g && s->nr >= n) {
		s->nr -= n;
		hit = true;
	}
	spin_unlock(&s->lock);
	return hit;
}

void charge_stock_refill(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n)
{
	struct charge_stock *s = &e->stock[cpu];
	struct mcg_group *old = NULL, *full = NULL;

	spin_lock(&s->lock);
	if (s->g != g) {
		old = charge_stock_drain_locked(s);
		mcg_get(g);
		s->g = g;
	}
	s->nr += n;
	if (s->nr > charge_batch_pages(e))
		full = charge_stock_drain_locked(s);
#ifdef MCG_BENCH
	if (s->nr > s->bench_max)
		s->bench_max = s->nr;
#endif
	spin_unlock(&s->lock);
	charge_stock_put(old);
	charge_stock_put(full);
}

void charge_drain(struct mcg_engine *e, struct mcg_group *g)
{
	for (unsigned c = 0; c < e->m.cpus; c++) {
		struct charge_stock *s = &e->stock[c];
		struct mcg_group *old = NULL;

		spin_lock(&s->lock);
		if (s->g && (!g || mcg_in_subtree(s->g, g)))
			old = charge_stock_drain_locked(s);
		spin_unlock(&s->lock);
		charge_stock_put(old);
	}
}

long charge_stocked(struct mcg_engine *e, struct mcg_group *g)
{
	long n = 0;

	for (unsigned c = 0; c < e->m.cpus; c++) {
		struct charge_stock *s = &e->stock[c];

		spin_lock(&s->lock);
		if (s->g && (!g || mcg_in_subtree(s->g, g)))
			n += s->nr;
		spin_unlock(&s->lock);
	}
	return n;
}

static void charge_batch_free_pages(struct charge_batch *b)
{
	if (b->nfree)
		page_free_many(&b->e->pages, b->free, b->nfree);
	b->nfree = 0;
}

static void charge_batch_flush(struct charge_batch *b)
{
	struct mcg_group *g = b->g;

	/* the pages first: once uncharged, a charger may want them */
	charge_batch_free_pages(b);
	if (!g)
		return;
	pc_uncharge(&g->cnt[MCG_MEM], b->pages);
	pc_uncharge(&g->cnt[MCG_MEMSW], b->memsw);
	uncharge_events(g, b->pages);
	oom_wake(g->eng);
	uncharge_throttle_wake(g->eng);
	b->g = NULL;
	if (g->removed)
		uncharge_reap(g);
	mcg_put(g);
	b->pages = b->memsw = 0;
}

void charge_batch_begin(struct charge_batch *b, struct mcg_engine *e)
{
	b->e = e;
	b->g = NULL;
	b->pages = b->memsw = 0;
	b->nfree = 0;
}

void charge_batch_end(struct charge_batch *b)
{
	charge_batch_flush(b);
}

/* n pages of g uncharged into b (NULL: at once). A batch gathers one group
 * at a time: another group's uncharge applies the first's. */
static inline void charge_uncharge_batched(struct mcg_group *g, long n, bool keep_memsw,
					   struct charge_batch *b)
{
	if (mcg_root(g) || mcg_no_accounting(g->eng))
		return;
	if (!b || mcg_no_batch_uncharge(g->eng)) {
		uncharge_pages(g, n, keep_memsw);
		return;
	}
	if (b->g != g) {
		charge_batch_flush(b);
		mcg_get(g);
		b->g = g;
	}
	b->pages += n;
	if (!keep_memsw)
		b->memsw += n;
}

/* Off the LRU and uncharged; the page goes back to the pool (or to b's
 * list; NULL: at once). keep_memsw: its content went to swap, which keeps
 * the memsw charge. */
static inline void charge_release_page_batched(struct mcg_engine *e, struct mcg_group *g,
					       uint32_t idx, bool keep_memsw, struct charge_batch *b)
{
	struct page *p = &e->pages.pages[idx];

	pgstate_account(g, p, -1, STAT_PGPGOUT);
	charge_uncharge_batched(g, 1, keep_memsw, b);
	if (p->kind & PS_SWAPCACHE)
		swap_cache_drop(e, idx);      /* its copy in swap is of no use now */
	if (b) {
		if (b->nfree == CHARGE_BATCH_FREE)
			charge_batch_free_pages(b);
		b->free[b->nfree++] = idx;
		return;                   /* the batch's end reaps, if need be */
	}
	page_free(&e->pages, idx);
	if (g->removed)
		uncharge_reap(g);
}

void charge_release_page(struct mcg_engine *e, struct mcg_group *g, uint32_t idx, bool keep_memsw)
{
	charge_release_page_batched(e, g, idx, keep_memsw, NULL);
}

void charge_free_page(struct mcg_engine *e, uint32_t idx, struct charge_batch *b)
{
	struct page *p = &e->pages.pages[idx];
	/* A charged page pins its group: no reference or lock needed. */
	struct mcg_group *g = mcg_by_id_pinned(e, p->memcg);
	struct lru_vec *v = lru_vec_of(e, g, idx);
	bool isolated;

	spin_lock(&v->lock);
	isolated = p->kind & PS_ISOLATED;
	if (isolated)
		p->kind |= PS_DOOMED;     /* reclaim holds it and will finish */
	else
		lru_del_unmarked(e, v, idx);   /* the release marks the group */
	spin_unlock(&v->lock);
	if (!isolated)
		charge_release_page_batched(e, g, idx, false, b);
}

#ifdef MCG_BENCH
long charge_bench_stock_max(struct mcg_engine *e)
{
	long n = 0;

	for (unsigned c = 0; c < e->m.cpus; c++) {
		spin_lock(&e->stock[c].lock);
		n += e->stock[c].bench_max;
		e->stock[c].bench_max = e->stock[c].nr;
		spin_unlock(&e->stock[c].lock);
	}
	return n;
}
#endif
