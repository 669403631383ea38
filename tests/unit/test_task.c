/* test_task.c: membership: one group per task, moves, exits, listings. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/task.h"
#include "engine_fixture.h"
#include "suites.h"

START_TEST(test_attach_move_exit)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = NULL, *b = NULL, *g;
	pid_t *v;
	int drop;

	mcg_create(e, e->root, "a", NULL, NULL, &a);
	mcg_create(e, e->root, "b", NULL, NULL, &b);
	ck_assert_int_eq(task_attach(e, 100, 100, a, 7, &drop), 0);
	ck_assert_int_eq(drop, -1);                      /* the table keeps 7 */
	ck_assert_int_eq(task_attach(e, 101, 100, a, 8, &drop), 0);
	ck_assert_int_eq(task_attach(e, 100, 100, a, 9, &drop), 0);
	ck_assert_int_eq(drop, 9);                       /* already there */
	ck_assert_int_eq(atomic_load(&a->ntasks), 2);
	ck_assert_int_eq(task_list(e, a, false, &v), 2);
	ck_assert_int_eq(v[0], 100);
	ck_assert_int_eq(v[1], 101);
	free(v);
	ck_assert_int_eq(task_list(e, a, true, &v), 1);  /* procs: tgids, deduplicated */
	ck_assert_int_eq(v[0], 100);
	free(v);
	ck_assert_int_eq(task_attach(e, 101, 100, b, 10, &drop), 0);
	ck_assert_int_eq(drop, 10);                      /* keeps its first watch */
	ck_assert_int_eq(atomic_load(&a->ntasks), 1);
	ck_assert_int_eq(atomic_load(&b->ntasks), 1);
	g = task_group(e, 101);
	ck_assert_ptr_eq(g, b);
	mcg_put(g);
	ck_assert_int_eq(mcg_remove(e, b), -EBUSY);      /* has a task */
	ck_assert_int_eq(task_exit(e, 101, 99), -ENOENT);/* another watch: stale */
	ck_assert_int_eq(task_exit(e, 101, 8), 0);
	ck_assert_int_eq(mcg_remove(e, b), 0);
	ck_assert_int_eq(task_attach(e, 100, 100, e->root, 11, &drop), 0);
	ck_assert_int_eq(drop, 7);                       /* back to the root */
	ck_assert(!task_in_child(e, 100));
	g = task_group(e, 100);
	ck_assert(mcg_is_root(g));
	mcg_put(g);
	ck_assert_int_eq(task_attach(e, 5, 5, b, 1, &drop), -ENODEV);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_many_tasks_grow)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mcg_group *a = NULL;
	pid_t *v;
	int drop;

	mcg_create(e, e->root, "a", NULL, NULL, &a);
	for (pid_t t = 1; t <= 5000; t++)
		ck_assert_int_eq(task_attach(e, t * 3, t * 3, a, (int)t, &drop), 0);
	ck_assert_int_eq(task_list(e, a, false, &v), 5000);
	for (int i = 1; i < 5000; i++)
		ck_assert_int_lt(v[i - 1], v[i]);
	free(v);
	for (pid_t t = 1; t <= 5000; t++)
		ck_assert_int_eq(task_exit(e, t * 3, (int)t), 0);
	ck_assert_int_eq(atomic_load(&a->ntasks), 0);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

struct mover {
	struct mcg_engine *e;
	struct mcg_group *g[2];
	int base;
};

static void *mover_main(void *arg)
{
	struct mover *m = arg;
	int drop;

	for (int i = 0; i < 20000; i++)
		task_attach(m->e, m->base + i % 50, m->base, m->g[i % 2], 0, &drop);
	return NULL;
}

START_TEST(test_concurrent_moves_keep_counts)
{
	struct mcg_engine *e = fixture_engine(PROF_DEFAULT);
	struct mover m[2];
	pthread_t t[2];
	struct mcg_group *a = NULL, *b = NULL;
	pid_t *v;
	long na, nb;

	mcg_create(e, e->root, "a", NULL, NULL, &a);
	mcg_create(e, e->root, "b", NULL, NULL, &b);
	for (int i = 0; i < 2; i++) {
		m[i] = (struct mover){ e, { a, b }, 1000 * (i + 1) };
		pthread_create(&t[i], NULL, mover_main, &m[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	na = task_list(e, a, false, &v);
	free(v);
	nb = task_list(e, b, false, &v);
	free(v);
	ck_assert_int_eq(na + nb, 100);                  /* each task in one group */
	ck_assert_int_eq(atomic_load(&a->ntasks), na);
	ck_assert_int_eq(atomic_load(&b->ntasks), nb);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(task)
{
	Suite *s = suite_create("task");
	TCase *tc = tcase_create("membership");

	tcase_add_test(tc, test_attach_move_exit);
	tcase_add_test(tc, test_many_tasks_grow);
	tcase_add_test(tc, test_concurrent_moves_keep_counts);
	suite_add_tcase(s, tc);
	return s;
}
