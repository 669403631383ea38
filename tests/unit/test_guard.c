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

	ck_assert_int_eq(guard_v1_ctl("memory", why, sizeof(why)), VIEW_MEMORY);
	/* what mount(8) and cgconfigparser pass around the controller */
	ck_assert_int_eq(guard_v1_ctl("rw,nosuid,nodev,noexec,relatime,memory", why, sizeof(why)),
			 VIEW_MEMORY);
	ck_assert_int_eq(guard_v1_ctl("memory,memory,noprefix", why, sizeof(why)), VIEW_MEMORY);
	ck_assert_int_eq(guard_v1_ctl("cpu,cpuacct", why, sizeof(why)), VIEW_CPU);
	ck_assert_int_eq(guard_v1_ctl("cpuacct,xattr,cpu", why, sizeof(why)), VIEW_CPU);
	ck_assert_int_eq(guard_v1_ctl(",cpuset,clone_children,", why, sizeof(why)), VIEW_CPUSET);
	ck_assert_int_eq(guard_v1_ctl("devices", why, sizeof(why)), VIEW_DEVICES);
	ck_assert_int_eq(guard_v1_ctl("net_prio,net_cls", why, sizeof(why)), VIEW_NET);
	/* systemd's named hierarchy, as it is mounted */
	ck_assert_int_eq(guard_v1_ctl("none,name=systemd", why, sizeof(why)), VIEW_SYSTEMD);
	ck_assert_int_eq(guard_v1_ctl("xattr,name=systemd", why, sizeof(why)), VIEW_SYSTEMD);
}
END_TEST

START_TEST(test_guard_v1_ctl_refused)
{
	char why[160];

	/* no options at all is every controller, as "all" is */
	ck_assert_int_eq(guard_v1_ctl(NULL, why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "every controller at once (no controller named)");
	ck_assert_int_eq(guard_v1_ctl("rw,all", why, sizeof(why)), -EPERM);
	ck_assert_int_eq(guard_v1_ctl("all,memory", why, sizeof(why)), -EPERM);
	ck_assert_int_eq(guard_v1_ctl("none,name=other", why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "a named hierarchy (name=other): the view has only name=systemd");
	ck_assert_int_eq(guard_v1_ctl("memory,name=systemd", why, sizeof(why)), -EPERM);
	ck_assert_int_eq(guard_v1_ctl("none", why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "a hierarchy without controllers (none)");
	ck_assert_int_eq(guard_v1_ctl("memory,release_agent=/bin/x", why, sizeof(why)), -EPERM);
	ck_assert_int_eq(guard_v1_ctl("misc", why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "the view has no such hierarchy");
	/* systemd's co-mount: the view has the two together, as the kernel
	 * reuses a root only for the same set */
	ck_assert_int_eq(guard_v1_ctl("cpu", why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "this controller alone: the view mounts cpu,cpuacct");
	ck_assert_int_eq(guard_v1_ctl("blkio,memory", why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "these controllers together: the view mounts memory");
	ck_assert_int_eq(guard_v1_ctl("memroy", why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "no controller named memroy");
}
END_TEST

START_TEST(test_guard_v1_ctl_long)
{
	char opts[5000], why[160];

	memset(opts, 'a', sizeof(opts) - 1);
	opts[sizeof(opts) - 1] = '\0';
	ck_assert_int_eq(guard_v1_ctl(opts, why, sizeof(why)), -EPERM);
	ck_assert_int_eq(guard_v1_ctl("memory", why, 1), VIEW_MEMORY);
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
