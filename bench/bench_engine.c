/* bench_engine.c: engine benchmarks, printed as "name value unit" lines.
 * Every figure that is compared is measured in this one process, side by
 * side with its baseline, so the ratio holds on a noisy machine.
 *   engine.charge_pairs_per_s.{t1,t2,t2_nostock,t1_noaccounting}: a page
 *     charged and uncharged in a child group, as the seed's map/fault/unmap
 *     loop does it: 64 pages faulted in one at a time (charge path: stock),
 *     then unmapped together (one batched uncharge). Each thread is its own
 *     simulated CPU and NUMA node.
 *   engine.bytes_per_page   (RSS growth at memory=64G, every page charged)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/charge.h"
#include "engine/memcg.h"

#define PAIRS_PER_THREAD 4000000L
#define PAGES_PER_ROUND  64

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct mcg_engine *bench_engine(long pages, unsigned cpus, bool no_stock, bool no_acct)
{
	struct mcg_config cfg = {
		.mem_pages = pages, .nodes = cpus, .cpus = cpus, .vm_swappiness = 60,
		.no_stock = no_stock, .no_accounting = no_acct,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg);
}

struct pair_arg {
	struct mcg_group *g;
	unsigned cpu;
	long pairs;
};

static void *pair_main(void *p)
{
	struct pair_arg *a = p;
	struct mcg_engine *e = a->g->eng;
	long idx[PAGES_PER_ROUND];

	for (long done = 0; done < a->pairs; done += PAGES_PER_ROUND) {
		int n = 0;

		for (int i = 0; i < PAGES_PER_ROUND; i++)
			if ((idx[n] = charge_new_page(a->g, a->cpu, a->cpu, PK_ANON, a->cpu, 0)) >= 0)
				n++;
		charge_batch_begin();
		while (n > 0)
			charge_free_page(e, (uint32_t)idx[--n]);
		charge_batch_end();
	}
	return NULL;
}

/* Charge plus uncharge of one page in a child group, on nthreads threads
 * (each its own simulated CPU). Returns pairs per second of one run. */
static double bench_pairs_once(unsigned nthreads, bool no_stock, bool no_acct)
{
	struct mcg_engine *e = bench_engine(4096, nthreads, no_stock, no_acct);
	struct mcg_group *g = NULL;
	struct pair_arg a[8];
	pthread_t t[8];
	double t0, dt;

	mcg_create(e, e->root, "bench", NULL, NULL, &g);
	t0 = bench_now();
	for (unsigned i = 0; i < nthreads; i++) {
		a[i] = (struct pair_arg){ g, i, PAIRS_PER_THREAD };
		pthread_create(&t[i], NULL, pair_main, &a[i]);
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	dt = bench_now() - t0;
	mcg_put(g);
	mcg_engine_free(e);
	return nthreads * PAIRS_PER_THREAD / dt;
}

static long bench_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

/* The engine's memory per simulated page, measured: RSS before and after
 * charging every page of a 64 GiB machine. */
static double bench_bytes_per_page(void)
{
	const long pages = 64L << 30 >> 12;
	struct mcg_engine *e = bench_engine(pages, 1, false, false);
	struct mcg_group *g = NULL;
	long charged = 0, before, after;

	/* the growth from charging: measured once the engine is built */
	mcg_create(e, e->root, "all", NULL, NULL, &g);
	before = bench_rss_kib();
	while (charge_new_page(g, 0, 0, PK_ANON, 1, 0) >= 0)
		charged++;
	after = bench_rss_kib();
	if (charged != pages)
		fprintf(stderr, "bench: charged %ld of %ld pages\n", charged, pages);
	mcg_put(g);
	mcg_engine_free(e);
	return (double)(after - before) * 1024.0 / (double)charged;
}

int main(int argc, char **argv)
{
	/* The variants are interleaved round by round, so that a noisy
	 * neighbour slows all of them alike; each keeps its best round. */
	static const struct { unsigned threads; bool no_stock, no_acct; } v[4] = {
		{ 1, false, true }, { 1, false, false }, { 2, false, false }, { 2, true, false },
	};
	double best[4] = { 0 };

	for (int round = 0; round < 5; round++)
		for (int i = 0; i < 4; i++) {
			double r = bench_pairs_once(v[i].threads, v[i].no_stock, v[i].no_acct);

			if (r > best[i])
				best[i] = r;
		}
	printf("engine.charge_pairs_per_s.t1_noaccounting %.0f pairs/s\n", best[0]);
	printf("engine.charge_pairs_per_s.t1 %.0f pairs/s\n", best[1]);
	printf("engine.charge_pairs_per_s.t2 %.0f pairs/s\n", best[2]);
	printf("engine.charge_pairs_per_s.t2_nostock %.0f pairs/s\n", best[3]);
	printf("engine.accounting_keeps %.3f ratio\n", best[1] / best[0]);
	printf("engine.stock_speedup.t2 %.3f ratio\n", best[2] / best[3]);
	if (argc < 2 || strcmp(argv[1], "--quick"))
		printf("engine.bytes_per_page %.3f bytes\n", bench_bytes_per_page());
	return 0;
}
