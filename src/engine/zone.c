/* zone.c: the machine's zones (seed topic 5). With mcg_machine.zones set,
 * each node of the page pool is a zone, node 0 the one every allocation
 * tries first (ZONE_NORMAL) and the last the final fallback (ZONE_DMA);
 * watermarks come from page_pool_set_watermarks. An allocation takes a
 * page above the low marks, else wakes kswapd and takes one above the min
 * marks, else reclaims directly (try_to_free_pages) and tries again.
 * kswapd balances the zones until each has pages_high free. Both reclaim
 * in one of three policies (seed 5.1-5.3):
 *   fixed         2.6.3: direct reclaim asks each zone in turn for 32
 *                 pages and stops at the zone that brings it to 32; kswapd
 *                 asks each zone under pages_high for pages_high - free;
 *   batching      zone-balancing-batching (2.6.3-mm3): both ask every
 *                 zone for its reclaim_batch each pass (kswapd while any
 *                 zone is under pages_high); a direct pass succeeds at 32;
 *   accumulate    the priority-shift accumulators (2.6.6 on): every zone
 *                 scanned in proportion to its lists, up to 32 reclaimed a
 *                 zone; kswapd shrinks the zones from the first one under
 *                 pages_high to the last (those that could serve it).
 * Not modelled: all_unreclaimable, the congestion waits between passes
 * (issue 22), slab. kswapd is a worker of the environment, started with
 * the first wake; without workers it runs only in mcg_kswapd_step's
 * passes. Lock order: zone_state.lock alone; reclaim runs without it.
 * Never charges, never does I/O. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/reclaim.h"
#include "engine/zone.h"

#define ZONE_CLUSTER   32      /* SWAP_CLUSTER_MAX */
#define ZONE_PRIO_DEF  12      /* DEF_PRIORITY */
#define ZONE_RETRIES   16      /* direct reclaims an allocation may make */

struct zone_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;          /* kswapd's wait: wanted or stop */
	pthread_t thread;
	bool started, stop;
	/* woken since the last balance began (written under lock; read
	 * without it only as a hint) */
	atomic_bool wanted;
	/* the step mode (no workers): a balance under way, its next pass's
	 * priority and what it reclaimed since it (re)started */
	bool balancing;
	int prio;
	long got;
	atomic_long allocstall, pageoutrun, wakeups;
	atomic_long balances_done;    /* balances ended (pageoutrun: begun) */
	/* [0] direct, [1] kswapd */
	atomic_long scan[2][PAGE_MAX_NODES], steal[2][PAGE_MAX_NODES];
};

static void *zone_kswapd_main(void *arg);

static bool zone_stopping(struct zone_state *zs)
{
	bool stop;

	pthread_mutex_lock(&zs->lock);
	stop = zs->stop;
	pthread_mutex_unlock(&zs->lock);
	return stop;
}

/* 2.6.3's init_per_zone_pages_min: min_free_kbytes = sqrt(16 × lowmem
 * KiB), between 128 KiB and 16 MiB. */
static long zone_default_min_free(long pages)
{
	long page_kb = (1L << PC_PAGE_SHIFT) / 1024, want = pages * page_kb * 16, kb = 0;

	while (kb < 16384 && (kb + 1) * (kb + 1) <= want)   /* int_sqrt, once */
		kb++;
	return (kb < 128 ? 128 : kb) / page_kb;
}

int zone_init(struct mcg_engine *e)
{
	struct zone_state *zs;

	if (e->m.zones == MCG_ZONES_OFF)
		return 0;
	if (!(zs = calloc(1, sizeof(*zs))))
		return -ENOMEM;
	pthread_mutex_init(&zs->lock, NULL);
	pthread_cond_init(&zs->cond, NULL);
	page_pool_set_watermarks(&e->pages, e->m.min_free_pages > 0 ? e->m.min_free_pages :
				 zone_default_min_free(e->m.mem_pages));
	e->zones = zs;
	return 0;
}

void mcg_kswapd_stop(struct mcg_engine *e)
{
	struct zone_state *zs = e->zones;
	bool started;

	if (!zs)
		return;
	pthread_mutex_lock(&zs->lock);
	zs->stop = true;
	started = zs->started;
	zs->started = false;
	pthread_cond_signal(&zs->cond);
	pthread_mutex_unlock(&zs->lock);
	if (started)
		pthread_join(zs->thread, NULL);
}

void zone_destroy(struct mcg_engine *e)
{
	struct zone_state *zs = e->zones;

	if (!zs)
		return;
	mcg_kswapd_stop(e);
	pthread_mutex_destroy(&zs->lock);
	pthread_cond_destroy(&zs->cond);
	free(zs);
	e->zones = NULL;
}

/* One zone's reclaim, counted as direct (who 0) or kswapd's (1); adds
 * what it scanned to *scanned when given. */
static long zone_shrink(struct mcg_engine *e, unsigned n, long nr, int prio, int who,
			long *scanned_sum)
{
	long scanned = 0, got;

	got = reclaim_zone(e, n, nr, prio, e->m.zones == MCG_ZONES_ACCUMULATE,
			   who ? RECLAIM_BACKGROUND : RECLAIM_DIRECT, &scanned);
	atomic_fetch_add(&e->zones->scan[who][n], scanned);
	atomic_fetch_add(&e->zones->steal[who][n], got);
	if (scanned_sum)
		*scanned_sum += scanned;
	return got;
}

/* try_to_free_pages: passes from priority 12 down until 32 pages came
 * back. Returns the pages reclaimed. */
static long zone_direct_reclaim(struct mcg_engine *e)
{
	unsigned nodes = e->pages.nr_nodes;
	long total = 0;

	atomic_fetch_add(&e->zones->allocstall, 1);
	for (int prio = ZONE_PRIO_DEF; prio >= 0; prio--) {
		long pass = 0, scanned = 0;

		for (unsigned n = 0; n < nodes; n++) {
			pass += zone_shrink(e, n, e->m.zones == MCG_ZONES_BATCHING ?
					    e->pages.node[n].reclaim_batch : ZONE_CLUSTER, prio, 0,
					    &scanned);
			/* 2.6.3 went on to the next zone only while short */
			if (e->m.zones == MCG_ZONES_FIXED && pass >= ZONE_CLUSTER)
				break;
		}
		total += pass;
		if (total >= ZONE_CLUSTER)
			break;
		if (scanned && prio < ZONE_PRIO_DEF - 2)
			reclaim_congestion_nap(e);   /* with the machine's disk */
	}
	return total;
}

/* kswapd is woken for zone n when it has pages_low free or fewer. */
static void zone_wake(struct mcg_engine *e, unsigned n)
{
	struct zone_state *zs = e->zones;

	if (page_node_free(&e->pages, n) > e->pages.node[n].wm_low ||
	    atomic_load_explicit(&zs->wanted, memory_order_relaxed))
		return;                   /* (a hint: the lock decides) */
	pthread_mutex_lock(&zs->lock);
	if (!zs->wanted && !zs->stop) {
		atomic_store(&zs->wanted, true);
		atomic_fetch_add(&zs->wakeups, 1);
		/* started with the first work, after any daemonizing fork; if
		 * it cannot start, the next wake tries again */
		if (!zs->started && env_has_workers(&e->env)) {
			zs->started = env_start_worker(&e->env, &zs->thread, zone_kswapd_main, e) == 0;
			if (!zs->started)
				atomic_store(&zs->wanted, false);
		}
		pthread_cond_signal(&zs->cond);
	}
	pthread_mutex_unlock(&zs->lock);
}

uint32_t zone_alloc(struct mcg_engine *e)
{
	struct page_pool *pp = &e->pages;
	uint32_t idx = page_alloc_wmark(pp, 0, PAGE_WM_LOW);

	if (idx != PAGE_NONE)
		return idx;
	for (unsigned n = 0; n < pp->nr_nodes; n++)
		zone_wake(e, n);
	idx = page_alloc_wmark(pp, 0, PAGE_WM_MIN);
	for (int i = 0; idx == PAGE_NONE && i < ZONE_RETRIES; i++) {
		if (zone_direct_reclaim(e) == 0)
			break;                /* nothing left to reclaim */
		idx = page_alloc_wmark(pp, 0, PAGE_WM_MIN);
	}
	return idx;
}

/* The first zone, in allocation order, under pages_high, or the zone
 * count when every zone is balanced. */
static unsigned zone_first_short(struct mcg_engine *e)
{
	unsigned n = 0;

	while (n < e->pages.nr_nodes && page_node_free(&e->pages, n) >= e->pages.node[n].wm_high)
		n++;
	return n;
}

/* One pass of balance_pgdat at prio; adds the pages it reclaimed to *got.
 * Returns true while a zone is under pages_high (the balance goes on). */
static bool zone_balance_pass(struct mcg_engine *e, int prio, long *got)
{
	unsigned nodes = e->pages.nr_nodes, first = zone_first_short(e);

	if (first == nodes)
		return false;
	for (unsigned n = 0; n < nodes; n++) {
		const struct page_node *pn = &e->pages.node[n];
		long want = pn->wm_high - page_node_free(&e->pages, n);

		switch (e->m.zones) {
		case MCG_ZONES_FIXED:
			if (want > 0)
				*got += zone_shrink(e, n, want, prio, 1, NULL);
			break;
		case MCG_ZONES_BATCHING:
			*got += zone_shrink(e, n, pn->reclaim_batch, prio, 1, NULL);
			break;
		default:
			/* the zones that can serve the first one short */
			if (n >= first)
				*got += zone_shrink(e, n, ZONE_CLUSTER, prio, 1, NULL);
			break;
		}
	}
	return zone_first_short(e) < nodes;
}

/* After a pass at prio that left a zone short, having reclaimed got pages
 * since the balance (re)started: the next pass's priority, or -1 to sleep.
 * 2.6.3 goes down to priority 1 and sleeps; with the accumulators, kswapd
 * starts again at 12 once it has 32 pages (Nick Piggin's vm-no-wild-kswapd,
 * Sept 2004: it "doesn't build up large priorities ... when it is freeing
 * in parallel with allocators"), down to 0, and sleeps after a whole run
 * that freed fewer (instead of all_unreclaimable, not modelled). */
static int zone_next_prio(const struct mcg_engine *e, int prio, long got)
{
	if (e->m.zones != MCG_ZONES_ACCUMULATE)
		return prio > 1 ? prio - 1 : -1;
	if (got >= ZONE_CLUSTER)
		return ZONE_PRIO_DEF;
	return prio > 0 ? prio - 1 : -1;
}

/* One pass of a balance at *prio, then *prio and *got for the next one:
 * false when the balance is over (every zone balanced, or its last
 * priority spent). */
static bool zone_balance_step(struct mcg_engine *e, int *prio, long *got)
{
	int next = zone_balance_pass(e, *prio, got) ? zone_next_prio(e, *prio, *got) : -1;

	if (next == ZONE_PRIO_DEF)
		*got = 0;
	*prio = next;
	return next >= 0;
}

/* kswapd's thread: balance_pgdat's passes while woken. */
static void *zone_kswapd_main(void *arg)
{
	struct mcg_engine *e = arg;
	struct zone_state *zs = e->zones;

	pthread_mutex_lock(&zs->lock);
	for (;;) {
		int prio = ZONE_PRIO_DEF;
		long got = 0;

		while (!zs->wanted && !zs->stop)
			pthread_cond_wait(&zs->cond, &zs->lock);
		if (zs->stop)
			break;
		/* a wake during the balance asks for another one after it */
		atomic_store(&zs->wanted, false);
		pthread_mutex_unlock(&zs->lock);
		atomic_fetch_add(&zs->pageoutrun, 1);
		while (!zone_stopping(zs) && zone_balance_step(e, &prio, &got))
			;
		atomic_fetch_add(&zs->balances_done, 1);
		pthread_mutex_lock(&zs->lock);
	}
	pthread_mutex_unlock(&zs->lock);
	return NULL;
}

int mcg_kswapd_step(struct mcg_engine *e)
{
	struct zone_state *zs = e->zones;

	if (!zs)
		return 0;
	if (!zs->balancing) {
		bool wanted;

		pthread_mutex_lock(&zs->lock);
		wanted = zs->wanted;
		/* a wake during the balance asks for another one after it */
		atomic_store(&zs->wanted, false);
		pthread_mutex_unlock(&zs->lock);
		if (!wanted)
			return 0;
		zs->balancing = true;
		zs->prio = ZONE_PRIO_DEF;
		zs->got = 0;
		atomic_fetch_add(&zs->pageoutrun, 1);
	}
	zs->balancing = zone_balance_step(e, &zs->prio, &zs->got);
	if (!zs->balancing)
		atomic_fetch_add(&zs->balances_done, 1);
	return 1;
}

int mcg_zone_policy_parse(const char *name, enum mcg_zone_policy *policy)
{
	static const char *const names[] = { "off", "fixed", "batching", "accumulate" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*policy = (enum mcg_zone_policy)i;
			return 0;
		}
	return -EINVAL;
}

void mcg_zone_counts(struct mcg_engine *e, unsigned n, struct mcg_zone_counts *zc)
{
	struct zone_state *zs = e->zones;
	const struct page_node *pn = &e->pages.node[n];

	*zc = (struct mcg_zone_counts){
		.size = page_node_size(&e->pages, n), .free = page_node_free(&e->pages, n),
		.min = pn->wm_min, .low = pn->wm_low, .high = pn->wm_high,
		.batch = pn->reclaim_batch,
	};
	if (!zs)
		return;
	zc->scan_direct = atomic_load(&zs->scan[0][n]);
	zc->scan_kswapd = atomic_load(&zs->scan[1][n]);
	zc->steal_direct = atomic_load(&zs->steal[0][n]);
	zc->steal_kswapd = atomic_load(&zs->steal[1][n]);
	zc->allocstall = atomic_load(&zs->allocstall);
	zc->pageoutrun = atomic_load(&zs->pageoutrun);
	zc->kswapd_wakeups = atomic_load(&zs->wakeups);
	zc->balances_done = atomic_load(&zs->balances_done);
}
