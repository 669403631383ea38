/* test_event.c: the per-user bound on cgroup.event_control registrations
 * (fs/event.c): EVENT_USER_REGS for each non-root uid, ENOSPC past it, none
 * for root, and a count that goes down again when registrations go (rmdir).
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
	snprintf(path, sizeof(path), "%s/C", efs.mountpoint);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s%s/memory.oom_control", efs.mountpoint, i ? "/C" : "");
		ck_assert_int_ge(fd = open(path, O_CREAT | O_WRONLY, 0644), 0);
		close(fd);
	}
	ck_assert_int_ge(efd = eventfd(0, EFD_CLOEXEC), 0);
}

static void ev_teardown(void)
{
	char path[PATH_MAX + 64];

	event_free(efs.events);
	close(efd);
	mcg_engine_free(efs.eng);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s%s/memory.oom_control", efs.mountpoint, i ? "/C" : "");
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/C", efs.mountpoint);
	rmdir(path);
	rmdir(efs.mountpoint);
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

UNIT_SUITE(event)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("bounds");

	tcase_add_test(tc, test_event_per_user_bound);
	tcase_add_test(tc, test_event_count_follows_removal);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
