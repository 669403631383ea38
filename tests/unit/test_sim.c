/* test_sim.c: the simulated-task socket (source/sim.c) on an engine of its
 * own, with a forked child as the task: what it declares is charged to its
 * group and goes when it ends, a connection dies with its process, and a
 * user's files are bounded. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/task.h"
#include "engine_fixture.h"
#include "source/sim.h"
#include "source/source.h"
#include "suites.h"

static int sim_connect(const char *mnt)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || sim_socket_path(mnt, sa.sun_path, sizeof(sa.sun_path)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One line, one answer ("" at EOF). */
static void sim_ask(int fd, const char *line, char *ans, size_t size)
{
	size_t len = 0;

	(void)!send(fd, line, strlen(line), MSG_NOSIGNAL);
	(void)!send(fd, "\n", 1, MSG_NOSIGNAL);
	while (len < size - 1 && read(fd, ans + len, 1) == 1 && ans[len] != '\n')
		len++;
	ans[len] = '\0';
}

struct sim_fixture {
	struct mcg_engine *e;
	struct source_env env;
	struct sim_server *s;
	char mnt[64];
};

static void sim_fixture_up(struct sim_fixture *f)
{
	f->e = fixture_engine(PROF_DEFAULT);
	snprintf(f->mnt, sizeof(f->mnt), "/memcgfs-unit-%d", (int)getpid());
	f->env = (struct source_env){ .eng = f->e, .mountpoint = f->mnt };
	ck_assert_ptr_nonnull(f->s = sim_start(&f->env));
}

static void sim_fixture_down(struct sim_fixture *f)
{
	sim_stop(f->s);
	sim_free(f->s);
	CHECK_OK(f->e);
	mcg_engine_free(f->e);
}

/* The child: connect, wait for the parent to place it, declare 1 MiB,
 * report, then hold until told to go. */
static void sim_child(const char *mnt, int go, int done)
{
	char ans[128], c;
	int fd = sim_connect(mnt);

	if (fd < 0 || read(go, &c, 1) != 1)
		_exit(1);
	sim_ask(fd, "alloc anon h 1M", ans, sizeof(ans));
	if (strcmp(ans, "ok"))
		_exit(2);
	sim_ask(fd, "touch h seq write", ans, sizeof(ans));
	(void)!write(done, ans, strlen(ans) + 1);
	(void)!read(go, &c, 1);
	_exit(0);
}

START_TEST(test_sim_declares_to_its_group)
{
	struct sim_fixture f;
	struct mcg_group *g;
	int go[2], done[2], drop, status;
	char ans[64] = "";
	pid_t kid;

	sim_fixture_up(&f);
	g = fixture_group(f.e, f.e->root, "g");
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	if ((kid = fork()) == 0)
		sim_child(f.mnt, go[0], done[1]);
	ck_assert_int_eq(task_attach(f.e, kid, kid, g, -1, &drop), 0);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_gt(read(done[0], ans, sizeof(ans)), 0);
	ck_assert_str_eq(ans, "ok");
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_MEM]), 256);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the task ended: its anon went (sim_stop waits for its thread) */
	sim_stop(f.s);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_MEM]), 0);
	mcg_put(g);
	sim_free(f.s);
	f.s = NULL;
	CHECK_OK(f.e);
	mcg_engine_free(f.e);
}
END_TEST

/* A process is one task (a second connection is refused), and a user's
 * named files stop at SIM_USER_FILES with a clear error. */
START_TEST(test_sim_bounds)
{
	struct sim_fixture f;
	char ans[160], line[64];
	int fd, fd2, ok = 0;

	sim_fixture_up(&f);
	ck_assert_int_ge(fd = sim_connect(f.mnt), 0);
	sim_ask(fd, "hello", ans, sizeof(ans));
	ck_assert_str_eq(ans, "ok");
	ck_assert_int_ge(fd2 = sim_connect(f.mnt), 0);
	sim_ask(fd2, "hello", ans, sizeof(ans));
	ck_assert_str_eq(ans, "err refused: this process is connected already");
	close(fd2);
	for (int i = 0; i < SIM_USER_FILES + 2; i++) {
		snprintf(line, sizeof(line), "file f%d 4K", i);
		sim_ask(fd, line, ans, sizeof(ans));
		ok += !strcmp(ans, "ok");
	}
	ck_assert_int_eq(ok, SIM_USER_FILES);
	ck_assert_int_eq(strncmp(ans, "err no space", 12), 0);
	sim_ask(fd, "alloc anon x 100T", ans, sizeof(ans));
	ck_assert_int_eq(strncmp(ans, "err no space", 12), 0);
	close(fd);
	sim_fixture_down(&f);
}
END_TEST

UNIT_SUITE(sim)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("sim");

	tcase_add_test(tc, test_sim_declares_to_its_group);
	tcase_add_test(tc, test_sim_bounds);
	suite_add_tcase(s, tc);
	return s;
}
