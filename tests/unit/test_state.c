/* test_state.c: fs/state_text.c without a mount or a file: a hierarchy rendered,
 * replayed into a new engine and rendered again gives the same text (ids,
 * generations, settings, modes, owners and ACLs included); the parser's
 * refusals name the line and byte (truncated, damaged, newer, garbled,
 * another profile); a journal of frames after the snapshot replays to the
 * same hierarchy, its torn last frame ignored and a damaged one before
 * the last refused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "engine/engine.h"
#include "fs/acl.h"
#include "fs/cgfiles.h"
#include "fs/node.h"
#include "journal/state.h"
#include "suites.h"

static struct cgfs sfs[2];

static void st_setup_one(struct cgfs *fs, unsigned version)
{
	static const struct mcg_owner_ops own = { .free = node_free_group };
	struct mcg_machine cfg = {
		.mem_pages = 65536, .nodes = 1, .cpus = 1, .vm_swappiness = 60, .watermarks = true,
	};

	memset(fs, 0, sizeof(*fs));
	prof_init(&cfg.prof, version);
	ck_assert_ptr_nonnull(fs->eng = mcg_engine_new(&cfg, NULL, &(struct mcg_owner){ &own, fs }));
	fs->prof = &fs->eng->m.prof;
	fs->watermarks = true;
	cgfs_init(fs);
	ck_assert_int_eq(node_init_root(fs, fs->eng->root, 0, 0), 0);
}

static void st_teardown(void)
{
	for (int i = 0; i < 2; i++)
		if (sfs[i].eng) {
			mcg_engine_free(sfs[i].eng);
			pthread_mutex_destroy(&sfs[i].meta_lock);
			pthread_mutex_destroy(&sfs[i].agent_lock);
			sfs[i].eng = NULL;
		}
}

static int st_init(struct mcg_group *g, void *arg)
{
	return node_init_child(&sfs[0], g, 1000, 1000, 0755, 022);
}

static struct mcg_group *st_mkdir(struct mcg_group *parent, const char *name)
{
	struct mcg_group *g = NULL;

	ck_assert_int_eq(mcg_create(sfs[0].eng, parent, name, st_init, NULL, &g), 0);
	return g;
}

/* A write as a user's would be, through the row's handler. */
static void st_write(struct mcg_group *g, const char *file, const char *val)
{
	static const struct cgfs_fh fh = { .agent_cap = true };
	struct cgfs_req r = { .fs = &sfs[0], .g = g, .fh = &fh };
	int row = cgfs_file_lookup(&sfs[0], file, mcg_is_root(g));

	ck_assert_int_ge(row, 0);
	ck_assert_int_eq(cgfs_file_write(&r, &cgfs_files[row], val, strlen(val)), 0);
}

static char *st_render(struct cgfs *fs)
{
	struct cgfs_out o = { 0 };

	ck_assert_int_eq(state_render(fs, &o), 0);
	return o.buf;
}

/* A hierarchy with something of every kind the file keeps. */
static char *st_build(void)
{
	struct mcg_group *root, *a, *b, *c, *gone, *sp;
	struct acl acl = { .n = 5, .e = {
		{ ACL_TAG_USER_OBJ, 6, 0 }, { ACL_TAG_USER, 6, 1001 }, { ACL_TAG_GROUP_OBJ, 4, 0 },
		{ ACL_TAG_MASK, 6, 0 }, { ACL_TAG_OTHER, 4, 0 } } };
	char x[8 + ACL_MAX_ENTRIES * 8];
	int n;

	st_setup_one(&sfs[0], PROF_KV(5, 10));
	root = sfs[0].eng->root;
	gone = st_mkdir(root, "gone");              /* ids and generations move on */
	ck_assert_int_eq(mcg_remove(sfs[0].eng, gone), 0);
	mcg_put(gone);
	a = st_mkdir(root, "a");
	st_write(a, "memory.use_hierarchy", "1");
	b = st_mkdir(a, "b c");                     /* a name to escape */
	c = st_mkdir(root, "c");
	sp = st_mkdir(b, "\\x\t");
	st_write(root, "release_agent", "/sbin/agent --flag");
	st_write(root, "notify_on_release", "1");
	st_write(a, "memory.limit_in_bytes", "64M");
	st_write(a, "memory.memsw.limit_in_bytes", "128M");
	st_write(a, "memory.high_watermark_in_bytes", "48M");
	st_write(b, "memory.soft_limit_in_bytes", "8M");
	st_write(b, "memory.swappiness", "7");
	st_write(c, "memory.oom_control", "1");
	st_write(c, "memory.move_charge_at_immigrate", "3");
	st_write(c, "cgroup.clone_children", "1");
	st_write(c, "memory.kmem.limit_in_bytes", "16M");
	node_chmod(&sfs[0], b, -1, 0750);
	node_chown(&sfs[0], c, cgfs_file_lookup(&sfs[0], "tasks", false), 1001, 1001);
	n = acl_serialize(&acl, x, sizeof(x));
	ck_assert_int_eq(node_setxattr(&sfs[0], a, cgfs_file_lookup(&sfs[0], "memory.low_watermark_in_bytes",
									false), ACL_XATTR_ACCESS, x, (size_t)n, 0), 0);
	acl.e[1].perm = 5;
	acl.e[3].perm = 5;
	acl.e[0].perm = 7;
	n = acl_serialize(&acl, x, sizeof(x));
	ck_assert_int_eq(node_setxattr(&sfs[0], c, -1, ACL_XATTR_DEFAULT, x, (size_t)n, 0), 0);
	mcg_put(a);
	mcg_put(b);
	mcg_put(c);
	mcg_put(sp);
	return st_render(&sfs[0]);
}

START_TEST(test_round_trip)
{
	char msg[512] = "", *t1 = st_build(), *t2;
	struct mcg_group *a, *a2, *n1, *n2;
	unsigned tasks = 9;
	int row;

	st_setup_one(&sfs[1], PROF_KV(5, 10));
	ck_assert_msg(state_load_text(&sfs[1], "t1", t1, strlen(t1), &tasks, msg, sizeof(msg)) == 0,
		      "%s", msg);
	ck_assert_uint_eq(tasks, 0);
	t2 = st_render(&sfs[1]);
	ck_assert_str_eq(t1, t2);
	ck_assert_ptr_nonnull(strstr(t1, "group /a/b\\040c/\\134x\\011 "));
	ck_assert_ptr_nonnull(strstr(t1, "set release_agent /sbin/agent\\040--flag\n"));
	ck_assert_ptr_nonnull(strstr(t1, "access=user::rw-,user:1001:rw-,group::r--,mask::rw-,other::r--"));

	/* the same ids and generations, and a new group never gets an old one */
	ck_assert_int_eq(node_resolve(&sfs[0], "/a", &a, &row), 0);
	ck_assert_int_eq(node_resolve(&sfs[1], "/a", &a2, &row), 0);
	ck_assert_uint_eq(mcg_id(a), mcg_id(a2));
	ck_assert_uint_eq(mcg_gen(a), mcg_gen(a2));
	ck_assert_uint_eq(node_ino(a, 3), node_ino(a2, 3));
	ck_assert_int_eq(mcg_create(sfs[0].eng, a, "n", NULL, NULL, &n1), 0);
	ck_assert_int_eq(mcg_create(sfs[1].eng, a2, "n", NULL, NULL, &n2), 0);
	ck_assert_uint_eq(mcg_id(n1), mcg_id(n2));
	ck_assert_uint_ge(mcg_gen(n2), mcg_gen(n1));
	mcg_put(a);
	mcg_put(a2);
	mcg_put(n1);
	mcg_put(n2);
	free(t1);
	free(t2);
	st_teardown();
}
END_TEST

/* Load text into a new engine; the error and message must be as given. */
static void st_refused(const char *text, size_t len, unsigned version, int err, const char *want)
{
	char msg[512] = "";

	st_setup_one(&sfs[1], version);
	ck_assert_int_eq(state_load_text(&sfs[1], "F", text, len, NULL, msg, sizeof(msg)), err);
	ck_assert_str_eq(msg, want);
	mcg_engine_free(sfs[1].eng);
	sfs[1].eng = NULL;
}

/* Replace the end record of t with a correct one (t has room). */
static void st_reseal(char *t)
{
	char *end = strstr(t, "\nend ") + 1;
	size_t lines = 0;

	for (char *p = t; p < end; p++)
		lines += *p == '\n';
	sprintf(end, "end %zu %08x\n", lines, state_crc32(t, (size_t)(end - t)));
}

START_TEST(test_refusals)
{
	char *t = st_build(), *c = malloc(strlen(t) + 64), want[256], *p;
	size_t len = strlen(t), endat = (size_t)(strstr(t, "\nend ") + 1 - t), lines = 0, at;

	for (size_t i = 0; i < endat; i++)
		lines += t[i] == '\n';
	/* truncated inside a record, and at a record's end */
	p = strchr(t + len / 2, '\n');
	at = (size_t)(p - t) - 1;
	{
		size_t l = 1;

		for (size_t i = 0; i < at; i++)
			l += t[i] == '\n';
		snprintf(want, sizeof(want), "F: line %zu, byte %zu: truncated: the file ends inside a record",
			 l, at);
		st_refused(t, at, PROF_KV(5, 10), -EINVAL, want);
		snprintf(want, sizeof(want), "F: line %zu, byte %zu: truncated: no end record", l + 1, at + 2);
		st_refused(t, at + 2, PROF_KV(5, 10), -EINVAL, want);
	}
	/* a digit changed: the checksum */
	strcpy(c, t);
	p = strstr(c, "set memory.swappiness 7\n");
	ck_assert_ptr_nonnull(p);
	p[22] = '8';
	snprintf(want, sizeof(want), "F: line %zu, byte %zu: checksum mismatch: the %zu bytes before the "
		 "end record were changed or damaged", lines + 1, endat, endat);
	st_refused(c, len, PROF_KV(5, 10), -EBADMSG, want);
	/* newer */
	strcpy(c, t);
	c[14] = '3';
	st_refused(c, len, PROF_KV(5, 10), -EPROTONOSUPPORT,
		   "F: line 1, byte 14: format 3 is newer than this memcgfs reads (2)");
	st_refused("", 0, PROF_KV(5, 10), -EINVAL, "F: line 1, byte 0: truncated: no end record");
	st_refused("hello\n", 6, PROF_KV(5, 10), -EINVAL, "F: line 1, byte 0: not a memcgfs state file");
	/* garbled records, resealed: each is named */
	strcpy(c, t);
	p = strstr(c, "\ngroup /c ") + 1;
	memcpy(p, "gr0up", 5);
	st_reseal(c);
	at = (size_t)(p - c);
	lines = 1;
	for (size_t i = 0; i < at; i++)
		lines += c[i] == '\n';
	snprintf(want, sizeof(want), "F: line %zu, byte %zu: unknown record \"gr0up\"", lines, at);
	st_refused(c, strlen(c), PROF_KV(5, 10), -EINVAL, want);
	strcpy(c, t);
	p = strstr(c, "user:1001:rw-");
	memcpy(p, "user:1001:rq-", 13);
	st_reseal(c);
	ck_assert_int_ne(state_load_text(&sfs[0], "F", c, strlen(c), NULL, want, sizeof(want)), 0);
	ck_assert_ptr_nonnull(strstr(want, ": bad ACL"));
	strcpy(c, t);
	p = strstr(c, "set memory.move_charge_at_immigrate 3\n");
	p[36] = '9';                                  /* a bit no kernel knows */
	st_reseal(c);
	{
		char msg[512] = "";

		st_setup_one(&sfs[1], PROF_KV(5, 10));
		ck_assert_int_eq(state_load_text(&sfs[1], "F", c, strlen(c), NULL, msg, sizeof(msg)), -EINVAL);
		ck_assert_ptr_nonnull(strstr(msg, ": memory.move_charge_at_immigrate 9: Invalid argument"));
		mcg_engine_free(sfs[1].eng);
		sfs[1].eng = NULL;
	}
	/* another profile */
	snprintf(want, sizeof(want), "F: line 3, byte %zu: written under kernel=5.10; this daemon runs "
		 "kernel=6.12 (give the same options, or -o fresh)", (size_t)(strstr(t, "profile") - t));
	st_refused(t, len, PROF_KV(6, 12), -EINVAL, want);
	free(c);
	free(t);
	st_teardown();
}
END_TEST

/* text + a frame with the records of the groups given, into text. */
static char *st_frame(char *text, struct mcg_group *const *g, size_t n)
{
	struct cgfs_out o = { .buf = text, .len = strlen(text), .cap = strlen(text) + 1 };

	ck_assert_int_eq(state_render_frame(&sfs[0], g, n, &o), 0);
	return o.buf;
}

/* text loaded into a new engine, rendered again. */
static char *st_reload(const char *text, size_t len)
{
	char msg[512] = "", *t;

	st_setup_one(&sfs[1], PROF_KV(5, 10));
	ck_assert_msg(state_load_text(&sfs[1], "J", text, len, NULL, msg, sizeof(msg)) == 0, "%s", msg);
	t = st_render(&sfs[1]);
	mcg_engine_free(sfs[1].eng);
	sfs[1].eng = NULL;
	return t;
}

static void st_put_all(struct mcg_group *const *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mcg_put(g[i]);
}

static struct mcg_group *st_get(const char *path)
{
	struct mcg_group *g;
	int row;

	ck_assert_int_eq(node_resolve(&sfs[0], path, &g, &row), 0);
	return g;
}

START_TEST(test_journal)
{
	char *t = st_build(), *want, *got, *c, wmsg[512];
	struct mcg_group *a = st_get("/a"), *b = st_get("/a/b c"), *cg = st_get("/c"), *root = sfs[0].eng->root;
	struct mcg_group *n1, *n2, *n3, *sp = st_get("/a/b c/\\x\t");
	size_t f1, len, mid;

	/* a limit; both limits raised (replayed, the memory limit is refused
	 * until the memsw one is raised: tried again); a new group with a
	 * setting; a rename above a group */
	st_write(a, "memory.limit_in_bytes", "32M");
	t = st_frame(t, &a, 1);
	f1 = strlen(t);
	st_write(a, "memory.memsw.limit_in_bytes", "512M");
	st_write(a, "memory.limit_in_bytes", "256M");
	t = st_frame(t, &a, 1);
	n1 = st_mkdir(cg, "new");
	st_write(n1, "memory.swappiness", "3");
	t = st_frame(t, (struct mcg_group *[]){ n1, cg }, 2);
	ck_assert_int_eq(mcg_rename(sfs[0].eng, b, "bb"), 0);
	st_write(sp, "memory.soft_limit_in_bytes", "4M");
	t = st_frame(t, (struct mcg_group *[]){ sp, b }, 2);
	/* removed and made again under the same name, one created and
	 * removed between two appends, a leaf removed, all in one frame */
	ck_assert_int_eq(mcg_remove(sfs[0].eng, n1), 0);
	n2 = st_mkdir(cg, "new");
	n3 = st_mkdir(n2, "brief");
	ck_assert_int_eq(mcg_remove(sfs[0].eng, n3), 0);
	ck_assert_int_eq(mcg_remove(sfs[0].eng, sp), 0);
	t = st_frame(t, (struct mcg_group *[]){ n2, n3, n1, sp }, 4);
	/* the root's agent, a mode, an ACL gone */
	st_write(root, "release_agent", "/bin/agent2");
	node_chmod(&sfs[0], cg, -1, 0700);
	ck_assert_int_eq(node_removexattr(&sfs[0], cg, -1, ACL_XATTR_DEFAULT), 0);
	t = st_frame(t, (struct mcg_group *[]){ root, cg }, 2);
	ck_assert_ptr_nonnull(strstr(t, "\ncommit "));
	ck_assert_ptr_nonnull(strstr(t, "\nremove "));
	len = strlen(t);
	want = st_render(&sfs[0]);
	got = st_reload(t, len);
	ck_assert_str_eq(got, want);
	free(got);

	/* a torn last frame (an append a crash cut short) is ignored, also
	 * one whose commit record came through and a byte before it did not */
	st_write(n2, "memory.swappiness", "9");
	t = st_frame(t, &n2, 1);
	mid = len + (strlen(t) - len) / 2;
	got = st_reload(t, mid);
	ck_assert_str_eq(got, want);
	free(got);
	c = strdup(t);
	c[mid] = c[mid] == 'x' ? 'y' : 'x';
	got = st_reload(c, strlen(c));
	ck_assert_str_eq(got, want);
	free(got);
	got = st_reload(t, strlen(t));
	ck_assert_ptr_nonnull(strstr(got, "set memory.swappiness 9\n"));
	free(got);

	/* a sound frame that says what cannot be: the record is named */
	{
		size_t at = strlen(t), line = 1;
		char *bad = malloc(at + 256), *g;

		strcpy(bad, t);
		g = bad + at;
		sprintf(g, "ids 99 1\ngroup /zz 98 0 97\nnode - 0755 0 0\nfiles 0 0\n");
		sprintf(g + strlen(g), "commit 4 %08x\n", state_crc32(g, strlen(g)));
		for (size_t i = 0; i < at; i++)
			line += bad[i] == '\n';
		snprintf(wmsg, sizeof(wmsg), "F: line %zu, byte %zu: mkdir /zz (id 98): No such file or "
			 "directory", line + 1, at + 9);
		st_refused(bad, strlen(bad), PROF_KV(5, 10), -ENOENT, wmsg);
		free(bad);
	}

	/* a frame damaged before the last: refused, naming its first byte */
	strcpy(c, t);
	c[f1 + 10] = c[f1 + 10] == '7' ? '8' : '7';
	{
		size_t line = 1, at;
		char *commit = strstr(c + f1, "\ncommit ") + 1;

		for (size_t i = 0; i < f1; i++)
			line += c[i] == '\n';
		at = (size_t)(commit - c);
		snprintf(wmsg, sizeof(wmsg), "F: line %zu, byte %zu: checksum mismatch: the journal frame "
			 "of the %zu bytes up to its commit record at byte %zu was changed or damaged",
			 line, f1, at - f1, at);
		st_refused(c, strlen(c), PROF_KV(5, 10), -EBADMSG, wmsg);
	}
	free(c);
	free(want);
	free(t);
	st_put_all((struct mcg_group *[]){ a, b, cg, sp, n1, n2, n3 }, 7);
	st_teardown();
}
END_TEST

/* A compaction in the background: a snapshot rendered while changes go
 * on (it shows some made after the cut), then one frame with the current
 * records of every group changed since the cut, reads back as the
 * hierarchy is now: removals, a name made again, a group made and removed
 * between the two, settings and modes, whichever of them the snapshot
 * caught. */
START_TEST(test_compaction_frame)
{
	char *t = st_build(), *want, *got;
	struct mcg_group *a = st_get("/a"), *b = st_get("/a/b c"), *cg = st_get("/c");
	struct mcg_group *n1, *n2, *n3, *sp = st_get("/a/b c/\\x\t");

	free(t);
	/* after the cut, before the snapshot is rendered: caught by it */
	n1 = st_mkdir(cg, "new");
	st_write(n1, "memory.swappiness", "3");
	ck_assert_int_eq(mcg_remove(sfs[0].eng, sp), 0);
	st_write(a, "memory.limit_in_bytes", "32M");
	t = st_render(&sfs[0]);
	/* after it was rendered: not */
	ck_assert_int_eq(mcg_remove(sfs[0].eng, n1), 0);
	n2 = st_mkdir(cg, "new");
	st_write(n2, "memory.swappiness", "9");
	n3 = st_mkdir(n2, "brief");
	ck_assert_int_eq(mcg_remove(sfs[0].eng, n3), 0);
	node_chmod(&sfs[0], cg, -1, 0700);
	st_write(b, "memory.soft_limit_in_bytes", "2M");
	st_write(a, "memory.limit_in_bytes", "16M");
	/* every group a frame after the cut named, in the order they came */
	t = st_frame(t, (struct mcg_group *[]){ n1, cg, sp, a, n2, n3, b }, 7);
	want = st_render(&sfs[0]);
	got = st_reload(t, strlen(t));
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	free(t);
	st_put_all((struct mcg_group *[]){ a, b, cg, sp, n1, n2, n3 }, 7);
	st_teardown();
}
END_TEST

START_TEST(test_default_path)
{
	char buf[4096], want[4096];
	struct stat ns;

	ck_assert_int_eq(stat("/proc/self/ns/mnt", &ns), 0);
	setenv("STATE_DIRECTORY", "/tmp", 1);
	ck_assert_int_eq(state_default_path("/sys/fs/cgroup/memory", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "/tmp/sys-fs-cgroup-memory.%lu.state", (unsigned long)ns.st_ino);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(state_default_path("/", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "/tmp/-.%lu.state", (unsigned long)ns.st_ino);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(state_default_path("/tmp/a-b/.c d", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "/tmp/tmp-a\\x2db-.c\\x20d.%lu.state", (unsigned long)ns.st_ino);
	ck_assert_str_eq(buf, want);
	unsetenv("STATE_DIRECTORY");
}
END_TEST

UNIT_SUITE(state)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_journal);
	tcase_add_test(tc, test_compaction_frame);
	tcase_add_test(tc, test_default_path);
	suite_add_tcase(s, tc);
	return s;
}
