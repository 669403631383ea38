/* exitrace.c: reads a file again and again while processes exit around it.
 *   exitrace FILE N
 * A child keeps forking short-lived processes of nine threads that end
 * them all at once (exit_group): /proc shows each for a while as a thread
 * group in the middle of exiting, where opening its task directory fails
 * with ESRCH.
 * Meanwhile FILE is opened and read to its end N times. Prints "OK" when
 * every read succeeded, else the errno name of each failed read and how
 * many times it occurred ("ESRCH 3"). Exit status 0 on OK, 1 otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *exitrace_wait(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void exitrace_churn(void)
{
	for (unsigned i = 0;; i++) {
		pid_t p = fork();

		if (p == 0) {
			pthread_t t;

			for (int j = 0; j < 8; j++)
				pthread_create(&t, NULL, exitrace_wait, NULL);
			_exit(0);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (i % 64 == 63)
			usleep(100);
	}
}

int main(int argc, char **argv)
{
	int errs[4096] = { 0 }, failed = 0;
	char buf[65536];
	pid_t churner;
	long n;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: exitrace FILE N\n");
		return 2;
	}
	if ((churner = fork()) == 0) {
		exitrace_churn();
		_exit(0);
	}
	usleep(20000);
	for (long i = 0; i < n; i++) {
		int fd = open(argv[1], O_RDONLY);
		ssize_t r = 0;

		if (fd < 0) {
			errs[errno < 4096 ? errno : 0]++;
			continue;
		}
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			;
		if (r < 0)
			errs[errno < 4096 ? errno : 0]++;
		close(fd);
	}
	kill(churner, SIGKILL);
	waitpid(churner, NULL, 0);
	for (int e = 0; e < 4096; e++) {
		const char *name = strerrorname_np(e);

		if (!errs[e])
			continue;
		printf("%s%s %d", failed ? " " : "", name ? name : "EUNKNOWN", errs[e]);
		failed = 1;
	}
	printf("%s\n", failed ? "" : "OK");
	return failed;
}
