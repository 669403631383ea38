/* test_proc.c: what the sources learn from /proc (source/proc.c), on the
 * test's own processes: ids, lists, views, exemptions and the one signal
 * path. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/proc.h"
#include "suites.h"

START_TEST(test_proc_reads_self)
{
	struct proc_task t;

	ck_assert_int_eq(proc_read_task(getpid(), &t), 0);
	ck_assert_int_eq(t.tid, getpid());
	ck_assert_int_eq(t.tgid, getpid());
	ck_assert_int_eq(t.ppid, getppid());
	ck_assert_int_eq(t.ruid, getuid());
	ck_assert_int_ge(t.ns_depth, 1);
	ck_assert_int_eq(t.nspid[t.ns_depth - 1] > 0, 1);
	ck_assert_int_ge(t.threads, 1);
	ck_assert(!proc_unmovable(&t));
	ck_assert_int_eq(proc_read_task(0x3fffffff, &t), -ESRCH);
}
END_TEST

/* An execve shows in /proc/PID/stat as another start of code and stack
 * (the mirror's sign that a process's old image and its charges are
 * gone), read through the fd opened before it. */
START_TEST(test_proc_activity_sees_execve)
{
	struct proc_activity a, b;
	int go[2], up[2], fd;
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(up), 0);
	pid = fork();
	if (pid == 0) {
		/* the new image says it runs, then waits on fd 3 for ever */
		if (dup2(go[0], 3) < 0 || dup2(up[1], 4) < 0 || read(3, &c, 1) != 1)
			_exit(1);
		execl("/bin/sh", "sh", "-c", "echo >&4; read x <&3", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(go[0]);
	close(up[1]);
	fd = proc_open_stat(pid);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(proc_read_activity(fd, &a), 0);
	ck_assert(a.start_code != 0 && a.start_stack != 0);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(read(up[0], &c, 1), 1);        /* sh runs */
	ck_assert_int_eq(proc_read_activity(fd, &b), 0);
	ck_assert(b.start_code != 0 && b.start_stack != 0);
	ck_assert(b.start_code != a.start_code || b.start_stack != a.start_stack);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	close(go[1]);
	close(up[0]);
}
END_TEST

/* Entries of /proc/self/task, counted without the code under test. */
static long proc_self_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

START_TEST(test_proc_lists_and_views)
{
	struct proc_view v;
	struct proc_task t;
	pid_t *ids;
	long n = proc_list(false, &ids);
	int found = 0;

	ck_assert_int_gt(n, 0);
	for (long i = 0; i < n; i++) {
		found += ids[i] == getpid();
		if (i)
			ck_assert_int_lt(ids[i - 1], ids[i]);   /* sorted */
	}
	ck_assert_int_eq(found, 1);
	free(ids);
	ck_assert_int_eq(proc_view_of(getpid(), &v), 0);
	ck_assert(v.ours);
	ck_assert_int_eq(proc_read_task(getpid(), &t), 0);
	ck_assert_int_eq(proc_id_in_view(&v, &t), getpid());
	ck_assert_int_eq(proc_host_id(&v, getpid()), getpid());
	/* this process's threads: the test's own, and any a sanitizer's
	 * runtime started (TSan has one), as /proc/self/task lists them */
	n = proc_threads_of(getpid(), &ids);
	ck_assert_int_eq(n, proc_self_tasks());
	found = 0;
	for (long i = 0; i < n; i++)
		found += ids[i] == getpid();
	ck_assert_int_eq(found, 1);
	free(ids);
}
END_TEST

/* The daemon (here: the test itself) is never signalled; another process
 * is, through its pidfd, and a fork that has not exec'd runs the same
 * executable. */
START_TEST(test_proc_signal_through_pidfd)
{
	pid_t kid = fork();
	int pidfd, status;

	if (kid == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(kid, 0);
	ck_assert(proc_same_exe(kid, getpid()));
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	ck_assert_int_ge(pidfd, 0);
	ck_assert(proc_oom_exempt(getpid()));
	ck_assert_int_eq(proc_pidfd_signal(pidfd, getpid(), SIGKILL), -EPERM);
	close(pidfd);
	pidfd = (int)syscall(SYS_pidfd_open, kid, 0);
	ck_assert_int_ge(pidfd, 0);
	ck_assert(!proc_oom_exempt(kid));
	ck_assert_int_eq(proc_pidfd_signal(pidfd, kid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* reaped: the pidfd still names that process, never a reused PID */
	ck_assert_int_eq(proc_pidfd_signal(pidfd, kid, SIGKILL), -ESRCH);
	close(pidfd);
}
END_TEST

/* The mount's own processes: this one, its supervisor once told, and the
 * supervisor's other children running our program; a process we forked is
 * not one (a release agent before its exec is a user's program). */
START_TEST(test_own_processes)
{
	struct proc_task t;
	pid_t kid = fork();

	if (kid == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(kid, 0);
	ck_assert(proc_is_daemon(getpid(), NULL));
	ck_assert(!proc_is_daemon(getppid(), NULL));          /* not told yet */
	proc_set_supervisor(getppid());
	ck_assert(proc_is_daemon(getppid(), NULL));
	ck_assert(proc_oom_exempt(getppid()));
	ck_assert_int_eq(proc_read_task(kid, &t), 0);
	ck_assert(!proc_is_daemon(kid, &t));                   /* our child, not the supervisor's */
	ck_assert(!proc_oom_exempt(kid));
	proc_set_supervisor(0);
	ck_assert(!proc_is_daemon(getppid(), NULL));
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
}
END_TEST

UNIT_SUITE(proc)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("proc");

	tcase_add_test(tc, test_proc_reads_self);
	tcase_add_test(tc, test_proc_activity_sees_execve);
	tcase_add_test(tc, test_proc_lists_and_views);
	tcase_add_test(tc, test_proc_signal_through_pidfd);
	tcase_add_test(tc, test_own_processes);
	suite_add_tcase(s, tc);
	return s;
}
