/* test_softlimit.c: the soft-limit order. The pick is compared with the
 * walk it replaced (every group, largest excess, the first in pre-order on
 * a tie) under changing usage, soft limits, mkdir and rmdir, and checked
 * while other threads charge. Usage is moved with charge_try and
 * charge_uncharge on the counters alone: no pages are needed to be over a
 * soft limit. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>

#include "engine/charge.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/softlimit.h"
#include "engine_fixture.h"
#include "suites.h"

static struct mcg_engine *soft_engine(unsigned version, unsigned cpus)
{
	struct mcg_machine cfg = {
		.mem_pages = 1024, .nodes = 1, .cpus = cpus, .vm_swappiness = 60, .no_stock = true,
	};

	prof_init(&cfg.prof, version);
	return mcg_engine_new(&cfg, NULL, NULL);
}

#define SOFT_OK(e) do {                                                     \
	char m_[256];                                                       \
	ck_assert_msg(check_soft_order((e), m_, sizeof(m_)) == 0, "%s", m_); \
} while (0)

static long walk_ties;           /* walks that found the largest excess twice */

/* The walk the order replaced: every group in mcg_iter's pre-order, the
 * first with the largest excess wins. */
static struct mcg_group *walk_pick(struct mcg_engine *e, long *excess)
{
	struct mcg_group *best = NULL, *g = NULL;
	bool tie = false;

	uncharge_frees_wait(e);   /* (no removed group's structures going meanwhile) */
	*excess = 0;
	while ((g = mcg_iter(e->root, g))) {
		long x = mcg_is_root(g) ? 0 : pc_usage(&g->cnt[MCG_MEM]) - atomic_load(&g->soft_limit);

		tie = x > *excess ? false : tie || (x == *excess && x > 0);
		if (x > *excess) {
			if (best)
				mcg_put(best);
			mcg_get(g);
			*excess = x;
			best = g;
		}
	}
	walk_ties += tie;
	return best;
}

/* soft_pick names the group the walk names, with the same excess. */
static void expect_pick(struct mcg_engine *e, struct mcg_group *want, long want_excess)
{
	long x = -1;
	struct mcg_group *g = soft_pick(e, &x);

	ck_assert_msg(g == want, "picked %u, want %u", g ? g->id : 0, want ? want->id : 0);
	ck_assert_int_eq(x, want_excess);
	if (g)
		mcg_put(g);
	SOFT_OK(e);
}

static void expect_walk(struct mcg_engine *e)
{
	long x;
	struct mcg_group *g = walk_pick(e, &x);

	expect_pick(e, g, x);
	if (g)
		mcg_put(g);
}

static void charge(struct mcg_group *g, long n)
{
	ck_assert_int_eq(charge_try(g, 0, n, NULL), 0);
}

START_TEST(test_pick_follows_usage_and_soft_limits)
{
	struct mcg_engine *e = soft_engine(PROF_DEFAULT, 1);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	struct mcg_group *b = fixture_group(e, e->root, "b");
	struct mcg_group *c = fixture_group(e, e->root, "c");

	expect_pick(e, NULL, 0);                 /* nobody has a soft limit */
	mcg_set_soft_limit(a, 10);
	mcg_set_soft_limit(b, 20);
	charge(a, 30);
	charge(b, 25);
	charge(c, 100);                          /* no soft limit: never picked */
	expect_pick(e, a, 20);
	charge(b, 30);                           /* b passes a */
	expect_pick(e, b, 35);
	mcg_set_soft_limit(a, 0);                /* a lower limit: 30, still behind */
	expect_pick(e, b, 35);
	charge(a, 10);
	expect_pick(e, a, 40);
	uncharge_pages(a, 35, false);           /* a's key is loose now: tightened */
	expect_pick(e, b, 35);
	mcg_set_soft_limit(b, PC_MAX);           /* b leaves */
	expect_pick(e, a, 5);
	mcg_set_soft_limit(c, 90);               /* c enters on the write alone */
	expect_pick(e, c, 10);
	mcg_set_soft_limit(e->root, 0);          /* the root is never picked */
	uncharge_pages(c, 100, false);
	uncharge_pages(a, 5, false);
	expect_pick(e, NULL, 0);
	uncharge_pages(b, 55, false);
	mcg_put(a);
	mcg_put(b);
	mcg_put(c);
	mcg_engine_free(e);
}
END_TEST

/* Equal excess: the walk's order. A parent before its children, and of
 * siblings the one made last (the children list is newest first). */
START_TEST(test_ties_follow_the_walk)
{
	struct mcg_engine *e = soft_engine(PROF_DEFAULT, 1);
	struct mcg_group *p = fixture_group(e, e->root, "p");
	struct mcg_group *k1 = fixture_group(e, p, "k1");
	struct mcg_group *k2 = fixture_group(e, p, "k2");
	struct mcg_group *q = fixture_group(e, e->root, "q");

	charge(k1, 10);
	charge(k2, 10);
	mcg_set_soft_limit(k1, 5);
	mcg_set_soft_limit(k2, 5);
	expect_pick(e, k2, 5);                   /* k2 made after k1 */
	/* p: 20 and what k1 and k2 cost it (§11.5) - its soft limit, ahead
	 * of its children */
	mcg_set_soft_limit(p, 15 + 2 * MCG_MKDIR_KMEM_PAGES);
	expect_pick(e, p, 5);
	charge(q, 5);
	mcg_set_soft_limit(q, 0);                /* q: made after p, walked first */
	expect_pick(e, q, 5);
	charge(k1, 1);                           /* k1 6 and p 6: p first */
	expect_pick(e, p, 6);
	uncharge_pages(k1, 11, false);
	uncharge_pages(k2, 10, false);
	uncharge_pages(q, 5, false);
	expect_pick(e, NULL, 0);
	mcg_put(k1);
	mcg_put(k2);
	mcg_put(p);
	mcg_put(q);
	mcg_engine_free(e);
}
END_TEST

/* A removed group still charged stays pickable, as it was on the walk
 * (dying groups are walked); once reaped it has left the order. */
START_TEST(test_removed_group_leaves_the_order)
{
	struct mcg_engine *e = soft_engine(PROF_DEFAULT, 1);
	struct mcg_group *a = fixture_group(e, e->root, "a");
	struct mcg_group *b = fixture_group(e, e->root, "b");

	mcg_set_soft_limit(a, 0);
	mcg_set_soft_limit(b, 0);
	charge(a, 20);
	charge(b, 10);
	expect_pick(e, a, 20);
	ck_assert_int_eq(mcg_remove(e, a), 0);
	expect_pick(e, a, 20);                   /* dying, still charged */
	uncharge_pages(a, 20, false);
	uncharge_reap(a);
	ck_assert(atomic_load(&a->reaped));
	SOFT_OK(e);                              /* a left at the reap, not at a pick */
	mcg_put(a);                              /* freed: the order holds no pointer */
	expect_pick(e, b, 10);
	ck_assert_int_eq(mcg_remove(e, b), 0);   /* charged: dying */
	uncharge_pages(b, 10, false);
	expect_pick(e, NULL, 0);                 /* out at 0 excess, before the reap */
	uncharge_reap(b);
	mcg_put(b);
	SOFT_OK(e);
	mcg_engine_free(e);
}
END_TEST

#define RND_GROUPS 16

struct rnd {
	struct mcg_group *g[RND_GROUPS];
	long mine[RND_GROUPS];       /* charged here directly */
	bool gone[RND_GROUPS];       /* removed by the test */
	int n, made;
	unsigned long s;
};

static unsigned rnd_next(struct rnd *r, unsigned n)
{
	r->s = r->s * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)(r->s >> 33) % n;
}

static bool rnd_has_live_child(struct rnd *r, int i)
{
	for (int j = 0; j < r->n; j++)
		if (!r->gone[j] && r->g[j]->parent == r->g[i])
			return true;
	return false;
}

/* Random charges, uncharges, soft-limit writes, mkdir and rmdir on a small
 * tree; after each, the pick is the walk's. A tenth of the steps make a
 * tie at the top on purpose. */
static void rnd_run(unsigned version, unsigned long seed)
{
	struct mcg_engine *e = soft_engine(version, 1);
	struct rnd r = { .s = seed };

	for (int step = 0; step < 4000; step++) {
		int i = r.n ? (int)rnd_next(&r, (unsigned)r.n) : -1;
		unsigned op = rnd_next(&r, 10);
		char name[16];

		if (r.n == 0 || op == 0) {
			/* mkdir under the root or a live group, into a free slot
			 * or one whose group is removed and uncharged (reaped) */
			struct mcg_group *parent = i < 0 || r.gone[i] || rnd_next(&r, 3) == 0 ?
						   e->root : r.g[i];
			int j = r.n < RND_GROUPS ? r.n++ : -1;

			for (int k = 0; j < 0 && k < RND_GROUPS; k++)
				if (r.gone[k] && atomic_load(&r.g[k]->reaped))
					j = k;
			if (j < 0)
				continue;
			if (j < r.n && r.g[j] && r.gone[j])
				mcg_put(r.g[j]);
			snprintf(name, sizeof(name), "g%d", r.made++);
			r.g[j] = fixture_group(e, parent, name);
			r.gone[j] = false;
			r.mine[j] = 0;
		} else if (op == 1) {
			if (!r.gone[i] && !rnd_has_live_child(&r, i)) {
				ck_assert_int_eq(mcg_remove(e, r.g[i]), 0);
				r.gone[i] = true;
			}
		} else if (op <= 4) {
			long n = 1 + rnd_next(&r, 8);

			if (!r.gone[i]) {         /* a removed group gets no new tasks */
				charge(r.g[i], n);
				r.mine[i] += n;
			}
		} else if (op <= 7) {
			long n = r.mine[i] ? 1 + rnd_next(&r, (unsigned)(r.mine[i] < 8 ? r.mine[i] : 8)) : 0;

			uncharge_pages(r.g[i], n, false);
			r.mine[i] -= n;
			if (r.gone[i])
				uncharge_reap(r.g[i]);   /* as the last page's free would */
		} else if (op == 8) {
			unsigned v = rnd_next(&r, 12);

			mcg_set_soft_limit(r.g[i], v == 11 ? PC_MAX : (long)v);
		} else {
			/* a tie at the top: i's excess becomes the largest one
			 * (unless charging i raised an ancestor past it) */
			long x, use = pc_usage(&r.g[i]->cnt[MCG_MEM]);
			struct mcg_group *top = walk_pick(e, &x);

			if (top && top != r.g[i] && !r.gone[i]) {
				if (use < x) {
					charge(r.g[i], x - use);
					r.mine[i] += x - use;
					use = x;
				}
				mcg_set_soft_limit(r.g[i], use - x);
			}
			if (top)
				mcg_put(top);
		}
		expect_walk(e);
	}
	for (int i = r.n - 1; i >= 0; i--) {
		uncharge_pages(r.g[i], r.mine[i], false);
		uncharge_reap(r.g[i]);
		mcg_put(r.g[i]);
	}
	uncharge_frees_wait(e);          /* (the last structures gone) */
	expect_pick(e, NULL, 0);
	mcg_engine_free(e);
}

START_TEST(test_pick_is_the_walks)
{
	rnd_run(PROF_DEFAULT, 1);
	rnd_run(PROF_DEFAULT, 2);
	rnd_run(PROF_KV(4, 19), 3);              /* use_hierarchy 0: no linked parents */
	ck_assert_int_gt(walk_ties, 1000);        /* the tie-break was exercised */
}
END_TEST

struct soft_thr {
	struct mcg_group *g;
	unsigned cpu;
};

static void *soft_charger(void *arg)
{
	struct soft_thr *t = arg;

	for (int i = 0; i < 20000; i++) {
		if (charge_try(t->g, t->cpu, 1 + i % 5, NULL) == 0)
			uncharge_pages(t->g, 1 + i % 5, false);
	}
	return NULL;
}

static void *soft_picker(void *arg)
{
	struct mcg_engine *e = arg;

	for (int i = 0; i < 20000; i++) {
		long x;
		struct mcg_group *g = soft_pick(e, &x);

		if (g)
			mcg_put(g);
	}
	return NULL;
}

/* Chargers move usage under the order while another thread picks and a
 * third writes soft limits; afterwards the order is whole and the pick is
 * the walk's. */
START_TEST(test_concurrent_charges_and_picks)
{
	struct mcg_engine *e = soft_engine(PROF_DEFAULT, 2);
	struct mcg_group *p = fixture_group(e, e->root, "p");
	struct mcg_group *a = fixture_group(e, p, "a");
	struct mcg_group *b = fixture_group(e, p, "b");
	struct soft_thr ta = { a, 0 }, tb = { b, 1 };
	pthread_t th[3];

	charge(a, 40);
	charge(b, 40);
	mcg_set_soft_limit(a, 38);
	mcg_set_soft_limit(b, 38);
	mcg_set_soft_limit(p, 78);
	pthread_create(&th[0], NULL, soft_charger, &ta);
	pthread_create(&th[1], NULL, soft_charger, &tb);
	pthread_create(&th[2], NULL, soft_picker, e);
	for (int i = 0; i < 2000; i++)
		mcg_set_soft_limit(i % 2 ? a : b, 36 + i % 5);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	SOFT_OK(e);
	expect_walk(e);
	uncharge_pages(a, 40, false);
	uncharge_pages(b, 40, false);
	expect_pick(e, NULL, 0);
	mcg_put(a);
	mcg_put(b);
	mcg_put(p);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(softlimit)
{
	Suite *s = suite_create("softlimit");
	TCase *tc = tcase_create("order");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pick_follows_usage_and_soft_limits);
	tcase_add_test(tc, test_ties_follow_the_walk);
	tcase_add_test(tc, test_removed_group_leaves_the_order);
	tcase_add_test(tc, test_pick_is_the_walks);
	tcase_add_test(tc, test_concurrent_charges_and_picks);
	suite_add_tcase(s, tc);
	return s;
}
