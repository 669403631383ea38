/* test_guard.c: the mount guard's decisions on strings (run/guard.h):
 * which view hierarchy a cgroup v1 mount's options name, what is refused
 * and why, and how mount(2)'s flags are read, in the kernel's order. */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/mount.h>

#include "bridge/guard.h"
#include "suites.h"

START_TEST(test_guard_v1_ctl_view)
{
	char why[160];
	enum guard_v1_stage st;

	ck_assert_int_eq(guard_v1_ctl("memory", ~0UL, &st, why, sizeof(why)), VIEW_MEMORY);
	/* what mount(8) and cgconfigparser pass around the controller */
	ck_assert_int_eq(guard_v1_ctl("rw,nosuid,nodev,noexec,relatime,memory", ~0UL, &st, why, sizeof(why)),
			 VIEW_MEMORY);
	ck_assert_int_eq(guard_v1_ctl("memory,memory,xattr", ~0UL, &st, why, sizeof(why)), VIEW_MEMORY);
	ck_assert_int_eq(guard_v1_ctl("cpu,cpuacct", ~0UL, &st, why, sizeof(why)), VIEW_CPU);
	ck_assert_int_eq(guard_v1_ctl("cpuacct,xattr,cpu", ~0UL, &st, why, sizeof(why)), VIEW_CPU);
	ck_assert_int_eq(guard_v1_ctl(",cpuset,clone_children,", ~0UL, &st, why, sizeof(why)), VIEW_CPUSET);
	ck_assert_int_eq(guard_v1_ctl("cpuset,noprefix", ~0UL, &st, why, sizeof(why)), VIEW_CPUSET);
	ck_assert_int_eq(guard_v1_ctl("devices", ~0UL, &st, why, sizeof(why)), VIEW_DEVICES);
	ck_assert_int_eq(guard_v1_ctl("net_prio,net_cls", ~0UL, &st, why, sizeof(why)), VIEW_NET);
	/* systemd's named hierarchy, as it is mounted, and by its name alone
	 * (the kernel reuses a root its name names when no set is given) */
	ck_assert_int_eq(guard_v1_ctl("none,name=systemd", ~0UL, &st, why, sizeof(why)), VIEW_SYSTEMD);
	ck_assert_int_eq(guard_v1_ctl("xattr,name=systemd", ~0UL, &st, why, sizeof(why)), VIEW_SYSTEMD);
	ck_assert_int_eq(guard_v1_ctl("name=systemd", ~0UL, &st, why, sizeof(why)), VIEW_SYSTEMD);
}
END_TEST

/* Each refusal with the kernel's errno on a host mounted as the view
 * (kernel/cgroup/cgroup-v1.c: cgroup1_parse_param, check_cgroupfs_options,
 * cgroup1_root_to_use, rebind_subsystems), and whether the kernel would
 * have made a new hierarchy. */
START_TEST(test_guard_v1_ctl_refused)
{
	char why[160];
	enum guard_v1_stage st;

	/* no options at all is every controller, as "all" is: each is bound
	 * to a hierarchy of the view and cannot move */
	ck_assert_int_eq(guard_v1_ctl(NULL, ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(st, GUARD_V1_NEW);
	ck_assert_str_eq(why, "every controller at once: the view mounts each in a hierarchy of its own");
	ck_assert_int_eq(guard_v1_ctl("rw,all", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(guard_v1_ctl("all,memory", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "all with a controller named");
	/* a new named hierarchy: memcgfs-run makes none */
	ck_assert_int_eq(guard_v1_ctl("none,name=other", ~0UL, &st, why, sizeof(why)), -EPERM);
	ck_assert_int_eq(st, GUARD_V1_NEW);
	ck_assert_str_eq(why, "a new named hierarchy (name=other): the view has only name=systemd");
	/* a name alone names nothing the view has */
	ck_assert_int_eq(guard_v1_ctl("name=other", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_ne(st, GUARD_V1_NEW);
	/* systemd's name with a controller: its hierarchy has none */
	ck_assert_int_eq(guard_v1_ctl("memory,name=systemd", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_ne(st, GUARD_V1_NEW);
	ck_assert_int_eq(guard_v1_ctl("none", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "a hierarchy without controllers (none) needs a name");
	ck_assert_int_eq(guard_v1_ctl("none,memory", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("memory,noprefix", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("memory,release_agent=/bin/x", ~0UL, &st, why, sizeof(why)), -EPERM);
	/* a controller the view does not mount: a new hierarchy of it */
	ck_assert_int_eq(guard_v1_ctl("misc", ~0UL, &st, why, sizeof(why)), -EPERM);
	ck_assert_int_eq(st, GUARD_V1_NEW);
	ck_assert_str_eq(why, "the view has no such hierarchy");
	/* systemd's co-mount: the view has the two together, as the kernel
	 * reuses a root only for the same set; the other set would take
	 * cpu from it */
	ck_assert_int_eq(guard_v1_ctl("cpu", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(st, GUARD_V1_NEW);
	ck_assert_str_eq(why, "this controller alone: the view mounts cpu,cpuacct");
	ck_assert_int_eq(guard_v1_ctl("blkio,memory", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_str_eq(why, "these controllers together: the view mounts memory");
	ck_assert_int_eq(guard_v1_ctl("memroy", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "no controller named memroy");
	/* each refusal at the kernel's stage: the parser, the options
	 * together, the roots (a name's set is checked before any new
	 * hierarchy is thought of) */
	ck_assert_int_eq(guard_v1_ctl("memroy", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(st, GUARD_V1_PARSE);
	ck_assert_int_eq(guard_v1_ctl("none", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(st, GUARD_V1_OPTIONS);
	ck_assert_int_eq(guard_v1_ctl("memory,name=systemd", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(st, GUARD_V1_ROOT);
	ck_assert_int_eq(guard_v1_ctl("all,name=systemd", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(st, GUARD_V1_ROOT);
	ck_assert_int_eq(guard_v1_ctl("all,name=other", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(st, GUARD_V1_NEW);
	ck_assert_int_eq(guard_v1_ctl("memory,name=other", ~0UL, &st, why, sizeof(why)), -EBUSY);
	ck_assert_int_eq(st, GUARD_V1_NEW);
	/* a controller this kernel lacks (or has disabled) is the parser's
	 * EINVAL, alone or beside one it has; "all" is what it has */
	ck_assert_int_eq(guard_v1_ctl("rdma", ~0UL & ~(1UL << 12), &st, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "no controller named rdma in this kernel");
	ck_assert_int_eq(guard_v1_ctl("rdma,memory", ~0UL & ~(1UL << 12), &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(st, GUARD_V1_PARSE);
	ck_assert_int_eq(guard_v1_ctl("debug", 0xfffUL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("all", 0xfffUL, &st, why, sizeof(why)), -EBUSY);
	/* names as the kernel takes them: 1 to 63 of [A-Za-z0-9._-], once */
	ck_assert_int_eq(guard_v1_ctl("none,name=", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("none,name=a/b", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("none,name=systemd,name=systemd", ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("none,name="
				      "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl",
				      ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("none,name="
				      "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk",
				      ~0UL, &st, why, sizeof(why)), -EPERM);
}
END_TEST

START_TEST(test_guard_v1_ctl_long)
{
	char opts[5000], why[160];
	enum guard_v1_stage st;

	memset(opts, 'a', sizeof(opts) - 1);
	opts[sizeof(opts) - 1] = '\0';
	ck_assert_int_eq(guard_v1_ctl(opts, ~0UL, &st, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(guard_v1_ctl("memory", ~0UL, &st, why, 1), VIEW_MEMORY);
}
END_TEST

START_TEST(test_guard_types)
{
	ck_assert(guard_cgroup_type("cgroup"));
	ck_assert(guard_cgroup_type("cgroup2"));
	ck_assert(!guard_cgroup_type("cgroup3"));
	ck_assert(!guard_cgroup_type("tmpfs"));
	ck_assert(!guard_cgroup_type(""));
}
END_TEST

START_TEST(test_guard_mount_kind)
{
	/* the first test of path_mount that applies wins */
	ck_assert_int_eq(guard_mount_kind(0), GUARD_MNT_NEW);
	ck_assert_int_eq(guard_mount_kind(MS_RDONLY | MS_NOSUID), GUARD_MNT_NEW);
	ck_assert_int_eq(guard_mount_kind(MS_MGC_VAL), GUARD_MNT_NEW);
	ck_assert_int_eq(guard_mount_kind(MS_MGC_VAL | MS_BIND), GUARD_MNT_BIND);
	ck_assert_int_eq(guard_mount_kind(MS_REMOUNT | MS_BIND | MS_RDONLY), GUARD_MNT_RECONFIGURE);
	ck_assert_int_eq(guard_mount_kind(MS_REMOUNT | MS_RDONLY), GUARD_MNT_REMOUNT);
	ck_assert_int_eq(guard_mount_kind(MS_BIND | MS_REC), GUARD_MNT_BIND);
	ck_assert_int_eq(guard_mount_kind(MS_BIND | MS_PRIVATE), GUARD_MNT_BIND);
	ck_assert_int_eq(guard_mount_kind(MS_PRIVATE | MS_REC), GUARD_MNT_PROPAGATION);
	ck_assert_int_eq(guard_mount_kind(MS_SLAVE | MS_MOVE), GUARD_MNT_PROPAGATION);
	ck_assert_int_eq(guard_mount_kind(MS_MOVE), GUARD_MNT_MOVE);
}
END_TEST

START_TEST(test_guard_bound_view)
{
	struct view_ns ns = { .top_id = 40, .ctl_id = { 44, 42, 41, 43 } };

	ck_assert_int_eq(view_ctl_of(&ns, 41), VIEW_MEMORY);
	ck_assert_int_eq(view_ctl_of(&ns, 43), VIEW_DEVICES);
	ck_assert_int_eq(view_ctl_of(&ns, 90), -1);
	view_add_bound(&ns, 90, VIEW_MEMORY);
	view_add_bound(&ns, 91, VIEW_CPUSET);
	ck_assert_int_eq(view_ctl_of(&ns, 90), VIEW_MEMORY);
	ck_assert_int_eq(view_ctl_of(&ns, 91), VIEW_CPUSET);
	ck_assert_int_eq(view_ctl_of(&ns, 0), -1);
	/* past the record's room the oldest is forgotten, never a wrong one */
	for (int i = 0; i < VIEW_MAX_BOUND; i++)
		view_add_bound(&ns, 100 + i, VIEW_CPU);
	ck_assert_int_eq(view_ctl_of(&ns, 90), -1);
	ck_assert_int_eq(view_ctl_of(&ns, 91), -1);
	ck_assert_int_eq(view_ctl_of(&ns, 100), VIEW_CPU);
	ck_assert_int_eq(view_ctl_of(&ns, 100 + VIEW_MAX_BOUND - 1), VIEW_CPU);
}
END_TEST

UNIT_SUITE(guard)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_guard_v1_ctl_view);
	tcase_add_test(tc, test_guard_v1_ctl_refused);
	tcase_add_test(tc, test_guard_v1_ctl_long);
	tcase_add_test(tc, test_guard_types);
	tcase_add_test(tc, test_guard_mount_kind);
	tcase_add_test(tc, test_guard_bound_view);
	suite_add_tcase(s, tc);
	return s;
}
