/* test_vm.c: simulated tasks and files: faults, the first toucher of a
 * shared file, refaults, mlock and pins, kernel memory, and a random
 * shape of objects faulted from several threads. */
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
	fill_range(r, 20, 40);
	ck_assert_int_eq(stat_lru_local(a, LRU_UNEVICTABLE, -1), 20);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), 15);
	CHECK_OK(e);
	vm_object_free(t);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* The machine full of pages nothing can reclaim: a new page for the root
 * finds none and fails, and its back-out leaves the root's counters as
 * they were (the root itself is never charged, so nothing is uncharged). */
START_TEST(test_root_page_backout_charges_nothing)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_region *r;
	enum vm_fault f;
	long mem, memsw;
	uint32_t i;

	ck_assert_int_eq(vm_region_new(t, PK_ANON, 4096, &r), 0);
	for (i = 0; i < 4096 && vm_touch(r, i, 0, true, &f) == 0; i++)
		vm_mlock(r, i, true);
	ck_assert_uint_eq(i, 4096);                 /* every page of the machine */
	/* (the root's counters hold its children's charges) */
	mem = pc_usage(&e->root->cnt[MCG_MEM]);
	memsw = pc_usage(&e->root->cnt[MCG_MEMSW]);
	ck_assert_int_eq(charge_new_page(e->root, 0, 0, PK_ANON, 0, 0, NULL), -ENOMEM);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), mem);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEMSW]), memsw);
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
	uncharge_frees_wait(rt.e);       /* removed groups' structures gone */
	charge_drain(rt.e, NULL);
	CHECK_OK(rt.e);
	for (int o = 0; o < RT_OBJS; o++)
		vm_object_free(rt.obj[o]);
	vm_object_free(rt.fobj);
	charge_drain(rt.e, NULL);
	uncharge_frees_wait(rt.e);       /* (groups reaped with their last pages) */
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

UNIT_SUITE(vm)
{
	Suite *s = suite_create("vm");
	TCase *tc = tcase_create("pages");

	tcase_add_test(tc, test_anon_faults);
	tcase_add_test(tc, test_shared_file_first_touch);
	tcase_add_test(tc, test_file_refault);
	tcase_add_test(tc, test_mlock_is_unevictable);
	tcase_add_test(tc, test_root_page_backout_charges_nothing);
	tcase_add_test(tc, test_pin_is_unevictable_until_unpinned);
	tcase_add_test(tc, test_random_shape_and_faults);
	tcase_add_test(tc, test_kmem_charges);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
