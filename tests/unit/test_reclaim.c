/* test_reclaim.c: reclaim across nodes of unequal size, the soft limit
 * steering global reclaim, the throttle hook, and the usage and pressure
 * hooks reclaim fires. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/charge.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/oom.h"
#include "engine/reclaim.h"
#include "engine/swap.h"
#include "engine/vm.h"
#include "engine/writeback.h"
#include "vm_fixture.h"
#include "suites.h"

static bool refuse_slot(struct mcg_group *over, void *arg)
{
	(*(int *)arg)++;
	return false;
}

START_TEST(test_throttle_hook_refusal_stays_in_group)
{
	int asked = 0;
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
	};
	struct mcg_env_ops ops = *env_real.ops;   /* a real machine that refuses slots */
	struct mcg_engine *e;
	struct mcg_group *p, *a;
	struct vm_object *t;
	struct vm_region *r;
	enum vm_fault f;

	ops.throttle_slot = refuse_slot;
	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, &(struct mcg_env){ &ops, &asked }, NULL);
	p = mk(e, "p", 0);
	ck_assert_int_eq(mcg_create(e, p, "a", NULL, NULL, &a), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 8, NULL, NULL), 0);
	t = vm_object_new(e, a, true, 1);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 9, &r), 0);
	fill(r, 8);
	/* a refused reclaim slot fails the charge: it is retried later, not
	 * charged anywhere else, and it does not count as a stall */
	ck_assert_int_eq(vm_touch(r, 8, 0, true, &f), -EBUSY);
	ck_assert_int_eq(asked, 1);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 8);
	ck_assert_int_eq(pc_usage(&p->cnt[MCG_MEM]), 8 + MCG_MKDIR_KMEM_PAGES);   /* and a's structures */
	ck_assert_int_eq(atomic_load(&a->allocstall), 0);
	CHECK_OK(e);
	vm_object_free(t);
	mcg_put(p);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

struct hook_log {
	int usage_calls, pressure_calls;
	long scanned, reclaimed;
	int prio;
};

static void log_usage(struct mcg_group *g, void *arg)
{
	((struct hook_log *)arg)->usage_calls++;
}

static void log_pressure(struct mcg_group *g, long scanned, long reclaimed, int prio, void *arg)
{
	struct hook_log *l = arg;

	l->pressure_calls++;
	l->scanned += scanned;
	l->reclaimed += reclaimed;
	l->prio = prio;
}

START_TEST(test_usage_and_pressure_hooks)
{
	struct hook_log log = { 0 };
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
	};
	static const struct mcg_owner_ops log_ops = { .usage_event = log_usage,
						      .pressure_event = log_pressure };
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *t, *file;
	struct vm_region *r, *fr, *m;
	enum vm_fault f;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, &(struct mcg_owner){ &log_ops, &log });
	a = mk(e, "a", 0);
	t = vm_object_new(e, a, true, 1);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 1280, &r), 0);
	fill(r, 1280);
	/* one check per 128 page events on this thread */
	ck_assert_int_eq(log.usage_calls, 10);
	ck_assert_int_eq(log.pressure_calls, 0);
	vm_object_free(t);             /* 1280 uncharged, in one batch */
	ck_assert_int_eq(log.usage_calls, 11);
	/* reclaim aimed at a reports what it scanned and reclaimed */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 64, NULL, NULL), 0);
	file = vm_object_new(e, e->root, false, 2);
	t = vm_object_new(e, a, true, 3);
	ck_assert_int_eq(vm_region_new(file, PK_FILE, 200, &fr), 0);
	ck_assert_int_eq(vm_map_file(t, fr, 0, 200, &m), 0);
	for (uint32_t i = 0; i < 200; i++)
		ck_assert_int_eq(vm_touch(m, i, 0, false, &f), 0);
	ck_assert_int_gt(log.pressure_calls, 0);
	ck_assert_int_ge(log.scanned, log.reclaimed);
	ck_assert_int_ge(log.reclaimed, 200 - 64);
	ck_assert_int_le(log.prio, 12);
	CHECK_OK(e);
	vm_object_free(t);
	vm_object_free(file);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* Nodes of unequal size (3:1): reclaim takes from each in proportion to
 * its pages, not from the first until it has enough. */
START_TEST(test_reclaim_nodes_proportional)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 2, .node_pages = { 3072, 1024 }, .cpus = 1,
		.vm_swappiness = 60, .no_stock = true,
	};
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *fo;
	struct vm_region *fr;
	enum vm_fault f;
	long scan[2], steal[2];

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(page_node_size(&e->pages, 0), 3072);
	ck_assert_int_eq(page_node_size(&e->pages, 1), 1024);
	a = mk(e, "a", 0);
	fo = vm_object_new(e, a, false, 100);
	ck_assert_int_eq(vm_region_new(fo, PK_FILE, 4096, &fr), 0);
	/* node 0 first, then node 1: the machine full, 3:1 */
	for (uint32_t i = 0; i < 4096; i++)
		ck_assert_int_eq(vm_touch(fr, i, 0, false, &f), 0);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_FILE, 0), 3072);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_FILE, 1), 1024);
	for (int k = 0; k < 10; k++)
		ck_assert_int_ge(reclaim_subtree(a, 32, false, RECLAIM_DIRECT), 32);
	reclaim_node_counts(a, 0, &scan[0], &steal[0]);
	reclaim_node_counts(a, 1, &scan[1], &steal[1]);
	ck_assert_int_ge(steal[0] + steal[1], 320);
	ck_assert_int_le(steal[0] + steal[1], 340);
	/* within a page or two per call of the 3:1 split */
	ck_assert_int_ge(steal[0], 3 * steal[1] - 20);
	ck_assert_int_le(steal[0], 3 * steal[1] + 20);
	CHECK_OK(e);
	vm_object_free(fo);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST


START_TEST(test_soft_limit_steers_global_reclaim)
{
	struct mcg_machine cfg = {
		.mem_pages = 256, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
	};
	struct mcg_engine *e;
	struct mcg_group *a, *b;
	struct vm_object *fa, *fb;
	struct vm_region *ra, *rb;
	enum vm_fault f;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	a = mk(e, "a", 0);
	b = mk(e, "b", 0);
	atomic_store(&a->soft_limit, 50);           /* a is over its soft limit */
	fa = vm_object_new(e, a, false, 1);
	fb = vm_object_new(e, b, false, 2);
	ck_assert_int_eq(vm_region_new(fa, PK_FILE, 150, &ra), 0);
	ck_assert_int_eq(vm_region_new(fb, PK_FILE, 200, &rb), 0);
	for (uint32_t i = 0; i < 150; i++)
		ck_assert_int_eq(vm_touch(ra, i, 0, false, &f), 0);
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(vm_touch(rb, i, 0, false, &f), 0);
	/* the machine (256 pages) is nearly full: b's next 100 pages come
	 * out of a, the group over its soft limit, not out of b */
	for (uint32_t i = 100; i < 200; i++)
		ck_assert_int_eq(vm_touch(rb, i, 0, false, &f), 0);
	ck_assert_int_eq(stat_local(b, STAT_CACHE), 200);
	ck_assert_int_le(stat_local(a, STAT_CACHE), 56);
	ck_assert_int_gt(atomic_load(&a->pg_reclaimed[0]), 0);
	ck_assert_int_eq(atomic_load(&b->pg_reclaimed[0]), 0);
	CHECK_OK(e);
	vm_object_free(fa);
	vm_object_free(fb);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(reclaim)
{
	Suite *s = suite_create("reclaim");
	TCase *tc = tcase_create("reclaim");

	tcase_add_test(tc, test_reclaim_nodes_proportional);
	tcase_add_test(tc, test_soft_limit_steers_global_reclaim);
	tcase_add_test(tc, test_throttle_hook_refusal_stays_in_group);
	tcase_add_test(tc, test_usage_and_pressure_hooks);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
