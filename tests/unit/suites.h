/* suites.h: how a unit suite joins the runner. A test file defines its
 * suite with UNIT_SUITE(name) { ... return the Suite; }, and the runner
 * (main.c) finds it: adding a suite is adding its file. */
#ifndef MEMCGFS_TEST_SUITES_H
#define MEMCGFS_TEST_SUITES_H

#include <check.h>

typedef Suite *(*unit_suite_fn)(void);

/* Called before main by each UNIT_SUITE (a constructor). */
void unit_register(const char *name, unit_suite_fn make);

#define UNIT_SUITE(name)                                                      \
	static Suite *name##_suite(void);                                     \
	__attribute__((constructor)) static void name##_suite_register(void)  \
	{                                                                     \
		unit_register(#name, name##_suite);                           \
	}                                                                     \
	static Suite *name##_suite(void)

#endif
