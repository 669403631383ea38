/* bench_scan.c: seed B4 (Mel Gorman, Dec 2011, seed 002): scan efficiency
 * with and without the immediate-reclaim list, as replays in simulated
 * time. The setup, fixed before measuring:
 *   - a 256M machine of two 128M nodes, 2 CPUs, 512M of swap; no group has
 *     a limit: all reclaim is the machine's (direct: the engine has no
 *     kswapd of its own for the machine, so background reclaim is 0);
 *   - a fast clean-page producer: a reader going through a 2G file in
 *     order with read(2) (page cache, not mapped), 10 us a page from fast
 *     storage (400 MB/s);
 *   - a writer with write(2) on a writeback device 100 times slower
 *     (4 MB/s, 20 ms latency): 32M of new dirty page cache at once (about
 *     a fifth of the inactive file list), then 256K every 64 ms, the
 *     device's rate;
 *   - direct reclaim does not write file pages (it hands them to the
 *     device and keeps them), nor waits for them (the machine's reclaim);
 *   - 3.2's era (era=3.2: a new anon page starts on the active list) with
 *     transparent huge pages (thp=always: a fault asks for 2M, through
 *     compaction and reclaim for the order, and falls back to a page);
 *   - huge-page faults when free memory is low: from 2 s a task maps an
 *     anon region the size of RAM (256M), writes it and unmaps it, 4 times
 *     (the seed's THP workload beside the copy, for about the reader's
 *     run); a page compaction moves costs 2 us (a 4 KiB copy at the 2011
 *     desktop's few GB/s, with its unmap and remap).
 * Variants:
 *   a  dirty pages rotated to the head, and left there at writeback end
 *      (the benchmark build's wb_rotate=0)
 *   b  PG_reclaim and rotation to the inactive tail at writeback end (3.2,
 *      the engine's default)
 *   c  b + the immediate list (immediate_list=1, patch 11/11)
 *   d  b + per-node dirty limits of 20 % (dirty_ratio=20, Johannes' pzd)
 * Prints per variant v, as MMTests defines them (seed 4.5):
 *   b4.<v>.{direct,bg}_{scanned,reclaimed}     pages
 *   b4.<v>.{direct,bg}_efficiency_pct          reclaimed / scanned, truncated
 *   b4.<v>.{direct,bg}_velocity                scanned per elapsed second
 *   b4.<v>.direct_share_pct                    direct / all scanned, truncated
 *   b4.<v>.immediate   nr_vmscan_immediate_reclaim: dirty or writeback
 *                      pages reclaim kept, marked for immediate reclaim
 *   b4.<v>.listed, b4.<v>.rescued, b4.<v>.rotated
 *   b4.<v>.burst_ms, b4.<v>.elapsed_ms
 *   b4.<v>.thp_alloc, .thp_fallback, .compact_stall, .compact_success,
 *   .compact_fail, .pages_moved (the seed's THP and compaction rows)
 * and b4.direct_scanned_cut_pct.c_vs_b and .d_vs_b, the regime of (b):
 * b4.direct_efficiency_pct.b and b4.direct_dirty_share_pct.b (the share of
 * its direct scans that met a dirty or writeback page), b4.immediate_reclaimed (c's
 * nr_vmscan_immediate_reclaim), b4.rescued_pct (c: rescued per page put on
 * the immediate list, %; absent when (c) listed nothing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_replay.h"

struct variant {
	char name;
	const char *keys;
};

static const struct variant vars[] = {
	{ 'a', " wb_rotate=0" },
	{ 'b', "" },
	{ 'c', " immediate_list=1" },
	{ 'd', " dirty_ratio=20" },
};
#define NVAR (int)(sizeof(vars) / sizeof(vars[0]))

struct res {
	long scan[2], steal[2], marked, listed, rescued, rotated;
	long thp[6];   /* fault_alloc, fault_fallback, compact_stall, _success, _fail, moved */
	double elapsed_ms, burst_ms;
};

static char *scenario(const struct variant *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "seed 1\n"
		   "machine memory=256M node_mem=128M,128M swap=512M cpus=2 cpu_model=1"
		   " writeback=4M wb_latency=20ms era=3.2 thp=always%s\n"
		   "cost touch=100ns fault=1us major=10us scan=200ns migrate=2us\n"
		   "group /w\n"
		   "file src 2G\n"
		   "file usb 1G\n"
		   "task reader group=/w cpu=0\n"
		   "task writer group=/w cpu=0\n"
		   "task burst group=/w cpu=1 start=2s\n"
		   "reader touch src seq\n"
		   "reader exit\n"
		   "writer touch usb seq write count=8192\n", v->keys);
	/* the steady writes: 256K every 64 ms (the device's rate), on
	 * through the file, for about as long as the reader runs */
	for (int i = 0; i < 96; i++)
		fprintf(f, "writer touch usb seq write offset=%dK count=64\n"
			   "writer sleep 64ms\n", 32768 + 256 * i);
	fprintf(f, "writer exit\n");
	for (int i = 0; i < 4; i++)
		fprintf(f, "burst alloc anon thp 256M\n"
			   "burst touch thp seq write\n"
			   "burst free thp\n");
	fprintf(f, "burst exit\n");
	fclose(f);
	return text;
}

static long field(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int run(const struct variant *v, struct res *r)
{
	char *out, *end = bench_replay(scenario(v), &out), *line;

	if (!end || !(line = strstr(end, " /w usage=")) || !strstr(line, "  /w scan_bg=") ||
	    !strstr(end, "\nwriteback ") || !strstr(end, "\ntask burst ") ||
	    !strstr(end, "\nthp ")) {
		free(out);
		return -1;
	}
	r->elapsed_ms = bench_replay_ms(end, NULL);
	line = strstr(end, " /w usage=");
	r->scan[0] = field(line, "scan_direct=");
	r->steal[0] = field(line, "steal_direct=");
	line = strstr(line, "  /w scan_bg=");
	r->scan[1] = field(line, "scan_bg=");
	r->steal[1] = field(line, "steal_bg=");
	line = strstr(end, "\nwriteback ");
	r->marked = field(line, "marked=");
	r->listed = field(line, "immediate_listed=");
	r->rescued = field(line, "rescued=");
	r->rotated = field(line, "rotated=");
	line = strstr(end, "\ntask burst ");
	r->burst_ms = (double)field(line, "end=") / 1000.0 - 2000.0;
	line = strstr(end, "\nthp ");
	r->thp[0] = field(line, "fault_alloc=");
	r->thp[1] = field(line, "fault_fallback=");
	r->thp[2] = field(line, "compact_stall=");
	r->thp[3] = field(line, "compact_success=");
	r->thp[4] = field(line, "compact_fail=");
	r->thp[5] = field(line, "pages_moved=");
	free(out);
	return 0;
}

/* how much fewer than base pages v scanned, in % of base */
static double cut_pct(long base, long v)
{
	return base ? 100.0 * (double)(base - v) / (double)base : 0.0;
}

static long trunc_pct(long part, long whole)
{
	return whole ? part * 100 / whole : 0;
}

int main(void)
{
	struct res r[NVAR];

	for (int i = 0; i < NVAR; i++) {
		char n = vars[i].name;
		double secs;

		if (run(&vars[i], &r[i])) {
			fprintf(stderr, "bench_scan: variant %c failed\n", n);
			return 1;
		}
		secs = r[i].elapsed_ms / 1000.0;
		for (int who = 0; who < 2; who++) {
			const char *w = who ? "bg" : "direct";

			printf("b4.%c.%s_scanned %ld pages\n", n, w, r[i].scan[who]);
			printf("b4.%c.%s_reclaimed %ld pages\n", n, w, r[i].steal[who]);
			printf("b4.%c.%s_efficiency_pct %ld %%\n", n, w, trunc_pct(r[i].steal[who], r[i].scan[who]));
			printf("b4.%c.%s_velocity %.3f pages/s\n", n, w, secs > 0 ? (double)r[i].scan[who] / secs : 0);
		}
		printf("b4.%c.direct_share_pct %ld %%\n", n, trunc_pct(r[i].scan[0], r[i].scan[0] + r[i].scan[1]));
		printf("b4.%c.immediate %ld pages\n", n, r[i].marked);
		printf("b4.%c.listed %ld pages\n", n, r[i].listed);
		printf("b4.%c.rescued %ld pages\n", n, r[i].rescued);
		printf("b4.%c.rotated %ld pages\n", n, r[i].rotated);
		printf("b4.%c.burst_ms %.3f ms\n", n, r[i].burst_ms);
		printf("b4.%c.elapsed_ms %.3f ms\n", n, r[i].elapsed_ms);
		printf("b4.%c.thp_alloc %ld faults\n", n, r[i].thp[0]);
		printf("b4.%c.thp_fallback %ld faults\n", n, r[i].thp[1]);
		printf("b4.%c.compact_stall %ld stalls\n", n, r[i].thp[2]);
		printf("b4.%c.compact_success %ld compactions\n", n, r[i].thp[3]);
		printf("b4.%c.compact_fail %ld compactions\n", n, r[i].thp[4]);
		printf("b4.%c.pages_moved %ld pages\n", n, r[i].thp[5]);
		fflush(stdout);
	}
	printf("b4.direct_scanned_cut_pct.c_vs_b %.1f %%\n", cut_pct(r[1].scan[0], r[2].scan[0]));
	printf("b4.direct_scanned_cut_pct.d_vs_b %.1f %%\n", cut_pct(r[1].scan[0], r[3].scan[0]));
	/* the regime: (b)'s direct reclaim, efficiency and the share of its
	 * scans that met a dirty or writeback page (marked for immediate
	 * reclaim by a scan; the machine's reclaim is all direct here, so
	 * every mark is direct reclaim's; a dirty page kept unmarked because
	 * the write queue was congested would not count, and without a disk
	 * nothing is congested) */
	printf("b4.direct_efficiency_pct.b %.1f %%\n",
	       r[1].scan[0] ? 100.0 * (double)r[1].steal[0] / (double)r[1].scan[0] : 0.0);
	if (!r[1].scan[1])
		printf("b4.direct_dirty_share_pct.b %.1f %%\n",
		       r[1].scan[0] ? 100.0 * (double)r[1].marked / (double)r[1].scan[0] : 0.0);
	/* (b)'s huge pages: the share of its faults that fell back (the
	 * seed's 85 %) and of its compactions that gave a block (10 %) */
	printf("b4.thp_fallback_pct.b %.1f %%\n", r[1].thp[0] + r[1].thp[1] ?
	       100.0 * (double)r[1].thp[1] / (double)(r[1].thp[0] + r[1].thp[1]) : 0.0);
	printf("b4.compact_success_pct.b %.1f %%\n",
	       r[1].thp[2] ? 100.0 * (double)r[1].thp[3] / (double)r[1].thp[2] : 0.0);
	printf("b4.immediate_reclaimed %ld pages\n", r[2].marked);
	/* a share of nothing is no figure: with nothing listed in (c) the
	 * report reads b4.c.listed and calls the goal not applicable */
	if (r[2].listed)
		printf("b4.rescued_pct %.3f %%\n", 100.0 * (double)r[2].rescued / (double)r[2].listed);
	return 0;
}
