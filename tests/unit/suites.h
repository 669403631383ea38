/* suites.h: every Check suite of the unit runner. */
#ifndef MEMCGFS_TEST_SUITES_H
#define MEMCGFS_TEST_SUITES_H

#include <check.h>

Suite *acl_suite(void);
Suite *node_suite(void);
Suite *grammar_suite(void);
Suite *size_suite(void);
Suite *rstat_suite(void);
Suite *page_counter_suite(void);
Suite *profile_suite(void);
Suite *memcg_suite(void);
Suite *task_suite(void);
Suite *cgfiles_suite(void);
Suite *event_suite(void);
Suite *charge_suite(void);
Suite *vm_suite(void);
Suite *replay_suite(void);
Suite *bgreclaim_suite(void);
Suite *softlimit_suite(void);
Suite *move_suite(void);
Suite *mirror_suite(void);
Suite *proc_suite(void);
Suite *sim_suite(void);
Suite *pidwatch_suite(void);
Suite *view_suite(void);
Suite *guard_suite(void);
Suite *state_suite(void);

#endif
