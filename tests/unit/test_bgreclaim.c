/* test_bgreclaim.c: watermark rules and background reclaim. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "engine/bgreclaim.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/uncharge.h"
#include "engine/vm.h"
#include "engine_fixture.h"
#include "suites.h"

#define MB(x) ((long)(x) * 256)       /* pages */

static struct mcg_engine *bgr_engine(bool watermarks)
{
	struct mcg_machine cfg = {
		.mem_pages = 8192, .nodes = 1, .cpus = 2, .vm_swappiness = 60,
		.watermarks = watermarks, .no_stock = true,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, NULL);
}

START_TEST(test_automatic_watermarks)
{
	struct mcg_engine *e = bgr_engine(false);
	struct mcg_group *a = NULL;

	mcg_create(e, e->root, "a", NULL, NULL, &a);
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH), PC_MAX);       /* no limit, nothing runs */
	ck_assert_int_eq(bgr_wmark(e->root, BGR_LOW), PC_MAX);
	ck_assert_int_eq(bgr_set_wmark(e->root, BGR_HIGH, 1, false), -EINVAL);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, MB(800), NULL, NULL), 0);
	/* limit - limit/64 and limit - limit/16, in pages: ~787M and 750M */
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH) * 4096, 825753600);
	ck_assert_int_eq(bgr_wmark(a, BGR_LOW) * 4096, 786432000);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_explicit_rules)
{
	struct mcg_engine *e = bgr_engine(false);
	struct mcg_group *a = NULL;

	mcg_create(e, e->root, "a", NULL, NULL, &a);
	mcg_set_limit(a, MCG_MEM, MB(800), NULL, NULL);
	ck_assert_int_eq(bgr_set_wmark(a, BGR_HIGH, MB(801), false), -EINVAL);   /* > limit */
	ck_assert_int_eq(bgr_set_wmark(a, BGR_HIGH, MB(700), false), 0);
	ck_assert_int_eq(bgr_set_wmark(a, BGR_LOW, MB(710), false), -EINVAL);    /* > high */
	ck_assert_int_eq(bgr_wmark(a, BGR_LOW), MB(700) < MB(750) ? MB(700) : MB(750));
	ck_assert_int_eq(bgr_set_wmark(a, BGR_LOW, MB(300), false), 0);
	ck_assert_int_eq(bgr_set_wmark(a, BGR_HIGH, MB(200), false), -EINVAL);   /* < low */
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH), MB(700));
	/* -1: automatic again; automatic high gives way to an explicit low */
	ck_assert_int_eq(bgr_set_wmark(a, BGR_HIGH, PC_MAX, true), 0);
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH), MB(800) * 63 / 64);
	ck_assert_int_eq(bgr_set_wmark(a, BGR_LOW, MB(795), false), 0);
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH), MB(795));
	/* the administrator's limit always wins: explicit marks are clamped */
	ck_assert_int_eq(bgr_set_wmark(a, BGR_HIGH, MB(798), false), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, MB(500), NULL, NULL), 0);
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH), MB(500));
	ck_assert_int_eq(bgr_wmark(a, BGR_LOW), MB(500));
	ck_assert_int_eq(bgr_set_wmark(a, BGR_LOW, MB(100), false), 0);
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, MB(600), NULL, NULL), 0);
	ck_assert_int_eq(bgr_wmark(a, BGR_HIGH), MB(500));        /* not lost otherwise */
	ck_assert_int_eq(bgr_wmark(a, BGR_LOW), MB(100));
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_background_reclaim_runs)
{
	struct mcg_engine *e = bgr_engine(true);
	struct mcg_group *p = NULL, *a = NULL;
	struct vm_object *f;
	struct vm_region *r;
	enum vm_fault fault;

	mcg_create(e, e->root, "p", NULL, NULL, &p);
	mcg_create(e, p, "a", NULL, NULL, &a);
	mcg_set_limit(p, MCG_MEM, 1000, NULL, NULL);
	ck_assert_int_eq(bgr_set_wmark(p, BGR_HIGH, 600, false), 0);
	ck_assert_int_eq(bgr_set_wmark(p, BGR_LOW, 400, false), 0);
	f = vm_object_new(e, a, false, 1);
	ck_assert_int_eq(vm_region_new(f, PK_FILE, 700, &r), 0);
	/* the child's charges cross the parent's high watermark */
	for (uint32_t i = 0; i < 700; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, false, &fault), 0);
	bgr_quiesce(e);
	ck_assert_int_le(pc_usage(&p->cnt[MCG_MEM]), 600);
	ck_assert_int_ge(atomic_load(&p->bgr_runs), 1);
	ck_assert_int_gt(atomic_load(&a->pg_reclaimed[1]), 0);   /* background */
	ck_assert_int_eq(atomic_load(&a->pg_reclaimed[0]), 0);   /* no direct reclaim */
	ck_assert_uint_eq(pc_failcnt(&p->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(atomic_load(&a->allocstall), 0);
	CHECK_OK(e);
	vm_object_free(f);
	mcg_put(a);
	mcg_put(p);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_no_progress_backs_off_and_rmdir_stops)
{
	struct mcg_engine *e = bgr_engine(true);
	struct mcg_group *a = NULL;
	struct vm_object *t;
	struct vm_region *r;
	enum vm_fault fault;

	mcg_create(e, e->root, "a", NULL, NULL, &a);
	mcg_set_limit(a, MCG_MEM, 1000, NULL, NULL);
	bgr_set_wmark(a, BGR_HIGH, 100, false);
	bgr_set_wmark(a, BGR_LOW, 50, false);
	t = vm_object_new(e, a, true, 1);
	ck_assert_int_eq(vm_region_new(t, PK_ANON, 300, &r), 0);
	/* anon without swap: nothing to reclaim; the worker backs off */
	for (uint32_t i = 0; i < 300; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &fault), 0);
	bgr_quiesce(e);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 300);
	ck_assert(atomic_load(&a->bgr_queued));                  /* delayed, not spinning */
	vm_object_free(t);
	ck_assert_int_eq(mcg_remove(e, a), 0);
	mcg_put(a);
	mcg_engine_free(e);                                      /* workers stop cleanly */
}
END_TEST

/* The throttle test's evict hook: the engine's own (vm_evict), and a look
 * at how many tasks hold a direct-reclaim slot of g while a page goes.
 * Until another reclaimer has been seen held back by the throttle, the
 * reclaimer in the slot waits there for the next one to come: held back
 * (the throttle works, and the test has seen it work) or in a slot beside
 * it (the peak says so). Every other task ending also ends the wait; 10 s
 * bounds a hang, generous for a sanitizer on a loaded machine. No timing
 * decides the outcome: an event does. */
struct slot_watch {
	struct mcg_engine *e;
	struct mcg_group *g;
	atomic_int peak;
	atomic_int done;              /* tasks that ended */
	atomic_bool saw_held;         /* a reclaimer was held back */
};

static void watch_sample(struct slot_watch *w)
{
	int n = atomic_load(&w->g->reclaimers), peak = atomic_load(&w->peak);

	while (n > peak && !atomic_compare_exchange_weak(&w->peak, &peak, n))
		;
}

static bool watch_evict(uint32_t owner, uint32_t page, uint32_t slot, void *arg)
{
	struct slot_watch *w = arg;

	watch_sample(w);
	for (int i = 0; i < 200000 && !atomic_load(&w->saw_held); i++) {
		if (atomic_load(&w->e->throttle->waiters) > 0)
			atomic_store(&w->saw_held, true);
		else if (atomic_load(&w->g->reclaimers) > 1 || atomic_load(&w->done) == 5)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
	}
	watch_sample(w);
	return vm_evict(owner, page, slot, w->e);
}

struct thr {
	struct mcg_engine *e;
	struct mcg_group *g;
	int fails;
	struct slot_watch *w;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	struct vm_object *f = vm_object_new(t->e, t->g, false, 9);
	struct vm_region *r;
	enum vm_fault fault;

	if (vm_region_new(f, PK_FILE, 400, &r) == 0)
		for (uint32_t i = 0; i < 400; i++)
			t->fails += vm_touch(r, i, i % 4, false, &fault) != 0;
	vm_object_free(f);
	atomic_fetch_add(&t->w->done, 1);
	return NULL;
}

START_TEST(test_direct_reclaim_is_throttled)
{
	struct slot_watch w = { 0 };
	struct mcg_machine cfg = {
		.mem_pages = 8192, .nodes = 1, .cpus = 2, .vm_swappiness = 60,  /* 1 reclaimer */
		.watermarks = true, .no_stock = true,
	};
	struct mcg_engine *e;
	struct mcg_group *a = NULL;
	struct thr t[6];
	pthread_t th[6];

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = w.e = mcg_engine_new(&cfg, NULL, NULL);
	e->evict = watch_evict;
	e->evict_arg = &w;
	mcg_create(e, e->root, "a", NULL, NULL, &a);
	w.g = a;
	mcg_set_limit(a, MCG_MEM, 150, NULL, NULL);
	for (int i = 0; i < 6; i++) {
		t[i] = (struct thr){ e, a, 0, &w };
		pthread_create(&th[i], NULL, thr_main, &t[i]);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(t[i].fails, 0);               /* everyone got memory */
	}
	bgr_quiesce(e);
	ck_assert_int_ge(atomic_load(&w.peak), 1);       /* direct reclaim took pages */
	ck_assert(atomic_load(&w.saw_held));              /* and met the throttle */
	ck_assert_int_le(atomic_load(&w.peak), 2 / 4 + 1);
	ck_assert_int_eq(atomic_load(&a->reclaimers), 0);
	CHECK_OK(e);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(bgreclaim)
{
	Suite *s = suite_create("bgreclaim");
	TCase *tc = tcase_create("watermarks");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_automatic_watermarks);
	tcase_add_test(tc, test_explicit_rules);
	tcase_add_test(tc, test_background_reclaim_runs);
	tcase_add_test(tc, test_no_progress_backs_off_and_rmdir_stops);
	tcase_add_test(tc, test_direct_reclaim_is_throttled);
	suite_add_tcase(s, tc);
	return s;
}
