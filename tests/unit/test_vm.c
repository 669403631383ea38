/* test_vm.c: simulated tasks' and files' virtual pages: faults, swap-in,
 * file sharing and first-touch charging, shadows and refaults, mlock,
 * freeing, all against the invariant checker. */
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
#include "engine_fixture.h"
#include "suites.h"

static struct mcg_engine *vm_engine(long swap)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .swap_pages = swap, .nodes = 1, .cpus = 1, .vm_swappiness = 60,
		.no_stock = true,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, NULL);
}

static struct mcg_group *mk(struct mcg_engine *e, const char *name, long limit)
{
	struct mcg_group *g = fixture_group(e, e->root, name);

	if (limit)
		ck_assert_int_eq(mcg_set_limit(g, MCG_MEM, limit, NULL, NULL), 0);
	return g;
}

START_TEST(test_anon_faults)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 10, &r), 0);
	for (uint32_t i = 0; i < 10; i++) {
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
		ck_assert_int_eq(f, VM_MINOR);
	}
	ck_assert_int_eq(vm_touch(r, 3, 0, false, &f), 0);
	ck_assert_int_eq(f, VM_HIT);
	ck_assert_int_eq(stat_local(a, STAT_RSS), 10);
	ck_assert_int_eq(stat_local(a, STAT_PGFAULT), 10);
	ck_assert_int_eq(stat_local(a, STAT_PGMAJFAULT), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 10);
	ck_assert_int_eq(vm_object_footprint(t), 10);
	ck_assert_int_eq(vm_touch(r, 10, 0, false, &f), -EINVAL);
	/* accessed twice: promoted to the active list */
	ck_assert_int_eq(vm_touch(r, 3, 0, false, &f), 0);
	ck_assert_int_eq(stat_lru_local(a, LRU_ACTIVE_ANON, -1), 1);
	CHECK_OK(e);
	vm_discard(r, 0, NULL);
	ck_assert_int_eq(stat_local(a, STAT_RSS), 9);
	vm_object_free(t);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_swap_in)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 50);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 200, &r), 0);
	for (uint32_t i = 0; i < 200; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
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

START_TEST(test_shared_file_first_touch)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 0), *b = mk(e, "b", 0);
	struct vm_object *file = vm_object_new(e, e->root, false, 100);
	struct vm_object *ta = vm_object_new(e, a, true, 1), *tb = vm_object_new(e, b, true, 2);
	struct vm_region *fr, *ma, *mb;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(file, PK_FILE, 64, &fr), 0);
	ck_assert_int_eq(vm_map_file(ta, fr, 0, 64, &ma), 0);
	ck_assert_int_eq(vm_map_file(tb, fr, 32, 32, &mb), 0);
	ck_assert_int_eq(vm_map_file(tb, fr, 60, 10, &mb), -EINVAL);
	ck_assert_int_eq(vm_map_file(tb, fr, 32, 32, &mb), 0);
	for (uint32_t i = 0; i < 64; i++) {
		ck_assert_int_eq(vm_touch(ma, i, 0, false, &f), 0);
		ck_assert_int_eq(f, VM_MAJOR);                  /* read from the file */
	}
	ck_assert_int_eq(vm_touch(mb, 0, 0, false, &f), 0);     /* file page 32 */
	ck_assert_int_eq(f, VM_HIT);
	/* charged once, to the group that touched it first */
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 64);
	ck_assert_int_eq(stat_local(a, STAT_MAPPED_FILE), 64);
	ck_assert_int_eq(stat_local(b, STAT_CACHE), 0);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	/* the tasks go; the page cache stays charged until the file goes */
	vm_object_free(ta);
	vm_object_free(tb);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 64);
	vm_object_free(file);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 0);
	CHECK_OK(e);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* A file of pages pages charged to a, mapped whole by a task of a that
 * reads the first touched of them. */
static void mapped_file(struct mcg_engine *e, struct mcg_group *a, uint32_t pages, uint32_t touched,
			struct vm_object **file, struct vm_object **t, struct vm_region **fr,
			struct vm_region **m)
{
	enum vm_fault f;

	*file = vm_object_new(e, a, false, 100);
	*t = vm_object_new(e, a, true, 1);
	ck_assert_int_eq(vm_region_new(*file, PK_FILE, pages, fr), 0);
	ck_assert_int_eq(vm_map_file(*t, *fr, 0, pages, m), 0);
	for (uint32_t i = 0; i < touched; i++)
		ck_assert_int_eq(vm_touch(*m, i, 0, false, &f), 0);
}

/* Both go, the task first. */
static void mapped_file_free(struct vm_object *file, struct vm_object *t)
{
	vm_object_free(t);
	vm_object_free(file);
}

START_TEST(test_file_refault)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 100);
	struct vm_object *file, *t;
	struct vm_region *fr, *m;
	enum vm_fault f;

	mapped_file(e, a, 300, 300, &file, &t, &fr, &m);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 100);
	ck_assert_int_eq(stat_local(a, STAT_REFAULT_FILE), 0);
	/* page 0 was evicted and left a shadow: coming back is a refault */
	ck_assert_int_eq(vm_touch(m, 0, 0, false, &f), 0);
	ck_assert_int_eq(f, VM_REFAULT);
	ck_assert_int_eq(stat_local(a, STAT_REFAULT_FILE), 1);
	ck_assert_int_eq(stat_local(a, STAT_PGMAJFAULT), 301);
	CHECK_OK(e);
	mapped_file_free(file, t);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_dirty_pages_written_back_first)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *file = vm_object_new(e, a, false, 100);
	struct vm_region *fr;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(file, PK_FILE, 40, &fr), 0);
	for (uint32_t i = 0; i < 40; i++)
		ck_assert_int_eq(vm_touch(fr, i, 0, true, &f), 0);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 40);
	/* a limit below usage: dirty pages are cleaned, then reclaimed */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 10, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 10);
	ck_assert_int_le(stat_local(a, STAT_DIRTY), 10);
	CHECK_OK(e);
	vm_object_free(file);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_mlock_is_unevictable)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 25);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 40, &r), 0);
	for (uint32_t i = 0; i < 20; i++) {
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
		vm_mlock(r, i, true);
	}
	ck_assert_int_eq(stat_lru_local(a, LRU_UNEVICTABLE, -1), 20);
	/* 20 more: only the unlocked ones can go to swap */
	for (uint32_t i = 20; i < 40; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
	ck_assert_int_eq(stat_lru_local(a, LRU_UNEVICTABLE, -1), 20);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), 15);
	CHECK_OK(e);
	vm_object_free(t);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* vm_pin: a pinned file page stays charged while reclaim takes the
 * others; unpinned, it may go again. */
START_TEST(test_pin_is_unevictable_until_unpinned)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 50);
	struct vm_object *file, *t;
	struct vm_region *fr, *m;
	enum vm_fault f;

	mapped_file(e, a, 100, 40, &file, &t, &fr, &m);
	for (uint32_t i = 0; i < 40; i++)
		vm_pin(fr, i, true);
	ck_assert_int_eq(stat_lru_local(a, LRU_UNEVICTABLE, -1), 40);
	for (uint32_t i = 40; i < 100; i++)
		ck_assert_int_eq(vm_touch(m, i, 0, false, &f), 0);
	for (uint32_t i = 0; i < 40; i++)
		ck_assert(vm_resident(fr, i));
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 50);
	CHECK_OK(e);
	for (uint32_t i = 0; i < 40; i++)
		vm_pin(fr, i, false);
	ck_assert_int_eq(stat_lru_local(a, LRU_UNEVICTABLE, -1), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 10, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 10);
	CHECK_OK(e);
	mapped_file_free(file, t);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

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
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
	};
	struct mcg_engine *e;
	struct mcg_group *z;
	struct vm_object *t, *twin;
	struct vm_region *r;
	enum vm_fault f;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, &note_owner);
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
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
	};
	struct mcg_engine *e;
	struct mcg_group *p, *a, *b = NULL;
	struct vm_object *big, *small;
	struct vm_region *rb, *rs;
	enum vm_fault f;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, &note_owner);
	p = mk(e, "p", 30 + 2 * MCG_MKDIR_KMEM_PAGES);      /* (a and b cost p that) */
	ck_assert_int_eq(mcg_create(e, p, "a", NULL, NULL, &a), 0);
	ck_assert_int_eq(mcg_create(e, p, "b", NULL, NULL, &b), 0);
	big = vm_object_new(e, a, true, 7);
	small = vm_object_new(e, b, true, 8);
	ck_assert_int_eq(vm_region_new(big, PK_ANON, 25, &rb), 0);
	ck_assert_int_eq(vm_region_new(small, PK_ANON, 10, &rs), 0);
	for (uint32_t i = 0; i < 25; i++)
		ck_assert_int_eq(vm_touch(rb, i, 0, true, &f), 0);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_int_eq(vm_touch(rs, i, 0, true, &f), 0);
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
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
	};
	struct charge_mode mode = { .nowait = true };
	struct mcg_engine *e;
	struct mcg_group *a, *over;
	struct vm_object *big, *small;
	struct vm_region *rb, *rs;
	enum vm_fault f;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, &note_owner);
	a = mk(e, "a", 30);
	big = vm_object_new(e, a, true, 7);
	small = vm_object_new(e, a, true, 8);
	ck_assert_int_eq(vm_region_new(big, PK_ANON, 25, &rb), 0);
	ck_assert_int_eq(vm_region_new(small, PK_ANON, 10, &rs), 0);
	for (uint32_t i = 0; i < 25; i++)
		ck_assert_int_eq(vm_touch(rb, i, 0, true, &f), 0);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_int_eq(vm_touch(rs, i, 0, true, &f), 0);
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

START_TEST(test_real_anon_never_swapped)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 40);
	struct vm_object *real = vm_object_new(e, a, true, 1), *sim = vm_object_new(e, a, true, 2);
	struct vm_region *rr, *rs;
	enum vm_fault f;

	real->real = true;
	ck_assert_int_eq(vm_region_new(real, PK_ANON, 30, &rr), 0);
	ck_assert_int_eq(vm_region_new(sim, PK_ANON, 30, &rs), 0);
	for (uint32_t i = 0; i < 30; i++)
		ck_assert_int_eq(vm_touch(rr, i, 0, true, &f), 0);
	for (uint32_t i = 0; i < 30; i++)
		ck_assert_int_eq(vm_touch(rs, i, 0, true, &f), 0);
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
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
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
	for (uint32_t i = 0; i < 1280; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
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

START_TEST(test_swap_cache)
{
	struct mcg_engine *e = vm_engine(1024);
	struct mcg_group *a = mk(e, "a", 50);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;
	long outs, swapped;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 100, &r), 0);
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
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
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
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

START_TEST(test_kmem_charges)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *p = mk(e, "p", 0), *a;

	ck_assert_int_eq(mcg_create(e, p, "a", NULL, NULL, &a), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 20, NULL, NULL), 0);
	/* kernel memory counts in kmem and, as in cgroup v1, in memory */
	ck_assert_int_eq(charge_kmem(a, 0, 12, NULL), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 12);
	/* p's own: a's structures (§11.5) */
	ck_assert_int_eq(pc_usage(&p->cnt[MCG_KMEM]), 12 + MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 12);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 12);
	CHECK_OK(e);
	/* over the memory limit with nothing to reclaim: refused, nothing kept */
	ck_assert_int_eq(charge_kmem(a, 0, 10, NULL), -ENOMEM);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 12);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 12);
	uncharge_kmem(a, 12);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&p->cnt[MCG_MEM]), MCG_MKDIR_KMEM_PAGES);   /* a's structures */
	CHECK_OK(e);
	mcg_put(p);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

struct waiter {
	struct vm_region *r;
	int err;
	atomic_bool done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	enum vm_fault f;

	w->err = vm_touch(w->r, 10, 0, true, &f);
	atomic_store(&w->done, true);
	return NULL;
}

START_TEST(test_oom_kill_disable_waits)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 10);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct waiter w = { 0 };
	pthread_t th;
	enum vm_fault f;

	ck_assert_int_eq(mcg_set_oom_control(a, 1), 0);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 20, &w.r), 0);
	for (uint32_t i = 0; i < 10; i++)
		ck_assert_int_eq(vm_touch(w.r, i, 0, true, &f), 0);
	pthread_create(&th, NULL, waiter_main, &w);
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


/* Randomized: one thread faults and frees pages of several tasks and a
 * shared file while another creates groups, changes limits, moves tasks
 * and removes groups. Afterwards every invariant holds and, with all
 * memory freed, every counter is back to zero. */
#define RT_OBJS 6

struct rt {
	struct mcg_engine *e;
	pthread_mutex_t mtx;          /* the group list, and which group holds whom */
	struct mcg_group *groups[32];
	int ngroups;
	struct vm_object *obj[RT_OBJS];
	struct vm_region *reg[RT_OBJS], *map[RT_OBJS], *file;
	struct vm_object *fobj;
	atomic_bool stop;
};

static void *rt_faulter(void *arg)
{
	struct rt *rt = arg;
	unsigned seed = 99;

	for (int i = 0; i < 30000; i++) {
		unsigned r = rand_r(&seed);
		int o = (int)(r % RT_OBJS);
		enum vm_fault f;

		if (r % 7 == 0)
			vm_discard(rt->reg[o], (r >> 8) % 64, NULL);
		else if (r % 5 == 0)
			vm_touch(rt->map[o], (r >> 8) % 128, 0, r & 1, &f);
		else
			vm_touch(rt->reg[o], (r >> 8) % 64, 0, r & 2, &f);
	}
	atomic_store(&rt->stop, true);
	return NULL;
}

static void *rt_shaper(void *arg)
{
	struct rt *rt = arg;
	unsigned seed = 7;
	int made = 0;

	while (!atomic_load(&rt->stop)) {
		unsigned r = rand_r(&seed);

		pthread_mutex_lock(&rt->mtx);
		if (r % 4 == 0 && rt->ngroups < 32) {
			struct mcg_group *p = rt->groups[r % (unsigned)rt->ngroups], *g = NULL;
			char name[16];

			snprintf(name, sizeof(name), "g%d", made++);
			if (mcg_create(rt->e, p, name, NULL, NULL, &g) == 0)
				rt->groups[rt->ngroups++] = g;
		} else if (r % 4 == 1 && rt->ngroups > 1) {
			int k = 1 + (int)(r % (unsigned)(rt->ngroups - 1));
			struct mcg_group *g = rt->groups[k];

			/* a group with tasks cannot go: move them to the parent */
			for (int o = 0; o < RT_OBJS; o++) {
				struct mcg_group *og = vm_object_group(rt->obj[o]);

				if (og == g)
					vm_object_set_group(rt->obj[o], g->parent);
				mcg_put(og);
			}
			if (mcg_remove(rt->e, g) == 0) {
				mcg_put(g);
				rt->groups[k] = rt->groups[--rt->ngroups];
			}
		} else if (r % 4 == 2) {
			struct mcg_group *g = rt->groups[r % (unsigned)rt->ngroups];

			if (!mcg_is_root(g))
				mcg_set_limit(g, MCG_MEM, 16 + (long)(r >> 8) % 200, NULL, NULL);
		} else {
			vm_object_set_group(rt->obj[r % RT_OBJS], rt->groups[(r >> 8) % (unsigned)rt->ngroups]);
		}
		pthread_mutex_unlock(&rt->mtx);
	}
	return NULL;
}

START_TEST(test_random_shape_and_faults)
{
	static struct rt rt;
	pthread_t a, b;

	memset(&rt, 0, sizeof(rt));
	rt.e = vm_engine(512);
	pthread_mutex_init(&rt.mtx, NULL);
	rt.groups[0] = rt.e->root;
	mcg_get(rt.e->root);
	rt.ngroups = 1;
	rt.fobj = vm_object_new(rt.e, rt.e->root, false, 100);
	ck_assert_int_eq(vm_region_new(rt.fobj, PK_FILE, 128, &rt.file), 0);
	for (int o = 0; o < RT_OBJS; o++) {
		rt.obj[o] = vm_object_new(rt.e, rt.e->root, true, (uint32_t)o);
		ck_assert_int_eq(vm_region_new(rt.obj[o], o % 2 ? PK_SHMEM : PK_ANON, 64, &rt.reg[o]), 0);
		ck_assert_int_eq(vm_map_file(rt.obj[o], rt.file, 0, 128, &rt.map[o]), 0);
	}
	pthread_create(&a, NULL, rt_faulter, &rt);
	pthread_create(&b, NULL, rt_shaper, &rt);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	charge_drain(rt.e, NULL);
	CHECK_OK(rt.e);
	for (int o = 0; o < RT_OBJS; o++)
		vm_object_free(rt.obj[o]);
	vm_object_free(rt.fobj);
	charge_drain(rt.e, NULL);
	CHECK_OK(rt.e);
	for (int i = 0; i < rt.ngroups; i++) {
		/* what is left is the structures of the groups below it
		 * (§11.5), each charged to its parent, the root excepted */
		long cost = 0;

		for (int j = 0; j < rt.ngroups; j++)
			if (j != i && !mcg_is_root(rt.groups[j]) && !mcg_is_root(rt.groups[j]->parent) &&
			    mcg_in_subtree(rt.groups[j], rt.groups[i]))
				cost += MCG_MKDIR_KMEM_PAGES;
		ck_assert_int_eq(pc_usage(&rt.groups[i]->cnt[MCG_MEM]), cost);
		ck_assert_int_eq(pc_usage(&rt.groups[i]->cnt[MCG_MEMSW]), cost);
		ck_assert_int_eq(rstat_item(rt.groups[i], STAT_RSS) + rstat_item(rt.groups[i], STAT_CACHE), 0);
		mcg_put(rt.groups[i]);
	}
	/* the dying groups were reaped with their last pages */
	ck_assert_uint_eq(rt.e->nr_groups, (unsigned)rt.ngroups);
	mcg_engine_free(rt.e);
}
END_TEST


static uint64_t wb_test_now, wb_test_slept;

static uint64_t wb_test_clock(void *arg)
{
	return wb_test_now;
}

/* simulated time: a writeback wait is counted, not slept */
static void wb_test_sleep(uint64_t ns, void *arg)
{
	wb_test_slept += ns;
}

static const struct mcg_env_ops wb_test_env_ops = { .now = wb_test_clock, .sleep = wb_test_sleep };

static struct mcg_engine *wb_engine(bool immediate)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
		.wb_pages_per_s = 1000, .wb_latency_ns = 2000000,
		.immediate_reclaim = immediate,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	wb_test_now = 1000000000;
	return mcg_engine_new(&cfg, &(struct mcg_env){ &wb_test_env_ops, NULL }, NULL);
}

static void dirty_file(struct mcg_engine *e, struct mcg_group *a, struct vm_object **fo, int n)
{
	struct vm_region *fr;
	enum vm_fault f;

	*fo = vm_object_new(e, a, false, 100);
	ck_assert_int_eq(vm_region_new(*fo, PK_FILE, (uint32_t)n, &fr), 0);
	for (uint32_t i = 0; i < (uint32_t)n; i++)
		ck_assert_int_eq(vm_touch(fr, i, 0, true, &f), 0);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), n);
}

START_TEST(test_writeback_wait_in_limit_reclaim)
{
	struct mcg_engine *e = wb_engine(false);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *fo;
	long inflight, done, rotated, immediate;

	dirty_file(e, a, &fo, 40);
	wb_test_slept = 0;
	/* the shrink queues the dirty pages, then waits for them: in
	 * simulated time, so the wait shows as stall, not as sleep */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 10, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 10);
	wb_counts(e, &inflight, &done, &rotated, &immediate);
	ck_assert_int_ge(done, 30);
	ck_assert_uint_gt(wb_test_slept, 2000000);             /* at least the latency */
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), inflight);
	CHECK_OK(e);
	vm_object_free(fo);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_writeback_rotate_or_immediate)
{
	for (int imm = 0; imm <= 1; imm++) {
		struct mcg_engine *e = wb_engine(imm);
		struct mcg_group *a = mk(e, "a", 0);
		struct vm_object *fo;
		long inflight, done, rotated, immediate;

		dirty_file(e, a, &fo, 40);
		/* background reclaim does not wait: it only queues */
		ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 0);
		ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 40);
		ck_assert_int_eq(stat_local(a, STAT_DIRTY), 0);
		wb_counts(e, &inflight, &done, &rotated, &immediate);
		ck_assert_int_eq(inflight, 40);
		wb_test_now += 1000000;                             /* not yet: latency 2ms */
		reclaim_wb_complete(e);
		wb_counts(e, &inflight, &done, &rotated, &immediate);
		ck_assert_int_eq(done, 0);
		wb_test_now += 100000000;                           /* 40 pages at 1000/s */
		reclaim_wb_complete(e);
		wb_counts(e, &inflight, &done, &rotated, &immediate);
		ck_assert_int_eq(done, 40);
		ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
		if (imm) {
			/* reclaimed the moment they were clean */
			ck_assert_int_eq(immediate, 40);
			ck_assert_int_eq(stat_local(a, STAT_CACHE), 0);
		} else {
			/* rotated to the tail, clean, for the next reclaim */
			ck_assert_int_eq(rotated, 40);
			ck_assert_int_eq(stat_local(a, STAT_CACHE), 40);
			ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 40);
		}
		CHECK_OK(e);
		vm_object_free(fo);
		mcg_put(a);
		mcg_engine_free(e);
	}
}
END_TEST

/* Seed topic 4's immediate list: a page reclaim marked, under writeback,
 * waits on the list, where reclaim never looks; at its writeback end it
 * goes to the inactive tail and the next reclaim takes it. Nothing is ever
 * stranded there (rescued stays 0). */
START_TEST(test_writeback_immediate_list)
{
	struct mcg_engine *e;
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
		.wb_pages_per_s = 1000, .wb_latency_ns = 2000000, .immediate_list = true,
	};
	struct mcg_group *a;
	struct vm_object *fo;
	struct mcg_reclaim_counts rc;
	long inflight, done, rotated, immediate, marked, listed, rescued, scanned;

	prof_init(&cfg.prof, PROF_DEFAULT);
	wb_test_now = 1000000000;
	e = mcg_engine_new(&cfg, &(struct mcg_env){ &wb_test_env_ops, NULL }, NULL);
	a = mk(e, "a", 0);
	dirty_file(e, a, &fo, 40);
	ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 0);
	ck_assert_int_eq(stat_lru_local(a, LRU_IMMEDIATE, -1), 40);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_FILE, -1) + stat_lru_local(a, LRU_ACTIVE_FILE, -1), 0);
	wb_immediate_counts(e, &marked, &listed, &rescued);
	ck_assert_int_eq(listed, 40);
	ck_assert_int_eq(marked, 40);
	CHECK_OK(e);
	/* under writeback and on the list: a second reclaim scans nothing */
	mcg_reclaim_counts(a, &rc);
	scanned = rc.scanned[1];
	ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 0);
	mcg_reclaim_counts(a, &rc);
	ck_assert_int_eq(rc.scanned[1], scanned);
	wb_test_now += 200000000;
	reclaim_wb_complete(e);
	wb_counts(e, &inflight, &done, &rotated, &immediate);
	ck_assert_int_eq(done, 40);
	ck_assert_int_eq(rotated, 40);
	ck_assert_int_eq(stat_lru_local(a, LRU_IMMEDIATE, -1), 0);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
	CHECK_OK(e);
	ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 40);
	wb_immediate_counts(e, &marked, &listed, &rescued);
	ck_assert_int_eq(rescued, 0);
	CHECK_OK(e);
	vm_object_free(fo);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* The machine's reclaim (from the root, the machine full) never waits for
 * writeback, as the kernel's global reclaim does not: it marks the dirty
 * pages, hands them to the device and takes the clean ones. */
START_TEST(test_global_reclaim_does_not_wait)
{
	struct mcg_engine *e = wb_engine(false);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *fo, *co;
	struct vm_region *cr;
	enum vm_fault f;

	dirty_file(e, a, &fo, 2048);
	co = vm_object_new(e, a, false, 101);
	ck_assert_int_eq(vm_region_new(co, PK_FILE, 4096, &cr), 0);
	wb_test_slept = 0;
	/* 4096 clean pages more than the machine has room for: every
	 * charge past the first 2048 reclaims from the root */
	for (uint32_t i = 0; i < 4096; i++)
		ck_assert_int_eq(vm_touch(cr, i, 0, false, &f), 0);
	ck_assert_uint_eq(wb_test_slept, 0);
	ck_assert_int_gt(stat_local(a, STAT_WRITEBACK), 0);
	CHECK_OK(e);
	vm_object_free(co);
	vm_object_free(fo);
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

/* Per-node dirty limits (seed 4.4): written page cache goes to the first
 * node under 20 % dirty, then the next; clean pages keep to the toucher's
 * node. */
START_TEST(test_node_dirty_limits)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 2, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
		.node_dirty_ratio = 20,
	};
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *fo;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	a = mk(e, "a", 0);
	dirty_file(e, a, &fo, 800);
	/* 20 % of 2048 is 409.6: node 0 takes 410, node 1 the rest */
	ck_assert_int_eq(atomic_load(&e->node_dirty[0]), 410);
	ck_assert_int_eq(atomic_load(&e->node_dirty[1]), 390);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_FILE, 0), 410);
	CHECK_OK(e);
	vm_object_free(fo);
	ck_assert_int_eq(atomic_load(&e->node_dirty[0]), 0);
	ck_assert_int_eq(atomic_load(&e->node_dirty[1]), 0);
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

Suite *vm_suite(void)
{
	Suite *s = suite_create("vm");
	TCase *tc = tcase_create("pages");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_anon_faults);
	tcase_add_test(tc, test_swap_in);
	tcase_add_test(tc, test_shared_file_first_touch);
	tcase_add_test(tc, test_file_refault);
	tcase_add_test(tc, test_dirty_pages_written_back_first);
	tcase_add_test(tc, test_mlock_is_unevictable);
	tcase_add_test(tc, test_pin_is_unevictable_until_unpinned);
	tcase_add_test(tc, test_oom_kills_largest);
	tcase_add_test(tc, test_oom_kill_disable_waits);
	tcase_add_test(tc, test_random_shape_and_faults);
	tcase_add_test(tc, test_writeback_wait_in_limit_reclaim);
	tcase_add_test(tc, test_writeback_rotate_or_immediate);
	tcase_add_test(tc, test_writeback_immediate_list);
	tcase_add_test(tc, test_global_reclaim_does_not_wait);
	tcase_add_test(tc, test_reclaim_nodes_proportional);
	tcase_add_test(tc, test_node_dirty_limits);
	tcase_add_test(tc, test_soft_limit_steers_global_reclaim);
	tcase_add_test(tc, test_oom_skips_unkillable_and_nowait);
	tcase_add_test(tc, test_real_anon_never_swapped);
	tcase_add_test(tc, test_throttle_hook_refusal_stays_in_group);
	tcase_add_test(tc, test_usage_and_pressure_hooks);
	tcase_add_test(tc, test_swap_cache);
	tcase_add_test(tc, test_kmem_charges);
	tcase_add_test(tc, test_oom_limit_zero_kills_the_charger);
	suite_add_tcase(s, tc);
	return s;
}
