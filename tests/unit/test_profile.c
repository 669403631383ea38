/* test_profile.c: the §7 version table and the numbers derived from it. */
#include <check.h>
#include <errno.h>

#include "engine/profile.h"
#include "suites.h"

START_TEST(test_parse)
{
	struct prof p;

	ck_assert_int_eq(prof_parse("6.12", &p), 0);
	ck_assert_uint_eq(p.version, PROF_KV(6, 12));
	ck_assert_int_eq(prof_parse("5.10", &p), 0);
	ck_assert_int_eq(prof_parse("6.18", &p), 0);
	ck_assert_int_eq(prof_parse("6.19", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("3.10", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("6", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("6.12x", &p), -EINVAL);
	/* uname -r: a patch level and a suffix (issue 17) */
	ck_assert_int_eq(prof_parse("6.18.44-fc-v973", &p), 0);
	ck_assert_uint_eq(p.version, PROF_KV(6, 18));
	ck_assert_int_eq(prof_parse("5.10.0-28-amd64", &p), 0);
	ck_assert_uint_eq(p.version, PROF_KV(5, 10));
	ck_assert_int_eq(prof_parse("6.12.7", &p), 0);
	ck_assert_int_eq(prof_parse("6.12+deb13", &p), 0);
	ck_assert_int_eq(prof_parse("6.12.", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("6.12-", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("6.12.4x", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("6.1.x", &p), -EINVAL);
	ck_assert_int_eq(prof_parse("", &p), -EINVAL);
}
END_TEST

START_TEST(test_profiles_of_the_issue)
{
	struct prof p510, p612, p618;

	prof_init(&p510, PROF_KV(5, 10));
	prof_init(&p612, PROF_KV(6, 12));
	prof_init(&p618, PROF_KV(6, 18));
	/* 6.12, the default: charge moving, batch 64, hierarchy fixed. */
	ck_assert(!prof_has(&p612, PF_NO_MOVE_CHARGE));
	ck_assert(prof_has(&p612, PF_HIERARCHY_ONLY));
	ck_assert_uint_eq(prof_charge_batch(&p612), 64);
	ck_assert(!prof_has(&p612, PF_EVENTCTL_0200));
	ck_assert(!prof_has(&p612, PF_FAILCNT_MEM_ONLY));
	/* 6.18 */
	ck_assert(prof_has(&p618, PF_NO_MOVE_CHARGE));
	ck_assert(prof_has(&p618, PF_EVENTCTL_0200));
	ck_assert(prof_has(&p618, PF_FAILCNT_MEM_ONLY));
	/* 5.10 */
	ck_assert(!prof_has(&p510, PF_HIERARCHY_ONLY));
	ck_assert_uint_eq(prof_charge_batch(&p510), 32);
	ck_assert_uint_eq(prof_reclaim_retries(&p510), 16);
	ck_assert_uint_eq(prof_swappiness_max(&p510), 200);
	ck_assert(!prof_has(&p510, PF_REFAULT_STATS));
}
END_TEST

START_TEST(test_rows_are_monotonic)
{
	/* A profile is every row up to its version: each feature is on exactly
	 * from its row onwards. */
	for (int f = PF_NONE + 1; f < PF__COUNT; f++) {
		unsigned v = prof_feature_version(f);
		struct prof before, at;

		ck_assert_uint_gt(v, 0);
		prof_init(&before, v - 1);
		prof_init(&at, v);
		ck_assert_msg(!prof_has(&before, f) && prof_has(&at, f), "%s", prof_feature_name(f));
	}
	{
		struct prof all;

		/* PF_NONE, "no feature" in the file table, is on in no profile */
		prof_init(&all, PROF_KV(99, 0));
		ck_assert(!prof_has(&all, PF_NONE));
	}
}
END_TEST

UNIT_SUITE(profile)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_profiles_of_the_issue);
	tcase_add_test(tc, test_rows_are_monotonic);
	suite_add_tcase(s, tc);
	return s;
}
