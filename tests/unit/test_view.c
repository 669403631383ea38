/* test_view.c: memcgfs-run's synthesized /proc texts (run/view.h): which
 * paths are answered, lexical joins, and the rewritten mountinfo, mounts,
 * cgroup and /proc/cgroups on real-shaped input, including a listing of
 * another namespace (unchanged) and mounts/mountinfo that disagree. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bridge/view.h"
#include "suites.h"

static const struct view_ns ns = {
	.top_id = 40,
	/* (the kernel of this fixture has no devices, freezer... controller:
	 * those hierarchies are not mounted) */
	.ctl_id = { [VIEW_CPUSET] = 44, [VIEW_CPU] = 42, [VIEW_MEMORY] = 41, [VIEW_PIDS] = 43,
		    [VIEW_SYSTEMD] = 46 },
	.hier = { 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 },
	.dev = { [VIEW_MEMORY] = 45, [VIEW_CPU] = 51 },   /* makedev(0, N) */
	.nhidden = 2,
	.hidden = { 31, 35 },
};

START_TEST(test_view_maybe)
{
	ck_assert(view_maybe("/proc/self/mountinfo"));
	ck_assert(view_maybe("mounts"));
	ck_assert(view_maybe("/proc/cgroups"));
	ck_assert(view_maybe("/etc/mtab"));
	ck_assert(view_maybe("self/cgroup"));
	ck_assert(!view_maybe("/proc/self/maps"));
	ck_assert(!view_maybe("/etc/ld.so.cache"));
	ck_assert(!view_maybe("/proc/self/mountinfo/"));
	ck_assert(!view_maybe("cgroupx"));
}
END_TEST

START_TEST(test_view_join)
{
	char out[64];

	ck_assert_int_eq(view_join("/proc", "self/mountinfo", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/proc/self/mountinfo");
	ck_assert_int_eq(view_join("/anything", "/proc//./self/../self/cgroup", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/proc/self/cgroup");
	ck_assert_int_eq(view_join("/", "../../proc/mounts", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/proc/mounts");
	ck_assert_int_eq(view_join("/etc", "../proc/self/mounts", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/proc/self/mounts");
	ck_assert_int_eq(view_join("/a/b", "..", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/a");
	ck_assert_int_eq(view_join("/a", "..", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/");
	ck_assert_int_eq(view_join("/0123456789/0123456789", "0123456789/0123456789/0123456789/x",
				   out, 40), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_view_classify)
{
	struct view_req r;

	r = view_classify("/proc/self/mountinfo");
	ck_assert_int_eq(r.kind, VIEW_MOUNTINFO);
	ck_assert_int_eq(r.who, VIEW_WHO_SELF);
	r = view_classify("/proc/mounts");
	ck_assert_int_eq(r.kind, VIEW_MOUNTS);
	ck_assert_int_eq(r.who, VIEW_WHO_SELF);
	r = view_classify("/proc/4242/cgroup");
	ck_assert_int_eq(r.kind, VIEW_CGROUP);
	ck_assert_int_eq(r.who, VIEW_WHO_PID);
	ck_assert_int_eq(r.pid, 4242);
	r = view_classify("/proc/4242/task/4250/mountinfo");
	ck_assert_int_eq(r.kind, VIEW_MOUNTINFO);
	ck_assert_int_eq(r.pid, 4250);
	r = view_classify("/proc/self/task/77/cgroup");
	ck_assert_int_eq(r.who, VIEW_WHO_PID);
	ck_assert_int_eq(r.pid, 77);
	r = view_classify("/proc/thread-self/cgroup");
	ck_assert_int_eq(r.kind, VIEW_CGROUP);
	ck_assert_int_eq(r.who, VIEW_WHO_THREAD_SELF);
	ck_assert_int_eq(view_classify("/proc/cgroups").kind, VIEW_CGROUPS);
	ck_assert_int_eq(view_classify("/etc/mtab").kind, VIEW_MTAB);
	/* not ours */
	ck_assert_int_eq(view_classify("/proc/self/maps").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/proc/01/cgroup").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/proc/x1/cgroup").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/proc/1/task/cgroup").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/proc/thread-self/task/3/cgroup").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/proc/1/net/mounts").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/proc/1/cgroups").kind, VIEW_NONE);
	ck_assert_int_eq(view_classify("/sys/fs/cgroup/memory/mounts").kind, VIEW_NONE);
}
END_TEST

START_TEST(test_view_pick_hier)
{
	struct view_ns n = { 0 };

	view_pick_hier(&n, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
			   "cpuset\t3\t1\t1\ncpu\t9\t40\t1\nmemory\t7\t120\t1\npids\t0\t1\t1\n",
		       "9:cpu:/\n7:memory:/\n3:cpuset:/\n0::/\n");
	ck_assert_int_eq(n.hier[VIEW_CPUSET], 10);
	ck_assert_int_eq(n.hier[VIEW_MEMORY], 12);
	ck_assert_int_eq(n.hier[VIEW_SYSTEMD], 10 + VIEW_SYSTEMD);
	view_pick_hier(&n, "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t0\t50\t1\n",
		       "0::/init.scope\n");
	ck_assert_int_eq(n.hier[VIEW_CPUSET], 1);
	ck_assert_int_eq(n.hier[VIEW_MEMORY], 3);
	/* a named hierarchy has an id /proc/cgroups does not show */
	view_pick_hier(&n, "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t7\t1\t1\n",
		       "11:name=systemd:/\n7:memory:/\n");
	ck_assert_int_eq(n.hier[VIEW_CPUSET], 12);
}
END_TEST

#define MI_ROOT "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
#define MI_HOSTCG "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" \
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
#define MI_FUSE "38 27 0:45 / /tmp/m rw,nosuid,nodev,relatime - fuse.memcgfs memcgfs " \
	"rw,user_id=0,group_id=0,default_permissions,allow_other\n"
#define MI_OURS "40 23 0:50 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs ro,size=64k\n" \
	"41 40 0:45 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:5 - fuse.memcgfs " \
	"memcgfs rw,user_id=0,group_id=0,default_permissions,allow_other\n" \
	"42 40 0:51 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime - fuse.memcgfs-run " \
	"memcgfs-run rw,user_id=0,group_id=0,default_permissions,allow_other\n" \
	"46 40 0:52 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime - fuse.memcgfs-run " \
	"memcgfs-run rw,user_id=0,group_id=0,default_permissions,allow_other\n"

START_TEST(test_view_mountinfo)
{
	struct view_buf b = { 0 };

	ck_assert_int_eq(view_mountinfo(&ns, MI_ROOT MI_HOSTCG MI_FUSE MI_OURS, NULL, &b), 0);
	ck_assert_str_eq(b.p, MI_ROOT
		"38 27 0:45 / /tmp/m rw,nosuid,nodev,relatime - fuse.memcgfs memcgfs "
		"rw,user_id=0,group_id=0,default_permissions,allow_other\n"
		"40 23 0:50 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs ro,size=64k\n"
		"41 40 0:45 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:5 - cgroup "
		"cgroup rw,memory\n"
		"42 40 0:51 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime - cgroup cgroup "
		"rw,cpu,cpuacct\n"
		"46 40 0:52 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime - cgroup cgroup "
		"rw,xattr,name=systemd\n");
	view_buf_free(&b);
	/* another namespace's listing (no top tmpfs of ours): as it is */
	ck_assert_int_eq(view_mountinfo(&ns, MI_ROOT MI_HOSTCG MI_FUSE, NULL, &b), 0);
	ck_assert_str_eq(b.p, MI_ROOT MI_HOSTCG MI_FUSE);
	view_buf_free(&b);
	/* a container's: its binds of our superblocks below /sys/fs/cgroup
	 * are the hierarchies (their roots the groups bound), a mount of
	 * memcgfs elsewhere stays as it is */
	ck_assert_int_eq(view_mountinfo(&ns, MI_ROOT
		"104 27 0:59 / /sys/fs/cgroup rw,nosuid - tmpfs cgroup rw,size=1024k\n"
		"105 104 0:45 /c9 /sys/fs/cgroup/memory ro,nosuid - fuse.memcgfs memcgfs rw,user_id=0\n"
		"106 104 0:51 /c9 /sys/fs/cgroup/cpu,cpuacct ro - fuse.memcgfs-run memcgfs-run rw\n"
		"107 27 0:45 / /tmp/m rw - fuse.memcgfs memcgfs rw\n"
		"108 104 0:46 / /sys/fs/cgroup/other rw - fuse.x x rw\n", NULL, &b), 0);
	ck_assert_str_eq(b.p, MI_ROOT
		"104 27 0:59 / /sys/fs/cgroup rw,nosuid - tmpfs cgroup rw,size=1024k\n"
		"105 104 0:45 /c9 /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n"
		"106 104 0:51 /c9 /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n"
		"107 27 0:45 / /tmp/m rw - fuse.memcgfs memcgfs rw\n"
		"108 104 0:46 / /sys/fs/cgroup/other rw - fuse.x x rw\n");
	view_buf_free(&b);
	/* ... in a cgroup namespace of its own made at /c9: its roots are "/" */
	ck_assert_int_eq(view_mountinfo(&ns,
		"105 104 0:45 /c9 /sys/fs/cgroup/memory ro - fuse.memcgfs memcgfs rw\n"
		"106 104 0:51 /c9/sub /sys/fs/cgroup/cpu,cpuacct ro - fuse.memcgfs-run memcgfs-run rw\n",
		(const char *[VIEW_NCTL]){ [VIEW_MEMORY] = "/c9", [VIEW_CPU] = "/c9" }, &b), 0);
	ck_assert_str_eq(b.p,
		"105 104 0:45 / /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"
		"106 104 0:51 /sub /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n");
	view_buf_free(&b);
}
END_TEST

#define MO_ROOT "/dev/vda / ext4 rw,relatime 0 0\n"
#define MO_HOSTCG "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n" \
	"cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
#define MO_FUSE "memcgfs /tmp/m fuse.memcgfs rw,nosuid,nodev,relatime,user_id=0,group_id=0," \
	"default_permissions,allow_other 0 0\n"
#define MO_OURS "tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,relatime,size=64k 0 0\n" \
	"memcgfs /sys/fs/cgroup/memory fuse.memcgfs rw,nosuid,nodev,noexec,relatime,user_id=0," \
	"group_id=0,default_permissions,allow_other 0 0\n" \
	"memcgfs-run /sys/fs/cgroup/cpu,cpuacct fuse.memcgfs-run rw,nosuid,nodev,noexec,relatime," \
	"user_id=0,group_id=0,default_permissions,allow_other 0 0\n" \
	"memcgfs-run /sys/fs/cgroup/systemd fuse.memcgfs-run rw,nosuid,nodev,noexec,relatime," \
	"user_id=0,group_id=0,default_permissions,allow_other 0 0\n"

START_TEST(test_view_mounts)
{
	struct view_buf b = { 0 };

	ck_assert_int_eq(view_mounts(&ns, MO_ROOT MO_HOSTCG MO_FUSE MO_OURS,
				     MI_ROOT MI_HOSTCG MI_FUSE MI_OURS, &b), 0);
	ck_assert_str_eq(b.p, MO_ROOT MO_FUSE
		"tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,relatime,size=64k 0 0\n"
		"cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0\n"
		"cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,nodev,noexec,relatime,cpu,cpuacct 0 0\n"
		"cgroup /sys/fs/cgroup/systemd cgroup rw,nosuid,nodev,noexec,relatime,xattr,name=systemd 0 0\n");
	view_buf_free(&b);
	/* a mount came between the two reads */
	ck_assert_int_eq(view_mounts(&ns, MO_ROOT MO_FUSE MO_OURS, MI_ROOT MI_HOSTCG MI_FUSE MI_OURS, &b),
			 -EAGAIN);
	view_buf_free(&b);
	/* as many lines, but not the same mounts */
	ck_assert_int_eq(view_mounts(&ns, MO_FUSE MO_ROOT MO_HOSTCG MO_OURS,
				     MI_ROOT MI_HOSTCG MI_FUSE MI_OURS, &b), -EAGAIN);
	view_buf_free(&b);
	ck_assert_int_eq(view_mounts(&ns, MO_ROOT MO_FUSE, MI_ROOT MI_FUSE, &b), 0);
	ck_assert_str_eq(b.p, MO_ROOT MO_FUSE);
	view_buf_free(&b);
}
END_TEST

START_TEST(test_view_cgroup)
{
	struct view_buf b = { 0 };
	const char *groups[VIEW_NCTL] = { [VIEW_MEMORY] = "/demo/a", [VIEW_PIDS] = "/p",
					  [VIEW_DEVICES] = "/d" };

	ck_assert_int_eq(view_cgroup(&ns, "12:pids:/user.slice\n9:cpu,cpuacct:/user.slice\n"
				     "7:memory:/user.slice\n3:cpuset:/\n1:name=systemd:/user.slice\n"
				     "2:name=other:/x\n0::/user.slice\n", groups, NULL, &b), 0);
	/* (the host's other v1 hierarchies are not mounted in the view; a
	 * hierarchy the kernel lacks is not shown: devices here) */
	ck_assert_str_eq(b.p, "24:name=systemd:/\n22:pids:/p\n15:memory:/demo/a\n14:cpu,cpuacct:/\n"
			 "13:cpuset:/\n2:name=other:/x\n0::/user.slice\n");
	view_buf_free(&b);
	/* in a cgroup namespace of its own, each seen from its root there */
	ck_assert_int_eq(view_cgroup(&ns, "0::/\n", groups,
				     (const char *[VIEW_NCTL]){ [VIEW_MEMORY] = "/demo/a", [VIEW_PIDS] = "/",
								[VIEW_SYSTEMD] = "/s" }, &b), 0);
	ck_assert_str_eq(b.p, "24:name=systemd:/..\n22:pids:/p\n15:memory:/\n14:cpu,cpuacct:/\n"
			 "13:cpuset:/\n0::/\n");
	view_buf_free(&b);
	/* a cgroup2-only host */
	groups[VIEW_PIDS] = NULL;
	ck_assert_int_eq(view_cgroup(&ns, "0::/init.scope\n", groups, NULL, &b), 0);
	ck_assert_str_eq(b.p, "24:name=systemd:/\n22:pids:/\n15:memory:/demo/a\n14:cpu,cpuacct:/\n"
			 "13:cpuset:/\n0::/init.scope\n");
	view_buf_free(&b);
}
END_TEST

/* --group-as-root: the group is the memory hierarchy's root, as a cgroup
 * namespace made there shows it: in /proc/PID/cgroup (the group "/", below
 * it "/sub", beside it "/../x") and in mountinfo's root field (a bind of
 * the group's directory, and of a subgroup the mount guard made). */
START_TEST(test_view_as_root)
{
	struct view_ns rns = ns;
	struct view_buf b = { 0 };
	char out[64];

	static const char *const rel[][3] = {
		{ "/g", "/g", "/" }, { "/g", "/g/sub/x", "/sub/x" }, { "/g", "/gx", "/../gx" },
		{ "/g", "/", "/.." }, { "/a/b", "/a/c", "/../c" }, { "/a/b/c", "/x", "/../../../x" },
		{ "/", "/x", "/x" },
	};

	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		ck_assert_int_eq(view_relative(rel[i][0], rel[i][1], out, sizeof(out)), 0);
		ck_assert_str_eq(out, rel[i][2]);
	}
	ck_assert_int_eq(view_relative("/a/b/c", "/x", out, 8), -ENAMETOOLONG);

	snprintf(rns.root, sizeof(rns.root), "/demo");
	rns.ctl_id[VIEW_PIDS] = rns.ctl_id[VIEW_SYSTEMD] = 0;
	ck_assert_int_eq(view_cgroup(&rns, "0::/init.scope\n",
				     (const char *[VIEW_NCTL]){ [VIEW_MEMORY] = "/demo" }, NULL, &b), 0);
	ck_assert_str_eq(b.p, "15:memory:/\n14:cpu,cpuacct:/\n13:cpuset:/\n0::/init.scope\n");
	view_buf_free(&b);
	ck_assert_int_eq(view_cgroup(&rns, "0::/init.scope\n",
				     (const char *[VIEW_NCTL]){ [VIEW_MEMORY] = "/other" }, NULL, &b), 0);
	ck_assert_str_eq(b.p, "15:memory:/../other\n14:cpu,cpuacct:/\n13:cpuset:/\n0::/init.scope\n");
	view_buf_free(&b);
	view_add_bound(&rns, 45, VIEW_MEMORY);
	ck_assert_int_eq(view_mountinfo(&rns, MI_ROOT
		"40 23 0:50 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs ro\n"
		"41 40 0:45 /demo /sys/fs/cgroup/memory rw,relatime - fuse.memcgfs memcgfs rw\n"
		"45 23 0:45 /demo/sub /mnt rw,relatime - fuse.memcgfs memcgfs rw\n", NULL, &b), 0);
	ck_assert_str_eq(b.p, MI_ROOT
		"40 23 0:50 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs ro\n"
		"41 40 0:45 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		"45 23 0:45 /sub /mnt rw,relatime - cgroup cgroup rw,memory\n");
	view_buf_free(&b);
	/* a group name with a space: escaped in mountinfo */
	snprintf(rns.root, sizeof(rns.root), "/my group");
	ck_assert_int_eq(view_mountinfo(&rns, MI_ROOT
		"40 23 0:50 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs ro\n"
		"41 40 0:45 /my\\040group /sys/fs/cgroup/memory rw,relatime - fuse.memcgfs memcgfs rw\n", NULL, &b), 0);
	ck_assert_str_eq(b.p, MI_ROOT
		"40 23 0:50 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs ro\n"
		"41 40 0:45 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n");
	view_buf_free(&b);
}
END_TEST

START_TEST(test_view_proc_cgroups)
{
	struct view_buf b = { 0 };
	const long n[VIEW_NCTL] = { [VIEW_CPUSET] = 2, [VIEW_MEMORY] = 5, [VIEW_PIDS] = 3 };

	/* a row per controller of a hierarchy mounted here, in the kernel's
	 * order; cpu and cpuacct share theirs; devices (not mounted) left out */
	ck_assert_int_eq(view_proc_cgroups(&ns, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
					   "cpuset\t3\t1\t1\ncpu\t9\t40\t1\ncpuacct\t9\t40\t1\n"
					   "memory\t7\t120\t1\ndevices\t5\t1\t1\npids\t12\t3\t1\n", n, &b), 0);
	ck_assert_str_eq(b.p, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
			 "cpuset\t13\t2\t1\ncpu\t14\t1\t1\ncpuacct\t14\t1\t1\nmemory\t15\t5\t1\n"
			 "pids\t22\t3\t1\n");
	view_buf_free(&b);
	/* a kernel without memory's row still shows memcgfs's */
	ck_assert_int_eq(view_proc_cgroups(&ns, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
					   "cpuset\t3\t1\t1\n", n, &b), 0);
	ck_assert_str_eq(b.p, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
			 "cpuset\t13\t2\t1\nmemory\t15\t5\t1\n");
	view_buf_free(&b);
}
END_TEST

UNIT_SUITE(view)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_view_maybe);
	tcase_add_test(tc, test_view_join);
	tcase_add_test(tc, test_view_classify);
	tcase_add_test(tc, test_view_pick_hier);
	tcase_add_test(tc, test_view_mountinfo);
	tcase_add_test(tc, test_view_mounts);
	tcase_add_test(tc, test_view_cgroup);
	tcase_add_test(tc, test_view_as_root);
	tcase_add_test(tc, test_view_proc_cgroups);
	suite_add_tcase(s, tc);
	return s;
}
