/* test_zone.c: the machine's zones (zone.c, seed topic 5) in an engine
 * without workers, so that kswapd runs only when the test steps it:
 * 2.6.3's watermarks from min_free_kbytes, the incremental min that keeps
 * a fallback zone's reserve, kswapd woken at pages_low and balancing every
 * zone to pages_high, and direct reclaim in each policy. */
#include <check.h>
#include <stdint.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/reclaim.h"
#include "engine/vm.h"
#include "vm_fixture.h"
#include "suites.h"

static uint64_t zt_clock(void *arg)
{
	(void)arg;
	return 1000000000ull;
}

static void zt_sleep(uint64_t ns, void *arg)
{
	(void)ns;
	(void)arg;
}

/* no start_worker: kswapd is stepped by the test */
static const struct mcg_env_ops zt_env_ops = { .now = zt_clock, .sleep = zt_sleep };

static const struct mcg_env zt_env = { &zt_env_ops, NULL };

/* mem=64M as seed 004 booted: NORMAL 48 MiB (node 0), DMA 16 MiB (node 1),
 * in env (NULL: the real one, kswapd a thread) */
static struct mcg_engine *zt_engine_in(enum mcg_zone_policy policy, long min_free,
				       const struct mcg_env *env)
{
	struct mcg_machine cfg = {
		.mem_pages = 16384, .nodes = 2, .node_pages = { 12288, 4096 }, .cpus = 1,
		.vm_swappiness = 60, .no_stock = true, .zones = policy,
		.min_free_pages = min_free,
	};
	struct mcg_engine *e;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, env, NULL);
	ck_assert_ptr_nonnull(e);
	return e;
}

static struct mcg_engine *zt_engine(enum mcg_zone_policy policy, long min_free)
{
	return zt_engine_in(policy, min_free, &zt_env);
}

static struct mcg_zone_counts zt_zone(struct mcg_engine *e, unsigned n)
{
	struct mcg_zone_counts zc;

	mcg_zone_counts(e, n, &zc);
	return zc;
}

/* A file in group a of the small machine, its pages touched in order from
 * next (zt_touch). */
struct zt {
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *o;
	struct vm_region *r;
	uint32_t next;
};

static void zt_setup_in(struct zt *z, enum mcg_zone_policy policy, const struct mcg_env *env)
{
	z->e = zt_engine_in(policy, 0, env);
	z->a = mk(z->e, "a", 0);
	z->o = vm_object_new(z->e, z->a, false, 1);
	ck_assert_ptr_nonnull(z->o);
	ck_assert_int_eq(vm_region_new(z->o, PK_FILE, 1u << 20, &z->r), 0);
	z->next = 0;
}

static void zt_setup(struct zt *z, enum mcg_zone_policy policy)
{
	zt_setup_in(z, policy, &zt_env);
}

static void zt_touch(struct zt *z, long n)
{
	enum vm_fault f;

	while (n-- > 0)
		ck_assert_int_eq(vm_touch(z->r, z->next++, 0, false, &f), 0);
}

static void zt_teardown(struct zt *z)
{
	CHECK_OK(z->e);
	vm_object_free(z->o);
	mcg_put(z->a);
	mcg_engine_free(z->e);
}

/* 2.6.3's setup_per_zone_pages_min on 64 MiB: min_free_kbytes =
 * sqrt(65536 × 16) = 1024 KiB, 256 pages, shared 3:1; low = 2 min, high =
 * 3 min; reclaim_batch 24 and 8 of 32. */
START_TEST(test_zone_watermarks)
{
	struct mcg_engine *e = zt_engine(MCG_ZONES_FIXED, 0);
	struct mcg_zone_counts n = zt_zone(e, 0), d = zt_zone(e, 1);

	ck_assert_int_eq(n.size, 12288);
	ck_assert_int_eq(n.min, 192);
	ck_assert_int_eq(n.low, 384);
	ck_assert_int_eq(n.high, 576);
	ck_assert_int_eq(n.batch, 24);
	ck_assert_int_eq(d.min, 64);
	ck_assert_int_eq(d.low, 128);
	ck_assert_int_eq(d.high, 192);
	ck_assert_int_eq(d.batch, 8);
	mcg_engine_free(e);
	/* an explicit min_free */
	e = zt_engine(MCG_ZONES_BATCHING, 1024);
	ck_assert_int_eq(zt_zone(e, 0).min, 768);
	ck_assert_int_eq(zt_zone(e, 1).high, 768);
	mcg_engine_free(e);
	/* a zone of 384 pages in 16384: 0.75 of 32, raised to 4 */
	{
		struct mcg_machine cfg = {
			.mem_pages = 16384, .nodes = 2, .node_pages = { 16000, 384 }, .cpus = 1,
			.zones = MCG_ZONES_BATCHING,
		};

		prof_init(&cfg.prof, PROF_DEFAULT);
		e = mcg_engine_new(&cfg, &(struct mcg_env){ &zt_env_ops, NULL }, NULL);
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(zt_zone(e, 0).batch, 31);
		ck_assert_int_eq(zt_zone(e, 1).batch, 4);
		mcg_engine_free(e);
	}
	/* without zones, no watermarks */
	e = zt_engine(MCG_ZONES_OFF, 0);
	ck_assert_int_eq(zt_zone(e, 0).min, 0);
	ck_assert_int_eq(mcg_kswapd_step(e), 0);
	mcg_engine_free(e);
}
END_TEST

/* Allocations take NORMAL down to its low mark, then fall back to DMA only
 * while DMA keeps the incremental min (1 + NORMAL's low + its own); then
 * kswapd is woken, and the min marks are the limit, the same way; then
 * the allocating thread reclaims. */
START_TEST(test_zone_fallback_keeps_reserve)
{
	struct zt z;

	zt_setup(&z, MCG_ZONES_FIXED);
	zt_touch(&z, 12288 - 384);
	ck_assert_int_eq(zt_zone(z.e, 0).free, 384);
	ck_assert_int_eq(zt_zone(z.e, 1).free, 4096);
	ck_assert_int_eq(zt_zone(z.e, 0).kswapd_wakeups, 0);
	/* DMA down to 1 + 384 + 128 - 1 */
	zt_touch(&z, 4096 - 512);
	ck_assert_int_eq(zt_zone(z.e, 0).free, 384);
	ck_assert_int_eq(zt_zone(z.e, 1).free, 512);
	ck_assert_int_eq(zt_zone(z.e, 0).kswapd_wakeups, 0);
	/* the low pass fails: kswapd woken, NORMAL above its min gives */
	zt_touch(&z, 1);
	ck_assert_int_eq(zt_zone(z.e, 0).kswapd_wakeups, 1);
	ck_assert_int_eq(zt_zone(z.e, 0).free, 383);
	zt_touch(&z, 383 - 192);
	ck_assert_int_eq(zt_zone(z.e, 0).free, 192);
	/* DMA down to 1 + 192 + 64 - 1 */
	zt_touch(&z, 512 - 256);
	ck_assert_int_eq(zt_zone(z.e, 1).free, 256);
	ck_assert_int_eq(zt_zone(z.e, 0).allocstall, 0);
	ck_assert_int_eq(zt_zone(z.e, 0).kswapd_wakeups, 1);  /* still wanted */
	/* every zone at its min: the next page needs direct reclaim */
	zt_touch(&z, 1);
	ck_assert_int_eq(zt_zone(z.e, 0).allocstall, 1);
	ck_assert_int_ge(zt_zone(z.e, 0).steal_direct, 32);
	zt_teardown(&z);
}
END_TEST

/* kswapd, once woken, balances every zone to pages_high and sleeps. */
START_TEST(test_zone_kswapd_balances_to_high)
{
	static const enum mcg_zone_policy pol[] = {
		MCG_ZONES_FIXED, MCG_ZONES_BATCHING, MCG_ZONES_ACCUMULATE,
	};

	for (unsigned p = 0; p < 3; p++) {
		struct zt z;
		int passes = 0;

		zt_setup(&z, pol[p]);
		ck_assert_int_eq(mcg_kswapd_step(z.e), 0);        /* asleep */
		zt_touch(&z, 16384 - 384 - 512 + 1);                /* one wake */
		ck_assert_int_eq(zt_zone(z.e, 0).kswapd_wakeups, 1);
		ck_assert_int_lt(zt_zone(z.e, 0).free, zt_zone(z.e, 0).high);
		while (mcg_kswapd_step(z.e))
			ck_assert_int_le(++passes, 1000);   /* it ends */
		ck_assert_int_ge(passes, 1);
		ck_assert_int_ge(zt_zone(z.e, 0).free, zt_zone(z.e, 0).high);
		ck_assert_int_ge(zt_zone(z.e, 1).free, zt_zone(z.e, 1).high);
		ck_assert_int_eq(zt_zone(z.e, 0).pageoutrun, 1);
		ck_assert_int_gt(zt_zone(z.e, 0).steal_kswapd, 0);
		ck_assert_int_eq(zt_zone(z.e, 0).steal_direct, 0);
		ck_assert_int_eq(mcg_kswapd_step(z.e), 0);        /* asleep again */
		zt_teardown(&z);
	}
}
END_TEST

/* Direct reclaim, kswapd never run: 2.6.3 takes its 32 pages from the
 * first zone, which has them; batching asks every zone for its batch, 24
 * and 8; the accumulators scan each zone by its size. */
/* A machine of policy filled to every zone's min and then by 40 clusters
 * more, kswapd never stepped: NORMAL's and DMA's counts (allocstall in
 * NORMAL's, the machine's). */
static void zt_direct(enum mcg_zone_policy policy, struct mcg_zone_counts *n,
		      struct mcg_zone_counts *d)
{
	struct zt z;

	zt_setup(&z, policy);
	zt_touch(&z, 16384 - 384 - 512 + 1 + 191 + 256 + 40 * 32);
	*n = zt_zone(z.e, 0);
	*d = zt_zone(z.e, 1);
	zt_teardown(&z);
	ck_assert_int_ge(n->allocstall, 10);
}

START_TEST(test_zone_direct_reclaim_policies)
{
	struct mcg_zone_counts n, d;

	zt_direct(MCG_ZONES_FIXED, &n, &d);
	ck_assert_int_ge(n.steal_direct, 32 * n.allocstall);
	ck_assert_int_eq(d.steal_direct, 0);

	zt_direct(MCG_ZONES_BATCHING, &n, &d);
	ck_assert_int_eq(n.steal_direct, 24 * n.allocstall);
	ck_assert_int_eq(d.steal_direct, 8 * n.allocstall);

	zt_direct(MCG_ZONES_ACCUMULATE, &n, &d);
	ck_assert_int_gt(d.steal_direct, 0);
	/* about 3:1, as the zones' sizes */
	ck_assert_int_ge(n.steal_direct, 2 * d.steal_direct);
	ck_assert_int_le(n.steal_direct, 4 * d.steal_direct);
}
END_TEST

/* kswapd's thread has nothing to do: every wake's balance has ended */
static bool zt_kswapd_idle(struct mcg_engine *e)
{
	struct mcg_zone_counts zc = zt_zone(e, 0);

	return zc.kswapd_wakeups == zc.pageoutrun && zc.pageoutrun == zc.balances_done;
}

/* With workers (the real environment), kswapd is a thread: started by the
 * first wake, it balances the zones while the test waits, and stops with
 * the engine. Its balance runs beside the allocations that woke it, so it
 * may end short of pages_high (2.6.3's kswapd sleeps after its priority-1
 * pass, balanced or not); test_zone_kswapd_balances_to_high checks the
 * balance itself, in step mode. */
START_TEST(test_zone_kswapd_worker)
{
	struct zt z;
	long free0, free1;
	int waited = 0;

	zt_setup_in(&z, MCG_ZONES_BATCHING, NULL);
	zt_touch(&z, 16384 - 384 - 512 + 1);
	ck_assert_int_ge(zt_zone(z.e, 0).kswapd_wakeups, 1);
	free0 = zt_zone(z.e, 0).free;
	free1 = zt_zone(z.e, 1).free;
	/* (a wait for a thread, not a timing: 10 s is a hang) */
	while (!zt_kswapd_idle(z.e) && waited++ < 10000)
		usleep(1000);
	ck_assert(zt_kswapd_idle(z.e));
	ck_assert_int_ge(zt_zone(z.e, 0).balances_done, 1);
	/* it reclaimed from both zones, and nothing allocated since */
	ck_assert_int_gt(zt_zone(z.e, 0).steal_kswapd, 0);
	ck_assert_int_ge(zt_zone(z.e, 0).free, free0);
	ck_assert_int_ge(zt_zone(z.e, 1).free, free1);
	ck_assert_int_gt(zt_zone(z.e, 1).steal_kswapd, 0);
	/* the machine keeps working beside it; then it stops for good */
	zt_touch(&z, 2000);
	mcg_kswapd_stop(z.e);
	zt_touch(&z, 2000);
	zt_teardown(&z);
}
END_TEST

UNIT_SUITE(zone)
{
	Suite *s = suite_create("zone");
	TCase *tc = tcase_create("zone");

	tcase_add_test(tc, test_zone_watermarks);
	tcase_add_test(tc, test_zone_fallback_keeps_reserve);
	tcase_add_test(tc, test_zone_kswapd_balances_to_high);
	tcase_add_test(tc, test_zone_direct_reclaim_policies);
	tcase_add_test(tc, test_zone_kswapd_worker);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
