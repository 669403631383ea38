/* test_memcg.c: the group tree and the per-group rules of the contract. */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/charge.h"
#include "engine/engine.h"
#include "engine/names.h"
#include "engine/task.h"
#include "engine_fixture.h"
#include "suites.h"

START_TEST(test_create_lookup_remove)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b, *l;
	char path[64];

	ck_assert_int_eq(mcg_create(e, e->root, "a", NULL, NULL, NULL), -EEXIST);
	ck_assert_int_eq(mcg_create(e, e->root, "x\ny", NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(mcg_create(e, e->root, ".", NULL, NULL, NULL), -EEXIST);
	b = fixture_group(e, a, "b c");
	ck_assert_int_eq(mcg_path(e, b, path, sizeof(path)), 6);
	ck_assert_str_eq(path, "/a/b c");
	ck_assert_int_eq(mcg_path(e, e->root, path, sizeof(path)), 1);
	ck_assert_str_eq(path, "/");
	l = mcg_lookup(e, e->root, "a");
	ck_assert_ptr_eq(l, a);
	mcg_put(l);
	ck_assert_uint_eq(mcg_nr_children(e, e->root), 1);
	ck_assert_int_eq(mcg_remove(e, a), -EBUSY);          /* live child */
	ck_assert_int_eq(mcg_remove(e, e->root), -EBUSY);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert(b->removed);
	ck_assert_ptr_null(mcg_lookup(e, a, "b c"));
	ck_assert_int_eq(mcg_create(e, b, "z", NULL, NULL, NULL), -ENODEV);
	ck_assert_int_eq(mcg_rename(e, a, "renamed"), 0);
	ck_assert_ptr_null(mcg_lookup(e, e->root, "a"));
	ck_assert_int_eq(mcg_remove(e, a), 0);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_rename_rules)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");

	ck_assert_int_eq(mcg_rename(e, a, "b"), -EEXIST);
	ck_assert_int_eq(mcg_rename(e, a, "n\nl"), -EINVAL);
	ck_assert_int_eq(mcg_rename(e, a, "a"), 0);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_inheritance)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b;

	ck_assert_int_eq(mcg_set_swappiness(a, 33), 0);
	ck_assert_int_eq(mcg_set_oom_control(a, 1), 0);
	ck_assert_int_eq(mcg_set_move_charge(a, 3), 0);
	atomic_store(&a->notify_on_release, true);
	b = fixture_group(e, a, "b");
	ck_assert_uint_eq(mcg_swappiness(b), 33);
	ck_assert(atomic_load(&b->oom_kill_disable));
	ck_assert(atomic_load(&b->notify_on_release));
	ck_assert_uint_eq(atomic_load(&b->move_charge), 0);   /* not inherited */
	ck_assert_int_eq(pc_max(&b->cnt[MCG_MEM]), PC_MAX);
	ck_assert(atomic_load(&b->use_hierarchy));
	/* The root's swappiness is the simulated vm.swappiness. */
	ck_assert_uint_eq(mcg_swappiness(e->root), 60);
	ck_assert_int_eq(mcg_set_swappiness(e->root, 10), 0);
	ck_assert_uint_eq(atomic_load(&e->vm_swappiness), 10);
	ck_assert_int_eq(mcg_set_swappiness(a, 201), -EINVAL);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* §10 item 5 and the root rules of item 4. */
START_TEST(test_limit_ordering)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	long m = 25600;    /* 100M in pages */

	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, m, NULL, NULL), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEMSW, m / 2, NULL, NULL), -EINVAL);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEMSW, 2 * m, NULL, NULL), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 3 * m, NULL, NULL), -EINVAL);
	ck_assert_int_eq(pc_max(&a->cnt[MCG_MEM]), m);       /* failed write changed nothing */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEMSW, PC_MAX, NULL, NULL), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, PC_MAX, NULL, NULL), 0);
	for (int c = 0; c < MCG__NCOUNTERS; c++)
		ck_assert_int_eq(mcg_set_limit(e->root, c, PC_MAX, NULL, NULL), -EINVAL);
	ck_assert_int_eq(mcg_set_oom_control(e->root, 0), -EINVAL);
	ck_assert_int_eq(mcg_force_empty(e->root, NULL, NULL), -EINVAL);
	ck_assert_int_eq(mcg_force_empty(a, NULL, NULL), 0);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

static bool always_stop(void *arg)
{
	return true;
}

START_TEST(test_shrink_and_tcp)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a");

	/* Charges nothing can reclaim: a lower limit fails with EBUSY and the
	 * old limit stays; a pending signal gives EINTR. */
	pc_charge(&a->cnt[MCG_MEM], 100);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 50, NULL, NULL), -EBUSY);
	ck_assert_int_eq(pc_max(&a->cnt[MCG_MEM]), PC_MAX);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 50, always_stop, NULL), -EINTR);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 100, NULL, NULL), 0);
	ck_assert_int_eq(mcg_force_empty(a, always_stop, NULL), -EINTR);
	ck_assert_int_eq(mcg_force_empty(a, NULL, NULL), 0);  /* succeeds though non-zero */
	pc_uncharge(&a->cnt[MCG_MEM], 100);
	/* tcp: no reclaim, EBUSY below usage, accounting switched on. */
	ck_assert(!atomic_load(&a->tcp_active));
	pc_charge(&a->cnt[MCG_TCP], 10);
	ck_assert_int_eq(mcg_set_limit(a, MCG_TCP, 5, NULL, NULL), -EBUSY);
	ck_assert_int_eq(mcg_set_limit(a, MCG_TCP, 20, NULL, NULL), 0);
	ck_assert(atomic_load(&a->tcp_active));
	pc_uncharge(&a->cnt[MCG_TCP], 10);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_kmem_limit_by_profile)
{
	unsigned versions[] = { PROF_KV(5, 10), PROF_KV(6, 1), PROF_KV(6, 12) };
	int expect[] = { 0, -524, 0 };

	for (int i = 0; i < 3; i++) {
		struct mcg_engine *e = fixture_engine(versions[i]);
		struct mcg_group *a = fixture_group(e, e->root, "a");

		ck_assert_int_eq(mcg_set_limit(a, MCG_KMEM, 10, NULL, NULL), expect[i]);
		/* Only the old profiles have a real kmem limit. */
		ck_assert_int_eq(pc_max(&a->cnt[MCG_KMEM]), i == 0 ? 10 : PC_MAX);
		mcg_put(a);
		mcg_engine_free(e);
	}
}
END_TEST

START_TEST(test_move_charge_and_failcnt_by_profile)
{
	struct mcg_engine *e612 = fixture_engine(PROF_KV(6, 12));
	struct mcg_engine *e618 = fixture_engine(PROF_KV(6, 18));
	struct mcg_group *a = fixture_group(e612, e612->root, "a"), *b = fixture_group(e618, e618->root, "b");

	ck_assert_int_eq(mcg_set_move_charge(a, 3), 0);
	ck_assert_int_eq(mcg_set_move_charge(a, 4), -EINVAL);
	ck_assert_int_eq(mcg_set_move_charge(b, 1), -EINVAL);
	ck_assert_int_eq(mcg_set_move_charge(b, 0), 0);
	ck_assert(a->cnt[MCG_MEMSW].track_failcnt);
	ck_assert(!b->cnt[MCG_MEMSW].track_failcnt);
	ck_assert(b->cnt[MCG_MEM].track_failcnt);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e612);
	mcg_engine_free(e618);
}
END_TEST

/* [<=5.10]: use_hierarchy is a real flag, the root's defaults to 0. */
START_TEST(test_use_hierarchy_510)
{
	struct mcg_engine *e = fixture_engine(PROF_KV(5, 10));
	struct mcg_group *flat, *h, *hc;

	ck_assert(!atomic_load(&e->root->use_hierarchy));
	flat = fixture_group(e, e->root, "flat");
	ck_assert_ptr_null(flat->cnt[MCG_MEM].parent);       /* charges only itself */
	pc_charge(&flat->cnt[MCG_MEM], 7);
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 0);
	pc_uncharge(&flat->cnt[MCG_MEM], 7);
	ck_assert_int_eq(mcg_set_use_hierarchy(e->root, 1), -EBUSY);  /* has children */
	ck_assert_int_eq(mcg_set_use_hierarchy(flat, 2), -EINVAL);
	ck_assert_int_eq(mcg_set_use_hierarchy(flat, 0), 0);          /* current value */
	ck_assert_int_eq(mcg_set_use_hierarchy(flat, 1), 0);
	h = fixture_group(e, flat, "h");
	ck_assert_ptr_eq(h->cnt[MCG_MEM].parent, &flat->cnt[MCG_MEM]);
	ck_assert(atomic_load(&h->use_hierarchy));
	ck_assert_int_eq(mcg_set_use_hierarchy(h, 0), -EINVAL);       /* parent has it */
	hc = fixture_group(e, h, "c");
	pc_charge(&hc->cnt[MCG_MEM], 3);
	/* and the structures of h and c (§11.5), with the stocks they left */
	ck_assert_int_eq(pc_usage(&flat->cnt[MCG_MEM]),
			 3 + 2 * MCG_MKDIR_KMEM_PAGES + charge_stocked(e, flat));
	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_MEM]), 0);
	pc_uncharge(&hc->cnt[MCG_MEM], 3);
	ck_assert_int_eq(mcg_set_limit(flat, MCG_MEM, 100, NULL, NULL), 0);
	ck_assert_int_eq(mcg_hierarchical_limit(hc, MCG_MEM), 100);
	mcg_put(flat);
	mcg_put(h);
	mcg_put(hc);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_use_hierarchy_fixed)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);

	ck_assert(atomic_load(&e->root->use_hierarchy));
	ck_assert_int_eq(mcg_set_use_hierarchy(e->root, 1), 0);
	ck_assert_int_eq(mcg_set_use_hierarchy(e->root, 0), -EINVAL);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_dying_group_keeps_charges)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, a, "b");

	pc_charge(&b->cnt[MCG_MEM], 5);
	stat_add(b, STAT_CACHE, 5);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert_ptr_null(mcg_lookup(e, a, "b"));
	ck_assert_uint_eq(mcg_nr_children(e, a), 0);
	/* hidden, but still counting in its ancestors and their totals, its
	 * structures too (§11.5: they go when it is reaped) */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 5 + MCG_MKDIR_KMEM_PAGES + charge_stocked(e, a));
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(rstat_item(a, STAT_CACHE), 5);
	ck_assert_int_eq(mcg_remove(e, a), 0);
	ck_assert_uint_eq(e->nr_groups, 3);                 /* both still hold an ID */
	ck_assert_int_eq(mcg_create(e, e->root, "a", NULL, NULL, NULL), 0);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* §11.5: a child's structures are kernel memory of its parent, charged
 * through the stock (the parent shows the batch), never to the root; they
 * fail mkdir under a parent that cannot take them, pin a parent's limit,
 * and go when the child is reaped. */
/* An environment that cannot wait for the host's grace periods (none
 * given, as replay's and the fuzzers' have no workers either) frees a
 * reaped child's structures at once; so does one whose wait fails. */
static int test_no_grace(void *arg)
{
	(void)arg;
	return -ENOSYS;
}

/* Every id held, some by a removed group a reference keeps (reaped, so no
 * longer counted): a mkdir fails with the profile's errno, it does not
 * search for a free id for ever; the id comes back when the group is
 * freed. */
START_TEST(test_ids_held_by_a_freed_later_group)
{
	struct mcg_engine *e = fixture_engine(PROF_KV(6, 12));
	struct mcg_group *held = NULL;
	char name[32];

	for (unsigned i = 1; i < MCG_ID_MAX; i++) {       /* with the root: all */
		snprintf(name, sizeof(name), "g%u", i);
		ck_assert_int_eq(mcg_create(e, e->root, name, NULL, NULL, i == 1 ? &held : NULL), 0);
	}
	ck_assert_int_eq(mcg_create(e, e->root, "over", NULL, NULL, NULL), -EBUSY);
	ck_assert_int_eq(mcg_remove(e, held), 0);
	uncharge_frees_wait(e);
	ck_assert(held->reaped);                          /* not counted, id held */
	ck_assert_int_eq(mcg_create(e, e->root, "over", NULL, NULL, NULL), -EBUSY);
	mcg_put(held);                                    /* freed: its id back */
	ck_assert_int_eq(mcg_create(e, e->root, "over", NULL, NULL, NULL), 0);
	CHECK_OK(e);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_structures_freed_at_once_without_grace)
{
	struct mcg_machine cfg = { .mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60 };

	for (int k = 0; k < 2; k++) {
		struct mcg_env_ops ops = *env_real.ops;
		struct mcg_env env = { &ops, NULL };
		struct mcg_engine *e;
		struct mcg_group *a, *b;

		ops.grace = k == 0 ? NULL : test_no_grace;
		prof_init(&cfg.prof, PROF_KV(6, 18));
		e = mcg_engine_new(&cfg, &env, NULL);
		a = fixture_group(e, e->root, "a");
		b = fixture_group(e, a, "b");
		ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), MCG_MKDIR_KMEM_PAGES);
		ck_assert_int_eq(mcg_remove(e, b), 0);
		if (k == 1)              /* (a worker waited for nothing) */
			uncharge_frees_wait(e);
		ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 0);
		ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 0, NULL, NULL), 0);
		CHECK_OK(e);
		mcg_put(a);
		mcg_put(b);
		mcg_engine_free(e);
	}
}
END_TEST

/* A grace period that ends when the test says so: what the engine does
 * before it, and after, without a race with the host's. */
static atomic_bool grace_open = true;

static int test_gated_grace(void *arg)
{
	(void)arg;
	while (!atomic_load(&grace_open))
		usleep(1000);
	return 0;
}

START_TEST(test_mkdir_charges_parent)
{
	struct mcg_machine cfg = {
		.mem_pages = 262144, .swap_pages = 0, .nodes = 2, .cpus = 2, .vm_swappiness = 60,
	};
	struct mcg_env_ops ops = *env_real.ops;
	struct mcg_env env = { &ops, NULL };
	struct mcg_engine *e, *old = fixture_engine(PROF_KV(5, 8));
	struct mcg_group *a, *b, *c, *d, *o;
	unsigned long f0;
	uint32_t idx;

	ops.grace = test_gated_grace;
	prof_init(&cfg.prof, PROF_KV(6, 18));
	e = mcg_engine_new(&cfg, &env, NULL);
	a = fixture_group(e, e->root, "a");

	ck_assert_int_eq(pc_usage(&e->root->cnt[MCG_KMEM]), 0);     /* the root pays nothing */
	ck_assert_int_eq(atomic_load(&e->root->kmem_local), 0);
	b = fixture_group(e, a, "b");
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]) * PC_PAGE_SIZE, 20480);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]) * PC_PAGE_SIZE, 262144);   /* a 64-page batch */
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 64);
	ck_assert_int_eq(charge_stocked(e, a), 64 - MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	/* a limit below what the children cost: EBUSY (only the stock goes) */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, MCG_MKDIR_KMEM_PAGES - 1, NULL, NULL), -EBUSY);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, MCG_MKDIR_KMEM_PAGES, NULL, NULL), 0);
	/* no room for another child: ENOMEM, failcnt rises, nothing made */
	f0 = mcg_failcnt(a, MCG_MEM);
	ck_assert_int_eq(mcg_create(e, a, "b2", NULL, NULL, NULL), -ENOMEM);
	ck_assert_uint_gt(mcg_failcnt(a, MCG_MEM), f0);
	ck_assert_ptr_null(mcg_lookup(e, a, "b2"));
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), MCG_MKDIR_KMEM_PAGES);
	CHECK_OK(e);
	/* limit 0 */
	c = fixture_group(e, e->root, "c");
	ck_assert_int_eq(mcg_set_limit(c, MCG_MEM, 0, NULL, NULL), 0);
	f0 = mcg_failcnt(c, MCG_MEM);
	ck_assert_int_eq(mcg_create(e, c, "x", NULL, NULL, NULL), -ENOMEM);
	ck_assert_uint_gt(mcg_failcnt(c, MCG_MEM), f0);
	ck_assert_uint_eq(mcg_nr_children(e, c), 0);
	ck_assert_int_eq(pc_usage(&c->cnt[MCG_MEM]), 0);
	/* under oom_kill_disable the charge fails at once, it never waits */
	ck_assert_int_eq(mcg_set_oom_control(c, 1), 0);
	ck_assert_int_eq(mcg_create(e, c, "y", NULL, NULL, NULL), -ENOMEM);
	ck_assert_uint_eq(mcg_nr_children(e, c), 0);
	/* an existing name is EEXIST before any charge */
	f0 = mcg_failcnt(a, MCG_MEM);
	ck_assert_int_eq(mcg_create(e, a, "b", NULL, NULL, NULL), -EEXIST);
	ck_assert_uint_eq(mcg_failcnt(a, MCG_MEM), f0);
	/* given back two of the host's grace periods after the child is
	 * reaped: until then they pin a's limit, as a dying memcg's
	 * structures do on the kernel */
	atomic_store(&grace_open, false);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert(!b->linked);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), MCG_MKDIR_KMEM_PAGES);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 0, NULL, NULL), -EBUSY);
	atomic_store(&grace_open, true);
	uncharge_frees_wait(e);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 0, NULL, NULL), 0);
	CHECK_OK(e);
	/* a dying child keeps its structures until its last page goes */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 100, NULL, NULL), 0);
	d = fixture_group(e, a, "d");
	idx = (uint32_t)charge_new_page(d, 0, 0, PK_FILE, 1, 0, NULL);
	ck_assert_int_eq(mcg_remove(e, d), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), MCG_MKDIR_KMEM_PAGES);
	charge_drain(e, NULL);
	charge_free_page(e, idx, NULL);
	ck_assert(!d->linked);
	uncharge_frees_wait(e);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	/* before 5.9 the structures were not accounted */
	o = fixture_group(old, old->root, "o");
	mcg_put(fixture_group(old, o, "p"));
	ck_assert_int_eq(pc_usage(&o->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&o->cnt[MCG_MEM]), 0);
	mcg_put(a);
	mcg_put(b);
	mcg_put(c);
	mcg_put(d);
	mcg_put(o);
	mcg_engine_free(e);
	mcg_engine_free(old);
}
END_TEST

static char released[8][64];
static int nreleased;

static void on_release(const char *path, void *arg)
{
	snprintf(released[nreleased++ % 8], sizeof(released[0]), "%s", path);
}

START_TEST(test_release_rule)
{
	struct mcg_machine cfg = { .mem_pages = 1024, .nodes = 1, .cpus = 1, .vm_swappiness = 60 };
	static const struct mcg_owner_ops ops = { .release = on_release };
	struct mcg_engine *e;
	struct mcg_group *a, *b;
	int drop;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, &(struct mcg_owner){ &ops, NULL });
	nreleased = 0;
	a = fixture_group(e, e->root, "a");
	atomic_store(&a->notify_on_release, true);
	b = fixture_group(e, a, "b");
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert_int_eq(nreleased, 1);
	ck_assert_str_eq(released[0], "/a");
	/* a task leaving makes it empty again */
	ck_assert_int_eq(task_attach(e, 4242, 4242, a, 9, &drop), 0);
	ck_assert_int_eq(drop, -1);
	ck_assert_int_eq(nreleased, 1);
	ck_assert_int_eq(task_exit(e, 4242, 9), 0);
	ck_assert_int_eq(nreleased, 2);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_id_exhaustion)
{
	unsigned versions[] = { PROF_KV(6, 11), PROF_KV(6, 12) };
	int expect[] = { -ENOSPC, -EBUSY };

	for (int v = 0; v < 2; v++) {
		struct mcg_engine *e = fixture_engine(versions[v]);
		char name[16];
		int made = 1, err = 0;

		/* 256 parents with up to 255 children each: IDs run out first. */
		for (int i = 0; i < 256 && !err; i++) {
			struct mcg_group *p = NULL;

			snprintf(name, sizeof(name), "p%d", i);
			if ((err = mcg_create(e, e->root, name, NULL, NULL, &p)))
				break;
			made++;
			for (int j = 0; j < 255 && !err; j++) {
				snprintf(name, sizeof(name), "c%d", j);
				if (!(err = mcg_create(e, p, name, NULL, NULL, NULL)))
					made++;
			}
			mcg_put(p);
		}
		ck_assert_int_eq(err, expect[v]);
		ck_assert_int_eq(made, MCG_ID_MAX);
		mcg_engine_free(e);
	}
}
END_TEST

START_TEST(test_ids_recycle_with_generation)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b, *l;
	unsigned id = a->id, gen = a->gen, chunks = 0;
	bool reused = false;

	ck_assert_uint_eq(e->root->id, 1);
	ck_assert_uint_ne(id, 1);
	l = mcg_by_id(e, id);
	ck_assert_ptr_eq(l, a);
	mcg_put(l);
	ck_assert_ptr_null(mcg_by_id(e, 0));
	ck_assert_ptr_null(mcg_by_id(e, MCG_ID_MAX + 1));
	/* a removed group keeps its id while referenced */
	ck_assert_int_eq(mcg_remove(e, a), 0);
	l = mcg_by_id(e, id);
	ck_assert_ptr_eq(l, a);
	mcg_put(l);
	mcg_put(a);
	ck_assert_ptr_null(mcg_by_id(e, id));
	/* ids are handed out cyclically; a reused id has a newer generation
	 * (one counter for every id) */
	for (unsigned i = 0; i < MCG_ID_MAX + 2 && !reused; i++) {
		ck_assert_int_eq(mcg_create(e, e->root, "x", NULL, NULL, &b), 0);
		if (b->id == id) {
			ck_assert_uint_gt(b->gen, gen);
			reused = true;
		}
		ck_assert_int_eq(mcg_remove(e, b), 0);
		mcg_put(b);
	}
	ck_assert(reused);
	/* the id table holds chunks for live ids only: the root's, now */
	for (unsigned c = 0; c < MCG_ID_CHUNKS; c++)
		chunks += atomic_load(&e->by_id[c]) != NULL;
	ck_assert_uint_eq(chunks, 1);
	ck_assert_uint_eq(e->by_id_live[0], 1);
	mcg_engine_free(e);
}
END_TEST

/* The subtree walk: pre-order, every group once, and a caller may stop at
 * any step. */
START_TEST(test_iter_walks_subtree)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, a, "b");
	struct mcg_group *c = fixture_group(e, a, "c"), *d = fixture_group(e, e->root, "d");
	struct mcg_group *want[] = { e->root, d, a, c, b }, *g = NULL;
	int n = 0;

	/* children are kept newest first: d before a, c before b */
	while ((g = mcg_iter(e->root, g))) {
		ck_assert_int_lt(n, 5);
		ck_assert_ptr_eq(g, want[n]);
		n++;
	}
	ck_assert_int_eq(n, 5);
	n = 0;
	while ((g = mcg_iter(a, g)))
		n++;
	ck_assert_int_eq(n, 3);                       /* a, c, b */
	g = mcg_iter(a, NULL);
	g = mcg_iter(a, g);
	ck_assert_ptr_eq(g, c);
	mcg_put(g);                                   /* an early stop */
	ck_assert_int_eq(atomic_load(&c->refs), 2);   /* the tree's and ours */
	mcg_put(b);
	mcg_put(c);
	mcg_put(d);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* The name index (names.c): one flat directory of thousands and a second
 * parent with the same names, found, renamed and removed in creation order
 * (each removal unlinking from the far end of the children list), the
 * index agreeing with the tree throughout and empty again at the end. */
START_TEST(test_names_flat_directory)
{
	enum { N = 5000 };
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *p = fixture_group(e, e->root, "p"), *q = fixture_group(e, e->root, "q");
	static struct mcg_group *g[N], *h[N];
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		g[i] = fixture_group(e, p, name);
		h[i] = fixture_group(e, q, name);
	}
	ck_assert_uint_eq(names_count(e), 2 + 2 * N);
	CHECK_OK(e);
	for (int i = 0; i < N; i += 7) {
		struct mcg_group *l;

		snprintf(name, sizeof(name), "g%d", i);
		ck_assert_ptr_eq(l = mcg_lookup(e, p, name), g[i]);
		mcg_put(l);
		ck_assert_ptr_eq(l = mcg_lookup(e, q, name), h[i]);
		mcg_put(l);
		ck_assert_int_eq(mcg_create(e, p, name, NULL, NULL, NULL), -EEXIST);
	}
	ck_assert_ptr_null(mcg_lookup(e, p, "g5000"));
	/* a rename moves the entry: the old name is free, the new one taken */
	ck_assert_int_eq(mcg_rename(e, g[3], "renamed"), 0);
	ck_assert_ptr_null(mcg_lookup(e, p, "g3"));
	ck_assert_int_eq(mcg_rename(e, g[4], "renamed"), -EEXIST);
	ck_assert_int_eq(mcg_rename(e, g[4], "g3"), 0);
	ck_assert_int_eq(mcg_rename(e, g[3], "g4"), 0);
	CHECK_OK(e);
	/* a removed name is free at once, and can be made again */
	ck_assert_int_eq(mcg_remove(e, g[0]), 0);
	ck_assert_ptr_null(mcg_lookup(e, p, "g0"));
	ck_assert_int_eq(mcg_create(e, p, "g0", NULL, NULL, NULL), 0);
	mcg_put(g[0]);
	ck_assert_ptr_nonnull(g[0] = mcg_lookup(e, p, "g0"));
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(mcg_remove(e, g[i]), 0);
		ck_assert_int_eq(mcg_remove(e, h[i]), 0);
		mcg_put(g[i]);
		mcg_put(h[i]);
		if (i % 1000 == 999) {
			uncharge_frees_wait(e);   /* (the checker wants no worker busy) */
			CHECK_OK(e);
		}
	}
	ck_assert_uint_eq(names_count(e), 2);
	ck_assert_uint_eq(mcg_nr_children(e, p), 0);
	CHECK_OK(e);
	mcg_put(p);
	mcg_put(q);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(memcg)
{
	Suite *s = suite_create("memcg");
	TCase *tc = tcase_create("tree");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_lookup_remove);
	tcase_add_test(tc, test_rename_rules);
	tcase_add_test(tc, test_inheritance);
	tcase_add_test(tc, test_limit_ordering);
	tcase_add_test(tc, test_shrink_and_tcp);
	tcase_add_test(tc, test_kmem_limit_by_profile);
	tcase_add_test(tc, test_move_charge_and_failcnt_by_profile);
	tcase_add_test(tc, test_use_hierarchy_510);
	tcase_add_test(tc, test_use_hierarchy_fixed);
	tcase_add_test(tc, test_dying_group_keeps_charges);
	tcase_add_test(tc, test_mkdir_charges_parent);
	tcase_add_test(tc, test_structures_freed_at_once_without_grace);
	tcase_add_test(tc, test_ids_held_by_a_freed_later_group);
	tcase_add_test(tc, test_release_rule);
	tcase_add_test(tc, test_id_exhaustion);
	tcase_add_test(tc, test_ids_recycle_with_generation);
	tcase_add_test(tc, test_iter_walks_subtree);
	tcase_add_test(tc, test_names_flat_directory);
	suite_add_tcase(s, tc);
	return s;
}
