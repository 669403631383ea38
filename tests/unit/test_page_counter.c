/* test_page_counter.c: charge, try_charge, failcnt, watermark, set_max. */
#include <check.h>
#include <errno.h>
#include <pthread.h>

#include "engine/page_counter.h"
#include "suites.h"

START_TEST(test_hierarchy_charge)
{
	struct pc_counter root, mid, leaf;

	pc_init(&root, NULL, true);
	pc_init(&mid, &root, true);
	pc_init(&leaf, &mid, true);
	pc_charge(&leaf, 10);
	ck_assert_int_eq(pc_usage(&leaf), 10);
	ck_assert_int_eq(pc_usage(&mid), 10);
	ck_assert_int_eq(pc_usage(&root), 10);
	pc_uncharge(&leaf, 4);
	ck_assert_int_eq(pc_usage(&root), 6);
	ck_assert_int_eq(pc_watermark(&root), 10);
	pc_reset_watermark(&root);
	ck_assert_int_eq(pc_watermark(&root), 6);   /* to usage, not 0 */
	pc_uncharge(&leaf, 100);                      /* clamps */
	ck_assert_int_eq(pc_usage(&leaf), 0);
}
END_TEST

START_TEST(test_try_charge_fails_at_ancestor)
{
	struct pc_counter root, mid, leaf, *fail = NULL;

	pc_init(&root, NULL, true);
	pc_init(&mid, &root, true);
	pc_init(&leaf, &mid, true);
	ck_assert_int_eq(pc_set_max(&mid, 8), 0);
	ck_assert(pc_try_charge(&leaf, 5, &fail));
	ck_assert(!pc_try_charge(&leaf, 5, &fail));
	ck_assert_ptr_eq(fail, &mid);
	ck_assert_uint_eq(pc_failcnt(&mid), 1);
	ck_assert_uint_eq(pc_failcnt(&leaf), 0);
	ck_assert_int_eq(pc_usage(&leaf), 5);        /* nothing left over */
	ck_assert_int_eq(pc_usage(&root), 5);
	pc_reset_failcnt(&mid);
	ck_assert_uint_eq(pc_failcnt(&mid), 0);
}
END_TEST

START_TEST(test_failcnt_tracking_flag)
{
	struct pc_counter root, leaf;

	pc_init(&root, NULL, false);
	pc_init(&leaf, &root, false);
	pc_set_max(&leaf, 1);
	ck_assert(!pc_try_charge(&leaf, 2, NULL));
	ck_assert_uint_eq(pc_failcnt(&leaf), 0);     /* 6.15+: memsw/kmem/tcp */
}
END_TEST

START_TEST(test_set_max)
{
	struct pc_counter c;

	pc_init(&c, NULL, true);
	ck_assert_int_eq(pc_max(&c), PC_MAX);
	pc_charge(&c, 10);
	ck_assert_int_eq(pc_set_max(&c, 9), -EBUSY);
	ck_assert_int_eq(pc_max(&c), PC_MAX);
	ck_assert_int_eq(pc_set_max(&c, 10), 0);
	ck_assert_int_eq(pc_set_max(&c, 20), 0);
}
END_TEST

static struct pc_counter race_root, race_leaf[2];

static void *race_worker(void *arg)
{
	struct pc_counter *c = arg;

	for (int i = 0; i < 100000; i++)
		if (pc_try_charge(c, 3, NULL))
			pc_uncharge(c, 3);
	return NULL;
}

START_TEST(test_concurrent_balance)
{
	pthread_t t[2];

	pc_init(&race_root, NULL, true);
	pc_set_max(&race_root, 4);
	for (int i = 0; i < 2; i++) {
		pc_init(&race_leaf[i], &race_root, true);
		pthread_create(&t[i], NULL, race_worker, &race_leaf[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(pc_usage(&race_root), 0);
	ck_assert_int_eq(pc_usage(&race_leaf[0]), 0);
	ck_assert_int_eq(pc_usage(&race_leaf[1]), 0);
	ck_assert_int_le(pc_watermark(&race_root), 4);   /* only accepted charges count */
}
END_TEST

UNIT_SUITE(page_counter)
{
	Suite *s = suite_create("page_counter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_hierarchy_charge);
	tcase_add_test(tc, test_try_charge_fails_at_ancestor);
	tcase_add_test(tc, test_failcnt_tracking_flag);
	tcase_add_test(tc, test_set_max);
	tcase_add_test(tc, test_concurrent_balance);
	suite_add_tcase(s, tc);
	return s;
}
