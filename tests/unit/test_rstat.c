/* test_rstat.c: hierarchical sums kept as rstat keeps them. A read flushes
 * only the groups that changed since the last one (counted by
 * rstat_flushed), the sums equal a walk of the subtree, a reaped group's
 * events stay in its parent's sums, and concurrent chargers beside a
 * reader leave sums that equal the walk when they stop. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/charge.h"
#include "engine/engine.h"
#include "engine/rstat.h"
#include "engine_fixture.h"
#include "suites.h"

static long page_in(struct mcg_group *g, enum page_kind kind, unsigned node)
{
	long idx = charge_new_page(g, 0, node, kind, 1, 0, NULL);

	ck_assert_int_ge(idx, 0);
	return idx;
}

START_TEST(test_rstat_flushes_only_what_changed)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *g[100];
	long before;

	for (int i = 0; i < 100; i++) {
		char name[16];

		snprintf(name, sizeof(name), "g%d", i);
		g[i] = fixture_group(e, a, name);
		page_in(g[i], i % 2 ? PK_ANON : PK_FILE, (unsigned)i % 2);
	}
	ck_assert_int_eq(rstat_item(e->root, STAT_RSS), 50);
	ck_assert_int_eq(rstat_item(e->root, STAT_CACHE), 50);
	ck_assert_int_eq(rstat_lru(a, LRU_INACTIVE_FILE, 0), 50);
	ck_assert_int_eq(rstat_lru(a, LRU_INACTIVE_ANON, -1), 50);
	/* nothing changed: the next reads are copies, at the root or below */
	before = rstat_flushed(e);
	ck_assert_int_eq(rstat_item(e->root, STAT_RSS), 50);
	ck_assert_int_eq(rstat_item(a, STAT_PGPGIN), 100);
	ck_assert_int_eq(rstat_item(g[7], STAT_RSS), 1);
	ck_assert_int_eq(rstat_flushed(e), before);
	/* three groups change: a read of the root flushes them and the path */
	for (int i = 0; i < 3; i++)
		page_in(g[i * 10 + 1], PK_ANON, 0);
	ck_assert_int_eq(rstat_item(e->root, STAT_RSS), 53);
	ck_assert_int_eq(rstat_flushed(e) - before, 3 + 2);   /* g1, g11, g21, a, root */
	/* a leaf's read flushes the leaf alone; the root's then the rest */
	before = rstat_flushed(e);
	page_in(g[5], PK_SHMEM, 1);
	ck_assert_int_eq(rstat_item(g[5], STAT_SHMEM), 1);
	ck_assert_int_eq(rstat_flushed(e) - before, 1);
	ck_assert_int_eq(rstat_item(e->root, STAT_SHMEM), 1);
	ck_assert_int_eq(rstat_item(e->root, STAT_CACHE), 51);
	ck_assert_int_eq(rstat_flushed(e) - before, 3);
	CHECK_OK(e);
	for (int i = 0; i < 100; i++)
		mcg_put(g[i]);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* Events of a reaped child stay counted above it (the kernel's sums keep
 * what a dead child did); page state leaves with the pages. */
START_TEST(test_rstat_reaped_child_keeps_events)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *c = fixture_group(e, a, "c");
	long idx[4];

	for (int i = 0; i < 4; i++)
		idx[i] = page_in(c, PK_ANON, 0);
	ck_assert_int_eq(rstat_item(a, STAT_RSS), 4);
	for (int i = 0; i < 4; i++)
		charge_free_page(e, (uint32_t)idx[i], NULL);
	ck_assert_int_eq(mcg_remove(e, c), 0);
	mcg_put(c);                       /* reaped: nothing charged, no child */
	ck_assert_int_eq(rstat_item(a, STAT_RSS), 0);
	ck_assert_int_eq(rstat_item(a, STAT_PGPGIN), 4);
	ck_assert_int_eq(rstat_item(a, STAT_PGPGOUT), 4);
	ck_assert_int_eq(rstat_item(e->root, STAT_PGPGIN), 4);
	ck_assert_int_eq(stat_total_walk(a, STAT_PGPGIN), 0);   /* a walk forgets */
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

struct rs_churn {
	struct mcg_engine *e;
	struct mcg_group **g;
	int ng;
	unsigned seed, cpu;
	atomic_bool *stop;
};

static void *rs_churn_main(void *arg)
{
	struct rs_churn *c = arg;
	long mine[64];
	int n = 0;

	for (int i = 0; i < 20000; i++) {
		unsigned r = rand_r(&c->seed);

		if (n < 64 && (r % 3 || n == 0)) {
			long idx = charge_new_page(c->g[r % (unsigned)c->ng], c->cpu, (r >> 8) % 2,
						   (enum page_kind)(1 + (r >> 4) % 3), 1, 0, NULL);

			if (idx >= 0)
				mine[n++] = idx;
		} else {
			int k = (int)(r % (unsigned)n);

			charge_free_page(c->e, (uint32_t)mine[k], NULL);
			mine[k] = mine[--n];
		}
	}
	while (n > 0)
		charge_free_page(c->e, (uint32_t)mine[--n], NULL);
	return NULL;
}

static void *rs_reader_main(void *arg)
{
	struct rs_churn *c = arg;
	long reads = 0;

	while (!atomic_load(c->stop)) {
		/* sums of page state are never negative (a lost or doubled
		 * delta would show sooner or later) */
		ck_assert_int_ge(rstat_item(c->e->root, STAT_RSS) + rstat_item(c->e->root, STAT_CACHE), 0);
		ck_assert_int_ge(rstat_item(c->g[reads % (unsigned)c->ng], STAT_CACHE), 0);
		reads++;
	}
	return NULL;
}

START_TEST(test_rstat_concurrent_chargers_and_reader)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *g[6];
	struct rs_churn c[2], rd;
	pthread_t t[3];
	atomic_bool stop = false;

	g[0] = fixture_group(e, e->root, "p");
	g[1] = fixture_group(e, g[0], "q");
	g[2] = fixture_group(e, g[1], "r");
	g[3] = fixture_group(e, e->root, "s");
	g[4] = fixture_group(e, g[3], "t");
	g[5] = fixture_group(e, g[0], "u");
	rd = (struct rs_churn){ e, g, 6, 0, 0, &stop };
	pthread_create(&t[2], NULL, rs_reader_main, &rd);
	for (int i = 0; i < 2; i++) {
		c[i] = (struct rs_churn){ e, g, 6, 77u + (unsigned)i, (unsigned)i, &stop };
		pthread_create(&t[i], NULL, rs_churn_main, &c[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop, true);
	pthread_join(t[2], NULL);
	/* everything was freed: every page-state sum is back at zero */
	ck_assert_int_eq(rstat_item(e->root, STAT_RSS), 0);
	ck_assert_int_eq(rstat_item(e->root, STAT_CACHE), 0);
	ck_assert_int_eq(rstat_lru(g[0], LRU_INACTIVE_FILE, -1), 0);
	ck_assert_int_eq(rstat_item(e->root, STAT_PGPGIN), stat_total_walk(e->root, STAT_PGPGIN));
	CHECK_OK(e);
	for (int i = 5; i >= 0; i--)
		mcg_put(g[i]);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(rstat)
{
	Suite *s = suite_create("rstat");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rstat_flushes_only_what_changed);
	tcase_add_test(tc, test_rstat_reaped_child_keeps_events);
	tcase_add_test(tc, test_rstat_concurrent_chargers_and_reader);
	suite_add_tcase(s, tc);
	return s;
}
