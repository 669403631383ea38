/* test_move.c: move charge at immigrate in the engine. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "engine/charge.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/move.h"
#include "engine/vm.h"
#include "vm_fixture.h"
#include "suites.h"

static struct mcg_engine *mv_engine(long swap)
{
	struct mcg_machine cfg = {
		.mem_pages = 8192, .swap_pages = swap, .nodes = 1, .cpus = 1, .vm_swappiness = 60,
		.no_stock = true,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, NULL);
}

START_TEST(test_move_anon_between_siblings)
{
	struct mcg_engine *e = mv_engine(0);
	struct mcg_group *p = fixture_group(e, e->root, "p"), *a = fixture_group(e, p, "a"), *b = fixture_group(e, p, "b");
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	struct move_stats st;
	long p_watermark;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 100, &r), 0);
	fill(r, 100);
	p_watermark = pc_watermark(&p->cnt[MCG_MEM]);
	ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), 0);
	ck_assert_int_eq(st.pages, 100);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 100);
	ck_assert_int_eq(stat_local(b, STAT_RSS), 100);
	ck_assert_int_eq(stat_local(a, STAT_RSS), 0);
	/* the common parent's counter was never touched (it holds what a and
	 * b cost it, §11.5) */
	ck_assert_int_eq(pc_usage(&p->cnt[MCG_MEM]), 100 + 2 * MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(pc_watermark(&p->cnt[MCG_MEM]), p_watermark);
	/* O(1) counter operations: memory + memsw at one level, each way */
	ck_assert_int_eq(st.counter_ops, 4);
	CHECK_OK(e);
	/* new growth goes to the new group */
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 10, &r), 0);
	fill(r, 10);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 110);
	vm_object_free(t);
	CHECK_OK(e);
	mcg_put(p);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* Groups whose counters are not linked (use_hierarchy 0, profiles before
 * 5.11): the walk to the common counter must stop at the top of each chain
 * instead of following a NULL parent (a daemon crash from a delegated
 * group's cgroup.procs, the security issue's finding 1). */
START_TEST(test_move_unlinked_counters)
{
	struct mcg_engine *e = fixture_engine(PROF_KV(5, 10));
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
	struct mcg_group *c = fixture_group(e, a, "c");
	struct vm_object *t = vm_object_new(e, e->root, true, 1);
	struct vm_region *r;
	struct move_stats st;
	/* a's own: c's structures and the stock their charge left (§11.5) */
	long a0 = pc_usage(&a->cnt[MCG_MEM]);

	ck_assert_int_eq(a0, MCG_MKDIR_KMEM_PAGES + charge_stocked(e, a));
	ck_assert_ptr_null(a->cnt[MCG_MEM].parent);
	ck_assert_ptr_null(c->cnt[MCG_MEM].parent);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 64, &r), 0);
	fill(r, 32);
	/* root -> a -> root -> a: the root's pages were never charged */
	ck_assert_int_eq(move_charges(t, a, MOVE_ANON, &st), 0);
	ck_assert_int_eq(st.pages, 32);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), a0 + 32);
	ck_assert_int_eq(move_charges(t, e->root, MOVE_ANON, &st), 0);
	fill_range(r, 32, 48);
	ck_assert_int_eq(move_charges(t, a, MOVE_ANON, &st), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), a0 + 48);
	CHECK_OK(e);
	/* a -> its unlinked child c -> sibling b: each counter on its own */
	ck_assert_int_eq(move_charges(t, c, MOVE_ANON, &st), 0);
	ck_assert_int_eq(st.pages, 48);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), a0);  /* c's charges stay c's */
	ck_assert_int_eq(pc_usage(&c->cnt[MCG_MEM]), 48);
	ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), 0);
	ck_assert_int_eq(pc_usage(&c->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), st.pages);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEMSW]), st.pages);
	CHECK_OK(e);
	vm_object_free(t);
	CHECK_OK(e);
	mcg_put(c);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* From the root, whose own pages were never in its counter, into a child
 * linked to it: the root's counter rises with the child's (the fuzzer's
 * find); into a removed group: ENODEV, nothing moved. */
START_TEST(test_move_from_root_and_into_removed)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
	struct vm_object *t = vm_object_new(e, e->root, true, 1);
	struct vm_region *r;
	struct move_stats st;

	ck_assert_ptr_eq(a->cnt[MCG_MEM].parent, &e->root->cnt[MCG_MEM]);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 32, &r), 0);
	fill(r, 32);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(move_charges(t, a, MOVE_ANON, &st), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 32);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 32);
	CHECK_OK(e);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), -ENODEV);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 32);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	vm_object_free(t);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_move_masks_and_sharing)
{
	struct mcg_engine *e = mv_engine(0);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b"), *c = fixture_group(e, e->root, "c");
	struct vm_object *t = vm_object_new(e, a, true, 1), *other = vm_object_new(e, c, true, 2);
	struct vm_object *file = vm_object_new(e, e->root, false, 3);
	struct vm_region *anon, *fr, *m, *om;
	struct move_stats st;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 20, &anon), 0);
	ck_assert_int_eq(vm_region_new(file, PK_FILE, 40, &fr), 0);
	ck_assert_int_eq(vm_map_file(other, fr, 0, 10, &om), 0);
	ck_assert_int_eq(vm_map_file(t, fr, 0, 40, &m), 0);
	fill(om, 10);                        /* c touched the first 10 file pages first */
	fill(anon, 20);
	fill(m, 40);                         /* a gets the other 30 */
	/* mask 0: nothing moves, the task just changes groups */
	ck_assert_int_eq(move_charges(t, b, 0, &st), 0);
	ck_assert_int_eq(st.pages, 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 50);
	ck_assert_int_eq(move_charges(t, a, 0, &st), 0);      /* back, still nothing */
	/* anon only */
	ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), 0);
	ck_assert_int_eq(st.pages, 20);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 30);      /* file stayed */
	ck_assert_int_eq(move_charges(t, a, MOVE_ANON | MOVE_FILE, &st), 0);
	ck_assert_int_eq(st.pages, 20);                        /* anon back; file already a's */
	/* file: a's 30 pages move; the 10 that c touched first stay with c */
	ck_assert_int_eq(move_charges(t, b, MOVE_FILE, &st), 0);
	ck_assert_int_eq(st.pages, 30);
	ck_assert_int_eq(stat_local(b, STAT_CACHE), 30);
	ck_assert_int_eq(stat_local(c, STAT_CACHE), 10);
	ck_assert_int_eq(stat_local(a, STAT_RSS), 20);         /* anon stayed this time */
	CHECK_OK(e);
	vm_object_free(t);
	vm_object_free(other);
	vm_object_free(file);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_put(c);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_move_swap_and_failure)
{
	struct mcg_engine *e = mv_engine(1024);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	struct move_stats st;

	mcg_set_limit(a, MCG_MEM, 50, NULL, NULL);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 100, &r), 0);
	fill(r, 100);                               /* half of it in swap */
	ck_assert_int_gt(stat_local(a, STAT_SWAP), 0);
	/* b cannot take the resident part: nothing moves at all */
	mcg_set_limit(b, MCG_MEM, 10, NULL, NULL);
	mcg_set_limit(b, MCG_MEMSW, 10, NULL, NULL);
	ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), -ENOMEM);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEMSW]), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 100);
	ck_assert_int_eq(vm_object_footprint(t), 100);
	CHECK_OK(e);
	mcg_set_limit(b, MCG_MEMSW, PC_MAX, NULL, NULL);
	mcg_set_limit(b, MCG_MEM, PC_MAX, NULL, NULL);
	ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), 0);
	ck_assert_int_eq(st.pages + st.swap, 100);
	ck_assert_int_gt(st.swap, 0);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEMSW]), 100);   /* swap entries came along */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 0);
	ck_assert_int_eq(stat_local(b, STAT_SWAP), st.swap);
	CHECK_OK(e);
	vm_object_free(t);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_move_cost_independent_of_size)
{
	long ops[2];

	for (int k = 0; k < 2; k++) {
		struct mcg_engine *e = mv_engine(0);
		struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
		struct vm_object *t = vm_object_new(e, a, true, 1);
		struct vm_region *r;
		struct move_stats st;

		ck_assert_int_eq(vm_region_new(t, PK_ANON, k ? 4000 : 40, &r), 0);
		fill(r, k ? 4000 : 40);
		ck_assert_int_eq(move_charges(t, b, MOVE_ANON, &st), 0);
		ops[k] = st.counter_ops;
		vm_object_free(t);
		mcg_put(a);
		mcg_put(b);
		mcg_engine_free(e);
	}
	ck_assert_int_eq(ops[0], ops[1]);
}
END_TEST

START_TEST(test_move_in_flight_defers_oom)
{
	struct mcg_engine *e = mv_engine(0);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
	struct vm_object *hog = vm_object_new(e, b, true, 1), *late = vm_object_new(e, b, true, 2);
	struct vm_region *hr, *lr;
	struct vm_toucher c = { .page = 0 };
	pthread_t th;

	ck_assert_int_eq(mcg_set_limit(b, MCG_MEM, 50, NULL, NULL), 0);
	ck_assert_int_eq(vm_region_new(hog, PK_ANON, 50, &hr), 0);
	ck_assert_int_eq(vm_region_new(late, PK_ANON, 1, &lr), 0);
	fill(hr, 50);
	/* b is full; a move into b is in flight: the charge waits, nobody
	 * is killed, until the move ends */
	move_begin(a, b);
	c.r = lr;
	ck_assert_int_eq(pthread_create(&th, NULL, vm_toucher_main, &c), 0);
	for (int i = 0; i < 200 && !atomic_load(&c.done); i++)
		usleep(1000);
	ck_assert(!atomic_load(&c.done));
	ck_assert_int_eq(atomic_load(&b->oom_kill), 0);
	ck_assert(!atomic_load(&hog->dead));
	move_end(e);
	pthread_join(th, NULL);
	/* after the move the OOM killer runs as usual */
	ck_assert_int_eq(c.err, 0);
	ck_assert_int_eq(atomic_load(&b->oom_kill), 1);
	CHECK_OK(e);
	vm_object_free(hog);
	vm_object_free(late);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

struct mv_churn {
	struct mcg_engine *e;
	struct vm_region *anon, *map;
	atomic_bool stop;
};

static void *mv_churn_main(void *arg)
{
	struct mv_churn *c = arg;
	uint64_t x = 88172645463325252ull;
	enum vm_fault f;

	while (!atomic_load(&c->stop)) {
		uint32_t i;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		i = (uint32_t)(x % 200);
		if (x & 1)
			vm_touch(c->anon, i, 1, true, &f);
		else if (x & 2)
			vm_discard(c->anon, i, NULL);
		else
			vm_touch(c->map, i % 100, 1, false, &f);
	}
	return NULL;
}

START_TEST(test_move_concurrent_with_charges)
{
	struct mcg_engine *e = mv_engine(0);
	struct mcg_group *p = fixture_group(e, e->root, "p");
	struct mcg_group *a = fixture_group(e, p, "a"), *b = fixture_group(e, p, "b");
	struct vm_object *mover = vm_object_new(e, a, true, 1), *other = vm_object_new(e, a, true, 2);
	struct vm_object *file = vm_object_new(e, e->root, false, 3);
	struct vm_region *r, *fr, *mm, *om;
	struct mv_churn c = { .e = e };
	struct move_stats st;
	pthread_t th;

	ck_assert_int_eq(mcg_set_limit(p, MCG_MEM, 600, NULL, NULL), 0);
	ck_assert_int_eq(vm_region_new(mover, PK_ANON, 200, &r), 0);
	ck_assert_int_eq(vm_region_new(other, PK_ANON, 200, &c.anon), 0);
	ck_assert_int_eq(vm_region_new(file, PK_FILE, 100, &fr), 0);
	ck_assert_int_eq(vm_map_file(mover, fr, 0, 100, &mm), 0);
	ck_assert_int_eq(vm_map_file(other, fr, 0, 100, &om), 0);
	c.map = om;
	fill(r, 200);
	fill(mm, 50);
	ck_assert_int_eq(pthread_create(&th, NULL, mv_churn_main, &c), 0);
	for (int i = 0; i < 300; i++) {
		unsigned mask = (unsigned)(i % 4);

		ck_assert_int_eq(move_charges(mover, i % 2 ? a : b, mask, &st), 0);
		if (i % 3 == 0)
			fill(mm, 100);
	}
	atomic_store(&c.stop, true);
	pthread_join(th, NULL);
	CHECK_OK(e);
	vm_object_free(mover);
	vm_object_free(other);
	vm_object_free(file);
	CHECK_OK(e);
	mcg_put(p);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(move)
{
	Suite *s = suite_create("move");
	TCase *tc = tcase_create("charges");

	tcase_add_test(tc, test_move_anon_between_siblings);
	tcase_add_test(tc, test_move_masks_and_sharing);
	tcase_add_test(tc, test_move_unlinked_counters);
	tcase_add_test(tc, test_move_from_root_and_into_removed);
	tcase_add_test(tc, test_move_swap_and_failure);
	tcase_add_test(tc, test_move_cost_independent_of_size);
	tcase_add_test(tc, test_move_in_flight_defers_oom);
	tcase_add_test(tc, test_move_concurrent_with_charges);
	suite_add_tcase(s, tc);
	return s;
}
