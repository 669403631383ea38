/* bench_nodes.c: seed B5 (Piggin/Morton, Feb 2004, seed 004): reclaim
 * balance across zones of unequal size, as replays in simulated time
 * through the engine's zoned allocator and kswapd (zones=, zone.c). The
 * machine is the seed's mem=64M: ZONE_NORMAL 48M (node 0, which every
 * allocation tries first) and ZONE_DMA 16M (node 1), watermarks from
 * 2.6.3's min_free_kbytes (1024 KiB), 512M of swap on the replay's disk
 * (8 ms a seek, 60 MB/s). Three policies (seed 5.1-5.3):
 *   fixed         2.6.3: direct reclaim 32 pages a zone, stopping at the
 *                 first zone that gave them; kswapd pages_high - free;
 *   batching      zone-balancing-batching: every zone its reclaim_batch
 *                 (24 and 8), in direct reclaim and kswapd;
 *   proportional  the priority-shift accumulators (zones=accumulate).
 * Workloads, fixed before measuring:
 *   j4, j5, j10, j15  a build of about 30 units in N jobs; a unit writes
 *                 a 26M heap, reads 1024 random pages of a shared 8M
 *                 tree, re-reads 2048 random heap pages, computes 20 ms
 *                 and frees its heap (-j5, -j10, -j15: footprint 2, 4, 6
 *                 times memory, Nick's runs; -j4: Andrew's), on a UP
 *                 machine (cpus=1) and a 2-way one;
 *   qsbench       one task on a 2-way 256M machine (NORMAL 240M, DMA 16M)
 *                 writing a 350M array (qsbench -m 350) and touching it at
 *                 random, four arrays' worth of pages.
 * Prints per policy p, machine m and workload w:
 *   b5.<p>.<m>.<w>.steal_large / steal_small / scan_large / scan_small
 *   b5.<p>.<m>.<w>.steal_ratio   NORMAL's pages stolen per DMA page (with
 *                                none from DMA, a lower bound: DMA as 1)
 *   b5.<p>.<m>.<w>.completion_ms simulated completion time
 *   b5.<p>.<m>.<w>.allocstall    direct reclaims
 *   b5.<p>.<m>.<w>.kswapd_pct    % of the steals that were kswapd's
 * and the summaries: b5.steal_ratio.<p> (j4 on the 2-way, Andrew's run),
 * b5.j4_2way.batching_over_fixed (its completion), b5.qsbench.* and
 * b5.qsbench.batching_over_fixed, b5.up.<w>.batching_over_fixed (Nick's
 * UP runs), and the size sweep b5.steal_ratio.<p>.size<k> for zones of
 * k:1 (k = 1, 3, 7) under j4 on the 2-way. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_replay.h"

#define UNITS 30

struct run {
	long steal[2], scan[2], kswapd_steal, allocstall;
	double end_ms;
};

static const char *const policies[] = { "fixed", "batching", "proportional" };
static const char *const zone_modes[] = { "fixed", "batching", "accumulate" };

/* large, small: the zones' sizes in MiB (node 0 is the large one) */
static char *scenario(int pol, int cpus, const char *work, int large, int small)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	bool qs = !strcmp(work, "qsbench");

	if (!f)
		return NULL;
	fprintf(f, "seed 1\n"
		   "machine memory=%dM node_mem=%dM,%dM swap=512M cpus=%d cpu_model=1"
		   " disk_seek=8ms disk_rate=60M zones=%s\n"
		   "cost touch=100ns fault=1us major=1us scan=200ns\n"
		   "group /build\n"
		   "file tree 8M\n", large + small, large, small, cpus, zone_modes[pol]);
	if (qs) {
		fprintf(f, "task qs group=/build cpu=0\n"
			   "qs alloc anon array 350M\n"
			   "qs touch array seq write\n"
			   "qs touch array random count=%d write\n"
			   "qs exit\n", 4 * 350 * 256);
	} else {
		int jobs = atoi(work + 1), units = (UNITS + jobs / 2) / jobs;

		for (int j = 0; j < jobs; j++)
			fprintf(f, "task j%d group=/build cpu=%d\n", j, j % cpus);
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
				   "j%d exit\n", j, units, j, j, j, j, j, j, j, j, j, j);
		}
	}
	fclose(f);
	return text;
}

static long field(const char *p, const char *key)
{
	const char *at = strstr(p, key);

	return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

static int run(int pol, int cpus, const char *work, int large, int small, struct run *r)
{
	char *out, *end = bench_replay(scenario(pol, cpus, work, large, small), &out), *p;

	if (!end) {
		free(out);
		return -1;
	}
	r->end_ms = bench_replay_ms(end, NULL);
	r->kswapd_steal = 0;
	for (int n = 0; n < 2; n++) {
		char key[32];
		char *eol;

		snprintf(key, sizeof(key), "\nnode %d size=", n);
		if (!(p = strstr(end, key)) || !(eol = strchr(p + 1, '\n'))) {
			free(out);
			return -1;
		}
		*eol = '\0';
		r->scan[n] = field(p, " scan=");
		r->steal[n] = field(p, " steal=");
		r->kswapd_steal += field(p, " steal_kswapd=");
		*eol = '\n';
	}
	r->allocstall = (p = strstr(end, "\nzones ")) ? field(p, " allocstall=") : -1;
	free(out);
	return r->scan[0] < 0 || r->steal[0] < 0 || r->allocstall < 0 ? -1 : 0;
}

/* NORMAL's steals per DMA steal; with none from DMA, a lower bound (the
 * DMA count taken as 1): the figure file takes numbers only */
static double ratio(long large, long small)
{
	return (double)large / (double)(small > 0 ? small : 1);
}

static void print_run(const char *prefix, const struct run *r)
{
	long steal = r->steal[0] + r->steal[1];

	printf("%s.steal_large %ld pages\n", prefix, r->steal[0]);
	printf("%s.steal_small %ld pages\n", prefix, r->steal[1]);
	printf("%s.scan_large %ld pages\n", prefix, r->scan[0]);
	printf("%s.scan_small %ld pages\n", prefix, r->scan[1]);
	printf("%s.steal_ratio %.3f ratio\n", prefix, ratio(r->steal[0], r->steal[1]));
	printf("%s.completion_ms %.3f ms\n", prefix, r->end_ms);
	printf("%s.allocstall %ld count\n", prefix, r->allocstall);
	printf("%s.kswapd_pct %.1f %%\n", prefix, steal ? 100.0 * r->kswapd_steal / steal : 0.0);
	fflush(stdout);
}

int main(void)
{
	static const char *const works[] = { "j4", "j5", "j10", "j15" };
	static const char *const machines[] = { "up", "2way" };
	double ms[3][2][4], qs_ms[3];

	for (int pi = 0; pi < 3; pi++) {
		for (int m = 0; m < 2; m++)
			for (int w = 0; w < 4; w++) {
				struct run r;
				char prefix[96];

				if (run(pi, m + 1, works[w], 48, 16, &r)) {
					fprintf(stderr, "bench_nodes: %s %s %s failed\n", policies[pi],
						machines[m], works[w]);
					return 1;
				}
				snprintf(prefix, sizeof(prefix), "b5.%s.%s.%s", policies[pi], machines[m],
					 works[w]);
				print_run(prefix, &r);
				ms[pi][m][w] = r.end_ms;
				if (m == 1 && w == 0)
					printf("b5.steal_ratio.%s %.3f ratio\n", policies[pi],
					       ratio(r.steal[0], r.steal[1]));
			}
		{
			struct run r;
			char prefix[96];

			if (run(pi, 2, "qsbench", 240, 16, &r)) {
				fprintf(stderr, "bench_nodes: %s qsbench failed\n", policies[pi]);
				return 1;
			}
			snprintf(prefix, sizeof(prefix), "b5.%s.qsbench", policies[pi]);
			print_run(prefix, &r);
			qs_ms[pi] = r.end_ms;
		}
	}
	printf("b5.j4_2way.batching_over_fixed %.3f ratio\n", ms[1][1][0] / ms[0][1][0]);
	printf("b5.qsbench.batching_over_fixed %.3f ratio\n", qs_ms[1] / qs_ms[0]);
	printf("b5.qsbench.proportional_over_fixed %.3f ratio\n", qs_ms[2] / qs_ms[0]);
	for (int w = 1; w < 4; w++)
		printf("b5.up.%s.batching_over_fixed %.3f ratio\n", works[w], ms[1][0][w] / ms[0][0][w]);
	for (int pi = 0; pi < 3; pi++)
		for (int k = 1; k <= 7; k += k == 1 ? 2 : 4) {
			struct run r;
			int small = 64 / (k + 1);

			if (run(pi, 2, "j4", 64 - small, small, &r)) {
				fprintf(stderr, "bench_nodes: size %d:1 failed\n", k);
				return 1;
			}
			printf("b5.steal_ratio.%s.size%d %.3f ratio\n", policies[pi], k,
			       ratio(r.steal[0], r.steal[1]));
		}
	return 0;
}
