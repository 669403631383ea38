/* bench_wmark.c: seed B1 (KAMEZAWA's kernbench, seed 000) as replays in
 * the engine's deterministic mode. A build of 256 compile units runs as N
 * parallel jobs (N = 4: fits in the group; N = 32: does not) in a group
 * limited to 800M on an 8-CPU machine with swap, with and without
 * watermarks (automatic, 790M/760M, 700M/300M) and throttled direct
 * reclaim. Prints, per N and configuration:
 *   wmark.completion_ms.<N>.<config>     simulated completion time
 *   wmark.completion_ratio.<N>.<config>  relative to no watermarks
 *   wmark.direct_scan_pct.<N>.<config>   direct share of pages scanned
 *   wmark.allocstall.<N>.<config>        charges that entered reclaim
 * and wmark.j4_identical (1 when every counter at N = 4 is the same in
 * every configuration), and wmark.completion_floor_ratio.j32: the N = 32
 * build in a group without a limit (nothing reclaimed), relative to no
 * watermarks, which no reclaim policy can beat under this cost model.
 *
 * The cost model is fixed here and in docs/benchmarks.md, before any
 * measurement, and is not tuned to the results:
 *   - a compile unit: 16M of anon heap written once (cc1), 1024 pages of
 *     the 256M source tree read at random, 40 ms of CPU, and its 1M object
 *     file written (dirty page cache);
 *   - a page touched costs 100 ns of CPU, a minor fault 1 us more, a major
 *     fault 50 us (the replay defaults);
 *   - reclaim costs 200 ns of CPU per page scanned (direct: the charging
 *     job's; background: the reclaimer's own CPU time);
 *   - a swap-out costs the reclaimer 20 us of I/O wait per page;
 *   - writeback: 200 MB/s with 5 ms latency; direct reclaim waits for a
 *     page it finds under writeback (legacy memcg has no dirty throttle),
 *     background reclaim never waits;
 *   - 8 simulated CPUs shared by the jobs and the background reclaimer;
 *     waits (writeback, swap-out, a reclaim slot) do not hold a CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/replay.h"

#define UNITS 256

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
	long scan_direct, scan_bg, allocstall;
	char *end_block;              /* everything from the "end" line on */
};

/* limit: the group's, or "" for none (the floor: nothing is reclaimed) */
static char *scenario(int jobs, const struct config *c, const char *limit)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int units = UNITS / jobs;

	if (!f)
		return NULL;
	fprintf(f, "seed 1\n"
		   "machine memory=2G swap=1G cpus=8 nodes=2 writeback=200M wb_latency=5ms"
		   " watermarks=%d throttle=%d cpu_model=1\n"
		   "cost touch=100ns fault=1us major=50us scan=200ns swapout=20us\n"
		   "group /kb%s%s\n"
		   "file src 256M\n"
		   "file obj 256M\n", c->wmarks, c->throttle, limit, c->marks);
	for (int j = 0; j < jobs; j++)
		fprintf(f, "task j%d group=/kb\n", j);
	for (int j = 0; j < jobs; j++) {
		for (int k = 0; k < units; k++) {
			int u = j * units + k;

			fprintf(f, "j%d alloc anon cc 16M\n"
				   "j%d touch cc seq write\n"
				   "j%d map src s\n"
				   "j%d touch s random count=1024\n"
				   "j%d free s\n"
				   "j%d compute 40ms\n"
				   "j%d map obj o offset=%dM size=1M\n"
				   "j%d touch o seq write\n"
				   "j%d free o\n"
				   "j%d free cc\n", j, j, j, j, j, j, j, u, j, j, j);
		}
		fprintf(f, "j%d exit\n", j);
	}
	fclose(f);
	return text;
}

static long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int run(int jobs, const struct config *c, const char *limit, struct result *r)
{
	char *text = scenario(jobs, c, limit), *out = NULL, *end, *line;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int err;

	if (!text || !f)
		return -1;
	err = replay_run(text, f, stderr);
	fclose(f);
	free(text);
	end = out && !strncmp(out, "end t=", 6) ? out : out ? strstr(out, "\nend t=") : NULL;
	if (err || !end) {
		free(out);
		return -1;
	}
	if (*end == '\n')
		end++;
	r->end_ms = strtod(end + 6, NULL);
	if (strstr(end, "us\n") == strchr(end, '\n') - 2)
		r->end_ms /= 1000;
	if (!(line = strstr(end, " /kb usage=")) || !strstr(line, "  /kb scan_bg=")) {
		free(out);
		return -1;
	}
	r->scan_direct = field(line, "scan_direct=");
	line = strstr(line, "  /kb scan_bg=");
	r->scan_bg = field(line, "scan_bg=");
	r->allocstall = field(line, "allocstall=");
	/* throttle configurations also print each task's slot waits */
	for (char *w; (w = strstr(end, " throttled=0\n"));)
		memmove(w, w + 12, strlen(w + 12) + 1);
	r->end_block = strdup(end);
	free(out);
	return 0;
}

int main(void)
{
	static const int ns[] = { 4, 32 };
	struct result res[2][NCONFIG], floor;
	int identical = 1;

	for (int n = 0; n < 2; n++) {
		for (int c = 0; c < NCONFIG; c++) {
			struct result *r = &res[n][c];

			if (run(ns[n], &configs[c], " limit=800M", r)) {
				fprintf(stderr, "bench_wmark: j%d %s failed\n", ns[n], configs[c].name);
				return 1;
			}
			printf("wmark.completion_ms.j%d.%s %.3f ms\n", ns[n], configs[c].name, r->end_ms);
			printf("wmark.completion_ratio.j%d.%s %.3f ratio\n", ns[n], configs[c].name,
			       r->end_ms / res[n][0].end_ms);
			printf("wmark.direct_scan_pct.j%d.%s %.1f %%\n", ns[n], configs[c].name,
			       r->scan_direct + r->scan_bg ?
			       100.0 * (double)r->scan_direct / (double)(r->scan_direct + r->scan_bg) : 0.0);
			printf("wmark.allocstall.j%d.%s %ld stalls\n", ns[n], configs[c].name, r->allocstall);
			printf("wmark.scanned.j%d.%s %ld pages\n", ns[n], configs[c].name,
			       r->scan_direct + r->scan_bg);
			fflush(stdout);
		}
	}
	for (int c = 1; c < NCONFIG; c++)
		identical &= !strcmp(res[0][c].end_block, res[0][0].end_block);
	printf("wmark.j4_identical %d bool\n", identical);
	/* The floor: the same build with no limit, so that nothing is ever
	 * reclaimed, scanned, refaulted or waited for. Reclaim only adds work
	 * to the jobs' and the CPUs', so no configuration can finish sooner. */
	if (run(32, &configs[0], "", &floor)) {
		fprintf(stderr, "bench_wmark: j32 unlimited failed\n");
		return 1;
	}
	printf("wmark.completion_ms.j32.unlimited %.3f ms\n", floor.end_ms);
	printf("wmark.completion_floor_ratio.j32 %.3f ratio\n", floor.end_ms / res[1][0].end_ms);
	free(floor.end_block);
	for (int n = 0; n < 2; n++)
		for (int c = 0; c < NCONFIG; c++)
			free(res[n][c].end_block);
	return 0;
}
