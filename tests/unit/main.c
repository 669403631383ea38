/* main.c: the Check runner for every unit suite: each registered itself
 * (suites.h's UNIT_SUITE); they run in the order of their names, so that
 * a run does not depend on the link's order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

#define UNIT_MAX 64

static struct {
	const char *name;
	unit_suite_fn make;
} unit_suites[UNIT_MAX];
static int unit_n;

void unit_register(const char *name, unit_suite_fn make)
{
	if (unit_n == UNIT_MAX) {
		fprintf(stderr, "unit: more than %d suites: raise UNIT_MAX\n", UNIT_MAX);
		abort();
	}
	unit_suites[unit_n].name = name;
	unit_suites[unit_n++].make = make;
}

static int unit_by_name(const void *a, const void *b)
{
	const typeof(unit_suites[0]) *x = a, *y = b;

	return strcmp(x->name, y->name);
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (unit_n == 0) {
		fprintf(stderr, "unit: no suite registered\n");
		return EXIT_FAILURE;
	}
	qsort(unit_suites, (size_t)unit_n, sizeof(unit_suites[0]), unit_by_name);
	sr = srunner_create(unit_suites[0].make());
	for (int i = 1; i < unit_n; i++)
		srunner_add_suite(sr, unit_suites[i].make());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
