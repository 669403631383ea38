/* test_charge.c: the charge path (stock, batch, failcnt, reclaim, swap,
 * batched uncharge) against the invariant checker. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/charge.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/lru.h"
#include "engine/page_state.h"
#include "engine/reclaim.h"
#include "engine/swap.h"
#include "engine_fixture.h"
#include "suites.h"

/* These tests charge raw pages that nobody maps: reclaim may take any. */
static bool evict_any(uint32_t owner, uint32_t page, uint32_t slot, void *arg)
{
	return true;
}

static struct mcg_engine *mk_engine(long pages, long swap, unsigned cpus, bool no_stock)
{
	struct mcg_machine cfg = {
		.mem_pages = pages, .swap_pages = swap, .nodes = 2, .cpus = cpus,
		.vm_swappiness = 60, .no_stock = no_stock,
	};
	struct mcg_engine *e;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	if (e)
		e->evict = evict_any;     /* before any page is charged */
	return e;
}

/* Set and clear page flags of a charged page as a fault would, under its
 * lruvec's lock, relinking it to the list the flags imply (a test's way to
 * make a page hot). */
static void lru_set_flags(struct mcg_engine *e, struct mcg_group *g, uint32_t idx, uint8_t set,
			  uint8_t clear)
{
	struct lru_vec *v = lru_vec_of(e, g, idx);
	struct page *p = &e->pages.pages[idx];

	spin_lock(&v->lock);
	lru_unlink(e, g, idx);
	p->flags = (uint8_t)((p->flags | set) & ~clear);
	lru_link(e, g, idx);
	spin_unlock(&v->lock);
}

START_TEST(test_stock_batches_usage)
{
	struct mcg_engine *e = mk_engine(4096, 0, 2, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	long idx = charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL);

	ck_assert_int_ge(idx, 0);
	/* usage moves in 64-page steps per CPU while stocks fill (§5.4) */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 64);
	ck_assert_int_eq(stat_local(a, STAT_RSS), 1);
	ck_assert_int_eq(stat_local(a, STAT_PGPGIN), 1);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_ANON, -1), 1);
	CHECK_OK(e);
	ck_assert_int_ge(charge_new_page(a, 1, 1, PK_FILE, 2, PG_DIRTY | PG_MAPPED, NULL), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 128);        /* second CPU's stock */
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 1);
	ck_assert_int_eq(stat_local(a, STAT_MAPPED_FILE), 1);
	CHECK_OK(e);
	charge_free_page(e, (uint32_t)idx, NULL);
	ck_assert_int_eq(stat_local(a, STAT_PGPGOUT), 1);
	CHECK_OK(e);
	charge_drain(e, NULL);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 1);          /* drained stocks */
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_overcharge_bound)
{
	struct mcg_engine *e = mk_engine(8192, 0, 4, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");

	/* one page from each CPU: at most cpus * (batch - 1) hidden pages */
	for (unsigned cpu = 0; cpu < 4; cpu++)
		ck_assert_int_ge(charge_new_page(a, cpu, 0, PK_ANON, 1, 0, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]) - 4, 4 * (64 - 1));
	ck_assert_int_eq(charge_stocked(e, a), 4 * 63);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_limit_reclaims_page_cache)
{
	struct mcg_engine *e = mk_engine(4096, 0, 2, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");

	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 100, NULL, NULL), 0);
	/* 300 clean file pages through a 100-page limit: reclaim makes room */
	for (int i = 0; i < 300; i++)
		ck_assert_int_ge(charge_new_page(a, (unsigned)i % 2, 0, PK_FILE, (uint32_t)i, 0, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 100);
	ck_assert_uint_gt(pc_failcnt(&a->cnt[MCG_MEM]), 0);       /* attempts failed */
	ck_assert_int_gt(atomic_load(&a->pg_reclaimed[0]), 0);
	ck_assert_int_eq(stat_local(a, STAT_PGPGIN), 300);
	ck_assert_int_eq(stat_local(a, STAT_PGPGIN) - stat_local(a, STAT_PGPGOUT),
			 stat_local(a, STAT_CACHE));
	CHECK_OK(e);
	/* shrinking the limit reclaims; force_empty empties */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 10, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 10);
	CHECK_OK(e);
	ck_assert_int_eq(mcg_force_empty(a, NULL, NULL), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_anon_without_swap_fails)
{
	struct mcg_engine *e = mk_engine(4096, 0, 1, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	int ok = 0;

	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 100, NULL, NULL), 0);
	while (charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL) >= 0)
		ok++;
	ck_assert_int_eq(ok, 100);
	ck_assert_int_eq(charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL), -ENOMEM);
	/* anon cannot go: a lower limit fails and the old one stays */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 50, NULL, NULL), -EBUSY);
	ck_assert_int_eq(pc_max(&a->cnt[MCG_MEM]), 100);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_anon_swaps_out)
{
	struct mcg_engine *e = mk_engine(4096, 1024, 1, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");

	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 100, NULL, NULL), 0);
	for (int i = 0; i < 300; i++)
		ck_assert_int_ge(charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 100);
	ck_assert_int_gt(stat_local(a, STAT_SWAP), 0);
	/* memsw = memory + swap */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]),
			 pc_usage(&a->cnt[MCG_MEM]) + stat_local(a, STAT_SWAP));
	ck_assert_int_eq(swap_nr_free(e), 1024 - stat_local(a, STAT_SWAP));
	CHECK_OK(e);
	/* a memsw limit can only drop page cache: no anon goes there */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEMSW, pc_usage(&a->cnt[MCG_MEMSW]) - 10, NULL, NULL),
			 -EBUSY);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_swap_slots_ascend)
{
	/* scan_swap_map's order: ascending from a cursor, a new cluster of
	 * SWAP_CLUSTER free slots every SWAP_CLUSTER slots, so that pages
	 * swapped out one after another have neighbouring slots (a free
	 * list would hand back the last freed first) */
	struct mcg_engine *e = mk_engine(4096, 4 * SWAP_CLUSTER, 1, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	uint32_t s[2 * SWAP_CLUSTER];

	for (int i = 0; i < 2 * SWAP_CLUSTER; i++) {
		s[i] = swap_out(a);
		ck_assert_uint_eq(s[i], (uint32_t)i);
	}
	/* free every other slot of the first cluster: the cursor goes on
	 * (no gaps filled), then takes the next free cluster, the third */
	for (int i = 0; i < SWAP_CLUSTER; i += 2)
		swap_cancel(e, s[i]);
	for (int i = 0; i < SWAP_CLUSTER; i++)
		ck_assert_uint_eq(swap_out(a), (uint32_t)(2 * SWAP_CLUSTER + i));
	/* then the fourth; then no free cluster is left: the cursor wraps
	 * and fills the first cluster's gaps in order */
	for (int i = 0; i < SWAP_CLUSTER; i++)
		ck_assert_uint_eq(swap_out(a), (uint32_t)(3 * SWAP_CLUSTER + i));
	for (int i = 0; i < SWAP_CLUSTER / 2; i++)
		ck_assert_uint_eq(swap_out(a), (uint32_t)(2 * i));
	ck_assert_uint_eq(swap_out(a), SWAP_NONE);
	ck_assert_int_eq(swap_nr_free(e), 0);
	for (uint32_t i = 0; i < 4 * SWAP_CLUSTER; i++)
		swap_cancel(e, i);
	ck_assert_int_eq(swap_nr_free(e), 4 * SWAP_CLUSTER);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* Reclaim 500 pages of a group of 1000 anon and 1000 clean file pages
 * (PG_MAPPED anon, as a fault maps it) in an era; returns how many of
 * the reclaimed pages went to swap. */
static long era_swapped(enum mcg_era era)
{
	struct mcg_machine cfg = {
		.mem_pages = 8192, .swap_pages = 4096, .nodes = 1, .cpus = 1,
		.vm_swappiness = 60, .no_stock = true, .era = era,
	};
	struct mcg_engine *e;
	struct mcg_group *a;
	long swapped;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	ck_assert_ptr_nonnull(e);
	e->evict = evict_any;
	a = fixture_group(e, e->root, "a");
	for (uint32_t i = 0; i < 1000; i++) {
		ck_assert_int_ge(charge_new_page(a, 0, 0, PK_ANON, i, PG_MAPPED, NULL), 0);
		ck_assert_int_ge(charge_new_page(a, 0, 0, PK_FILE, 1000 + i, 0, NULL), 0);
	}
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 1500, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 1500);
	swapped = stat_local(a, STAT_SWAP);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
	return swapped;
}

START_TEST(test_era_2_6_24_one_lru)
{
	/* today's split LRU with swappiness 60 scans file pages 1.4 : 0.6 to
	 * anon, so about 150 of the 500 are anon; 2.6.24 had one LRU per
	 * group: both types under the same pressure, about 250 each */
	long today = era_swapped(MCG_ERA_TODAY), old = era_swapped(MCG_ERA_2_6_24);

	ck_assert_int_lt(today, 175);   /* 0.6 : 1.4 of 500, 150 */
	ck_assert_int_ge(old, 200);
	ck_assert_int_le(old, 300);
}
END_TEST

START_TEST(test_flag_keeps_lru_place)
{
	/* a page dirtied keeps its place on its list (the kernel does not
	 * move it); one activated goes to the head of the active list */
	struct mcg_engine *e = mk_engine(4096, 0, 1, true);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	long idx[3];

	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(idx[i] = charge_new_page(a, 0, 0, PK_FILE, (uint32_t)i, 0, NULL), 0);
	struct page *p = &e->pages.pages[idx[1]];
	uint32_t prev = p->prev, next = p->next;

	ck_assert_uint_ne(prev, PAGE_NONE);
	ck_assert_uint_ne(next, PAGE_NONE);
	pgstate_flags(e, (uint32_t)idx[1], PG_DIRTY, 0);
	ck_assert_uint_eq(p->prev, prev);
	ck_assert_uint_eq(p->next, next);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 1);
	pgstate_flags(e, (uint32_t)idx[1], PG_ACTIVE, 0);
	ck_assert_uint_eq(a->lruvec[0].list[LRU_ACTIVE_FILE].head, (uint32_t)idx[1]);
	ck_assert_uint_eq(e->pages.pages[prev].next, next);
	pgstate_flags(e, (uint32_t)idx[1], 0, PG_DIRTY);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_swappiness_zero_keeps_anon)
{
	struct mcg_engine *e = mk_engine(4096, 1024, 1, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");

	ck_assert_int_eq(mcg_set_swappiness(a, 0), 0);
	for (int i = 0; i < 50; i++)
		ck_assert_int_ge(charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL), 0);
	charge_drain(e, a);
	ck_assert_int_eq(reclaim_subtree(a, 20, true, RECLAIM_DIRECT), 0);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), 0);
	ck_assert_int_eq(mcg_set_swappiness(a, 60), 0);
	ck_assert_int_eq(reclaim_subtree(a, 20, true, RECLAIM_DIRECT), 20);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_second_chance)
{
	struct mcg_engine *e = mk_engine(4096, 0, 1, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	long hot[10];

	for (int i = 0; i < 10; i++) {
		hot[i] = charge_new_page(a, 0, 0, PK_FILE, 1, 0, NULL);
		lru_set_flags(e, a, (uint32_t)hot[i], PG_REFERENCED, 0);
	}
	for (int i = 0; i < 10; i++)
		ck_assert_int_ge(charge_new_page(a, 0, 0, PK_FILE, 2, 0, NULL), 0);
	/* the referenced pages are older, yet the cold ones go first */
	ck_assert_int_eq(reclaim_subtree(a, 10, false, RECLAIM_DIRECT), 10);
	for (int i = 0; i < 10; i++)
		ck_assert_uint_eq(e->pages.pages[hot[i]].owner, 1);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 10);
	ck_assert_int_gt(stat_lru_local(a, LRU_ACTIVE_FILE, -1), 0);    /* promoted */
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_batched_uncharge)
{
	struct mcg_engine *e = mk_engine(4096, 0, 1, true);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	struct charge_batch batch;
	long p[20];

	for (int i = 0; i < 20; i++)
		p[i] = charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 20);        /* no stock */
	charge_batch_begin(&batch, e);
	for (int i = 0; i < 20; i++)
		charge_free_page(e, (uint32_t)p[i], &batch);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 20);        /* not yet */
	ck_assert_int_eq(page_nr_free(&e->pages), 4096 - 20);    /* pages too */
	ck_assert_int_eq(stat_local(a, STAT_RSS), 0);            /* stats at once */
	charge_batch_end(&batch);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);         /* once, at the end */
	ck_assert_int_eq(page_nr_free(&e->pages), 4096);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* A batch holds one group's uncharge at a time: another group's applies
 * the first's; its pages go back when its list is full or at its end. */
START_TEST(test_batch_pages_reused_when_full)
{
	struct mcg_engine *e = mk_engine(128, 0, 1, true);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	struct mcg_group *b = fixture_group(e, e->root, "b");
	struct charge_batch batch;
	long p[128], q;

	for (int i = 0; i < 128; i++)
		ck_assert_int_ge(p[i] = charge_new_page(i < 100 ? a : b, 0, 0, PK_ANON, 1, 0, NULL), 0);
	ck_assert_int_eq(page_nr_free(&e->pages), 0);
	charge_batch_begin(&batch, e);
	for (int i = 0; i < 10; i++)
		charge_free_page(e, (uint32_t)p[i], &batch);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 100);       /* gathered */
	charge_free_page(e, (uint32_t)p[127], &batch);           /* b's: a's applies */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 90);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 28);
	ck_assert_int_eq(page_nr_free(&e->pages), 10);           /* a's pages, first */
	for (int i = 10; i < 100; i++)
		charge_free_page(e, (uint32_t)p[i], &batch);
	/* a again: b's page and uncharge applied; then the list held
	 * CHARGE_BATCH_FREE of a's pages, which went back when it filled */
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 27);
	ck_assert_int_eq(page_nr_free(&e->pages), 11 + CHARGE_BATCH_FREE);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 90);
	charge_batch_end(&batch);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 27);
	ck_assert_int_eq(page_nr_free(&e->pages), 101);
	q = charge_new_page(a, 0, 0, PK_ANON, 1, 0, NULL);
	ck_assert_int_ge(q, 0);
	ck_assert_int_eq(page_nr_free(&e->pages), 100);
	ck_assert_int_eq(stat_local(a, STAT_RSS), 1);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* More updating threads than statistics shards: the ones without a shard
 * of their own share one; every count is exact, and shards given back at
 * thread exit carry their values to the next owner. */
struct stat_arg {
	struct mcg_group *g;
	unsigned cpu;
	pthread_barrier_t *all_alive;    /* so that some find no shard free */
};

static void *stat_worker(void *arg)
{
	struct stat_arg *a = arg;
	long idx[16];

	pthread_barrier_wait(a->all_alive);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 16; i++)
			ck_assert_int_ge(idx[i] = charge_new_page(a->g, a->cpu, a->cpu, PK_ANON, 1, 0, NULL), 0);
		struct charge_batch batch;

		charge_batch_begin(&batch, a->g->eng);
		for (int i = 0; i < 16; i++)
			charge_free_page(a->g->eng, (uint32_t)idx[i], &batch);
		charge_batch_end(&batch);
	}
	/* leave 3 pages charged */
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(charge_new_page(a->g, a->cpu, a->cpu, PK_ANON, 1, 0, NULL), 0);
	return NULL;
}

START_TEST(test_stat_shards_exact)
{
	enum { N = STAT_SHARDS + 4 };
	struct mcg_engine *e = mk_engine(4096, 0, 2, false);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	struct stat_arg arg[N];
	pthread_barrier_t b;
	pthread_t t[N];

	for (int wave = 1; wave <= 2; wave++) {
		pthread_barrier_init(&b, NULL, N);
		for (int i = 0; i < N; i++) {
			arg[i] = (struct stat_arg){ a, (unsigned)i, &b };
			ck_assert_int_eq(pthread_create(&t[i], NULL, stat_worker, &arg[i]), 0);
		}
		for (int i = 0; i < N; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&b);
		ck_assert_int_eq(stat_local(a, STAT_RSS), wave * N * 3);
		ck_assert_int_eq(stat_local(a, STAT_PGPGIN), wave * N * (200 * 16 + 3));
		ck_assert_int_eq(stat_local(a, STAT_PGPGOUT), wave * N * 200 * 16);
		CHECK_OK(e);
	}
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_hierarchy_and_dying)
{
	struct mcg_engine *e = mk_engine(4096, 0, 1, true);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, a, "b"), *c = fixture_group(e, a, "c");

	for (int i = 0; i < 30; i++)
		charge_new_page(i % 2 ? b : c, 0, 0, PK_FILE, 1, 0, NULL);
	/* and what b and c cost a (§11.5) */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 30 + 2 * MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 20, NULL, NULL), 0);  /* reclaims children */
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 20);
	ck_assert_int_eq(mcg_remove(e, b), 0);                  /* dies with page cache */
	CHECK_OK(e);
	ck_assert(b->linked);                                    /* still charged */
	ck_assert_uint_eq(e->nr_groups, 4);
	ck_assert_int_eq(mcg_force_empty(a, NULL, NULL), 0);    /* reaches the dying one */
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 0);
	ck_assert(!b->linked);                                   /* reaped with its last page */
	uncharge_frees_wait(e);                                  /* its structures gone */
	/* c's structures stay charged; b's went with it */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), MCG_MKDIR_KMEM_PAGES);
	ck_assert_uint_eq(e->nr_groups, 3);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_put(c);
	mcg_engine_free(e);
}
END_TEST

/* Who owns each page in the churn test: thread number + 1, or 0. A thread
 * and reclaim's evict hook both claim a page with an exchange; whoever
 * gets the non-zero value frees (or lets reclaim free) it. */
static atomic_uint churn_owned[2048];

struct churn {
	struct mcg_engine *e;
	struct mcg_group *g[3];
	unsigned cpu;
	unsigned seed;
};

static void churn_drop(struct churn *c, uint32_t idx, struct charge_batch *b)
{
	if (atomic_exchange(&churn_owned[idx], 0) == c->cpu + 1)
		charge_free_page(c->e, idx, b);
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint32_t mine[256];
	int n = 0;

	for (int i = 0; i < 8000; i++) {
		unsigned r = rand_r(&c->seed);

		if (n < 256 && (r % 3 || n == 0)) {
			long idx = charge_new_page(c->g[r % 3], c->cpu, r % 2,
						   (enum page_kind)(1 + (r >> 4) % 3), c->cpu, 0, NULL);
			if (idx >= 0) {
				atomic_store(&churn_owned[idx], c->cpu + 1);
				mine[n++] = (uint32_t)idx;
			}
		} else {
			int k = (int)(r % (unsigned)n);
			uint32_t idx = mine[k];

			mine[k] = mine[--n];
			churn_drop(c, idx, NULL);
		}
	}
	struct charge_batch b;

	charge_batch_begin(&b, c->e);
	while (n > 0)
		churn_drop(c, mine[--n], &b);
	charge_batch_end(&b);
	return NULL;
}

/* Reclaim asks before taking a page: only an owned page may go. */
static bool churn_evict(uint32_t owner, uint32_t page, uint32_t slot, void *arg)
{
	return atomic_exchange(&churn_owned[page], 0) != 0;
}

START_TEST(test_random_two_threads)
{
	struct mcg_machine cfg = {
		.mem_pages = 2048, .swap_pages = 512, .nodes = 2, .cpus = 2,
		.vm_swappiness = 60,
	};
	struct mcg_engine *e;
	struct churn c[2];
	pthread_t t[2];
	struct mcg_group *a, *b, *d;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	e->evict = churn_evict;
	a = fixture_group(e, e->root, "a");
	b = fixture_group(e, a, "b");
	d = fixture_group(e, e->root, "d");
	mcg_set_limit(a, MCG_MEM, 150, NULL, NULL);
	mcg_set_limit(d, MCG_MEM, 80, NULL, NULL);
	for (int i = 0; i < 2; i++) {
		c[i] = (struct churn){ e, { a, b, d }, (unsigned)i, 1234u + (unsigned)i };
		pthread_create(&t[i], NULL, churn_main, &c[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_OK(e);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 150);
	mcg_put(a);
	mcg_put(b);
	mcg_put(d);
	mcg_engine_free(e);
}
END_TEST

/* A charge to a group rmdir has removed (still linked: it has charges)
 * refills the per-CPU stock for it; when that stock drains, its last
 * charge is gone and it must be reaped, not left dying for ever (found by
 * tests/fuzz/fuzz_seq). Before kmem-reparent (5.9), where kernel memory
 * keeps a removed group charged. */
START_TEST(test_stock_drain_reaps_removed)
{
	struct mcg_engine *e = fixture_engine(PROF_KV(5, 8));
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
	struct mcg_group *c = fixture_group(e, e->root, "c");

	ck_assert_int_eq(charge_kmem(a, 0, 1, NULL), 0);
	ck_assert_int_eq(mcg_remove(e, a), 0);
	ck_assert(!atomic_load(&a->reaped));          /* one kmem page left */
	ck_assert_int_eq(charge_kmem(a, 0, 1, NULL), 0);    /* a batch: the rest stocked */
	ck_assert_int_gt(charge_stocked(e, a), 0);
	uncharge_kmem(a, 2);
	ck_assert(!atomic_load(&a->reaped));          /* the stock still holds some */
	charge_drain(e, NULL);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	ck_assert(atomic_load(&a->reaped));
	CHECK_OK(e);
	/* the same when another group's refill takes the CPU's stock over */
	ck_assert_int_eq(charge_kmem(b, 0, 1, NULL), 0);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert_int_eq(charge_kmem(b, 0, 1, NULL), 0);
	uncharge_kmem(b, 2);
	ck_assert(!atomic_load(&b->reaped));
	ck_assert_int_eq(charge_kmem(c, 0, 1, NULL), 0);
	ck_assert(atomic_load(&b->reaped));
	uncharge_kmem(c, 1);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_put(c);
	mcg_engine_free(e);
}
END_TEST

/* A charge to a group rmdir has already reaped backs out and goes to the
 * parent; the batch it stocked for the reaped group must go back too, or
 * the parent's counter keeps pages no group in the tree has (found by
 * tests/fuzz/fuzz_seq). */
START_TEST(test_reaped_charge_leaves_no_stock)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	long idx;

	ck_assert_int_eq(mcg_remove(e, a), 0);
	ck_assert(atomic_load(&a->reaped));
	/* the root, which takes the page, has no stock to displace a's */
	idx = charge_new_page(a, 0, 0, PK_FILE, 0, 0, NULL);
	ck_assert_int_ge(idx, 0);
	ck_assert_uint_eq(e->pages.pages[idx].memcg, e->root->id);
	ck_assert_int_eq(charge_stocked(e, a), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	charge_free_page(e, (uint32_t)idx, NULL);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* Kernel memory for a group rmdir has already reaped (the mirror charges
 * a process's group from its own thread) is refused, not charged to a
 * group out of the tree (found by tests/fuzz/fuzz_seq). Before
 * kmem-reparent (5.9); from it, test_kmem_reparent. */
START_TEST(test_kmem_reaped_refused)
{
	struct mcg_engine *e = fixture_engine(PROF_KV(5, 8));
	struct mcg_group *a = fixture_group(e, e->root, "a");

	ck_assert_int_eq(mcg_remove(e, a), 0);
	ck_assert(atomic_load(&a->reaped));
	ck_assert_int_eq(charge_kmem(a, 0, 8, NULL), -ENOMEM);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(charge_stocked(e, a), 0);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* kmem-reparent (5.9, the kernel's obj_cgroup reparenting at offline): a
 * removed group's kernel memory becomes its parent's own, so pages alone
 * keep a removed group; what is charged or uncharged to it afterwards is
 * its nearest live ancestor's; the root keeps none. */
START_TEST(test_kmem_reparent)
{
	struct mcg_engine *e = mk_engine(4096, 0, 2, true);    /* (no stock: exact counts) */
	struct mcg_group *p = fixture_group(e, e->root, "p");
	struct mcg_group *a = fixture_group(e, p, "a"), *b = fixture_group(e, p, "b");
	long structs = pc_usage(&p->cnt[MCG_KMEM]);   /* a's and b's (§11.5) */
	long idx;

	ck_assert_int_eq(charge_kmem(a, 0, 3, NULL), 0);
	structs -= a->mkdir_kmem;                           /* (going after a's reap) */
	ck_assert_int_eq(mcg_remove(e, a), 0);
	ck_assert(atomic_load(&a->reaped));                 /* nothing pins it */
	uncharge_frees_wait(e);     /* (by the worker, two grace periods on: now) */
	ck_assert_int_eq(atomic_load(&p->kmem_local), structs + 3);
	ck_assert_int_eq(pc_usage(&p->cnt[MCG_KMEM]), structs + 3);
	CHECK_OK(e);
	/* later charges and uncharges of a are p's */
	ck_assert_int_eq(charge_kmem(a, 0, 2, NULL), 0);
	ck_assert_int_eq(atomic_load(&p->kmem_local), structs + 5);
	uncharge_kmem(a, 5);
	ck_assert_int_eq(atomic_load(&p->kmem_local), structs);
	ck_assert_int_eq(pc_usage(&p->cnt[MCG_MEM]), structs);
	CHECK_OK(e);
	/* a group with pages stays until they go, its kernel memory moved */
	ck_assert_int_eq(charge_kmem(b, 0, 4, NULL), 0);
	idx = charge_new_page(b, 0, 0, PK_FILE, 0, 0, NULL);
	ck_assert_int_ge(idx, 0);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert(!atomic_load(&b->reaped));
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 1);
	CHECK_OK(e);
	charge_free_page(e, (uint32_t)idx, NULL);
	ck_assert(atomic_load(&b->reaped));
	/* p removed: to the root, which keeps none */
	uncharge_frees_wait(e);                             /* b's structures */
	ck_assert_int_eq(mcg_remove(e, p), 0);
	ck_assert(atomic_load(&p->reaped));
	uncharge_kmem(b, 4);                                /* (up to the root: nothing) */
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_put(p);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(charge)
{
	Suite *s = suite_create("charge");
	TCase *tc = tcase_create("paths");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stock_batches_usage);
	tcase_add_test(tc, test_overcharge_bound);
	tcase_add_test(tc, test_limit_reclaims_page_cache);
	tcase_add_test(tc, test_anon_without_swap_fails);
	tcase_add_test(tc, test_anon_swaps_out);
	tcase_add_test(tc, test_swap_slots_ascend);
	tcase_add_test(tc, test_era_2_6_24_one_lru);
	tcase_add_test(tc, test_flag_keeps_lru_place);
	tcase_add_test(tc, test_swappiness_zero_keeps_anon);
	tcase_add_test(tc, test_second_chance);
	tcase_add_test(tc, test_batched_uncharge);
	tcase_add_test(tc, test_batch_pages_reused_when_full);
	tcase_add_test(tc, test_stat_shards_exact);
	tcase_add_test(tc, test_hierarchy_and_dying);
	tcase_add_test(tc, test_random_two_threads);
	tcase_add_test(tc, test_stock_drain_reaps_removed);
	tcase_add_test(tc, test_reaped_charge_leaves_no_stock);
	tcase_add_test(tc, test_kmem_reaped_refused);
	tcase_add_test(tc, test_kmem_reparent);
	suite_add_tcase(s, tc);
	return s;
}
