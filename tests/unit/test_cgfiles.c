/* test_cgfiles.c: the control-file table: file sets and modes per profile,
 * read formats and the generic write rules, driven without a mount. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/lru.h"
#include "engine_fixture.h"
#include "fs/cgfiles.h"
#include "fs/tasks.h"
#include "suites.h"

/* §1.1 (6.18), name and mode; R/C columns. */
static const struct {
	const char *name;
	mode_t mode;
	bool root, child;
} spec_files[] = {
	{ "cgroup.procs", 0644, 1, 1 }, { "cgroup.clone_children", 0644, 1, 1 },
	{ "cgroup.sane_behavior", 0444, 1, 0 }, { "tasks", 0644, 1, 1 },
	{ "notify_on_release", 0644, 1, 1 }, { "release_agent", 0644, 1, 0 },
	{ "memory.usage_in_bytes", 0444, 1, 1 }, { "memory.max_usage_in_bytes", 0644, 1, 1 },
	{ "memory.limit_in_bytes", 0644, 1, 1 }, { "memory.soft_limit_in_bytes", 0644, 1, 1 },
	{ "memory.failcnt", 0644, 1, 1 }, { "memory.stat", 0444, 1, 1 },
	{ "memory.force_empty", 0200, 1, 1 }, { "memory.use_hierarchy", 0644, 1, 1 },
	{ "cgroup.event_control", 0200, 1, 1 }, { "memory.swappiness", 0644, 1, 1 },
	{ "memory.move_charge_at_immigrate", 0644, 1, 1 }, { "memory.oom_control", 0644, 1, 1 },
	{ "memory.pressure_level", 0444, 1, 1 }, { "memory.numa_stat", 0444, 1, 1 },
	{ "memory.kmem.limit_in_bytes", 0644, 1, 1 }, { "memory.kmem.usage_in_bytes", 0444, 1, 1 },
	{ "memory.kmem.failcnt", 0644, 1, 1 }, { "memory.kmem.max_usage_in_bytes", 0644, 1, 1 },
	{ "memory.kmem.slabinfo", 0444, 1, 1 }, { "memory.kmem.tcp.limit_in_bytes", 0644, 1, 1 },
	{ "memory.kmem.tcp.usage_in_bytes", 0444, 1, 1 }, { "memory.kmem.tcp.failcnt", 0644, 1, 1 },
	{ "memory.kmem.tcp.max_usage_in_bytes", 0644, 1, 1 },
	{ "memory.memsw.usage_in_bytes", 0444, 1, 1 }, { "memory.memsw.max_usage_in_bytes", 0644, 1, 1 },
	{ "memory.memsw.limit_in_bytes", 0644, 1, 1 }, { "memory.memsw.failcnt", 0644, 1, 1 },
};
#define NSPEC (sizeof(spec_files) / sizeof(spec_files[0]))

static struct cgfs tfs;

static void fs_setup(unsigned version, bool watermarks)
{
	memset(&tfs, 0, sizeof(tfs));
	tfs.eng = fixture_engine(version);
	tfs.prof = &tfs.eng->m.prof;
	tfs.watermarks = watermarks;
	cgfs_init(&tfs);
}

static void fs_teardown(void)
{
	mcg_engine_free(tfs.eng);
}

static size_t count_present(bool root)
{
	size_t n = 0;

	for (size_t i = 0; i < cgfs_nfiles; i++)
		n += cgfs_file_present(&tfs, &cgfs_files[i], root);
	return n;
}

START_TEST(test_kernel_file_set_618)
{
	fs_setup(PROF_KV(6, 18), false);
	ck_assert_uint_eq(count_present(true), 33);
	ck_assert_uint_eq(count_present(false), 31);
	for (size_t i = 0; i < NSPEC; i++) {
		int r = cgfs_file_lookup(&tfs, spec_files[i].name, true);
		int c = cgfs_file_lookup(&tfs, spec_files[i].name, false);

		ck_assert_msg((r >= 0) == spec_files[i].root, "%s in root", spec_files[i].name);
		ck_assert_msg((c >= 0) == spec_files[i].child, "%s in child", spec_files[i].name);
		ck_assert_msg(cgfs_file_mode(&tfs, &cgfs_files[r]) == spec_files[i].mode,
			      "%s mode %o", spec_files[i].name, cgfs_file_mode(&tfs, &cgfs_files[r]));
	}
	fs_teardown();
}
END_TEST

/* The modes of every profile against the spec (§1.1, §7: event_control
 * 0222 up to 6.17, 0200 on 6.18) and the extension's (docs/files.md §9:
 * the two watermark files 0644, absent under nowatermarks), not against
 * the table's own handlers. */
START_TEST(test_modes_per_profile)
{
	static const unsigned versions[] = { PROF_KV(4, 19), PROF_KV(5, 10), PROF_KV(6, 1),
					     PROF_KV(6, 12), PROF_KV(6, 13), PROF_KV(6, 18) };
	static const char *const wmarks[] = { "memory.high_watermark_in_bytes",
					      "memory.low_watermark_in_bytes" };

	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++)
		for (int w = 0; w < 2; w++) {
			fs_setup(versions[v], w);
			for (size_t i = 0; i < NSPEC; i++) {
				int r = cgfs_file_lookup(&tfs, spec_files[i].name, true);
				mode_t want = spec_files[i].mode;

				if (r < 0)
					continue;    /* absent in this version (§7) */
				if (!strcmp(spec_files[i].name, "cgroup.event_control") &&
				    versions[v] < PROF_KV(6, 18))
					want = 0222;
				ck_assert_msg(cgfs_file_mode(&tfs, &cgfs_files[r]) == want,
					      "%u.%u: %s mode %o, want %o", versions[v] / 1000,
					      versions[v] % 1000, spec_files[i].name,
					      cgfs_file_mode(&tfs, &cgfs_files[r]), want);
			}
			for (int k = 0; k < 2; k++) {
				int r = cgfs_file_lookup(&tfs, wmarks[k], false);

				ck_assert_msg((r >= 0) == (w == 1), "%s present: %d", wmarks[k], r >= 0);
				if (r >= 0)
					ck_assert_uint_eq(cgfs_file_mode(&tfs, &cgfs_files[r]), 0644);
			}
			fs_teardown();
		}
}
END_TEST

static char *render(struct mcg_group *g, const char *name, int *err)
{
	struct cgfs_req r = { .fs = &tfs, .g = g };
	struct cgfs_out o = { 0 };
	int row = cgfs_file_lookup(&tfs, name, mcg_is_root(g));

	ck_assert_int_ge(row, 0);
	*err = cgfs_file_read(&r, &cgfs_files[row], &o);
	if (*err) {
		cgfs_out_free(&o);
		return NULL;
	}
	cgfs_printf(&o, "%s", "");   /* NUL-terminate even when empty */
	return o.buf;
}

static int put(struct mcg_group *g, const char *name, const char *data, size_t len)
{
	struct cgfs_fh fh = { .uid = 0 };
	struct cgfs_req r = { .fs = &tfs, .g = g, .fh = &fh };
	int row = cgfs_file_lookup(&tfs, name, mcg_is_root(g));

	ck_assert_int_ge(row, 0);
	return cgfs_file_write(&r, &cgfs_files[row], data, len);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(test_stat_formats)
{
	struct mcg_group *a = NULL;
	char *s;
	int err;

	fs_setup(PROF_KV(6, 18), false);
	mcg_create(tfs.eng, tfs.eng->root, "a", NULL, NULL, &a);
	stat_add(a, STAT_CACHE, 3);
	stat_add(a, STAT_PGPGIN, 5);
	lru_size_add(&a->lruvec[1], LRU_ACTIVE_FILE, 3);
	s = render(a, "memory.stat", &err);
	ck_assert_int_eq(lines(s), 42);
	ck_assert_ptr_nonnull(strstr(s, "cache 12288\nrss 0\n"));
	ck_assert_ptr_nonnull(strstr(s, "\npgpgin 5\n"));                 /* a count */
	ck_assert_ptr_nonnull(strstr(s, "\nactive_file 12288\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nhierarchical_memory_limit 9223372036854771712\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ntotal_cache 12288\n"));
	ck_assert_ptr_eq(strstr(s, "cache"), s);
	free(s);
	s = render(tfs.eng->root, "memory.stat", &err);
	ck_assert_ptr_nonnull(strstr(s, "\ncache 0\n") ? NULL : s);       /* root local is 0 */
	ck_assert_ptr_nonnull(strstr(s, "\ntotal_cache 12288\n"));
	free(s);
	s = render(a, "memory.numa_stat", &err);
	ck_assert_str_eq(s, "total=3 N0=0 N1=3\nfile=3 N0=0 N1=3\nanon=0 N0=0 N1=0\n"
			 "unevictable=0 N0=0 N1=0\nhierarchical_total=3 N0=0 N1=3\n"
			 "hierarchical_file=3 N0=0 N1=3\nhierarchical_anon=0 N0=0 N1=0\n"
			 "hierarchical_unevictable=0 N0=0 N1=0\n");
	free(s);
	s = render(tfs.eng->root, "memory.usage_in_bytes", &err);
	ck_assert_str_eq(s, "12288\n");            /* global formula: file + anon */
	free(s);
	s = render(a, "memory.oom_control", &err);
	ck_assert_str_eq(s, "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
	free(s);
	s = render(a, "memory.kmem.slabinfo", &err);
	ck_assert_str_eq(s, "");
	free(s);
	mcg_put(a);
	fs_teardown();
}
END_TEST

START_TEST(test_stat_keys_510)
{
	char *s;
	int err;

	fs_setup(PROF_KV(5, 10), false);
	s = render(tfs.eng->root, "memory.stat", &err);
	ck_assert_int_eq(lines(s), 36);
	ck_assert_ptr_null(strstr(s, "workingset_refault"));
	ck_assert_ptr_null(strstr(s, "swapcached"));
	ck_assert_ptr_nonnull(strstr(s, "\nswap 0\n"));
	free(s);
	fs_teardown();
}
END_TEST

START_TEST(test_generic_write_rules)
{
	struct mcg_group *a = NULL;
	char big[4097], *s;
	int err;

	fs_setup(PROF_DEFAULT, true);
	mcg_create(tfs.eng, tfs.eng->root, "a", NULL, NULL, &a);
	memset(big, ' ', sizeof(big));
	ck_assert_int_eq(put(a, "memory.limit_in_bytes", big, 4097), -E2BIG);
	ck_assert_int_eq(put(a, "memory.limit_in_bytes", big, 4096), 0);   /* spaces: 0 */
	s = render(a, "memory.limit_in_bytes", &err);
	ck_assert_str_eq(s, "0\n");
	free(s);
	ck_assert_int_eq(put(a, "memory.limit_in_bytes", "1", 0), 0);      /* 0 bytes: nothing */
	ck_assert_int_eq(put(tfs.eng->root, "release_agent", big, 4096), -E2BIG);
	ck_assert_int_eq(put(a, "memory.usage_in_bytes", "1", 1), -EINVAL);
	ck_assert_int_eq(put(a, "memory.failcnt", "xyz", 3), 0);
	ck_assert_int_eq(put(a, "memory.max_usage_in_bytes", "xyz", 3), 0);
	ck_assert_int_eq(put(tfs.eng->root, "memory.limit_in_bytes", "-1", 2), -EINVAL);
	ck_assert_int_eq(put(tfs.eng->root, "memory.soft_limit_in_bytes", "1G", 2), 0);
	ck_assert_int_eq(put(tfs.eng->root, "memory.oom_control", "0", 1), -EINVAL);
	ck_assert_int_eq(put(tfs.eng->root, "memory.use_hierarchy", "1", 1), 0);
	ck_assert_int_eq(put(tfs.eng->root, "memory.force_empty", "1", 1), -EINVAL);
	ck_assert_int_eq(put(a, "memory.force_empty", "anything", 8), 0);
	ck_assert_int_eq(put(a, "memory.swappiness", "201", 3), -EINVAL);
	ck_assert_int_eq(put(a, "memory.swappiness", " 1", 2), -EINVAL);
	ck_assert_int_eq(put(a, "notify_on_release", "7", 1), 0);
	s = render(a, "notify_on_release", &err);
	ck_assert_str_eq(s, "1\n");
	free(s);
	ck_assert_ptr_null(render(a, "memory.force_empty", &err));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_ptr_null(render(a, "memory.pressure_level", &err));
	ck_assert_int_eq(err, -EINVAL);
	/* A removed group answers ENODEV to everything. */
	ck_assert_int_eq(mcg_remove(tfs.eng, a), 0);
	ck_assert_int_eq(put(a, "memory.limit_in_bytes", "1", 1), -ENODEV);
	ck_assert_ptr_null(render(a, "memory.stat", &err));
	ck_assert_int_eq(err, -ENODEV);
	mcg_put(a);
	fs_teardown();
}
END_TEST

START_TEST(test_release_agent_needs_cap)
{
	struct cgfs_fh fh = { .agent_cap = false };
	struct cgfs_req r = { .fs = &tfs, .fh = &fh };
	int row;
	char *s;
	int err;

	fs_setup(PROF_KV(6, 18), true);
	r.g = tfs.eng->root;
	row = cgfs_file_lookup(&tfs, "release_agent", true);
	ck_assert_int_eq(cgfs_file_write(&r, &cgfs_files[row], "/bin/true\n", 10), -EPERM);
	fh.agent_cap = true;
	ck_assert_int_eq(cgfs_file_write(&r, &cgfs_files[row], " /bin/true\n", 11), 0);
	s = render(tfs.eng->root, "release_agent", &err);
	ck_assert_str_eq(s, "/bin/true\n");
	free(s);
	fs_teardown();
}
END_TEST

START_TEST(test_permission_rule)
{
	struct prof p618, p510;

	prof_init(&p618, PROF_KV(6, 18));
	prof_init(&p510, PROF_KV(5, 10));
	/* root, the real uid and the saved set-user-ID pass; the effective
	 * uid of the target does not count */
	ck_assert(cgfs_tasks_may_move(&p618, 0, 0, 1000, 1000));
	ck_assert(cgfs_tasks_may_move(&p618, 1000, 1000, 1000, 0));
	ck_assert(cgfs_tasks_may_move(&p618, 1000, 1000, 0, 1000));
	ck_assert(!cgfs_tasks_may_move(&p618, 1000, 1000, 1001, 1001));
	/* 5.16+: the opener's uid counts, not the writer's current one */
	ck_assert(cgfs_tasks_may_move(&p618, 0, 1000, 1, 1));
	ck_assert(!cgfs_tasks_may_move(&p618, 1000, 0, 1, 1));
	/* before: the writer's current uid */
	ck_assert(!cgfs_tasks_may_move(&p510, 0, 1000, 1, 1));
	ck_assert(cgfs_tasks_may_move(&p510, 1000, 0, 1, 1));
}
END_TEST

START_TEST(test_watermark_extensions)
{
	struct mcg_group *a = NULL;
	char *s;
	int err;

	fs_setup(PROF_KV(6, 18), true);
	ck_assert_int_ge(cgfs_file_lookup(&tfs, "memory.high_watermark_in_bytes", false), 0);
	ck_assert_int_ge(cgfs_file_lookup(&tfs, "memory.low_watermark_in_bytes", true), 0);
	mcg_create(tfs.eng, tfs.eng->root, "a", NULL, NULL, &a);
	s = render(a, "memory.stat", &err);
	ck_assert_int_eq(lines(s), 48);
	/* the extension keys come after every kernel key */
	ck_assert_ptr_nonnull(strstr(s, "total_unevictable 0\npg_scan 0\npg_pgsteal 0\n"
				     "kswapd_pgscan 0\nkswapd_steal 0\npgoutrun 0\nallocstall 0\n"));
	free(s);
	mcg_put(a);
	fs_teardown();
	fs_setup(PROF_KV(6, 18), false);
	ck_assert_int_lt(cgfs_file_lookup(&tfs, "memory.high_watermark_in_bytes", false), 0);
	fs_teardown();
}
END_TEST

/* cgfs_kv writes what "%s%s %ld\n" (and, without a key, "%ld\n") would,
 * to the last byte, through the buffer's growth and at both ends of a long */
START_TEST(test_kv_matches_printf)
{
	static const long vals[] = { 0, 1, -1, 9, 10, 4096, 9223372036854771712L,
				     LONG_MAX, LONG_MIN, -4096, 123456789 };
	struct cgfs_out a = { 0 }, b = { 0 };

	for (int rep = 0; rep < 200; rep++)
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			long v = vals[i] + (vals[i] > 0 && vals[i] < LONG_MAX ? rep : 0);

			cgfs_kv(&a, rep & 1 ? "total_" : "", "workingset_refault_anon", v);
			cgfs_printf(&b, "%s%s %ld\n", rep & 1 ? "total_" : "", "workingset_refault_anon", v);
			cgfs_kv(&a, NULL, NULL, v);
			cgfs_printf(&b, "%ld\n", v);
		}
	ck_assert_int_eq(a.err, 0);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.buf, b.buf, a.len) == 0);
	cgfs_out_free(&a);
	cgfs_out_free(&b);
}
END_TEST

UNIT_SUITE(cgfiles)
{
	Suite *s = suite_create("cgfiles");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_kernel_file_set_618);
	tcase_add_test(tc, test_modes_per_profile);
	tcase_add_test(tc, test_stat_formats);
	tcase_add_test(tc, test_stat_keys_510);
	tcase_add_test(tc, test_generic_write_rules);
	tcase_add_test(tc, test_release_agent_needs_cap);
	tcase_add_test(tc, test_permission_rule);
	tcase_add_test(tc, test_watermark_extensions);
	tcase_add_test(tc, test_kv_matches_printf);
	suite_add_tcase(s, tc);
	return s;
}
