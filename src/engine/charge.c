/* charge.c: the charge path: the try-charge loop of §5.4 (the stock of
 * charge_core.c first, then the counters with a batch ahead, the reclaim
 * throttle, direct reclaim, a stock drain, bounded retries, a move's
 * wait, the OOM killer), kernel memory, and a new page's charge. Never
 * picks pages to reclaim itself. Holds no lock of its own but the
 * throttle's wait (uncharge.h), over nothing else. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bgreclaim.h"
#include "engine/charge.h"
#include "engine/compaction.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/move.h"
#include "engine/oom.h"
#include "engine/oom_wait.h"
#include "engine/page_state.h"
#include "engine/reclaim.h"
#include "engine/softlimit.h"
#include "engine/stat.h"
#include "engine/swap.h"
#include "engine/writeback.h"
#include "engine/zone.h"

#define CHARGE_COSTLY_PAGES     8     /* PAGE_ALLOC_COSTLY_ORDER */
#define CHARGE_RECLAIM_MIN      32    /* SWAP_CLUSTER_MAX */

#ifdef MCG_BENCH
static __thread struct charge_bench_counts charge_bench;
#define CHARGE_BENCH(field) (charge_bench.field++)

void charge_bench_take(struct charge_bench_counts *out)
{
	*out = charge_bench;
	charge_bench = (struct charge_bench_counts){ 0 };
}

#else
#define CHARGE_BENCH(field) ((void)0)
#endif

#define CHARGE_PROGRESS_RETRIES 256   /* bound on "reclaimed something, retry" */


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

static void charge_reclaim_done(struct mcg_group *g)
{
	atomic_fetch_sub(&g->reclaimers, 1);
	uncharge_throttle_wake(g->eng);
}

/* The group whose counter of kind k refused. */
static struct mcg_group *charge_counter_owner(struct pc_counter *c, enum mcg_counter k)
{
	return (struct mcg_group *)((char *)c - offsetof(struct mcg_group, cnt) -
				    (size_t)k * sizeof(struct pc_counter));
}

/* The charge when the stock cannot serve it: counters, then reclaim. */
static __attribute__((noinline)) int charge_try_counters(struct mcg_group *g, unsigned cpu, long n,
								  struct charge_mode *mode, bool huge)
{
	struct mcg_engine *e = g->eng;
	unsigned retries = prof_reclaim_retries(&e->m.prof);
	unsigned progress_retries = CHARGE_PROGRESS_RETRIES;
	bool drained = false, stalled = false;
	long batch;

	batch = e->m.no_stock ? n : charge_batch_pages(e);
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
		/* 3.2's mem_cgroup_do_charge: "huge pages are rather unlikely
		 * to succeed so close to the limit", one reclaim and the fault
		 * falls back (no OOM kill either) */
		if (huge)
			return -ENOMEM;
		if (!drained) {
			drained = true;
			charge_drain(e, over);
			continue;
		}
		if (reclaimed && n <= CHARGE_COSTLY_PAGES && progress_retries-- > 0)
			continue;
		if (retries-- > 0) {
			/* 2.6.24's mem_cgroup_charge: a reclaim that gave
			 * nothing is retried after congestion_wait(WRITE, HZ/10) */
			if (e->m.era == MCG_ERA_2_6_24 && !reclaimed)
				reclaim_congestion_nap(e);
			continue;
		}
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

int charge_try(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode)
{
	struct mcg_engine *e = g->eng;

	if (mcg_root(g) || mcg_no_accounting(e))
		return 0;
	if (cpu >= e->m.cpus)
		cpu %= e->m.cpus;
	CHARGE_BENCH(charges);
	if (!e->m.no_stock && charge_stock_consume(e, cpu, g, n)) {
		CHARGE_BENCH(stock_hits);
		return 0;
	}
	return charge_try_counters(g, cpu, n, mode, false);
}

int charge_kmem(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode)
{
	struct pc_counter *fail = NULL;
	int err;

	if (mcg_root(g) || mcg_no_accounting(g->eng) || n <= 0)
		return 0;
again:
	/* (a removed group's kernel memory is an ancestor's: kmem-reparent) */
	if (mcg_root(g = uncharge_kmem_owner(g)))
		return 0;
	if ((err = charge_try(g, cpu, n, mode)))
		return err;
	/* as in charge_new_page_locked: a group rmdir has reaped takes no
	 * charge (before kmem-reparent the caller keeps its kernel memory
	 * uncharged; from it, the ancestor it moved to takes it) */
	if (atomic_load(&g->reaped)) {
		uncharge_pages(g, n, false);
		charge_drain(g->eng, g);
		if (atomic_load(&g->kmem_moved))
			goto again;
		return -ENOMEM;
	}
	if (!pc_try_charge(&g->cnt[MCG_KMEM], n, &fail)) {
		uncharge_pages(g, n, false);     /* the kmem limit (old profiles) */
		return -ENOMEM;
	}
	uncharge_kmem_charged(g, n);
	return 0;
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

/* Dekker with uncharge_reap: n pages were just charged to g, published
 * before reaped is read; the reaper publishes reaped before it re-reads
 * usage. One of the two sees the other. If rmdir has reaped g, the
 * charge goes back (and the batch it stocked; the reaper may have waited
 * for us) and the caller charges the parent: true. Root pages carry no
 * charge, and the root is never reaped. */
static inline bool charge_reaped_back(struct mcg_group *g, long n)
{
	if (!atomic_load(&g->reaped) || mcg_root(g))
		return false;
	uncharge_pages(g, n, false);
	charge_drain(g->eng, g);
	uncharge_reap(g);
	return true;
}

/* A newly charged page idx becomes g's: its descriptor, statistics and
 * place on g's LRU (whose size store marks the group). */
static inline __attribute__((always_inline)) void charge_page_set(struct mcg_group *g, uint32_t idx,
								  enum page_kind kind, uint32_t owner,
								  uint8_t flags)
{
	struct page *p = &g->eng->pages.pages[idx];

	p->memcg = (uint16_t)g->id;
	p->kind = (uint8_t)kind;
	p->flags = flags & (PG_ACTIVE | PG_DIRTY | PG_MAPPED | PG_MLOCKED);
	p->owner = owner;
	pgstate_account_unmarked(g, p, 1, STAT_PGPGIN);
	lru_add(g->eng, g, idx);
}

/* Nothing the machine's reclaim could get back by waiting: no page under
 * writeback and none dirty (the flusher's or reclaim's writes to come),
 * as the kernel's allocator retries while reclaimable pages remain
 * (should_reclaim_retry) rather than kill. A walk of every group: only a
 * machine out of memory asks. */
static bool charge_machine_stuck(struct mcg_engine *e)
{
	long inflight = 0, done, rotated, immediate;

	if (e->wb)
		wb_counts(e, &inflight, &done, &rotated, &immediate);
	return inflight == 0 && stat_total_walk(e->root, STAT_DIRTY) == 0 &&
	       stat_total_walk(e->root, STAT_WRITEBACK) == 0;
}

/* A free page of the machine, node first (with zones, zone_alloc's walk
 * and its own reclaim), or PAGE_NONE. */
static inline uint32_t charge_page_get(struct mcg_engine *e, unsigned node)
{
	return e->zones ? zone_alloc(e) : page_alloc(&e->pages, node);
}

/* The machine itself is full. Without zones, groups over their soft
 * limits give first, then everybody (once). Still none, and nothing on
 * its way back: the machine's OOM killer, where it has one, kills one
 * task (its pages are in the pool when it returns) and the allocation
 * tries once more; else PAGE_NONE and the fault comes again, as the
 * kernel kills no second task while its victim is still exiting. */
static __attribute__((noinline)) uint32_t charge_page_slow(struct mcg_engine *e, unsigned node)
{
	uint32_t idx = PAGE_NONE;

	if (!e->zones) {
		if (reclaim_soft_limits(e, 32) == 0)
			reclaim_subtree(e->root, 32, true, RECLAIM_DIRECT);
		idx = page_alloc(&e->pages, node);
	}
	if (idx == PAGE_NONE && e->m.machine_oom && charge_machine_stuck(e) && oom_machine(e))
		idx = charge_page_get(e, node);
	return idx;
}

/* The charge itself, with g held against reaping by the caller. */
static long charge_new_page_locked(struct mcg_group *g, unsigned cpu, unsigned node,
				   enum page_kind kind, uint32_t owner, uint8_t flags,
				   struct charge_mode *mode)
{
	struct mcg_engine *e = g->eng;
	uint32_t idx;
	int err;

	if ((err = charge_try(g, cpu, 1, mode)))
		return err;
	if (charge_reaped_back(g, 1))
		return -EAGAIN;
	if (__builtin_expect(e->m.node_dirty_ratio != 0, 0) && (flags & PG_DIRTY) && kind != PK_ANON)
		node = charge_dirty_node(e, node);
	if ((idx = charge_page_get(e, node)) == PAGE_NONE)
		idx = charge_page_slow(e, node);
	if (idx == PAGE_NONE) {
		uncharge_pages(g, 1, false);
		return -ENOMEM;
	}
	charge_page_set(g, idx, kind, owner, flags);
	uncharge_events(g, 1);
	return idx;
}


long charge_new_huge(struct mcg_group *g, unsigned cpu, unsigned node, enum page_kind kind,
		     uint32_t owner, uint8_t flags, struct charge_mode *mode)
{
	struct mcg_engine *e = g->eng;
	uint32_t idx;
	int err;

	reclaim_wb_complete(e);
	/* 3.2's do_huge_pmd_anonymous_page allocates (counting a fallback
	 * or an alloc, as THP_FAULT_FALLBACK and THP_FAULT_ALLOC), then
	 * charges */
	if ((idx = compact_alloc_huge(e, node)) == PAGE_NONE) {
		compact_count_thp(e, false);
		return -ENOMEM;
	}
	compact_count_thp(e, true);
	for (;;) {
		if ((err = mcg_root(g) || mcg_no_accounting(e) ? 0 :
			   charge_try_counters(g, cpu % e->m.cpus, PAGE_BLOCK, mode, true))) {
			for (uint32_t i = 0; i < PAGE_BLOCK; i++)
				page_free(&e->pages, idx + i);
			return err;
		}
		if (!charge_reaped_back(g, PAGE_BLOCK))
			break;
		g = g->parent;          /* reaped meanwhile: as a page goes */
	}
	for (uint32_t i = 0; i < PAGE_BLOCK; i++)
		charge_page_set(g, idx + i, kind, owner + i, flags & PG_ACTIVE);
	uncharge_events(g, PAGE_BLOCK);
	return idx;
}
