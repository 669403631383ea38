/* test_pidwatch.c: task lifetimes as source/pidwatch.c reports them to its
 * hooks: a watched child's exit, once, with its pidfd; a fork the kernel's
 * process connector reports (where the connector is open to us). */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "os/pidwatch.h"
#include "suites.h"

struct pw_seen {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t exited, exited_fd;
	int exits;
	pid_t forked_parent, forked_child;
	pid_t thread_parent, thread_parent_tgid, thread_child;   /* a fork by another thread */
};

static struct pw_seen pw;

static void pw_exited(void *arg, struct pidwatch *w, pid_t tid, int fd)
{
	pthread_mutex_lock(&pw.lock);
	pw.exited = tid;
	pw.exited_fd = fd;
	pw.exits++;
	pthread_cond_broadcast(&pw.cond);
	pthread_mutex_unlock(&pw.lock);
	pidwatch_forget(w, fd);
}

static void pw_forked(void *arg, pid_t parent, pid_t parent_tgid, pid_t child, pid_t child_tgid)
{
	pthread_mutex_lock(&pw.lock);
	if (parent == getpid()) {
		pw.forked_parent = parent;
		pw.forked_child = child;
	} else if (parent_tgid == getpid() && child == child_tgid) {
		pw.thread_parent = parent;
		pw.thread_parent_tgid = parent_tgid;
		pw.thread_child = child;
	}
	pthread_cond_broadcast(&pw.cond);
	pthread_mutex_unlock(&pw.lock);
}

static const struct pidwatch_hooks pw_hooks = { .exited = pw_exited, .forked = pw_forked };

/* Wait up to 5 s for *v to become non-zero; its value. */
static pid_t pw_wait(pid_t *v)
{
	struct timespec ts;
	pid_t got;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	pthread_mutex_lock(&pw.lock);
	while (!*v && pthread_cond_timedwait(&pw.cond, &pw.lock, &ts) == 0)
		;
	got = *v;
	pthread_mutex_unlock(&pw.lock);
	return got;
}

static pid_t pw_thread_tid, pw_thread_kid;

static void *pw_forking_thread(void *arg)
{
	pw_thread_tid = (pid_t)syscall(SYS_gettid);
	if ((pw_thread_kid = fork()) == 0)
		_exit(0);
	return NULL;
}

START_TEST(test_pidwatch_reports_exit_and_fork)
{
	struct pidwatch *w;
	int fd, status;
	pid_t kid;

	pw = (struct pw_seen){ .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	ck_assert_ptr_nonnull(w = pidwatch_new(&pw_hooks, NULL));
	if ((kid = fork()) == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(kid, 0);
	ck_assert_int_ge(fd = (int)syscall(SYS_pidfd_open, kid, 0), 0);
	pidwatch_add(w, fd, kid);
	pidwatch_sync(w);
	/* the connector, where we may listen to it (root), saw the fork */
	if (getuid() == 0)
		ck_assert_int_eq(pw_wait(&pw.forked_child), kid);
	pthread_mutex_lock(&pw.lock);
	ck_assert_int_eq(pw.exits, 0);               /* alive: no exit yet */
	pthread_mutex_unlock(&pw.lock);
	kill(kid, SIGKILL);
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	ck_assert_int_eq(pw_wait(&pw.exited), kid);
	pthread_mutex_lock(&pw.lock);
	ck_assert_int_eq(pw.exited_fd, fd);
	pthread_mutex_unlock(&pw.lock);
	pidwatch_free(w);
	ck_assert_int_eq(pw.exits, 1);              /* once (EPOLLONESHOT) */
}
END_TEST

/* A process forked by a thread that is not its process's leader: the
 * connector's event names that thread and its process (CLONE_PARENT's
 * makers are matched by the real parent's process). */
START_TEST(test_pidwatch_fork_by_thread)
{
	struct pidwatch *w;
	int status;

	if (getuid() != 0)
		return;                   /* (the connector is root's) */
	pw = (struct pw_seen){ .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	ck_assert_ptr_nonnull(w = pidwatch_new(&pw_hooks, NULL));
	{
		pthread_t t;

		ck_assert_int_eq(pthread_create(&t, NULL, pw_forking_thread, NULL), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		ck_assert_int_eq(waitpid(pw_thread_kid, &status, 0), pw_thread_kid);
		ck_assert_int_eq(pw_wait(&pw.thread_child), pw_thread_kid);
		pthread_mutex_lock(&pw.lock);
		ck_assert_int_eq(pw.thread_parent, pw_thread_tid);
		ck_assert_int_eq(pw.thread_parent_tgid, getpid());
		pthread_mutex_unlock(&pw.lock);
	}
	pidwatch_free(w);
}
END_TEST

UNIT_SUITE(pidwatch)
{
	Suite *s = suite_create("pidwatch");
	TCase *tc = tcase_create("pidwatch");

	tcase_add_test(tc, test_pidwatch_reports_exit_and_fork);
	tcase_add_test(tc, test_pidwatch_fork_by_thread);
	suite_add_tcase(s, tc);
	return s;
}
