/* run_openloop.c: the system-call loop of memcgfs-run's overhead figures.
 *   run_openloop [-r] [-w] PATH N
 * N times openat(PATH) and close, each open read-only (-w: write-only,
 * which the seccomp filter passes without asking the supervisor), and
 * with -r each file read to its end in between. Prints the mean ns per
 * iteration. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int c, rd = 0, flags = O_RDONLY | O_CLOEXEC;
	struct timespec t0, t1;
	char buf[65536];
	long n;

	while ((c = getopt(argc, argv, "rw")) != -1) {
		if (c == 'r')
			rd = 1;
		else if (c == 'w')
			flags = O_WRONLY | O_CLOEXEC;
		else
			return 2;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: run_openloop [-r] [-w] PATH N\n");
		return 2;
	}
	n = atol(argv[optind + 1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		int fd = openat(AT_FDCWD, argv[optind], flags);

		if (fd < 0) {
			perror(argv[optind]);
			return 1;
		}
		while (rd && read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.0f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n);
	return 0;
}
