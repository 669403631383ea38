/* charge.c: the charge path. A per-CPU stock of pre-charged pages (one
 * cached group per CPU, at most batch-1 pages, so the over-charge is
 * bounded by ncpus * (batch - 1)), batched uncharge per thread, and the
 * try-charge loop of §5.4 with direct reclaim, a stock drain, bounded
 * retries and the OOM hook. Never picks pages to reclaim itself.
 * Lock order: a stock lock, then id_lock (mcg_put may free a group). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bgreclaim.h"
#include "engine/charge.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/memcg.h"
#include "engine/move.h"
#include "engine/oom.h"
#include "engine/oom_wait.h"
#include "engine/page_state.h"
#include "engine/reclaim.h"
#include "engine/softlimit.h"
#include "engine/swap.h"

#define CHARGE_COSTLY_PAGES     8     /* PAGE_ALLOC_COSTLY_ORDER */
#define CHARGE_RECLAIM_MIN      32    /* SWAP_CLUSTER_MAX */
#define CHARGE_EVENTS_TARGET    128   /* THRESHOLDS_EVENTS_TARGET */

static __thread long charge_nevents;

#ifdef MCG_BENCH
static __thread struct charge_bench_counts charge_bench;
#define CHARGE_BENCH(field) (charge_bench.field++)

void charge_bench_take(struct charge_bench_counts *out)
{
	*out = charge_bench;
	charge_bench = (struct charge_bench_counts){ 0 };
}

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
#else
#define CHARGE_BENCH(field) ((void)0)
#endif

/* n pages were charged to or uncharged from g (counters up to date): every
 * CHARGE_EVENTS_TARGET of them on this thread, thresholds are checked. */
static void charge_events(struct mcg_group *g, long n)
{
	struct mcg_engine *e = g->eng;

	if (!e->own.ops->usage_event || (charge_nevents += n) < CHARGE_EVENTS_TARGET)
		return;
	charge_nevents = 0;
	e->own.ops->usage_event(g, e->own.arg);
}
#define CHARGE_PROGRESS_RETRIES 256   /* bound on "reclaimed something, retry" */

/* Throttled direct reclaim (seed topic 1, patches 5/8 and 8/8): at most
 * ncpus/4 + 1 tasks reclaim directly on one group; the others wait until a
 * slot is released or memory is uncharged, then retry their charge. */
struct charge_throttle {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_int waiters;
	unsigned long gen;
};

static bool charge_throttled(struct mcg_engine *e)
{
	/* an extension: off with -o nowatermarks; and replay's single thread
	 * could never be woken */
	return e->throttle && e->m.watermarks && env_has_workers(&e->env);
}

/* Take a reclaim slot on g, or wait for a change and return false (the
 * caller retries its charge). */
static bool charge_reclaim_slot(struct mcg_group *g)
{
	struct charge_throttle *t = g->eng->throttle;
	int max = (int)charge_reclaim_slots(g->eng->m.cpus), n = atomic_load(&g->reclaimers);
	unsigned long gen;

	while (n < max)
		if (atomic_compare_exchange_weak(&g->reclaimers, &n, n + 1))
			return true;
	pthread_mutex_lock(&t->lock);
	atomic_fetch_add(&t->waiters, 1);
	gen = t->gen;
	while (gen == t->gen && atomic_load(&g->reclaimers) >= max)
		pthread_cond_wait(&t->cond, &t->lock);
	atomic_fetch_sub(&t->waiters, 1);
	pthread_mutex_unlock(&t->lock);
	return false;
}

static void charge_throttle_wake(struct mcg_engine *e)
{
	struct charge_throttle *t = e->throttle;

	if (!t || atomic_load(&t->waiters) == 0)
		return;
	pthread_mutex_lock(&t->lock);
	t->gen++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static void charge_reclaim_done(struct mcg_group *g)
{
	atomic_fetch_sub(&g->reclaimers, 1);
	charge_throttle_wake(g->eng);
}

int charge_init(struct mcg_engine *e)
{
	if (!(e->throttle = calloc(1, sizeof(*e->throttle))))
		return -ENOMEM;
	pthread_mutex_init(&e->throttle->lock, NULL);
	pthread_cond_init(&e->throttle->cond, NULL);
	e->stock = aligned_alloc(64, e->m.cpus * sizeof(*e->stock));
	if (e->stock)
		memset(e->stock, 0, e->m.cpus * sizeof(*e->stock));
	if (!e->stock)
		return -ENOMEM;
	for (unsigned c = 0; c < e->m.cpus; c++)
		spin_init(&e->stock[c].lock);
	return 0;
}

void charge_destroy(struct mcg_engine *e)
{
	if (e->throttle) {
		pthread_mutex_destroy(&e->throttle->lock);
		pthread_cond_destroy(&e->throttle->cond);
		free(e->throttle);
		e->throttle = NULL;
	}
	if (!e->stock)
		return;
	charge_drain(e, NULL);
	free(e->stock);
	e->stock = NULL;
}

static void charge_counters_uncharge(struct mcg_group *g, long n, bool keep_memsw)
{
	pc_uncharge(&g->cnt[MCG_MEM], n);
	if (!keep_memsw)
		pc_uncharge(&g->cnt[MCG_MEMSW], n);
}

/* Caller holds s->lock. The group the stock held, whose reference passes
 * to the caller for charge_stock_put once the lock is dropped, or NULL. */
static struct mcg_group *charge_stock_drain_locked(struct charge_stock *s)
{
	struct mcg_group *g = s->g;

	if (!g)
		return NULL;
	if (s->nr)
		charge_counters_uncharge(g, s->nr, false);
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
		mcg_reap(g);
	mcg_put(g);
}

static bool charge_stock_consume(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n)
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

static void charge_stock_refill(struct mcg_engine *e, unsigned cpu, struct mcg_group *g, long n)
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
	if (s->nr > (long)prof_charge_batch(&e->m.prof))
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

/* The group whose counter of kind k refused. */
static struct mcg_group *charge_counter_owner(struct pc_counter *c, enum mcg_counter k)
{
	return (struct mcg_group *)((char *)c - offsetof(struct mcg_group, cnt) -
				    (size_t)k * sizeof(struct pc_counter));
}

/* The charge when the stock cannot serve it: counters, then reclaim. */
static __attribute__((noinline)) int charge_try_counters(struct mcg_group *g, unsigned cpu, long n,
								  struct charge_mode *mode)
{
	struct mcg_engine *e = g->eng;
	unsigned retries = prof_reclaim_retries(&e->m.prof);
	unsigned progress_retries = CHARGE_PROGRESS_RETRIES;
	bool drained = false, stalled = false;
	long batch;

	batch = e->m.no_stock ? n : (long)prof_charge_batch(&e->m.prof);
	if (batch < n)
		batch = n;
	for (;;) {
		struct pc_counter *fail = NULL;
		enum mcg_counter kind = MCG_MEMSW;
		struct mcg_group *over;
		long reclaimed;

		if (pc_try_charge(&g->cnt[MCG_MEMSW], batch, &fail)) {
			kind = MCG_MEM;
			if (pc_try_charge(&g->cnt[MCG_MEM], batch, &fail)) {
				if (batch > n)
					charge_stock_refill(e, cpu, g, batch - n);
				bgr_check(g);     /* crossed a high watermark? */
				soft_charged(g);  /* further over a soft limit? */
				return 0;
			}
			pc_uncharge(&g->cnt[MCG_MEMSW], batch);
		}
		/* The speculative batch failed: try just what is needed. */
		if (batch > n) {
			batch = n;
			continue;
		}
		over = charge_counter_owner(fail, kind);
		if (e->env.ops->throttle_slot) {
			/* simulated time: the caller's clock decides */
			if (!e->env.ops->throttle_slot(over, e->env.arg))
				return -EBUSY;
		} else if (charge_throttled(e) && !charge_reclaim_slot(over)) {
			continue;         /* others reclaim for us: try again */
		}
		/* allocstall: this charge enters direct reclaim (once) */
		if (!stalled) {
			stalled = true;
			atomic_fetch_add(&g->allocstall, 1);
		}
		/* Only page cache can go when the memsw limit is the one hit.
		 * Like try_to_free_mem_cgroup_pages, reclaim at least a
		 * cluster (SWAP_CLUSTER_MAX), not just the pages asked for. */
		reclaimed = reclaim_subtree(over, n > CHARGE_RECLAIM_MIN ? n : CHARGE_RECLAIM_MIN,
					    kind == MCG_MEM, RECLAIM_DIRECT);
		if (!e->env.ops->throttle_slot && charge_throttled(e))
			charge_reclaim_done(over);
		if (pc_max(&over->cnt[kind]) - pc_usage(&over->cnt[kind]) >= n)
			continue;
		if (!drained) {
			drained = true;
			charge_drain(e, over);
			continue;
		}
		if (reclaimed && n <= CHARGE_COSTLY_PAGES && progress_retries-- > 0)
			continue;
		if (retries-- > 0)
			continue;
		if (move_wait(over)) {
			/* a move into or out of this subtree was in flight:
			 * its pre-charge was temporary, try again (seed 2) */
			retries = prof_reclaim_retries(&e->m.prof);
			continue;
		}
		if (n <= CHARGE_COSTLY_PAGES && oom_handle(over, mode)) {
			retries = prof_reclaim_retries(&e->m.prof);
			continue;
		}
		return -ENOMEM;
	}
}

static inline int charge_try_fast(struct mcg_group *g, unsigned cpu, long n,
				  struct charge_mode *mode)
{
	struct mcg_engine *e = g->eng;

	if (mcg_is_root(g) || mcg_no_accounting(e))
		return 0;
	if (cpu >= e->m.cpus)
		cpu %= e->m.cpus;
	CHARGE_BENCH(charges);
	if (!e->m.no_stock && charge_stock_consume(e, cpu, g, n)) {
		CHARGE_BENCH(stock_hits);
		return 0;
	}
	return charge_try_counters(g, cpu, n, mode);
}

int charge_try(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode)
{
	return charge_try_fast(g, cpu, n, mode);
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
	charge_events(g, b->pages);
	oom_wake(g->eng);
	charge_throttle_wake(g->eng);
	b->g = NULL;
	if (g->removed)
		mcg_reap(g);
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

/* The unbatched uncharge: counters, events, waiters. */
static __attribute__((noinline)) void charge_uncharge_now(struct mcg_group *g, long n,
							  bool keep_memsw)
{
	charge_counters_uncharge(g, n, keep_memsw);
	charge_events(g, n);
	oom_wake(g->eng);
	charge_throttle_wake(g->eng);
}

/* n pages of g uncharged into b (NULL: at once). A batch gathers one group
 * at a time: another group's uncharge applies the first's. */
static inline void charge_uncharge_batched(struct mcg_group *g, long n, bool keep_memsw,
					   struct charge_batch *b)
{
	if (mcg_is_root(g) || mcg_no_accounting(g->eng))
		return;
	if (!b || mcg_no_batch_uncharge(g->eng)) {
		charge_uncharge_now(g, n, keep_memsw);
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

void charge_uncharge(struct mcg_group *g, long n, bool keep_memsw)
{
	charge_uncharge_batched(g, n, keep_memsw, NULL);
}

int charge_kmem(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode)
{
	struct pc_counter *fail = NULL;
	int err;

	if (mcg_is_root(g) || mcg_no_accounting(g->eng) || n <= 0)
		return 0;
	if ((err = charge_try(g, cpu, n, mode)))
		return err;
	/* as in charge_new_page_locked: a group rmdir has reaped takes no
	 * charge (the caller keeps its kernel memory uncharged) */
	if (atomic_load(&g->reaped)) {
		charge_uncharge(g, n, false);
		charge_drain(g->eng, g);
		return -ENOMEM;
	}
	if (!pc_try_charge(&g->cnt[MCG_KMEM], n, &fail)) {
		charge_uncharge(g, n, false);     /* the kmem limit (old profiles) */
		return -ENOMEM;
	}
	atomic_fetch_add(&g->kmem_local, n);
	return 0;
}

void charge_kmem_uncharge(struct mcg_group *g, long n)
{
	if (mcg_is_root(g) || mcg_no_accounting(g->eng) || n <= 0)
		return;
	atomic_fetch_sub(&g->kmem_local, n);
	pc_uncharge(&g->cnt[MCG_KMEM], n);
	charge_uncharge(g, n, false);
	if (atomic_load(&g->removed))
		mcg_reap(g);
}

static long charge_new_page_locked(struct mcg_group *g, unsigned cpu, unsigned node,
				   enum page_kind kind, uint32_t owner, uint8_t flags,
				   struct charge_mode *mode);

long charge_new_page(struct mcg_group *g, unsigned cpu, unsigned node, enum page_kind kind,
		     uint32_t owner, uint8_t flags, struct charge_mode *mode)
{
	long ret;

	reclaim_wb_complete(g->eng);  /* cheap unless writeback is due */
	/* A charge to a group that rmdir has just reaped backs out and goes
	 * to the parent (every group pins its parent, so the walk is safe). */
	while ((ret = charge_new_page_locked(g, cpu, node, kind, owner, flags, mode)) == -EAGAIN)
		g = g->parent;
	return ret;
}

/* Per-node dirty limits (seed 4.4): a page-cache page about to be written
 * goes to the first node, from the preferred one on, whose dirty and
 * writeback pages are under node_dirty_ratio % of its pages; with every
 * node over, the preferred one (the kernel's slow path ignores the limit
 * too). */
static __attribute__((noinline)) unsigned charge_dirty_node(struct mcg_engine *e, unsigned node)
{
	unsigned nodes = e->pages.nr_nodes;

	for (unsigned i = 0; i < nodes; i++) {
		unsigned n = (node + i) % nodes;

		if (atomic_load_explicit(&e->node_dirty[n], memory_order_relaxed) * 100 <
		    (long)e->m.node_dirty_ratio * page_node_size(&e->pages, n))
			return n;
	}
	return node % nodes;
}

/* The charge itself, with g held against reaping by the caller. */
static long charge_new_page_locked(struct mcg_group *g, unsigned cpu, unsigned node,
				   enum page_kind kind, uint32_t owner, uint8_t flags,
				   struct charge_mode *mode)
{
	struct mcg_engine *e = g->eng;
	uint32_t idx;
	struct page *p;
	int err;

	if ((err = charge_try_fast(g, cpu, 1, mode)))
		return err;
	/* Dekker with mcg_reap: the charge above is published before reaped
	 * is read; the reaper publishes reaped before it re-reads usage. One
	 * of the two sees the other. Root pages carry no charge, and the root
	 * is never reaped. */
	if (atomic_load(&g->reaped) && !mcg_is_root(g)) {
		charge_uncharge(g, 1, false);
		charge_drain(e, g);       /* and the batch the charge stocked */
		mcg_reap(g);              /* it may have waited for us */
		return -EAGAIN;
	}
	if (__builtin_expect(e->m.node_dirty_ratio != 0, 0) && (flags & PG_DIRTY) && kind != PK_ANON)
		node = charge_dirty_node(e, node);
	idx = page_alloc(&e->pages, node);
	if (idx == PAGE_NONE) {
		/* The machine itself is full: groups over their soft limits
		 * give first, then everybody (once). */
		if (reclaim_soft_limits(e, 32) == 0)
			reclaim_subtree(e->root, 32, true, RECLAIM_DIRECT);
		idx = page_alloc(&e->pages, node);
	}
	if (idx == PAGE_NONE) {
		charge_uncharge(g, 1, false);
		return -ENOMEM;
	}
	p = &e->pages.pages[idx];
	p->memcg = (uint16_t)g->id;
	p->kind = (uint8_t)kind;
	p->flags = flags & (PG_DIRTY | PG_MAPPED | PG_MLOCKED);
	p->owner = owner;
	pgstate_account_unmarked(g, p, 1, STAT_PGPGIN);
	lru_add(e, g, idx);             /* (its size store marks the group) */
	charge_events(g, 1);
	return idx;
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
		mcg_reap(g);
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

