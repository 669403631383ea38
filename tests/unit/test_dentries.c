/* test_dentries.c: the names the kernel may keep, recorded in memory that
 * outlives a worker (daemon/dentries.c): what one mapping writes another
 * reads after it is gone; a drop clears only the name it names; a take
 * passes each recorded name once and keeps only those its fn keeps. */
#include <check.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/dentries.h"
#include "suites.h"

struct taken {
	unsigned n;
	unsigned id[8], gen[8];
	uint64_t parent[8];
	char name[8][DENTRIES_NAME_MAX + 1];
};

static bool take_cb(void *arg, unsigned id, unsigned gen, uint64_t parent, const char *name)
{
	struct taken *t = arg;

	ck_assert_uint_lt(t->n, 8);
	t->id[t->n] = id;
	t->gen[t->n] = gen;
	t->parent[t->n] = parent;
	strcpy(t->name[t->n++], name);
	return id == 9;                               /* (still right: kept) */
}

START_TEST(test_dentries_outlive_the_writer)
{
	int fd = memfd_create("test-dentries", MFD_CLOEXEC);
	struct dentries *w, *r;
	struct taken t = { 0 };
	char long_name[DENTRIES_NAME_MAX + 2];

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)dentries_bytes()), 0);
	ck_assert_ptr_nonnull(w = dentries_map(fd));
	dentries_note(w, 7, 1, 1, "a");               /* a group at the root */
	dentries_note(w, 9, 3, 7 * 64, "b");          /* its child */
	dentries_note(w, 9, 3, 7 * 64, "b");          /* looked up again */
	dentries_note(w, 12, 1, 1, "old");
	dentries_note(w, 12, 1, 1, "new");            /* renamed: the last name */
	dentries_note(w, 20, 2, 1, "gone");
	dentries_drop(w, 20, 2, 1, "gone");           /* removed, answered */
	dentries_note(w, 21, 1, 1, "kept");
	dentries_drop(w, 21, 2, 1, "kept");           /* not its generation */
	dentries_drop(w, 21, 1, 1, "other");          /* not its name */
	dentries_note(w, DENTRIES_SLOTS, 1, 1, "out of range");
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	dentries_note(w, 30, 1, 1, long_name);        /* longer than a name */
	dentries_note(NULL, 5, 1, 1, "none");         /* no table: nothing */
	dentries_unmap(w);                            /* the writer dies */

	ck_assert_ptr_nonnull(r = dentries_map(fd));
	dentries_take(r, take_cb, &t);
	ck_assert_uint_eq(t.n, 4);
	ck_assert_uint_eq(t.id[0], 7);
	ck_assert_str_eq(t.name[0], "a");
	ck_assert_uint_eq(t.parent[0], 1);
	ck_assert_uint_eq(t.id[1], 9);
	ck_assert_uint_eq(t.gen[1], 3);
	ck_assert_uint_eq(t.parent[1], 7 * 64);
	ck_assert_str_eq(t.name[2], "new");
	ck_assert_uint_eq(t.id[3], 21);
	ck_assert_str_eq(t.name[3], "kept");
	/* taken: none left but the one kept */
	t.n = 0;
	dentries_take(r, take_cb, &t);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_uint_eq(t.id[0], 9);
	ck_assert_str_eq(t.name[0], "b");
	dentries_unmap(r);
	close(fd);
}
END_TEST

UNIT_SUITE(dentries)
{
	Suite *s = suite_create("dentries");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_dentries_outlive_the_writer);
	suite_add_tcase(s, tc);
	return s;
}
