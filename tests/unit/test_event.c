/* test_event.c: the per-user bound on cgroup.event_control registrations
 * (fs/event.c): EVENT_USER_REGS for each non-root uid, ENOSPC past it, none
 * for root, and a count that goes down again when registrations go (rmdir);
 * and the vmpressure levels and modes (§5.14) on known windows of scanned
 * and reclaimed pages, fed to the engine's hook as reclaim would, so that
 * which level fires is decided by the window alone, not by timing.
 * (EVENT_MAX_REGS in all is not reached here: each registration keeps two
 * fds, and 32,768 is past the usual hard RLIMIT_NOFILE.)
 * Registers for real, without a mount: the "mount point" is a scratch
 * directory holding files named like control files, the writer is this
 * thread, and one eventfd of ours is named by every registration. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fs/event.h"
#include "fs/node.h"
#include "suites.h"

static struct cgfs efs;
static char scratch[64];
static int efd;
/* the scratch tree: the root, C and C/D, each with these files */
static const char *const ev_dirs[] = { "", "/C", "/C/D" };
static const char *const ev_files[] = { "memory.oom_control", "memory.pressure_level" };

static int ev_init_child(struct mcg_group *g, void *arg)
{
	return node_init_child(&efs, g, 0, 0, 0755, 022);
}

/* Room for n fds, raising the hard limit when we may (root). */
static void ev_nofile(rlim_t n)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur >= n)
		return;
	rl.rlim_cur = n;
	if (rl.rlim_max < n)
		rl.rlim_max = n;
	ck_assert_msg(setrlimit(RLIMIT_NOFILE, &rl) == 0,
		      "this test needs RLIMIT_NOFILE >= %lu (run it as root)", (unsigned long)n);
}

/* The scratch directory stands for the mount (the unit tests have none):
 * a descriptor is the node its path under it names, where node_of_fd
 * would go by the mount's device and the inode number. */
static int ev_fd_node(struct cgfs *fs, int fd, struct mcg_group **g, int *row)
{
	char link[64], target[PATH_MAX + 64];
	size_t mlen = strlen(fs->mountpoint);
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, target, sizeof(target) - 1)) < 0)
		return -errno;
	target[n] = '\0';
	if (strncmp(target, fs->mountpoint, mlen) || target[mlen] != '/')
		return -EXDEV;
	return node_resolve(fs, target + mlen, g, row);
}

static void ev_setup(void)
{
	static const struct mcg_owner_ops own = { .free = node_free_group };
	struct mcg_machine cfg = {
		.mem_pages = 262144, .nodes = 1, .cpus = 2, .vm_swappiness = 60,
	};
	char path[PATH_MAX + 64];
	int fd;

	memset(&efs, 0, sizeof(efs));
	prof_init(&cfg.prof, PROF_KV(6, 12));
	ck_assert_ptr_nonnull(efs.eng = mcg_engine_new(&cfg, NULL, &(struct mcg_owner){ &own, &efs }));
	efs.prof = &efs.eng->m.prof;
	cgfs_init(&efs);
	ck_assert_int_eq(node_init_root(&efs, efs.eng->root, 0, 0), 0);
	ck_assert_ptr_nonnull(efs.events = event_new());
	snprintf(scratch, sizeof(scratch), "/tmp/memcgfs-event.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
	ck_assert_ptr_nonnull(realpath(scratch, efs.mountpoint));
	efs.fd_node = ev_fd_node;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", efs.mountpoint, ev_dirs[i]);
		ck_assert_int_eq(i ? mkdir(path, 0755) : 0, 0);
		for (int f = 0; f < 2; f++) {
			snprintf(path, sizeof(path), "%s%s/%s", efs.mountpoint, ev_dirs[i], ev_files[f]);
			ck_assert_int_ge(fd = open(path, O_CREAT | O_WRONLY, 0644), 0);
			close(fd);
		}
	}
	ck_assert_int_ge(efd = eventfd(0, EFD_CLOEXEC), 0);
}

static void ev_teardown(void)
{
	char path[PATH_MAX + 64];

	event_free(efs.events);
	close(efd);
	mcg_engine_free(efs.eng);
	for (int i = 2; i >= 0; i--) {
		for (int f = 0; f < 2; f++) {
			snprintf(path, sizeof(path), "%s%s/%s", efs.mountpoint, ev_dirs[i], ev_files[f]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s%s", efs.mountpoint, ev_dirs[i]);
		rmdir(path);
	}
}

/* An OOM registration on g by uid, as a write of "<efd> <cfd>" from this
 * thread: 0 or the write's error. */
static int ev_register(struct mcg_group *g, uid_t uid)
{
	struct cgfs_req r = { .fs = &efs, .g = g, .pid = gettid(), .uid = uid, .gid = uid };
	static struct gram_value v;
	char path[PATH_MAX + 64];
	int cfd, err;

	snprintf(path, sizeof(path), "%s%s/memory.oom_control", efs.mountpoint,
		 mcg_is_root(g) ? "" : "/C");
	ck_assert_int_ge(cfd = open(path, O_RDONLY | O_CLOEXEC), 0);
	snprintf(v.str, sizeof(v.str), "%d %d", efd, cfd);
	err = event_control_write(&r, 0, &v);
	close(cfd);
	return err;
}

/* n registrations of uid on g must all succeed. */
static void ev_register_n(struct mcg_group *g, uid_t uid, int n)
{
	for (int i = 0; i < n; i++) {
		int err = ev_register(g, uid);

		ck_assert_msg(err == 0, "uid %u, registration %d: %d", (unsigned)uid, i + 1, err);
	}
}

START_TEST(test_event_per_user_bound)
{
	struct mcg_group *root;

	ev_nofile(4 * EVENT_USER_REGS + 1024);
	ev_setup();
	root = efs.eng->root;
	ev_register_n(root, 1000, EVENT_USER_REGS);
	ck_assert_int_eq(ev_register(root, 1000), -ENOSPC);
	ck_assert_int_eq(ev_register(root, 1000), -ENOSPC);
	/* another user has a bound of its own */
	ev_register_n(root, 1001, 1);
	/* root has none */
	ev_register_n(root, 0, EVENT_USER_REGS + 10);
	ck_assert_int_eq(ev_register(root, 1000), -ENOSPC);
	ev_register_n(root, 1001, EVENT_USER_REGS - 1);
	ck_assert_int_eq(ev_register(root, 1001), -ENOSPC);
	ev_teardown();
}
END_TEST

/* Registrations that go (here: their group's rmdir) give their room back,
 * to their own user only. */
START_TEST(test_event_count_follows_removal)
{
	struct mcg_group *root, *c = NULL;

	ev_nofile(6 * EVENT_USER_REGS + 1024);
	ev_setup();
	root = efs.eng->root;
	ck_assert_int_eq(mcg_create(efs.eng, root, "C", ev_init_child, NULL, &c), 0);
	ev_register_n(c, 1000, EVENT_USER_REGS - 6);
	ev_register_n(root, 1000, 6);
	ev_register_n(c, 1001, EVENT_USER_REGS);
	ck_assert_int_eq(ev_register(root, 1000), -ENOSPC);
	ck_assert_int_eq(mcg_remove(efs.eng, c), 0);
	event_group_removed(&efs, c);
	mcg_put(c);
	/* the six on the root are still counted */
	ev_register_n(root, 1000, EVENT_USER_REGS - 6);
	ck_assert_int_eq(ev_register(root, 1000), -ENOSPC);
	/* and 1001 is back to nothing */
	ev_register_n(root, 1001, EVENT_USER_REGS);
	ck_assert_int_eq(ev_register(root, 1001), -ENOSPC);
	ev_teardown();
}
END_TEST

/* A pressure registration "LEVEL[,MODE]" on the group of dir (one of
 * ev_dirs), with an eventfd of its own (returned, non-blocking). */
static int ev_pressure(struct mcg_group *g, const char *dir, const char *args)
{
	struct cgfs_req r = { .fs = &efs, .g = g, .pid = gettid(), .uid = 0, .gid = 0 };
	static struct gram_value v;
	char path[PATH_MAX + 64];
	int cfd, e;

	ck_assert_int_ge(e = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), 0);
	snprintf(path, sizeof(path), "%s%s/memory.pressure_level", efs.mountpoint, dir);
	ck_assert_int_ge(cfd = open(path, O_RDONLY | O_CLOEXEC), 0);
	snprintf(v.str, sizeof(v.str), "%d %d %s", e, cfd, args);
	ck_assert_int_eq(event_control_write(&r, 0, &v), 0);
	close(cfd);
	return e;
}

/* How often e fired since the last look. */
static long ev_fired(int e)
{
	eventfd_t n;

	return eventfd_read(e, &n) == 0 ? (long)n : 0;
}

/* C and C/D made in the engine, as their directories are in the scratch */
static void ev_tree(struct mcg_group **c, struct mcg_group **d)
{
	*c = *d = NULL;
	ck_assert_int_eq(mcg_create(efs.eng, efs.eng->root, "C", ev_init_child, NULL, c), 0);
	ck_assert_int_eq(mcg_create(efs.eng, *c, "D", ev_init_child, NULL, d), 0);
}

/* The level of a window is what share of the pages scanned in it reclaim
 * could not free: under 60 % low, 60-94 % medium, 95 % or more critical;
 * a window closes at 512 pages scanned; reclaim that had to go as deep as
 * priority 3 is critical at once. A registration fires at its level and
 * above. The values are the kernel's (vmpressure_level_med 60,
 * vmpressure_level_critical 95, vmpressure_win 512 pages). */
START_TEST(test_event_pressure_levels)
{
	/* reclaim reports (times x: scanned, reclaimed, priority; aimed at C,
	 * or at D below it), then how often low, medium and critical fired */
	static const struct {
		const char *why;
		int times;
		bool at_d;
		long scanned, reclaimed;
		int prio;
		long low, med, crit;
	} steps[] = {
		{ "an open window reports nothing", 1, 0, 511, 511, 12, 0, 0, 0 },
		{ "all freed: low (easy reclaim is never critical)", 1, 0, 1, 1, 12, 1, 0, 0 },
		{ "six windows in 32-page steps", 96, 0, 32, 32, 12, 6, 0, 0 },
		{ "200 of 512 freed: 61 % not, medium", 1, 0, 512, 200, 12, 1, 1, 0 },
		{ "210 freed: 59 %, low", 1, 0, 512, 210, 12, 1, 0, 0 },
		{ "40 freed: 93 %, medium still", 1, 0, 512, 40, 12, 1, 1, 0 },
		{ "26 freed: 95 %, critical", 1, 0, 512, 26, 12, 1, 1, 1 },
		{ "20 freed: 97 %, critical", 1, 0, 512, 20, 12, 1, 1, 1 },
		{ "priority 3: critical at once, whatever it freed", 1, 0, 32, 32, 3, 1, 1, 1 },
		{ "priority 4: into C's open window", 1, 0, 32, 32, 4, 0, 0, 0 },
		/* D's own window; C's default registrations hear of it,
		 * nothing below them having fired */
		{ "aimed at D", 1, 1, 512, 512, 12, 1, 0, 0 },
	};
	struct mcg_group *c, *d;
	int fd[3];

	ev_setup();
	ev_tree(&c, &d);
	fd[0] = ev_pressure(c, "/C", "low");
	fd[1] = ev_pressure(c, "/C", "medium");
	fd[2] = ev_pressure(c, "/C", "critical");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		long got[3];

		for (int k = 0; k < steps[i].times; k++)
			event_pressure(steps[i].at_d ? d : c, steps[i].scanned, steps[i].reclaimed,
				       steps[i].prio, &efs);
		for (int l = 0; l < 3; l++)
			got[l] = ev_fired(fd[l]);
		ck_assert_msg(got[0] == steps[i].low && got[1] == steps[i].med && got[2] == steps[i].crit,
			      "%s: fired %ld %ld %ld, want %ld %ld %ld", steps[i].why, got[0], got[1],
			      got[2], steps[i].low, steps[i].med, steps[i].crit);
	}
	for (int l = 0; l < 3; l++)
		close(fd[l]);
	mcg_put(c);
	mcg_put(d);
	ev_teardown();
}
END_TEST

/* The modes: local fires only where the reclaim was aimed, hierarchy
 * always, default until a registration below fired. */
START_TEST(test_event_pressure_modes)
{
	struct mcg_group *c, *d;
	/* C local, C hierarchy, C default, the root's default, D's default */
	int fd[5];
	static const struct {
		const char *why;
		bool at_d;
		long fired[5];
	} steps[] = {
		/* nothing on D yet: C's default is the first to hear, so the
		 * root's default does not; C's local is not where it was aimed */
		{ "aimed at D, none on D", 1, { 0, 1, 1, 0, 0 } },
		/* with one on D, C's default is quiet too */
		{ "aimed at D, one on D", 1, { 0, 1, 0, 0, 1 } },
		/* aimed at C: C's local fires now, D's hears nothing */
		{ "aimed at C", 0, { 1, 1, 1, 0, 0 } },
	};

	ev_setup();
	ev_tree(&c, &d);
	fd[0] = ev_pressure(c, "/C", "low,local");
	fd[1] = ev_pressure(c, "/C", "low,hierarchy");
	fd[2] = ev_pressure(c, "/C", "low");
	fd[3] = ev_pressure(efs.eng->root, "", "low,default");
	fd[4] = -1;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (i == 1)
			fd[4] = ev_pressure(d, "/C/D", "low");
		event_pressure(steps[i].at_d ? d : c, 512, 512, 12, &efs);
		for (int k = 0; k < 5; k++) {
			long got = fd[k] < 0 ? 0 : ev_fired(fd[k]);

			ck_assert_msg(got == steps[i].fired[k], "%s: registration %d fired %ld, want %ld",
				      steps[i].why, k, got, steps[i].fired[k]);
		}
	}
	for (int k = 0; k < 5; k++)
		close(fd[k]);
	mcg_put(c);
	mcg_put(d);
	ev_teardown();
}
END_TEST

UNIT_SUITE(event)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("bounds");

	tcase_add_test(tc, test_event_per_user_bound);
	tcase_add_test(tc, test_event_count_follows_removal);
	tcase_add_test(tc, test_event_pressure_levels);
	tcase_add_test(tc, test_event_pressure_modes);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
