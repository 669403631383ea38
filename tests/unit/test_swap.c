/* test_swap.c: swap-out and swap-in, the swap cache, and real
 * processes' anon pages that never go to the simulated swap. */
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

START_TEST(test_swap_in)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 50);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 200, &r), 0);
	fill(r, 200);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 50);
	ck_assert_int_eq(vm_object_footprint(t), 200);        /* resident + swapped */
	ck_assert_int_eq(stat_local(a, STAT_SWAP) + stat_local(a, STAT_RSS), 200);
	CHECK_OK(e);
	/* the first pages went to swap: touching them is a major fault */
	ck_assert_int_eq(vm_touch(r, 0, 0, false, &f), 0);
	ck_assert_int_eq(f, VM_REFAULT);
	ck_assert_int_eq(stat_local(a, STAT_PGMAJFAULT), 1);
	ck_assert_int_eq(stat_local(a, STAT_REFAULT_ANON), 1);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 200);  /* memory + swap */
	CHECK_OK(e);
	vm_region_free(r);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 0);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), 0);
	CHECK_OK(e);
	vm_object_free(t);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_real_anon_never_swapped)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 40);
	struct vm_object *real = vm_object_new(e, a, true, 1), *sim = vm_object_new(e, a, true, 2);
	struct vm_region *rr, *rs;

	real->real = true;
	ck_assert_int_eq(vm_region_new(real, PK_ANON, 30, &rr), 0);
	ck_assert_int_eq(vm_region_new(sim, PK_ANON, 30, &rs), 0);
	fill(rr, 30);
	fill(rs, 30);
	/* the simulated task's pages went to swap; the real one's stayed */
	ck_assert_int_eq(atomic_load(&real->swapped), 0);
	ck_assert_int_eq(atomic_load(&real->resident), 30);
	ck_assert_int_eq(atomic_load(&sim->swapped), 20);
	CHECK_OK(e);
	vm_object_free(real);
	vm_object_free(sim);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_swap_cache)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 50);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;
	long outs, swapped;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 100, &r), 0);
	fill(r, 100);
	swapped = stat_local(a, STAT_SWAP);
	ck_assert_int_ge(swapped, 50);
	ck_assert_int_eq(stat_local(a, STAT_SWAPCACHED), 0);
	/* read back: the pages keep their copy in swap (swap cache); memsw
	 * counts each page once */
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, false, &f), 0);
	ck_assert_int_gt(stat_local(a, STAT_SWAPCACHED), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]),
			 pc_usage(&a->cnt[MCG_MEM]) + stat_local(a, STAT_SWAP));
	CHECK_OK(e);
	/* a cached page goes back to swap without another write */
	outs = swap_outs(e);
	for (int round = 0; round < 3; round++)
		for (uint32_t i = 0; i < 100; i++)
			ck_assert_int_eq(vm_touch(r, i, 0, false, &f), 0);
	ck_assert_int_eq(swap_outs(e), outs);
	CHECK_OK(e);
	/* a write makes the copy stale: the cache entry and its slot go */
	fill(r, 100);
	ck_assert_int_lt(stat_local(a, STAT_SWAPCACHED), 50);
	CHECK_OK(e);
	vm_object_free(t);
	ck_assert_int_eq(stat_local(a, STAT_SWAPCACHED), 0);
	ck_assert_int_eq(swap_nr_cached(e), 0);
	ck_assert_int_eq(swap_nr_free(e), 1024);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(swap)
{
	Suite *s = suite_create("swap");
	TCase *tc = tcase_create("swap");

	tcase_add_test(tc, test_swap_in);
	tcase_add_test(tc, test_real_anon_never_swapped);
	tcase_add_test(tc, test_swap_cache);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
