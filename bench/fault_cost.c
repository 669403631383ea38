/* fault_cost.c: what a page fault costs a process, for bench/mirror_idle.sh
 * (the page-cache tracer's programs run in every process's faults). Maps
 * MIB of anonymous memory ROUNDS times, writes one byte a page, unmaps it;
 * prints the best round's nanoseconds per page. Never allocates more than
 * MIB at once. Usage: fault_cost MIB ROUNDS */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double fault_cost_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t len, pages;
	double best = -1;
	int rounds;

	if (argc != 3 || atol(argv[1]) <= 0 || (rounds = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: fault_cost MIB ROUNDS\n");
		return 2;
	}
	len = (size_t)atol(argv[1]) << 20;
	pages = len / 4096;
	for (int r = 0; r < rounds; r++) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t0, t;

		if (p == MAP_FAILED) {
			perror("fault_cost: mmap");
			return 1;
		}
		t0 = fault_cost_now();
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		t = fault_cost_now() - t0;
		munmap((void *)p, len);
		if (best < 0 || t < best)
			best = t;
	}
	printf("%.1f\n", best / (double)pages);
	return 0;
}
