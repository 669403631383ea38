/* evctl.c: registers a cgroup.event_control event the way a real client
 * does, and reports the errno name of the registration write.
 *   evctl DIR CONTROL ARGS [MODE]
 * DIR is the group directory, CONTROL a file name in it (or an absolute
 * path), ARGS the third field ("" for none). MODE:
 *   eventfd (default), pipe (a non-eventfd), closed-efd, closed-cfd,
 *   rmdir (register, remove DIR, then report whether the eventfd fired),
 *   run N/MS CMD... (register, run CMD and wait for it, then wait until
 *   the eventfd has fired N times or MS milliseconds have passed, then
 *   report how often it fired). With N 0 nothing is waited for: the count
 *   is read as CMD ends, so CMD itself must end at a point that proves the
 *   daemon has handled what would fire (a read of the file that shows it).
 * CONTROL "fd:N" is a descriptor the caller opened and left open as N
 * (inherited). The environment's EVCTL_WIRE says how the line is written,
 * as the clients write it: "nul" with its terminating NUL (Slurm writes
 * strlen + 1 bytes), "space" with a trailing space (containerd's "%d %d "),
 * anything else the bare line.
 * Prints OK, the errno name, or for rmdir and run "FIRED n". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The events counted on efd, waiting until there are want of them or ms
 * have passed (spec "want/ms"); efd is made non-blocking. */
static unsigned long long ev_count(int efd, const char *spec)
{
	unsigned long long total = 0;
	eventfd_t v;
	long want = 0, ms = 0;
	struct timespec t0, t;

	if (sscanf(spec, "%ld/%ld", &want, &ms) != 2) {
		fprintf(stderr, "evctl: run takes N/MS, not %s\n", spec);
		exit(2);
	}
	fcntl(efd, F_SETFL, fcntl(efd, F_GETFL) | O_NONBLOCK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = efd, .events = POLLIN };
		long left;

		if (eventfd_read(efd, &v) == 0)
			total += v;
		if ((long)total >= want)
			return total;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return total;
		poll(&p, 1, (int)left);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 4 ? argv[4] : "eventfd", *wire;
	char path[4096], line[4200];
	int efd, cfd, ecfd, p[2];
	eventfd_t v = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: evctl DIR CONTROL ARGS [MODE]\n");
		return 2;
	}
	if (strcmp(mode, "pipe") == 0) {
		if (pipe(p))
			return 2;
		efd = p[0];
	} else {
		efd = eventfd(0, EFD_NONBLOCK);
	}
	if (argv[2][0] == '/')
		snprintf(path, sizeof(path), "%s", argv[2]);
	else
		snprintf(path, sizeof(path), "%s/%s", argv[1], argv[2]);
	cfd = strncmp(argv[2], "fd:", 3) ? open(path, O_RDONLY) : atoi(argv[2] + 3);
	if (cfd < 0) {
		printf("open-control:%s\n", strerrorname_np(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.event_control", argv[1]);
	ecfd = open(path, O_WRONLY);
	if (ecfd < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	if (strcmp(mode, "closed-efd") == 0)
		close(efd);
	if (strcmp(mode, "closed-cfd") == 0)
		close(cfd);
	snprintf(line, sizeof(line), argv[3][0] ? "%d %d %s" : "%d %d%s", efd, cfd, argv[3]);
	wire = getenv("EVCTL_WIRE") ? getenv("EVCTL_WIRE") : "";
	if (!strcmp(wire, "space"))
		strcat(line, " ");
	if (write(ecfd, line, strlen(line) + !strcmp(wire, "nul")) < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	if (strcmp(mode, "run") == 0 && argc > 6) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			close(efd);
			close(cfd);
			close(ecfd);
			execvp(argv[6], argv + 6);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			return 2;
		printf("FIRED %llu\n", ev_count(efd, argv[5]));
		return 0;
	}
	if (strcmp(mode, "rmdir") == 0) {
		close(cfd);
		close(ecfd);
		if (rmdir(argv[1])) {
			printf("rmdir:%s\n", strerrorname_np(errno));
			return 1;
		}
		if (eventfd_read(efd, &v) < 0)
			v = 0;
		printf("FIRED %llu\n", (unsigned long long)v);
		return 0;
	}
	printf("OK\n");
	return 0;
}
