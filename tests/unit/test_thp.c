/* test_thp.c: huge pages and compaction (issue 22, item 6): pageblocks on
 * the page pool, a huge page's fault and its fallback, compaction's two
 * scanners (asynchronous compaction leaves dirty page cache, synchronous
 * compaction moves it, nothing mlocked moves), reclaim for a huge page
 * going on until compaction could run, and where each era puts a new anon
 * page. Engines without workers, one node. */
#include <check.h>
#include <stdint.h>

#include "engine/check.h"
#include "engine/compaction.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/page.h"
#include "engine/reclaim.h"
#include "engine/vm.h"
#include "vm_fixture.h"
#include "suites.h"

static struct mcg_engine *th_engine(long pages, bool thp, enum mcg_era era)
{
	struct mcg_machine cfg = {
		.mem_pages = pages, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
		.thp = thp, .era = era,
	};
	struct mcg_engine *e;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	ck_assert_ptr_nonnull(e);
	return e;
}

static struct mcg_compact_counts th_counts(struct mcg_engine *e)
{
	struct mcg_compact_counts c;

	mcg_compact_counts(e, &c);
	return c;
}

static void th_check_pool(struct mcg_engine *e);

static void th_check(struct mcg_engine *e)
{
	char msg[256];

	ck_assert_msg(check_invariants(e, msg, sizeof(msg)) == 0, "%s", msg);
	th_check_pool(e);
}

/* The pool's pageblock bookkeeping agrees with its free lists: every page
 * on node n's list (walked both ways) has its bit, the bits and the
 * blocks' counts add up to the free pages, and nothing else is free */
static void th_check_pool(struct mcg_engine *e)
{
	struct page_pool *pp = &e->pages;
	long listed = 0, bits = 0, blocks = 0;

	for (unsigned n = 0; n < pp->nr_nodes; n++) {
		uint32_t prev = PAGE_NONE;

		for (uint32_t i = pp->node[n].free_head; i != PAGE_NONE; i = pp->pages[i].next) {
			ck_assert(page_is_free(pp, i));
			ck_assert_uint_eq(pp->pages[i].prev, prev);
			ck_assert_uint_eq(page_node_of(pp, i), n);
			prev = i;
			listed++;
		}
	}
	for (uint32_t i = 0; i < pp->nr_pages; i++)
		bits += page_is_free(pp, i);
	for (uint32_t b = 0; b < (pp->nr_pages + PAGE_BLOCK - 1) / PAGE_BLOCK; b++)
		blocks += page_block_free(pp, b);
	ck_assert_int_eq(listed, page_nr_free(pp));
	ck_assert_int_eq(bits, listed);
	ck_assert_int_eq(blocks, listed);
}

/* A machine of pages pages with huge pages, group a (limit pages, 0:
 * none), a file of file_pages pages and a task's anon region of anon_pages
 * (either may be 0: none) */
struct th {
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *fo, *o;
	struct vm_region *file, *r;
};

static void th_setup(struct th *t, long pages, long limit, uint32_t file_pages,
		     uint32_t anon_pages)
{
	t->e = th_engine(pages, true, MCG_ERA_TODAY);
	t->a = mk(t->e, "a", limit);
	t->fo = vm_object_new(t->e, t->a, false, 1);
	t->o = vm_object_new(t->e, t->a, true, 2);
	t->file = t->r = NULL;
	if (file_pages)
		ck_assert_int_eq(vm_region_new(t->fo, PK_FILE, file_pages, &t->file), 0);
	if (anon_pages)
		ck_assert_int_eq(vm_region_new(t->o, PK_ANON, anon_pages, &t->r), 0);
}

/* The invariants checked, and everything given back */
static void th_teardown(struct th *t)
{
	th_check(t->e);
	vm_object_free(t->o);
	vm_object_free(t->fo);
	ck_assert_int_eq(page_nr_free(&t->e->pages), t->e->m.mem_pages);
	th_check_pool(t->e);
	mcg_put(t->a);
	mcg_engine_free(t->e);
}

static uint32_t th_slot(struct vm_region *r, uint32_t i)
{
	return atomic_load(&r->slot[i]);
}

static void th_touch(struct vm_region *r, uint32_t from, uint32_t to, bool write)
{
	enum vm_fault f;

	for (uint32_t i = from; i < to; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, write, &f), 0);
}

/* A fault in an aligned 2M of an anon region maps all of it at once, from
 * a free pageblock; its pages go back to the pool one by one */
START_TEST(test_thp_fault_maps_block)
{
	struct mcg_engine *e = th_engine(2048, true, MCG_ERA_TODAY);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *o = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(o, PK_ANON, 1024 + 100, &r), 0);
	ck_assert_int_eq(vm_touch(r, 5, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_HUGE);
	for (uint32_t i = 0; i < PAGE_BLOCK; i++) {
		ck_assert(vm_resident(r, i));
		ck_assert_uint_eq(th_slot(r, i) % PAGE_BLOCK, i);   /* one block, in order */
	}
	ck_assert(!vm_resident(r, PAGE_BLOCK));
	ck_assert_int_eq(mcg_usage(a, MCG_MEM), PAGE_BLOCK);
	ck_assert_int_eq(vm_touch(r, 7, 0, false, &f), 0);
	ck_assert_int_eq(f, VM_HIT);
	ck_assert_int_eq(vm_touch(r, 600, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_HUGE);
	/* the last 100 pages are no whole 2M: base pages */
	ck_assert_int_eq(vm_touch(r, 1030, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_MINOR);
	ck_assert_int_eq(th_counts(e).thp_fault_alloc, 2);
	ck_assert_int_eq(th_counts(e).thp_fault_fallback, 0);
	ck_assert_int_eq(page_node_free(&e->pages, 0), 2048 - 2 * PAGE_BLOCK - 1);
	ck_assert(page_node_has_block(&e->pages, 0));        /* the fourth */
	th_check(e);
	vm_object_free(o);
	ck_assert_int_eq(page_nr_free(&e->pages), 2048);
	for (uint32_t b = 0; b < 4; b++)
		ck_assert_int_eq(page_block_free(&e->pages, b), PAGE_BLOCK);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* No free block and nothing that may move (an mlocked page in each block,
 * the rest free): both compactions fail, reclaim for the order is not
 * needed (enough is free), the fault falls back and the node's
 * compaction is deferred, so the next huge fault neither compacts nor
 * reclaims; with too little free, compaction is skipped */
START_TEST(test_thp_fault_falls_back)
{
	struct th t;
	struct mcg_engine *e;
	struct vm_region *file, *r;
	struct mcg_compact_counts c;
	enum vm_fault f;

	th_setup(&t, 4096, 0, 4096, 2 * PAGE_BLOCK);
	e = t.e;
	file = t.file;
	r = t.r;
	th_touch(file, 0, 4096, false);
	for (uint32_t i = 0; i < 4096; i++)
		if (i % PAGE_BLOCK)
			vm_discard(file, i, NULL);
		else
			vm_mlock(file, i, true);
	ck_assert(!page_node_has_block(&e->pages, 0));
	ck_assert_int_eq(vm_touch(r, 0, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_MINOR);
	c = th_counts(e);
	ck_assert_int_eq(c.thp_fault_alloc, 0);
	ck_assert_int_eq(c.thp_fault_fallback, 1);
	ck_assert_int_eq(c.compact_stall, 2);          /* asynchronous, synchronous */
	ck_assert_int_eq(c.compact_fail, 2);
	ck_assert_int_eq(c.compact_pages_moved, 0);
	ck_assert_int_eq(c.reclaim_for_order, 1);
	/* the next page of the same 2M is a base page: no second try */
	ck_assert_int_eq(vm_touch(r, 1, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_MINOR);
	ck_assert_int_eq(th_counts(e).thp_fault_fallback, 1);
	/* the next 2M: compaction is deferred, and so reclaim is not run */
	ck_assert_int_eq(vm_touch(r, PAGE_BLOCK, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_MINOR);
	c = th_counts(e);
	ck_assert_int_eq(c.thp_fault_fallback, 2);
	ck_assert_int_eq(c.compact_stall, 2);
	ck_assert_int_eq(c.reclaim_for_order, 1);
	th_teardown(&t);
}
END_TEST

/* A group with 600 pages left under its limit: the huge page is charged
 * after one reclaim only if 512 fit; here they do not (everything the
 * group holds is mlocked), so the fault falls back to a base page with
 * no OOM kill and nothing lost */
START_TEST(test_thp_charge_near_limit)
{
	struct th t;
	enum vm_fault f;

	th_setup(&t, 4096, 1000, 600, PAGE_BLOCK);
	th_touch(t.file, 0, 600, false);
	for (uint32_t i = 0; i < 600; i++)
		vm_mlock(t.file, i, true);
	ck_assert_int_eq(vm_touch(t.r, 0, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_MINOR);
	ck_assert_int_eq(th_counts(t.e).thp_fault_alloc, 1);   /* allocated, then refused */
	ck_assert_int_eq(mcg_usage(t.a, MCG_MEM), 601);
	ck_assert_int_eq(mcg_oom_kills(t.a), 0);
	ck_assert_int_eq(page_nr_free(&t.e->pages), 4096 - 601);
	th_teardown(&t);
}
END_TEST

/* Block 0 holds 512 file pages, 10 of them dirty; each other block one
 * mlocked page. Asynchronous compaction moves the clean ones and leaves
 * the dirty ones (no block comes free); synchronous compaction then moves
 * those, still dirty, and block 0 is free. */
START_TEST(test_thp_async_compaction_skips_dirty)
{
	struct mcg_engine *e = th_engine(4096, true, MCG_ERA_TODAY);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *fo = vm_object_new(e, a, false, 1), *mo = vm_object_new(e, a, false, 2);
	struct vm_region *file, *m;
	uint32_t dirty_at[10];

	ck_assert_int_eq(vm_region_new(fo, PK_FILE, PAGE_BLOCK, &file), 0);
	ck_assert_int_eq(vm_region_new(mo, PK_FILE, 4096 - PAGE_BLOCK, &m), 0);
	th_touch(file, 0, 10, true);
	th_touch(file, 10, PAGE_BLOCK, false);
	th_touch(m, 0, 4096 - PAGE_BLOCK, false);
	ck_assert_int_eq(page_node_free(&e->pages, 0), 0);
	for (uint32_t i = 0; i < 4096 - PAGE_BLOCK; i++)
		if (i % PAGE_BLOCK)
			vm_discard(m, i, NULL);
		else
			vm_mlock(m, i, true);
	for (uint32_t i = 0; i < 10; i++) {
		dirty_at[i] = th_slot(file, i);
		ck_assert_uint_lt(dirty_at[i], PAGE_BLOCK);        /* in block 0 */
	}
	ck_assert(!page_node_has_block(&e->pages, 0));
	ck_assert_int_eq(rstat_item(a, STAT_DIRTY), 10);

	ck_assert_int_eq(compact_node(e, 0, PAGE_BLOCK_ORDER, false), PAGE_COMPACT_CONTINUE);
	ck_assert(!page_node_has_block(&e->pages, 0));
	ck_assert_int_eq(th_counts(e).compact_pages_moved, PAGE_BLOCK - 10);
	ck_assert_int_ge(th_counts(e).compact_move_failed, 10);
	for (uint32_t i = 0; i < 10; i++)
		ck_assert_uint_eq(th_slot(file, i), dirty_at[i]);   /* not moved */
	for (uint32_t i = 10; i < PAGE_BLOCK; i++)
		ck_assert_uint_ge(th_slot(file, i), PAGE_BLOCK);     /* moved out */
	ck_assert_int_eq(page_block_free(&e->pages, 0), PAGE_BLOCK - 10);
	th_check(e);

	ck_assert_int_eq(compact_node(e, 0, PAGE_BLOCK_ORDER, true), PAGE_COMPACT_PARTIAL);
	ck_assert_int_eq(page_block_free(&e->pages, 0), PAGE_BLOCK);
	for (uint32_t i = 0; i < 10; i++)
		ck_assert_uint_ge(th_slot(file, i), PAGE_BLOCK);
	ck_assert_int_eq(rstat_item(a, STAT_DIRTY), 10);       /* still dirty */
	ck_assert_int_eq(mcg_usage(a, MCG_MEM), PAGE_BLOCK + 7);
	th_check(e);
	vm_object_free(mo);
	vm_object_free(fo);
	ck_assert_int_eq(page_nr_free(&e->pages), 4096);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* A fault where every other page is free: compaction empties the first
 * block into the top of the node and the fault gets it */
START_TEST(test_thp_fault_compacts)
{
	struct th t;
	struct mcg_engine *e;
	struct vm_region *file, *r;
	enum vm_fault f;
	long resident = 0;

	th_setup(&t, 4096, 0, 4096, PAGE_BLOCK);
	e = t.e;
	file = t.file;
	r = t.r;
	th_touch(file, 0, 4096, false);
	for (uint32_t i = 0; i < 4096; i += 2)
		vm_discard(file, i, NULL);
	ck_assert(!page_node_has_block(&e->pages, 0));
	ck_assert_int_eq(vm_touch(r, 0, 0, true, &f), 0);
	ck_assert_int_eq(f, VM_HUGE);
	ck_assert_int_eq(th_counts(e).compact_stall, 1);
	ck_assert_int_eq(th_counts(e).compact_success, 1);
	ck_assert_int_eq(th_counts(e).compact_pages_moved, PAGE_BLOCK / 2);
	ck_assert_int_eq(th_counts(e).reclaim_for_order, 0);
	for (uint32_t i = 0; i < 4096; i++)
		resident += vm_resident(file, i);
	ck_assert_int_eq(resident, 2048);       /* moved, none lost */
	th_teardown(&t);
}
END_TEST

/* A full machine of clean page cache: reclaim for an order-0 page stops
 * at a cluster; for a huge page it goes on past 2 << 9 pages, until the
 * node has more than that free (compaction could run) */
START_TEST(test_thp_reclaim_for_order_continues)
{
	struct th t;
	struct mcg_engine *e;
	long got;

	th_setup(&t, 4096, 0, 4096, 0);
	e = t.e;
	th_touch(t.file, 0, 4096, false);
	ck_assert_int_eq(page_node_free(&e->pages, 0), 0);
	got = reclaim_subtree(e->root, 32, true, RECLAIM_DIRECT);
	ck_assert_int_ge(got, 32);
	ck_assert_int_lt(got, 64);
	got = reclaim_for_order(e, 0, PAGE_BLOCK_ORDER);
	ck_assert_int_ge(got, 2 * PAGE_BLOCK);
	ck_assert_int_gt(page_node_free(&e->pages, 0), 2 * PAGE_BLOCK);
	ck_assert_int_lt(page_node_free(&e->pages, 0), 4096 / 2);
	th_teardown(&t);
}
END_TEST

/* A new anon page starts on the active list up to 5.8 (the old eras),
 * on the inactive one today */
START_TEST(test_thp_new_anon_list_by_era)
{
	static const enum mcg_era eras[] = { MCG_ERA_TODAY, MCG_ERA_2_6_24, MCG_ERA_2_6_39,
					     MCG_ERA_3_2 };

	for (unsigned k = 0; k < sizeof(eras) / sizeof(eras[0]); k++) {
		struct mcg_engine *e = th_engine(2048, false, eras[k]);
		struct mcg_group *a = mk(e, "a", 0);
		struct vm_object *o = vm_object_new(e, a, true, 1);
		struct vm_region *r;
		bool today = eras[k] == MCG_ERA_TODAY;

		ck_assert_int_eq(vm_region_new(o, PK_ANON, 64, &r), 0);
		th_touch(r, 0, 64, true);
		ck_assert_int_eq(stat_lru_local(a, LRU_ACTIVE_ANON, -1), today ? 0 : 64);
		ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_ANON, -1), today ? 64 : 0);
		vm_object_free(o);
		mcg_put(a);
		mcg_engine_free(e);
	}
}
END_TEST

UNIT_SUITE(thp)
{
	Suite *s = suite_create("thp");
	TCase *tc = tcase_create("thp");

	tcase_add_test(tc, test_thp_fault_maps_block);
	tcase_add_test(tc, test_thp_fault_falls_back);
	tcase_add_test(tc, test_thp_charge_near_limit);
	tcase_add_test(tc, test_thp_async_compaction_skips_dirty);
	tcase_add_test(tc, test_thp_fault_compacts);
	tcase_add_test(tc, test_thp_reclaim_for_order_continues);
	tcase_add_test(tc, test_thp_new_anon_list_by_era);
	suite_add_tcase(s, tc);
	return s;
}
