/* bench_wmark.c: seed B1 (KAMEZAWA's kernbench, seed 000) as replays in
 * the engine's deterministic mode. A build of 256 compile units runs as N
 * parallel jobs (N = 4: fits in the group; N = 32: does not) in a group
 * limited to 800M on an 8-CPU machine with swap, with and without
 * watermarks (automatic, 790M/760M, 700M/300M) and throttled direct
 * reclaim. Prints, per N and configuration:
 *   wmark.completion_ms.<N>.<config>     simulated build time
 *   wmark.completion_ratio.<N>.<config>  relative to no watermarks
 *   wmark.direct_scan_pct.<N>.<config>   direct share of pages scanned
 *   wmark.allocstall.<N>.<config>        charges that entered reclaim
 *   wmark.iowait_pct.<N>.<config>        the jobs' time waiting for I/O
 *                                        (the disk, writeback), in % of
 *                                        N x the build time
 *   wmark.disk_reads.<N>.<config>, wmark.lock_spin_ms.<N>.<config>
 * and wmark.j4_identical (1 when every counter at N = 4 is the same in
 * every configuration), and wmark.completion_floor_ratio.j32: the N = 32
 * build in a group without a limit (nothing reclaimed), relative to no
 * watermarks, which no reclaim policy can beat.
 *
 * bench_wmark --print N CONFIG prints the build's scenario (memcgctl replay).
 *
 * Then Ying Han's scenario (seed 1.4 B): a 500M group, distances 50m/40m
 * (background reclaim from 460M down to 450M), one task writing a file
 * of YING_MIB sequentially (new pages, dirty) and, apart, one reading it
 * (not cached), each with direct reclaim only and with background reclaim:
 *   wmark.ying.<write|read>.<direct|bg>.{steal_direct,steal_bg,allocstall,
 *     direct_share_pct,mb_per_s}
 *   wmark.ying.read_allocstall, wmark.ying.write_direct_share_pct (with
 *   background reclaim), wmark.ying.write_throughput_ratio (bg / direct).
 *
 * The cost model is fixed here and in docs/benchmarks.md, before any
 * measurement, and is not tuned to the results. The build's figures come
 * from the seed's text (KAMEZAWA's kernbench, 3 Dec 2007, ia64, 8 CPUs,
 * 2 nodes), the devices from the era's (a 2007 desktop disk, about 8 ms a
 * random access and 60 MB/s):
 *   - a compile unit (cc1, then as) runs in ROUNDS = 8 rounds, each
 *     reading the next eighth of its own 1M of the 256M source tree (in
 *     order), 128 pages at random of a 16M set of headers (include/ of
 *     one architecture, read by every unit, so hot), writing the next
 *     eighth of its heap and computing an eighth of its CPU time; then it
 *     writes its 1M object file once (new dirty page cache) and frees its
 *     heap without touching it again (the seed's vmstat: swap-in is 1-2 %
 *     of swap-out). The heap grows to 35M, so that 32 jobs' heaps are 1.4
 *     x the 800M limit at their peaks (the "30-50 % over", whose
 *     middle is taken), and with the files' page cache the group is over
 *     its limit at N = 32, not at N = 4 (the seed: "800M was enough"; a
 *     heap of 70M, read as 35M on average, was over at N = 4 too, and
 *     was dropped for that). Its CPU time is
 *     4240 ms on average ((User 1015.82 s + System 70.07 s) / 256 units
 *     of the seed's -j4 run, when 800M was enough), each unit 0.5x to
 *     1.5x that (the seed gives only the total; an assumption, so that the
 *     jobs do not run in lockstep, which a real build's do not). A first
 *     version read and wrote everything before computing: its jobs ran in
 *     lockstep, every job's heap written at once wiping the headers, which
 *     then had to be read again by all at once (docs/benchmarks.md);
 *   - the tree and the headers are read once, in order, before the build
 *     (kernbench's warm-up run), not timed;
 *   - the machine: 8G of memory (the seed's vmstat: 5.76 GB free at the
 *     start beside the 800M group and 0.34 GB of cache and buffers) and
 *     4G of swap (its swpd reached 2.15 GB);
 *   - a page touched costs 100 ns of CPU, a minor or major fault 1 us more;
 *   - a major fault (a page-cache miss or a swap-in) waits for the disk,
 *     off the CPU: one request at a time, 8 ms of seek unless it follows
 *     the previous access, then 68 us to transfer 4 KiB at 60 MB/s;
 *   - the disk is the machine's one block device (128 requests a
 *     direction, merged when they follow each other): swap-outs go
 *     through the swap cache (a page comes back once written), writeback
 *     and the flusher's writes go to it too;
 *   - reclaim costs 200 ns of CPU per page scanned (direct: the charging
 *     job's; background: the reclaimer's own CPU time), spent holding the
 *     group's LRU lock: scans of one group serialise, and a scanner waiting
 *     for the lock spins on its CPU;
 *   - the eras' waits (docs/design.md, "The block device"): the build runs
 *     2.6.24's (no wait for writeback in memcg reclaim, congestion_wait in
 *     the charge loop and the priority loop, balance_dirty_pages writing
 *     chunks itself), Ying Han's scenario 2.6.39's (wait_iff_congested);
 *   - 8 simulated CPUs shared by the jobs and the background reclaimer;
 *     waits (the disk, writeback, a reclaim slot) do not hold a CPU.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_replay.h"

#define UNITS 256
#define UNIT_HEAP "35M"
#define HEAP_PAGES (35L * 256)
#define ROUNDS 8
#define UNIT_CPU_MS 4240
#define CPUS 8                    /* the seed's ia64 machine */

/* Unit u's CPU time: UNIT_CPU_MS times a factor from 0.5 to 1.5, the 256
 * factors spread evenly (their mean is 1) and dealt to the units in a
 * fixed shuffled order (97 u mod 256), the same at every N. */
static long unit_cpu_us(int u)
{
	int rank = (u * 97) % UNITS;

	return (long)UNIT_CPU_MS * (UNITS / 2 + rank) * 1000 / UNITS + UNIT_CPU_MS * 500 / UNITS;
}

struct config {
	const char *name;
	int wmarks, throttle;
	const char *marks;            /* group settings, or "" */
};

static const struct config configs[] = {
	{ "nowmark", 0, 0, "" },
	{ "nowmark_throttle", 0, 1, "" },
	{ "auto", 1, 0, "" },
	{ "auto_throttle", 1, 1, "" },
	{ "790_760", 1, 0, " high=790M low=760M" },
	{ "790_760_throttle", 1, 1, " high=790M low=760M" },
	{ "700_300", 1, 0, " high=700M low=300M" },
	{ "700_300_throttle", 1, 1, " high=700M low=300M" },
};
#define NCONFIG (int)(sizeof(configs) / sizeof(configs[0]))

struct result {
	double end_ms;
	long scan_direct, scan_bg, steal_direct, steal_bg, allocstall;
	long reads, io_wait_us, spin_us, swap_writes, cpu_busy_us, cpu_reclaim_us, refault_anon;
	long nap_us;
	char *end_block;              /* everything from the "end" line on */
};

#define MACHINE " disk_seek=8ms disk_rate=60M lru_lock=1 writeback=60M wb_latency=8ms cpu_model=1"
#define COSTS   "cost touch=100ns fault=1us major=1us scan=200ns\n"
#define YING_MIB 20480

/* limit: the group's, or "" for none (the floor: nothing is reclaimed).
 * jobs 0: the warm-up alone (its end is when the build starts). */
static char *scenario(int jobs, const struct config *c, const char *limit)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int units = jobs ? UNITS / jobs : 0;

	if (!f)
		return NULL;
	fprintf(f, "seed 1\n"
		   "machine memory=8G swap=4G cpus=%d nodes=2 watermarks=%d throttle=%d era=2.6.24" MACHINE "\n"
		   COSTS
		   "group /kb%s%s\n"
		   "file src 256M\n"
		   "file hdr 16M\n"
		   "file obj 256M\n"
		   "task warm group=/kb\n", CPUS, c->wmarks, c->throttle, limit, c->marks);
	/* the jobs start when the warm-up has read the tree */
	for (int j = 0; j < jobs; j++)
		fprintf(f, "task j%d group=/kb start=100000s\n", j);
	fprintf(f, "warm touch src seq\nwarm touch hdr seq\n");
	for (int j = 0; j < jobs; j++)
		fprintf(f, "warm fork j%d\n", j);
	fprintf(f, "warm exit\n");
	for (int j = 0; j < jobs; j++) {
		for (int k = 0; k < units; k++) {
			int u = j * units + k;

			fprintf(f, "j%d alloc anon cc " UNIT_HEAP "\n", j);
			for (int r = 0; r < ROUNDS; r++)
				fprintf(f, "j%d touch src seq offset=%dK count=%d\n"
					   "j%d touch hdr random count=%d\n"
					   "j%d touch cc seq offset=%ldK count=%ld write\n"
					   "j%d compute %ldus\n",
					j, u * 1024 + r * 1024 / ROUNDS, 256 / ROUNDS,
					j, 1024 / ROUNDS,
					j, (long)r * HEAP_PAGES / ROUNDS * 4, HEAP_PAGES / ROUNDS,
					j, unit_cpu_us(u) / ROUNDS);
			fprintf(f, "j%d touch obj seq offset=%dM count=256 write\n"
				   "j%d free cc\n", j, u, j);
		}
		fprintf(f, "j%d exit\n", j);
	}
	fclose(f);
	return text;
}

/* Ying Han's: write (or read) a file of YING_MIB in a 500M group. */
static char *ying(bool write, bool bg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "seed 1\n"
		   "machine memory=2G swap=0 cpus=4 nodes=1 watermarks=%d throttle=0 era=2.6.39" MACHINE "\n"
		   COSTS
		   "group /y limit=500M%s\n"
		   "file big %dM\n"
		   "task io group=/y\n"
		   "io map big f\n"
		   "io touch f seq%s\n"
		   "io exit\n", bg, bg ? " high=460M low=450M" : "", YING_MIB, write ? " write" : "");
	fclose(f);
	return text;
}

static long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int run_text(char *text, const char *group, struct result *r)
{
	char *out, *end = bench_replay(text, &out), *line, key[64];

	if (!end) {
		free(out);
		return -1;
	}
	r->end_ms = bench_replay_ms(end, &line);
	snprintf(key, sizeof(key), " %s usage=", group);
	if (!(line = strstr(end, key))) {
		free(out);
		return -1;
	}
	r->scan_direct = field(line, "scan_direct=");
	r->refault_anon = field(line, "refault_anon=");
	r->steal_direct = field(line, "steal_direct=");
	snprintf(key, sizeof(key), "  %s scan_bg=", group);
	if (!(line = strstr(line, key)) || !(end = strstr(end, "\ndisk reads="))) {
		free(out);
		return -1;
	}
	r->scan_bg = field(line, "scan_bg=");
	r->steal_bg = field(line, "steal_bg=");
	r->allocstall = field(line, "allocstall=");
	r->reads = field(end, "reads=");
	r->io_wait_us = field(end, "io_wait_us=");
	r->swap_writes = field(end, "swap_writes=");
	r->nap_us = field(end, " nap_us=");
	r->spin_us = (line = strstr(end, "\nlru_lock spin_us=")) ? field(line, "spin_us=") : 0;
	line = strstr(end, "\ncpu busy_us=");
	r->cpu_busy_us = line ? field(line, "busy_us=") : 0;
	r->cpu_reclaim_us = line ? field(line, "reclaim_us=") : 0;
	end = out + (strstr(out, "\nend t=") ? strstr(out, "\nend t=") + 1 - out : 0);
	/* throttle configurations also print each task's slot waits */
	for (char *w; (w = strstr(end, " throttled=0\n"));)
		memmove(w, w + 12, strlen(w + 12) + 1);
	r->end_block = strdup(end);
	free(out);
	return 0;
}

static double pct(long part, long whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int main(int argc, char **argv)
{
	static const int ns[] = { 4, 32 };
	struct result res[2][NCONFIG], floor, warm;
	int identical = 1;
	double start;

	/* --print N CONFIG: the build's scenario, for memcgctl replay */
	if (argc == 4 && !strcmp(argv[1], "--print")) {
		char *e;
		long jobs = strtol(argv[2], &e, 10);

		if (*e || jobs < 1 || jobs > UNITS || UNITS % jobs) {
			fprintf(stderr, "bench_wmark: N must divide %d\n", UNITS);
			return 2;
		}
		for (int c = 0; c < NCONFIG; c++) {
			if (strcmp(argv[3], configs[c].name))
				continue;
			char *text = scenario((int)jobs, &configs[c], " limit=800M");

			if (!text)
				return 1;
			fputs(text, stdout);
			free(text);
			return 0;
		}
		fprintf(stderr, "bench_wmark: no configuration %s\n", argv[3]);
		return 2;
	}

	/* the warm-up alone: the build starts when it ends (identical in
	 * every configuration: 256M never reaches a watermark) */
	if (run_text(scenario(0, &configs[0], " limit=800M"), "/kb", &warm)) {
		fprintf(stderr, "bench_wmark: the warm-up failed\n");
		return 1;
	}
	start = warm.end_ms;
	printf("wmark.warmup_ms %.3f ms\n", start);
	for (int n = 0; n < 2; n++) {
		for (int c = 0; c < NCONFIG; c++) {
			struct result *r = &res[n][c];
			const char *name = configs[c].name;

			if (run_text(scenario(ns[n], &configs[c], " limit=800M"), "/kb", r)) {
				fprintf(stderr, "bench_wmark: j%d %s failed\n", ns[n], name);
				return 1;
			}
			r->end_ms -= start;
			printf("wmark.completion_ms.j%d.%s %.3f ms\n", ns[n], name, r->end_ms);
			printf("wmark.completion_ratio.j%d.%s %.3f ratio\n", ns[n], name,
			       r->end_ms / res[n][0].end_ms);
			printf("wmark.direct_scan_pct.j%d.%s %.1f %%\n", ns[n], name,
			       pct(r->scan_direct, r->scan_direct + r->scan_bg));
			printf("wmark.allocstall.j%d.%s %ld stalls\n", ns[n], name, r->allocstall);
			printf("wmark.scanned.j%d.%s %ld pages\n", ns[n], name, r->scan_direct + r->scan_bg);
			printf("wmark.iowait_pct.j%d.%s %.1f %%\n", ns[n], name,
			       100.0 * ((double)(r->io_wait_us - warm.io_wait_us) / 1000.0) /
			       (r->end_ms * ns[n]));
			printf("wmark.disk_reads.j%d.%s %ld reads\n", ns[n], name, r->reads - warm.reads);
			/* of the I/O wait, the congestion naps (reclaim's and
			 * balance_dirty_pages'), in % of N x the build time */
			printf("wmark.nap_pct.j%d.%s %.1f %%\n", ns[n], name,
			       100.0 * ((double)(r->nap_us - warm.nap_us) / 1000.0) / (r->end_ms * ns[n]));
			printf("wmark.lock_spin_ms.j%d.%s %.3f ms\n", ns[n], name, (double)r->spin_us / 1000.0);
			/* the regime: how busy the CPUs were, how fast the build
			 * swapped out and in, and reclaim's CPU time */
			printf("wmark.cpu_busy_pct.j%d.%s %.1f %%\n", ns[n], name,
			       100.0 * ((double)(r->cpu_busy_us - warm.cpu_busy_us) / 1000.0) /
			       (r->end_ms * CPUS));
			printf("wmark.swapout_mb_per_s.j%d.%s %.2f MB/s\n", ns[n], name,
			       (double)(r->swap_writes - warm.swap_writes) * 4096 / 1e6 / (r->end_ms / 1000.0));
			printf("wmark.swapin_mb_per_s.j%d.%s %.2f MB/s\n", ns[n], name,
			       (double)r->refault_anon * 4096 / 1e6 / (r->end_ms / 1000.0));
			printf("wmark.read_mb_per_s.j%d.%s %.2f MB/s\n", ns[n], name,
			       (double)(r->reads - warm.reads) * 4096 / 1e6 / (r->end_ms / 1000.0));
			printf("wmark.reclaim_cpu_ms.j%d.%s %.1f ms\n", ns[n], name,
			       (double)(r->cpu_reclaim_us - warm.cpu_reclaim_us) / 1000.0);
			if (c)
				printf("wmark.reclaim_cpu_ratio.j%d.%s %.3f ratio\n", ns[n], name,
				       res[n][0].cpu_reclaim_us > warm.cpu_reclaim_us ?
				       (double)(r->cpu_reclaim_us - warm.cpu_reclaim_us) /
				       (double)(res[n][0].cpu_reclaim_us - warm.cpu_reclaim_us) : 0.0);
			fflush(stdout);
		}
	}
	for (int c = 1; c < NCONFIG; c++)
		identical &= !strcmp(res[0][c].end_block, res[0][0].end_block);
	printf("wmark.j4_identical %d bool\n", identical);
	printf("wmark.j32_over_j4.nowmark %.3f ratio\n", res[1][0].end_ms / res[0][0].end_ms);
	/* The floor: the same build with no limit, so that nothing is ever
	 * reclaimed, scanned, refaulted or waited for. Reclaim only adds work
	 * to the jobs' and the CPUs', so no configuration can finish sooner. */
	if (run_text(scenario(32, &configs[0], ""), "/kb", &floor)) {
		fprintf(stderr, "bench_wmark: j32 unlimited failed\n");
		return 1;
	}
	floor.end_ms -= start;
	printf("wmark.completion_ms.j32.unlimited %.3f ms\n", floor.end_ms);
	printf("wmark.completion_floor_ratio.j32 %.3f ratio\n", floor.end_ms / res[1][0].end_ms);
	printf("wmark.iowait_pct.j32.unlimited %.1f %%\n",
	       100.0 * ((double)(floor.io_wait_us - warm.io_wait_us) / 1000.0) / (floor.end_ms * 32));
	free(floor.end_block);
	free(warm.end_block);
	for (int n = 0; n < 2; n++)
		for (int c = 0; c < NCONFIG; c++)
			free(res[n][c].end_block);

	/* Ying Han's second scenario */
	for (int w = 0; w < 2; w++) {
		double mbps[2] = { 0, 0 };

		for (int bg = 0; bg < 2; bg++) {
			struct result r;
			const char *k = w ? "read" : "write", *b = bg ? "bg" : "direct";

			if (run_text(ying(!w, bg), "/y", &r)) {
				fprintf(stderr, "bench_wmark: ying %s %s failed\n", k, b);
				return 1;
			}
			free(r.end_block);
			mbps[bg] = YING_MIB / (r.end_ms / 1000.0) * 1.048576;   /* MB/s */
			printf("wmark.ying.%s.%s.steal_direct %ld pages\n", k, b, r.steal_direct);
			printf("wmark.ying.%s.%s.steal_bg %ld pages\n", k, b, r.steal_bg);
			printf("wmark.ying.%s.%s.scan_direct %ld pages\n", k, b, r.scan_direct);
			printf("wmark.ying.%s.%s.scan_bg %ld pages\n", k, b, r.scan_bg);
			printf("wmark.ying.%s.%s.allocstall %ld stalls\n", k, b, r.allocstall);
			printf("wmark.ying.%s.%s.direct_share_pct %.1f %%\n", k, b,
			       pct(r.steal_direct, r.steal_direct + r.steal_bg));
			printf("wmark.ying.%s.%s.mb_per_s %.2f MB/s\n", k, b, mbps[bg]);
			if (bg && w)
				printf("wmark.ying.read_allocstall %ld stalls\n", r.allocstall);
			if (bg && !w)
				printf("wmark.ying.write_direct_share_pct %.1f %%\n",
				       pct(r.steal_direct, r.steal_direct + r.steal_bg));
			fflush(stdout);
		}
		printf("wmark.ying.%s_throughput_ratio %.3f ratio\n", w ? "read" : "write", mbps[1] / mbps[0]);
	}
	return 0;
}
