/* test_oom.c: the memcg OOM killer: the largest victim, the charger at a
 * limit of 0, unkillable tasks and nowait charges, and the wait of
 * oom_kill_disable; the machine's own OOM killer (m.machine_oom). */
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

static uint32_t killed_id;

static void note_kill(uint32_t id, struct mcg_group *over, struct mcg_group *vg, void *arg)
{
	killed_id = id;
}

static const struct mcg_owner_ops note_owner_ops = { .kill = note_kill };
static const struct mcg_owner note_owner = { &note_owner_ops, NULL };

/* §11.10: at a limit of 0 the task that tries to charge is the victim,
 * although nothing is charged to it yet; one process is one kill. */
START_TEST(test_oom_limit_zero_kills_the_charger)
{
	struct mcg_engine *e;
	struct mcg_group *z;
	struct vm_object *t, *twin;
	struct vm_region *r;
	enum vm_fault f;

	e = vm_engine_owned(0, &note_owner);
	z = mk(e, "z", 0);
	ck_assert_int_eq(mcg_set_limit(z, MCG_MEM, 0, NULL, NULL), 0);
	killed_id = 0;
	t = vm_object_new(e, z, true, 9);
	twin = vm_object_new(e, z, true, 9);   /* the same process seen twice */
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 4, &r), 0);
	ck_assert_int_lt(vm_touch(r, 0, 0, true, &f), 0);      /* the charge fails */
	ck_assert_uint_eq(killed_id, 9);                        /* and it is killed */
	ck_assert_int_eq(vm_touch(r, 1, 0, true, &f), -EFAULT); /* dead */
	ck_assert_uint_eq(atomic_load(&z->oom_kill), 1);
	ck_assert(atomic_load(&twin->dead));
	ck_assert_int_eq(pc_usage(&z->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	vm_object_free(t);
	vm_object_free(twin);
	CHECK_OK(e);
	mcg_put(z);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_oom_kills_largest)
{
	struct mcg_engine *e;
	struct mcg_group *p, *a, *b = NULL;
	struct vm_object *big, *small;
	struct vm_region *rb, *rs;
	enum vm_fault f;

	e = vm_engine_owned(0, &note_owner);
	p = mk(e, "p", 30 + 2 * MCG_MKDIR_KMEM_PAGES);      /* (a and b cost p that) */
	ck_assert_int_eq(mcg_create(e, p, "a", NULL, NULL, &a), 0);
	ck_assert_int_eq(mcg_create(e, p, "b", NULL, NULL, &b), 0);
	big = vm_object_new(e, a, true, 7);
	small = vm_object_new(e, b, true, 8);
	ck_assert_int_eq(vm_region_new(big, PK_ANON, 25, &rb), 0);
	ck_assert_int_eq(vm_region_new(small, PK_ANON, 10, &rs), 0);
	fill(rb, 25);
	fill(rs, 5);
	/* p is full of anon and there is no swap: the next fault kills the
	 * largest task of p's subtree, in a sibling group */
	ck_assert_int_eq(vm_touch(rs, 5, 0, true, &f), 0);
	ck_assert_uint_eq(killed_id, 7);
	ck_assert_uint_eq(atomic_load(&a->oom_kill), 1);
	ck_assert_uint_eq(atomic_load(&b->oom_kill), 0);
	ck_assert_uint_eq(atomic_load(&p->oom_kill), 0);
	ck_assert_int_eq(vm_object_footprint(big), 0);
	ck_assert_int_eq(vm_touch(rb, 0, 0, true, &f), -EFAULT);   /* dead */
	ck_assert_int_eq(atomic_load(&p->under_oom), 0);           /* only while killing */
	CHECK_OK(e);
	vm_object_free(big);
	vm_object_free(small);
	CHECK_OK(e);
	mcg_put(p);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_oom_skips_unkillable_and_nowait)
{
	struct charge_mode mode = { .nowait = true };
	struct mcg_engine *e;
	struct mcg_group *a, *over;
	struct vm_object *big, *small;
	struct vm_region *rb, *rs;
	enum vm_fault f;

	e = vm_engine_owned(0, &note_owner);
	a = mk(e, "a", 30);
	big = vm_object_new(e, a, true, 7);
	small = vm_object_new(e, a, true, 8);
	ck_assert_int_eq(vm_region_new(big, PK_ANON, 25, &rb), 0);
	ck_assert_int_eq(vm_region_new(small, PK_ANON, 10, &rs), 0);
	fill(rb, 25);
	fill(rs, 5);
	/* the largest task is exempt (oom_score_adj -1000): the smaller goes */
	killed_id = 0;
	atomic_store(&big->unkillable, true);
	ck_assert_int_eq(vm_touch(rs, 5, 0, true, &f), -EFAULT);
	ck_assert_uint_eq(killed_id, 8);
	ck_assert(!atomic_load(&big->dead));
	/* nothing killable left: the charge fails, with nobody killed */
	killed_id = 0;
	ck_assert_int_eq(vm_touch(rb, 0, 0, true, &f), 0);           /* resident */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 25, NULL, NULL), 0);
	{
		struct vm_region *more;

		ck_assert_int_eq(vm_region_new(big, PK_ANON, 1, &more), 0);
		ck_assert_int_eq(vm_touch(more, 0, 0, true, &f), -ENOMEM);
	}
	ck_assert_uint_eq(killed_id, 0);
	/* oom_kill_disable with the task's mode nowait: the charge fails at
	 * once and names the group, instead of sleeping */
	ck_assert_int_eq(mcg_set_oom_control(a, 1), 0);
	vm_object_set_mode(big, &mode);
	ck_assert_int_eq(vm_touch(big->regions, 0, 0, true, &f), -ENOMEM);
	over = mode.over;
	ck_assert_ptr_eq(over, a);
	mcg_put(over);
	mode.over = NULL;
	/* the mode is the task's: another task's charge would wait */
	ck_assert_ptr_null(small->mode);
	CHECK_OK(e);
	vm_object_free(big);
	vm_object_free(small);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_oom_kill_disable_waits)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 10);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_toucher w = { .page = 10 };
	pthread_t th;

	ck_assert_int_eq(mcg_set_oom_control(a, 1), 0);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 20, &w.r), 0);
	fill(w.r, 10);
	pthread_create(&th, NULL, vm_toucher_main, &w);
	/* the charging task waits, marked under OOM, and nobody is killed */
	while (atomic_load(&a->under_oom) == 0)
		sched_yield();
	ck_assert(!atomic_load(&w.done));
	ck_assert_uint_eq(atomic_load(&a->oom_kill), 0);
	/* raising the limit lets it go on */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 11, NULL, NULL), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(w.err, 0);
	ck_assert_int_eq(atomic_load(&a->under_oom), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 11);
	CHECK_OK(e);
	vm_object_free(t);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

static int oom_events;

static void note_event(struct mcg_group *over, void *arg)
{
	oom_events++;
}

static const struct mcg_owner_ops machine_owner_ops = { .kill = note_kill, .oom_event = note_event };
static const struct mcg_owner machine_owner = { &machine_owner_ops, NULL };

/* A machine of 256 pages, no swap, with (on) or without its OOM killer. */
static struct mcg_engine *small_machine(bool on)
{
	struct mcg_machine cfg = {
		.mem_pages = 256, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
		.machine_oom = on,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, &machine_owner);
}

/* The machine out of memory (no limit anywhere, no swap): with its OOM
 * killer the largest task of the whole machine goes, in another group,
 * whatever that group's oom_kill_disable, no group is marked under OOM
 * and no OOM notification fires; the fault then gets its page. Without
 * it the fault fails with ENOMEM and nobody is killed. */
START_TEST(test_oom_machine_kills_largest)
{
	for (int on = 0; on <= 1; on++) {
		struct mcg_engine *e = small_machine(on);
		struct mcg_group *a = mk(e, "a", 0), *b = mk(e, "b", 0);
		struct vm_object *big = vm_object_new(e, a, true, 7);
		struct vm_object *small = vm_object_new(e, b, true, 8);
		struct vm_region *rb, *rs;
		enum vm_fault f;
		uint32_t i;
		int err = 0;

		ck_assert_int_eq(mcg_set_oom_control(a, 1), 0);
		ck_assert_int_eq(vm_region_new(big, PK_ANON, 200, &rb), 0);
		ck_assert_int_eq(vm_region_new(small, PK_ANON, 200, &rs), 0);
		fill(rb, 180);
		fill(rs, 40);
		killed_id = 0;
		oom_events = 0;
		for (i = 40; i < 120 && !(err = vm_touch(rs, i, 0, true, &f)); i++)
			;
		if (!on) {
			ck_assert_int_eq(err, -ENOMEM);
			ck_assert_uint_eq(killed_id, 0);
			ck_assert(!atomic_load(&big->dead));
			ck_assert_uint_eq(atomic_load(&a->oom_kill), 0);
		} else {
			ck_assert_int_eq(err, 0);
			ck_assert_uint_eq(killed_id, 7);
			ck_assert(atomic_load(&big->dead));
			ck_assert_int_eq(vm_object_footprint(big), 0);
			ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
			ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 120);
			ck_assert_uint_eq(atomic_load(&a->oom_kill), 1);
			ck_assert_uint_eq(atomic_load(&b->oom_kill), 0);
			ck_assert_uint_eq(atomic_load(&e->root->oom_kill), 0);
			ck_assert_int_eq(vm_touch(rb, 0, 0, true, &f), -EFAULT);
		}
		ck_assert_int_eq(oom_events, 0);
		ck_assert_int_eq(atomic_load(&a->under_oom), 0);
		CHECK_OK(e);
		vm_object_free(big);
		vm_object_free(small);
		CHECK_OK(e);
		mcg_put(a);
		mcg_put(b);
		mcg_engine_free(e);
	}
}
END_TEST

/* The faulting task is the largest: it is the victim, its fault fails as
 * a killed task's does, and its pages are free for the others; with only
 * unkillable tasks left the fault fails with ENOMEM. */
START_TEST(test_oom_machine_kills_the_faulter)
{
	struct mcg_engine *e = small_machine(true);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *big = vm_object_new(e, a, true, 7);
	struct vm_object *small = vm_object_new(e, a, true, 8);
	struct vm_region *rb, *rs;
	enum vm_fault f;
	uint32_t i;
	int err = 0;

	ck_assert_int_eq(vm_region_new(big, PK_ANON, 300, &rb), 0);
	ck_assert_int_eq(vm_region_new(small, PK_ANON, 300, &rs), 0);
	fill(rs, 30);
	killed_id = 0;
	for (i = 0; i < 300 && !(err = vm_touch(rb, i, 0, true, &f)); i++)
		;
	ck_assert_int_eq(err, -EFAULT);
	ck_assert_uint_eq(killed_id, 7);
	ck_assert_int_eq(vm_object_footprint(big), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 30);
	ck_assert_uint_eq(atomic_load(&a->oom_kill), 1);
	/* the survivor cannot be killed: past the machine's pages, ENOMEM */
	atomic_store(&small->unkillable, true);
	killed_id = 0;
	for (i = 30; i < 300 && !(err = vm_touch(rs, i, 0, true, &f)); i++)
		;
	ck_assert_int_eq(err, -ENOMEM);
	ck_assert_uint_eq(killed_id, 0);
	ck_assert(!atomic_load(&small->dead));
	CHECK_OK(e);
	vm_object_free(big);
	vm_object_free(small);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(oom)
{
	Suite *s = suite_create("oom");
	TCase *tc = tcase_create("oom");

	tcase_add_test(tc, test_oom_limit_zero_kills_the_charger);
	tcase_add_test(tc, test_oom_kills_largest);
	tcase_add_test(tc, test_oom_skips_unkillable_and_nowait);
	tcase_add_test(tc, test_oom_kill_disable_waits);
	tcase_add_test(tc, test_oom_machine_kills_largest);
	tcase_add_test(tc, test_oom_machine_kills_the_faulter);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
