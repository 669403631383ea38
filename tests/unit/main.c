/* main.c: the Check runner for every unit suite. */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(acl_suite());
	int failed;

	srunner_add_suite(sr, node_suite());
	srunner_add_suite(sr, grammar_suite());
	srunner_add_suite(sr, size_suite());
	srunner_add_suite(sr, page_counter_suite());
	srunner_add_suite(sr, profile_suite());
	srunner_add_suite(sr, memcg_suite());
	srunner_add_suite(sr, rstat_suite());
	srunner_add_suite(sr, task_suite());
	srunner_add_suite(sr, cgfiles_suite());
	srunner_add_suite(sr, event_suite());
	srunner_add_suite(sr, charge_suite());
	srunner_add_suite(sr, vm_suite());
	srunner_add_suite(sr, replay_suite());
	srunner_add_suite(sr, bgreclaim_suite());
	srunner_add_suite(sr, softlimit_suite());
	srunner_add_suite(sr, move_suite());
	srunner_add_suite(sr, mirror_suite());
	srunner_add_suite(sr, proc_suite());
	srunner_add_suite(sr, sim_suite());
	srunner_add_suite(sr, pidwatch_suite());
	srunner_add_suite(sr, view_suite());
	srunner_add_suite(sr, guard_suite());
	srunner_add_suite(sr, state_suite());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
