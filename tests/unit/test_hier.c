/* test_hier.c: the stand-in hierarchies (bridge/hier.h) over a fake
 * system: the devices rules against the kernel's device_cgroup semantics
 * (behaviour, exceptions, the parent's checks, propagation), cpuset's
 * grammar and inheritance, cpu's bandwidth rule, membership inherited
 * from a task's creator and kept when it moves, freezer's signals, pids
 * counts, mkdir and rmdir errnos. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/hier.h"
#include "suites.h"

/* ---- a fake system ---- */

struct fake_task {
	pid_t tid, tgid, ppid;
	bool stopped;
	uid_t uid;
};

static struct fake_task fk[32];
static int nfk, nsig, lastsig;

static int fake_task(void *arg, pid_t tid, struct hier_task_info *out)
{
	(void)arg;
	for (int i = 0; i < nfk; i++)
		if (fk[i].tid == tid) {
			*out = (struct hier_task_info){ fk[i].tgid, fk[i].ppid, 100 + (uint64_t)tid,
							fk[i].stopped, fk[i].uid, fk[i].uid };
			return 0;
		}
	return -ESRCH;
}

static long fake_tasks(void *arg, pid_t *out, size_t max)
{
	(void)arg;
	for (int i = 0; i < nfk && (size_t)i < max; i++)
		out[i] = fk[i].tid;
	return nfk;
}

static long fake_threads(void *arg, pid_t tgid, pid_t *out, size_t max)
{
	size_t n = 0;

	(void)arg;
	for (int i = 0; i < nfk && n < max; i++)
		if (fk[i].tgid == tgid)
			out[n++] = fk[i].tid;
	return (long)n;
}

static int fake_signal(void *arg, pid_t tid, int sig)
{
	(void)arg;
	nsig++;
	lastsig = sig;
	for (int i = 0; i < nfk; i++)
		if (fk[i].tgid == tid || fk[i].tid == tid)
			fk[i].stopped = sig == SIGSTOP;
	return 0;
}

static const struct hier_os fake_os = {
	.task = fake_task, .tasks = fake_tasks, .threads = fake_threads, .signal = fake_signal,
};

static void fake_add(pid_t tid, pid_t tgid, pid_t ppid)
{
	fk[nfk++] = (struct fake_task){ tid, tgid, ppid, false, tid >= 1000 ? 1000 : 0 };
}

static void fake_del(pid_t tid)
{
	for (int i = 0; i < nfk; i++)
		if (fk[i].tid == tid)
			fk[i] = fk[--nfk];
}

static struct hier_set *fake_set(void)
{
	static const unsigned huge[] = { 2048, 1048576 };

	nfk = nsig = lastsig = 0;
	fake_add(1, 1, 0);
	fake_add(10, 10, 1);
	return hier_new(&fake_os, "0-3", "0", huge, 2, 0, 0);
}

static const struct hier_caller root_who = { .pid = 10, .sys_admin = true };

/* ---- helpers ---- */

static struct hier_group *mk(struct hier_set *s, int h, struct hier_group *parent, const char *name)
{
	struct hier_group *g = NULL;

	ck_assert_int_eq(hier_mkdir(s, h, parent, name, &root_who, &g), 0);
	return g;
}

static int wr(struct hier_set *s, int h, struct hier_group *g, const char *file, const char *text)
{
	int f = hier_file_index(s, h, g, file);

	ck_assert_int_ge(f, 0);
	return hier_write(s, h, g, f, text, strlen(text), &root_who);
}

static char *rd(struct hier_set *s, int h, struct hier_group *g, const char *file)
{
	static char buf[4096];
	char *text;
	size_t len;
	int f = hier_file_index(s, h, g, file);

	ck_assert_int_ge(f, 0);
	ck_assert_int_eq(hier_read(s, h, g, f, &text, &len), 0);
	ck_assert_uint_lt(len, sizeof(buf));
	memcpy(buf, text, len);
	buf[len] = '\0';
	free(text);
	return buf;
}

/* ---- tests ---- */

START_TEST(test_hier_devices)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_DEVICES, 0), *a, *b;
	struct hier_caller user = { .pid = 10 };
	int f;

	ck_assert_str_eq(rd(s, VIEW_DEVICES, root, "devices.list"), "a *:* rwm\n");
	a = mk(s, VIEW_DEVICES, root, "a");
	/* what runc writes: everything denied, then its list */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.deny", "a\n"), 0);
	ck_assert_str_eq(rd(s, VIEW_DEVICES, a, "devices.list"), "");
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c 1:3 rwm"), 0);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c *:* m"), 0);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c 1:3 r"), 0);  /* merged */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "b 8:* r"), 0);
	ck_assert_str_eq(rd(s, VIEW_DEVICES, a, "devices.list"), "c 1:3 rwm\nc *:* m\nb 8:* r\n");
	/* the grammar */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "x 1:3 r"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c 1:3"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c 1-3 r"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c 1:3 rx"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.allow", "c 99999999999:3 r"), -EINVAL);
	/* a child starts with its parent's, and may not widen them */
	b = mk(s, VIEW_DEVICES, a, "b");
	ck_assert_str_eq(rd(s, VIEW_DEVICES, b, "devices.list"), "c 1:3 rwm\nc *:* m\nb 8:* r\n");
	ck_assert_int_eq(wr(s, VIEW_DEVICES, b, "devices.allow", "c 1:5 r"), -EPERM);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, b, "devices.allow", "c 1:5 m"), 0);
	ck_assert_int_eq(wr(s, VIEW_DEVICES, b, "devices.allow", "a"), -EPERM);
	/* "a" with children is refused */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.deny", "a"), -EINVAL);
	/* a denial reaches the children */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.deny", "c 1:3 w"), 0);
	ck_assert_str_eq(rd(s, VIEW_DEVICES, a, "devices.list"), "c 1:3 rm\nc *:* m\nb 8:* r\n");
	ck_assert_str_eq(rd(s, VIEW_DEVICES, b, "devices.list"),
			 "c 1:3 rm\nc *:* m\nb 8:* r\nc 1:5 m\n");
	/* denying in an allowing group lists exceptions but shows a *:* rwm */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, root, "devices.deny", "c 5:1 rwm"), 0);
	ck_assert_str_eq(rd(s, VIEW_DEVICES, root, "devices.list"), "a *:* rwm\n");
	/* without the capability, nothing */
	f = hier_file_index(s, VIEW_DEVICES, a, "devices.allow");
	ck_assert_int_eq(hier_write(s, VIEW_DEVICES, a, f, "c 1:3 w", 7, &user), -EPERM);
	/* devices.list is not writable, devices.allow not readable */
	ck_assert_int_eq(wr(s, VIEW_DEVICES, a, "devices.list", "a"), -EACCES);
	hier_free(s);
}
END_TEST

START_TEST(test_hier_cpuset)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_CPUSET, 0), *x, *y;

	ck_assert_str_eq(rd(s, VIEW_CPUSET, root, "cpuset.cpus"), "0-3\n");
	ck_assert_str_eq(rd(s, VIEW_CPUSET, root, "cpuset.cpu_exclusive"), "1\n");
	ck_assert_int_eq(wr(s, VIEW_CPUSET, root, "cpuset.cpus", "0"), -EACCES);
	x = mk(s, VIEW_CPUSET, root, "x");
	ck_assert_str_eq(rd(s, VIEW_CPUSET, x, "cpuset.cpus"), "\n");
	ck_assert_str_eq(rd(s, VIEW_CPUSET, x, "cpuset.cpu_exclusive"), "0\n");
	/* no CPU, no task */
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "tasks", "10"), -ENOSPC);
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.cpus", "0-4"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.cpus", "3,0-1,2"), 0);
	ck_assert_str_eq(rd(s, VIEW_CPUSET, x, "cpuset.cpus"), "0-3\n");
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.cpus", "1,3"), 0);
	ck_assert_str_eq(rd(s, VIEW_CPUSET, x, "cpuset.effective_cpus"), "1,3\n");
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.cpus", "1-"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.mems", "0"), 0);
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "tasks", "10"), 0);
	/* a populated cpuset may not be emptied */
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.cpus", ""), -ENOSPC);
	/* with clone_children, a child starts with its parent's */
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cgroup.clone_children", "1"), 0);
	y = mk(s, VIEW_CPUSET, x, "y");
	ck_assert_str_eq(rd(s, VIEW_CPUSET, y, "cpuset.cpus"), "1,3\n");
	ck_assert_str_eq(rd(s, VIEW_CPUSET, y, "cgroup.clone_children"), "1\n");
	/* a parent may not shrink below a child */
	ck_assert_int_eq(wr(s, VIEW_CPUSET, x, "cpuset.cpus", "1"), -EBUSY);
	hier_free(s);
}
END_TEST

START_TEST(test_hier_cpu)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_CPU, 0), *c, *d;

	ck_assert_int_eq(wr(s, VIEW_CPU, root, "cpu.cfs_quota_us", "50000"), -EINVAL);
	c = mk(s, VIEW_CPU, root, "c");
	ck_assert_str_eq(rd(s, VIEW_CPU, c, "cpu.cfs_quota_us"), "-1\n");
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_quota_us", "999"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_quota_us", "50000"), 0);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_period_us", "999"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_period_us", "1000001"), -EINVAL);
	d = mk(s, VIEW_CPU, c, "d");
	/* v1: no more bandwidth than the parent's */
	ck_assert_int_eq(wr(s, VIEW_CPU, d, "cpu.cfs_quota_us", "60000"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPU, d, "cpu.cfs_quota_us", "40000"), 0);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_quota_us", "30000"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_quota_us", "-5"), 0);
	ck_assert_str_eq(rd(s, VIEW_CPU, c, "cpu.cfs_quota_us"), "-1\n");
	/* a grandchild's quota counts through a child without one */
	ck_assert_int_eq(wr(s, VIEW_CPU, d, "cpu.cfs_quota_us", "-1"), 0);
	{
		struct hier_group *e = mk(s, VIEW_CPU, d, "e");

		ck_assert_int_eq(wr(s, VIEW_CPU, e, "cpu.cfs_quota_us", "40000"), 0);
		ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_quota_us", "30000"), -EINVAL);
		ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.cfs_quota_us", "40000"), 0);
	}
	/* shares are clamped, not refused */
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.shares", "1"), 0);
	ck_assert_str_eq(rd(s, VIEW_CPU, c, "cpu.shares"), "2\n");
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.shares", "1000000"), 0);
	ck_assert_str_eq(rd(s, VIEW_CPU, c, "cpu.shares"), "262144\n");
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpu.shares", "x"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpuacct.usage", "5"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_CPU, c, "cpuacct.usage", "0"), 0);
	ck_assert_str_eq(rd(s, VIEW_CPU, c, "cpuacct.usage_percpu"), "0 0 0 0 \n");
	hier_free(s);
}
END_TEST

START_TEST(test_hier_members)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_PIDS, 0), *p, *q;

	p = mk(s, VIEW_PIDS, root, "p");
	q = mk(s, VIEW_PIDS, root, "q");
	fake_add(20, 20, 10);   /* a child of 10, with a thread */
	fake_add(21, 20, 10);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 20), root);
	/* a process moves whole through cgroup.procs */
	ck_assert_int_eq(wr(s, VIEW_PIDS, p, "cgroup.procs", "20"), 0);
	ck_assert_str_eq(rd(s, VIEW_PIDS, p, "tasks"), "20\n21\n");
	ck_assert_str_eq(rd(s, VIEW_PIDS, p, "cgroup.procs"), "20\n");
	ck_assert_str_eq(rd(s, VIEW_PIDS, p, "pids.current"), "2\n");
	/* a task it makes after is in its group; one thread moves alone */
	fake_add(30, 30, 20);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 30), p);
	ck_assert_int_eq(wr(s, VIEW_PIDS, q, "tasks", "21"), 0);
	ck_assert_str_eq(rd(s, VIEW_PIDS, p, "tasks"), "20\n30\n");
	ck_assert_str_eq(rd(s, VIEW_PIDS, q, "tasks"), "21\n");
	/* 10 moves; its child 20 stays where it is */
	ck_assert_int_eq(wr(s, VIEW_PIDS, q, "cgroup.procs", "10"), 0);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 20), p);
	/* CLONE_PARENT: 20 (in p) makes 50, whose real parent is 20's (10, in
	 * q): 50 starts in p, as the kernel places it; another of 10's made
	 * after starts in q */
	ck_assert_int_eq(hier_maker(s, 20, 100 + 50), 0);
	fake_add(50, 50, 10);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 50), p);
	fake_add(51, 51, 10);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 51), q);
	/* a process of 10's that started before the word does not take it */
	ck_assert_int_eq(hier_maker(s, 20, 100 + 60), 0);
	fake_add(52, 52, 10);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 52), q);
	ck_assert_int_eq(hier_maker(s, 999, 100 + 60), -ESRCH);
	fake_del(50);
	fake_del(51);
	fake_del(52);
	/* 0 is the writer (10 here) */
	ck_assert_int_eq(wr(s, VIEW_PIDS, root, "tasks", "0"), 0);
	ck_assert_ptr_eq(hier_group_of(s, VIEW_PIDS, 10), root);
	/* the other hierarchies did not move */
	ck_assert_ptr_eq(hier_group_of(s, VIEW_FREEZER, 20), hier_group(s, VIEW_FREEZER, 0));
	ck_assert_int_eq(wr(s, VIEW_PIDS, p, "tasks", "999"), -ESRCH);
	ck_assert_int_eq(wr(s, VIEW_PIDS, p, "tasks", "x"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_PIDS, p, "tasks", "-2"), -EINVAL);
	/* a user moves only its own tasks (1000's here); root any */
	fake_add(1000, 1000, 1);
	{
		struct hier_caller user = { .pid = 1000, .uid = 1000 };
		int f = hier_file_index(s, VIEW_PIDS, q, "tasks");

		ck_assert_int_eq(hier_write(s, VIEW_PIDS, q, f, "10", 2, &user), -EACCES);
		ck_assert_int_eq(hier_write(s, VIEW_PIDS, q, f, "1000", 4, &user), 0);
		ck_assert_int_eq(hier_write(s, VIEW_PIDS, q, f, "0", 1, &user), 0);
		fake_del(1000);
	}
	/* a group with tasks is busy; empty, it goes */
	ck_assert_int_eq(hier_rmdir(s, VIEW_PIDS, root, "p"), -EBUSY);
	fake_del(20);
	fake_del(30);
	ck_assert_int_eq(hier_rmdir(s, VIEW_PIDS, root, "p"), 0);
	ck_assert_int_eq(hier_rmdir(s, VIEW_PIDS, root, "p"), -ENOENT);
	ck_assert_int_eq(hier_rmdir(s, VIEW_PIDS, root, "tasks"), -ENOTDIR);
	/* a thread whose process is gone... */
	fake_del(21);
	ck_assert_int_eq(hier_rmdir(s, VIEW_PIDS, root, "q"), 0);
	ck_assert_int_eq(hier_count(s, VIEW_PIDS), 1);
	/* pids.max's grammar */
	q = mk(s, VIEW_PIDS, root, "q");
	ck_assert_int_eq(wr(s, VIEW_PIDS, q, "pids.max", "-1"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_PIDS, q, "pids.max", "10"), 0);
	ck_assert_str_eq(rd(s, VIEW_PIDS, q, "pids.max"), "10\n");
	ck_assert_int_eq(wr(s, VIEW_PIDS, q, "pids.max", "max"), 0);
	ck_assert_str_eq(rd(s, VIEW_PIDS, q, "pids.max"), "max\n");
	hier_free(s);
}
END_TEST

START_TEST(test_hier_freezer)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_FREEZER, 0), *f, *g;

	ck_assert_int_lt(hier_file_index(s, VIEW_FREEZER, root, "freezer.state"), 0);
	f = mk(s, VIEW_FREEZER, root, "f");
	g = mk(s, VIEW_FREEZER, f, "g");
	fake_add(40, 40, 10);
	fake_add(41, 41, 10);
	ck_assert_int_eq(wr(s, VIEW_FREEZER, f, "cgroup.procs", "40"), 0);
	ck_assert_int_eq(wr(s, VIEW_FREEZER, g, "cgroup.procs", "41"), 0);
	ck_assert_int_eq(nsig, 0);
	ck_assert_int_eq(wr(s, VIEW_FREEZER, f, "freezer.state", "FREEZING"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_FREEZER, f, "freezer.state", "FROZEN"), 0);
	ck_assert_int_eq(lastsig, SIGSTOP);
	ck_assert_str_eq(rd(s, VIEW_FREEZER, f, "freezer.state"), "FROZEN\n");
	ck_assert_str_eq(rd(s, VIEW_FREEZER, g, "freezer.state"), "FROZEN\n");
	ck_assert_str_eq(rd(s, VIEW_FREEZER, g, "freezer.parent_freezing"), "1\n");
	ck_assert_str_eq(rd(s, VIEW_FREEZER, g, "freezer.self_freezing"), "0\n");
	ck_assert(fk[nfk - 1].stopped && fk[nfk - 2].stopped);
	/* a task that did not stop yet: FREEZING, and asked again */
	fk[nfk - 1].stopped = false;
	ck_assert_str_eq(rd(s, VIEW_FREEZER, f, "freezer.state"), "FREEZING\n");
	ck_assert(fk[nfk - 1].stopped);
	/* moved out of the frozen group, it continues */
	ck_assert_int_eq(wr(s, VIEW_FREEZER, root, "cgroup.procs", "41"), 0);
	ck_assert_int_eq(lastsig, SIGCONT);
	ck_assert_int_eq(wr(s, VIEW_FREEZER, f, "freezer.state", "THAWED"), 0);
	ck_assert(!fk[nfk - 1].stopped && !fk[nfk - 2].stopped);
	ck_assert_str_eq(rd(s, VIEW_FREEZER, f, "freezer.state"), "THAWED\n");
	hier_free(s);
}
END_TEST

START_TEST(test_hier_tree)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_NET, 0), *a, *b;
	struct hier_caller user = { .pid = 10, .uid = 1000, .gid = 100 };
	char path[64], name[300];

	ck_assert_int_eq(hier_mkdir(s, VIEW_NET, root, "", &root_who, NULL), -EINVAL);
	ck_assert_int_eq(hier_mkdir(s, VIEW_NET, root, "x\ny", &root_who, NULL), -EINVAL);
	ck_assert_int_eq(hier_mkdir(s, VIEW_NET, root, "tasks", &root_who, NULL), -EEXIST);
	memset(name, 'n', 256);
	name[256] = '\0';
	ck_assert_int_eq(hier_mkdir(s, VIEW_NET, root, name, &root_who, NULL), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_NET, root, "net_cls.classid", "0x100001"), 0);
	ck_assert_int_eq(hier_mkdir(s, VIEW_NET, root, "a", &user, &a), 0);
	ck_assert_int_eq(hier_mkdir(s, VIEW_NET, root, "a", &user, NULL), -EEXIST);
	/* classid is inherited; a new group belongs to its maker */
	ck_assert_str_eq(rd(s, VIEW_NET, a, "net_cls.classid"), "1048577\n");
	ck_assert_uint_eq(hier_attr(a, -1)->uid, 1000);
	ck_assert_uint_eq(hier_attr(a, hier_file_index(s, VIEW_NET, a, "tasks"))->gid, 100);
	ck_assert_uint_eq(hier_attr(root, -1)->uid, 0);
	b = mk(s, VIEW_NET, a, "b");
	ck_assert_int_eq(hier_path(b, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/a/b");
	ck_assert_int_eq(hier_path(root, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/");
	ck_assert_int_eq(hier_rmdir(s, VIEW_NET, root, "a"), -EBUSY);
	ck_assert_int_eq(hier_rmdir(s, VIEW_NET, a, "b"), 0);
	ck_assert_int_eq(hier_count(s, VIEW_NET), 2);
	/* root-only files */
	ck_assert_int_ge(hier_file_index(s, VIEW_NET, root, "release_agent"), 0);
	ck_assert_int_lt(hier_file_index(s, VIEW_NET, a, "release_agent"), 0);
	ck_assert_str_eq(rd(s, VIEW_NET, root, "release_agent"), "\n");
	/* memory is not a stand-in */
	ck_assert(!hier_is_standin(VIEW_MEMORY));
	ck_assert_ptr_null(hier_group(s, VIEW_MEMORY, 0));
	hier_free(s);
}
END_TEST

START_TEST(test_hier_hugetlb)
{
	struct hier_set *s = fake_set();
	struct hier_group *root = hier_group(s, VIEW_HUGETLB, 0), *h;

	/* the largest page count, rounded down to whole huge pages */
	ck_assert_str_eq(rd(s, VIEW_HUGETLB, root, "hugetlb.2MB.limit_in_bytes"),
			 "9223372036852678656\n");
	ck_assert_str_eq(rd(s, VIEW_HUGETLB, root, "hugetlb.1GB.limit_in_bytes"),
			 "9223372035781033984\n");
	ck_assert_int_eq(wr(s, VIEW_HUGETLB, root, "hugetlb.2MB.limit_in_bytes", "4M"), -EINVAL);
	h = mk(s, VIEW_HUGETLB, root, "h");
	ck_assert_int_eq(wr(s, VIEW_HUGETLB, h, "hugetlb.2MB.limit_in_bytes", "5M"), 0);
	ck_assert_str_eq(rd(s, VIEW_HUGETLB, h, "hugetlb.2MB.limit_in_bytes"), "4194304\n");
	ck_assert_int_eq(wr(s, VIEW_HUGETLB, h, "hugetlb.2MB.limit_in_bytes", "5Q"), -EINVAL);
	ck_assert_int_eq(wr(s, VIEW_HUGETLB, h, "hugetlb.2MB.limit_in_bytes", "-1"), 0);
	ck_assert_str_eq(rd(s, VIEW_HUGETLB, h, "hugetlb.2MB.limit_in_bytes"),
			 "9223372036852678656\n");
	/* blkio's per-device rules */
	h = mk(s, VIEW_BLKIO, hier_group(s, VIEW_BLKIO, 0), "b");
	ck_assert_int_eq(wr(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device", "8:0 1048576"), 0);
	ck_assert_int_eq(wr(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device", "8:16 10"), 0);
	ck_assert_int_eq(wr(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device", "8:0 2048"), 0);
	ck_assert_str_eq(rd(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device"),
			 "8:0 2048\n8:16 10\n");
	ck_assert_int_eq(wr(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device", "8:0 0"), 0);
	ck_assert_str_eq(rd(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device"), "8:16 10\n");
	ck_assert_int_eq(wr(s, VIEW_BLKIO, h, "blkio.throttle.read_bps_device", "8 10"), -EINVAL);
	hier_free(s);
}
END_TEST

UNIT_SUITE(hier)
{
	Suite *s = suite_create("hier");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_hier_devices);
	tcase_add_test(tc, test_hier_cpuset);
	tcase_add_test(tc, test_hier_cpu);
	tcase_add_test(tc, test_hier_members);
	tcase_add_test(tc, test_hier_freezer);
	tcase_add_test(tc, test_hier_tree);
	tcase_add_test(tc, test_hier_hugetlb);
	suite_add_tcase(s, tc);
	return s;
}
