/* bench_nodes.c: seed B5 (Piggin/Morton, Feb 2004, seed 004): reclaim
 * balance across nodes of unequal size, as replays in simulated time.
 * A 64M machine of two nodes, 48M (node 0: every allocation tries it
 * first, as ZONE_NORMAL) and 16M (node 1, the fallback, as ZONE_DMA),
 * 2 CPUs, 512M of swap on the replay's disk (8 ms a seek, 60 MB/s).
 * Two policies: the engine's default (each pass asks every node for a
 * batch proportional to its share, through the priority-shift
 * accumulators: seed 5.2, 5.3) and the fixed walk it replaced (node 0,
 * then node 1, stopping as soon as the pass has enough), the benchmark
 * build's node_reclaim=fixed. Workloads, fixed before measuring:
 *   x2, x4, x6  a parallel build of 30 units in 5, 10 or 15 jobs; a unit
 *               writes a 26M heap, reads 1024 random pages of a shared
 *               8M tree, re-reads 2048 random heap pages, computes 20 ms
 *               and frees its heap: footprint 2, 4 and 6 times memory;
 *   swap1       one task (qsbench's stand-in) writing an 88M array (1.37x
 *               memory, as qsbench -m 350 on 256M) and touching it at
 *               random, 4 passes' worth of pages.
 * Prints per policy p and workload w:
 *   b5.<p>.<w>.steal_large / steal_small / scan_large / scan_small  pages
 *   b5.<p>.<w>.steal_ratio    pages stolen on the 48M node per page on the 16M
 *   b5.<p>.<w>.completion_ms  simulated completion time
 * and b5.steal_ratio.<p> (x2, x4 and x6 together), b5.swap_single.time_ratio
 * (swap1: proportional over fixed), and the size sweep for the plot:
 * b5.steal_ratio.<p>.size<k> for nodes of k:1 (k = 1, 3, 7) under x4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_replay.h"

#define UNITS 30

struct run {
	long steal[2], scan[2];
	double end_ms;
};

static const char *const policies[] = { "fixed", "proportional" };

/* large, small: the nodes' sizes in MiB (node 0 is the large one) */
static char *scenario(const char *policy, const char *work, int large, int small)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "seed 1\n"
		   "machine memory=%dM node_mem=%dM,%dM swap=512M cpus=2 cpu_model=1"
		   " disk_seek=8ms disk_rate=60M node_reclaim=%s\n"
		   "cost touch=100ns fault=1us major=1us scan=200ns\n"
		   "group /build\n"
		   "file tree 8M\n", large + small, large, small, policy);
	if (!strcmp(work, "swap1")) {
		fprintf(f, "task qs group=/build cpu=0\n"
			   "qs alloc anon array 88M\n"
			   "qs touch array seq write\n"
			   "qs touch array random count=%d write\n"
			   "qs exit\n", 4 * 88 * 256);
	} else {
		int jobs = work[1] == '2' ? 5 : work[1] == '4' ? 10 : 15;

		/* every job on CPU 0's node: all allocations try node 0 first */
		for (int j = 0; j < jobs; j++)
			fprintf(f, "task j%d group=/build cpu=0\n", j);
		for (int j = 0; j < jobs; j++) {
			fprintf(f, "j%d repeat %d\n"
				   "j%d alloc anon heap 26M\n"
				   "j%d touch heap seq write\n"
				   "j%d map tree t\n"
				   "j%d touch t random count=1024\n"
				   "j%d free t\n"
				   "j%d touch heap random count=2048 write\n"
				   "j%d compute 20ms\n"
				   "j%d free heap\n"
				   "j%d end\n"
				   "j%d exit\n", j, UNITS / jobs, j, j, j, j, j, j, j, j, j, j);
		}
	}
	fclose(f);
	return text;
}

static int run(const char *policy, const char *work, int large, int small, struct run *r)
{
	char *out, *end = bench_replay(scenario(policy, work, large, small), &out), *p;

	if (!end) {
		free(out);
		return -1;
	}
	r->end_ms = bench_replay_ms(end, NULL);
	for (int n = 0; n < 2; n++) {
		char key[32];

		snprintf(key, sizeof(key), "\nnode %d size=", n);
		if (!(p = strstr(end, key)) || !strstr(p, " scan=") || !strstr(p, " steal=")) {
			free(out);
			return -1;
		}
		r->scan[n] = strtol(strstr(p, " scan=") + 6, NULL, 10);
		r->steal[n] = strtol(strstr(p, " steal=") + 7, NULL, 10);
	}
	free(out);
	return 0;
}

static double ratio(long large, long small)
{
	return small ? (double)large / (double)small : 0.0;
}

int main(void)
{
	static const char *const works[] = { "x2", "x4", "x6", "swap1" };
	double swap_ms[2] = { 0, 0 };

	for (int pi = 0; pi < 2; pi++) {
		long steal[2] = { 0, 0 };

		for (int w = 0; w < 4; w++) {
			struct run r;
			const char *p = policies[pi];

			if (run(p, works[w], 48, 16, &r)) {
				fprintf(stderr, "bench_nodes: %s %s failed\n", p, works[w]);
				return 1;
			}
			printf("b5.%s.%s.steal_large %ld pages\n", p, works[w], r.steal[0]);
			printf("b5.%s.%s.steal_small %ld pages\n", p, works[w], r.steal[1]);
			printf("b5.%s.%s.scan_large %ld pages\n", p, works[w], r.scan[0]);
			printf("b5.%s.%s.scan_small %ld pages\n", p, works[w], r.scan[1]);
			printf("b5.%s.%s.steal_ratio %.2f ratio\n", p, works[w], ratio(r.steal[0], r.steal[1]));
			printf("b5.%s.%s.completion_ms %.3f ms\n", p, works[w], r.end_ms);
			fflush(stdout);
			if (w < 3) {
				steal[0] += r.steal[0];
				steal[1] += r.steal[1];
			} else {
				swap_ms[pi] = r.end_ms;
			}
		}
		printf("b5.steal_ratio.%s %.2f ratio\n", policies[pi], ratio(steal[0], steal[1]));
	}
	printf("b5.swap_single.time_ratio %.3f ratio\n", swap_ms[0] ? swap_ms[1] / swap_ms[0] : 0.0);
	for (int pi = 0; pi < 2; pi++)
		for (int k = 1; k <= 7; k += k == 1 ? 2 : 4) {
			struct run r;
			int small = 64 / (k + 1);

			if (run(policies[pi], "x4", 64 - small, small, &r)) {
				fprintf(stderr, "bench_nodes: size %d:1 failed\n", k);
				return 1;
			}
			printf("b5.steal_ratio.%s.size%d %.2f ratio\n", policies[pi], k,
			       ratio(r.steal[0], r.steal[1]));
		}
	return 0;
}
