/* bench_engine.c: engine benchmarks, printed as "name value unit" lines.
 * Every figure that is compared is measured in this one process, side by
 * side with its baseline, so the ratio holds on a noisy machine.
 *   engine.charge_pairs_per_s.{t1,t2,t2_nostock,t1_noaccounting}: a page
 *     charged and uncharged in a child group, as the seed's map/fault/unmap
 *     loop does it: 64 pages faulted in one at a time (charge path: stock),
 *     then unmapped together (one batched uncharge). Each thread is its own
 *     simulated CPU and NUMA node. The median of ~10 ms slices.
 *   engine.accounting_keeps, engine.stock_speedup.t2: the median ratio of
 *     paired slices (t1 over t1_noaccounting, t2 over t2_nostock), run
 *     back to back on the same threads; .min and .max: their range.
 *   engine.bytes_per_page   (RSS growth at memory=64G, every page charged)
 *   engine.soft_reclaim_faults_per_s.{g16,g4096}: page faults per second
 *     on a full machine with 16 or 4096 groups over their soft limits, so
 *     that global reclaim picks the group furthest over its soft limit
 *     every few faults. The median of 5 slices.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

#define PAIRS_PER_SLICE  (64L * 2000)   /* about 10 ms */
#define PAGES_PER_ROUND  64

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct mcg_engine *bench_engine(long pages, unsigned cpus, bool no_stock, bool no_acct)
{
	struct mcg_machine cfg = {
		.mem_pages = pages, .nodes = cpus, .cpus = cpus, .vm_swappiness = 60,
		.no_stock = no_stock, .no_accounting = no_acct,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, NULL);
}

/* A variant: one engine, one child group, nthreads workers (each its own
 * simulated CPU and node). */
struct variant {
	const char *name;
	unsigned nthreads;
	bool no_stock, no_acct;
	struct mcg_engine *e;
	struct mcg_group *g;
	double *rate;                 /* pairs/s of each slice */
};

/* Worker threads live for the whole run and are told which variant to
 * run, slice by slice; the slices of two compared variants alternate. */
struct crew {
	unsigned n;
	pthread_t t[2];
	pthread_barrier_t start, done;
	struct variant *v;            /* NULL: exit */
};

struct crew_arg {
	struct crew *c;
	unsigned cpu;
};

/* A page charged and uncharged, PAIRS_PER_SLICE times: faulted in one at
 * a time (charge path: stock), unmapped 64 at a time (batched uncharge). */
static void bench_slice(struct mcg_engine *e, struct mcg_group *g, unsigned cpu)
{
	long idx[PAGES_PER_ROUND];

	for (long done = 0; done < PAIRS_PER_SLICE; done += PAGES_PER_ROUND) {
		int n = 0;

		for (int i = 0; i < PAGES_PER_ROUND; i++)
			if ((idx[n] = charge_new_page(g, cpu, cpu, PK_ANON, cpu, 0, NULL)) >= 0)
				n++;
		struct charge_batch b;

		charge_batch_begin(&b, e);
		while (n > 0)
			charge_free_page(e, (uint32_t)idx[--n], &b);
		charge_batch_end(&b);
	}
}

static void *crew_main(void *p)
{
	struct crew_arg *a = p;
	struct crew *c = a->c;

	for (;;) {
		pthread_barrier_wait(&c->start);
		if (!c->v)
			return NULL;
		bench_slice(c->v->e, c->v->g, a->cpu);
		pthread_barrier_wait(&c->done);
	}
}

static void crew_start(struct crew *c, struct crew_arg *a, unsigned n)
{
	c->n = n;
	c->v = NULL;
	pthread_barrier_init(&c->start, NULL, n + 1);
	pthread_barrier_init(&c->done, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		a[i] = (struct crew_arg){ c, i };
		pthread_create(&c->t[i], NULL, crew_main, &a[i]);
	}
}

static void crew_stop(struct crew *c)
{
	c->v = NULL;
	pthread_barrier_wait(&c->start);
	for (unsigned i = 0; i < c->n; i++)
		pthread_join(c->t[i], NULL);
	pthread_barrier_destroy(&c->start);
	pthread_barrier_destroy(&c->done);
}

/* One slice of v on its crew: pairs per second. */
static double crew_run(struct crew *c, struct variant *v)
{
	double t0;

	c->v = v;
	t0 = bench_now();
	pthread_barrier_wait(&c->start);
	pthread_barrier_wait(&c->done);
	return (double)v->nthreads * PAIRS_PER_SLICE / (bench_now() - t0);
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double bench_median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof(*x), bench_cmp);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Slices of a and b alternate on one crew; the ratio of each adjacent
 * pair (a over b) is taken, and the median of those ratios returned. A
 * neighbour's load changes over seconds, a pair of slices takes ~20 ms:
 * both halves of a pair see nearly the same machine. */
static double bench_paired(struct crew *c, struct variant *a, struct variant *b, int slices,
			   double *lo, double *hi)
{
	double *ratio = calloc((size_t)slices, sizeof(*ratio)), med;

	for (int i = 0; i < slices; i++) {
		/* which goes first alternates too */
		if (i % 2) {
			b->rate[i] = crew_run(c, b);
			a->rate[i] = crew_run(c, a);
		} else {
			a->rate[i] = crew_run(c, a);
			b->rate[i] = crew_run(c, b);
		}
		ratio[i] = a->rate[i] / b->rate[i];
	}
	med = bench_median(ratio, slices);     /* (sorts them) */
	*lo = ratio[0];
	*hi = ratio[slices - 1];
	free(ratio);
	return med;
}

static void variant_init(struct variant *v, int slices)
{
	v->e = bench_engine(4096, v->nthreads, v->no_stock, v->no_acct);
	v->g = NULL;
	mcg_create(v->e, v->e->root, "bench", NULL, NULL, &v->g);
	v->rate = calloc((size_t)slices, sizeof(*v->rate));
}

static double variant_fini(struct variant *v, int slices)
{
	double med = bench_median(v->rate, slices);

	mcg_put(v->g);
	mcg_engine_free(v->e);
	free(v->rate);
	return med;
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
/* gib: the machine's size (64, or 4 in the quick run: the descriptors are
 * one array, so the bytes per page do not depend on it) */
static double bench_bytes_per_page(long gib)
{
	const long pages = gib << 30 >> 12;
	struct mcg_engine *e = bench_engine(pages, 1, false, false);
	struct mcg_group *g = NULL;
	long charged = 0, before, after;

	/* the growth from charging: measured once the engine is built */
	mcg_create(e, e->root, "all", NULL, NULL, &g);
	before = bench_rss_kib();
	while (charge_new_page(g, 0, 0, PK_ANON, 1, 0, NULL) >= 0)
		charged++;
	after = bench_rss_kib();
	if (charged != pages)
		fprintf(stderr, "bench: charged %ld of %ld pages\n", charged, pages);
	mcg_put(g);
	mcg_engine_free(e);
	return (double)(after - before) * 1024.0 / (double)charged;
}

#define SOFT_FILE   256              /* pages of each group's file */
#define SOFT_TURN   16               /* pages a group reads in its turn */
#define SOFT_SLICES 5
#define SOFT_FAULTS 40000            /* faults per slice */

/* n groups, each reading its own file of SOFT_FILE pages on, SOFT_TURN
 * pages a turn, in turn, on a machine of SOFT_TURN pages per group, each
 * with a soft limit of a quarter of that: every read faults (a page is
 * read again only after a group's whole file, long after it went) and
 * the machine is always full, so every few faults global reclaim picks
 * the group furthest over its soft limit and takes from it. Faults per
 * second, after a warm-up that fills the machine twice. */
static double bench_soft_reclaim(unsigned n)
{
	struct mcg_engine *e = bench_engine((long)n * SOFT_TURN, 1, false, false);
	struct mcg_group **g = calloc(n, sizeof(*g));
	struct vm_object **o = calloc(n, sizeof(*o));
	struct vm_region **r = calloc(n, sizeof(*r));
	uint32_t *pos = calloc(n, sizeof(*pos));
	double rate[SOFT_SLICES];
	unsigned next = 0;

	for (unsigned i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "s%u", i);
		mcg_create(e, e->root, name, NULL, NULL, &g[i]);
		mcg_set_soft_limit(g[i], SOFT_TURN / 4);
		o[i] = vm_object_new(e, g[i], false, i + 1);
		vm_region_new(o[i], PK_FILE, SOFT_FILE, &r[i]);
	}
	for (int s = -1; s < SOFT_SLICES; s++) {   /* -1: the warm-up */
		long faults = 0, want = s < 0 ? 2L * n * SOFT_TURN : SOFT_FAULTS;
		double t0 = bench_now();

		while (faults < want) {
			for (int p = 0; p < SOFT_TURN; p++) {
				enum vm_fault f;

				if (vm_touch(r[next], pos[next], 0, false, &f) == 0 && f != VM_HIT)
					faults++;
				pos[next] = (pos[next] + 1) % SOFT_FILE;
			}
			next = (next + 1) % n;
		}
		if (s >= 0)
			rate[s] = (double)faults / (bench_now() - t0);
	}
	for (unsigned i = 0; i < n; i++) {
		vm_object_free(o[i]);
		mcg_put(g[i]);
	}
	mcg_engine_free(e);
	free(g);
	free(o);
	free(r);
	free(pos);
	return bench_median(rate, SOFT_SLICES);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	int slices = quick ? 40 : 150;
	struct variant v[4] = {
		{ .name = "t1_noaccounting", .nthreads = 1, .no_acct = true },
		{ .name = "t1", .nthreads = 1 },
		{ .name = "t2", .nthreads = 2 },
		{ .name = "t2_nostock", .nthreads = 2, .no_stock = true },
	};
	struct crew c1, c2;
	struct crew_arg a1[1], a2[2];
	double keeps, speedup, med[4], klo, khi, slo, shi;

	for (int i = 0; i < 4; i++)
		variant_init(&v[i], slices);
	crew_start(&c1, a1, 1);
	crew_start(&c2, a2, 2);
	/* one warm-up slice each: the pages' descriptors become resident */
	for (int i = 0; i < 4; i++)
		crew_run(v[i].nthreads == 1 ? &c1 : &c2, &v[i]);
	keeps = bench_paired(&c1, &v[1], &v[0], slices, &klo, &khi);
	speedup = bench_paired(&c2, &v[2], &v[3], slices, &slo, &shi);
	crew_stop(&c1);
	crew_stop(&c2);
	for (int i = 0; i < 4; i++) {
		med[i] = variant_fini(&v[i], slices);
		printf("engine.charge_pairs_per_s.%s %.0f pairs/s\n", v[i].name, med[i]);
	}
	printf("engine.accounting_keeps %.3f ratio\n", keeps);
	printf("engine.accounting_keeps.min %.3f ratio\n", klo);
	printf("engine.accounting_keeps.max %.3f ratio\n", khi);
	printf("engine.stock_speedup.t2 %.3f ratio\n", speedup);
	printf("engine.stock_speedup.t2.min %.3f ratio\n", slo);
	printf("engine.stock_speedup.t2.max %.3f ratio\n", shi);
	printf("engine.bytes_per_page %.3f bytes\n", bench_bytes_per_page(quick ? 4 : 64));
	{
		double g16 = bench_soft_reclaim(16), g4096 = bench_soft_reclaim(4096);

		printf("engine.soft_reclaim_faults_per_s.g16 %.0f faults/s\n", g16);
		printf("engine.soft_reclaim_faults_per_s.g4096 %.0f faults/s\n", g4096);
		/* the order's promise: 4096 groups cost about what 16 do */
		printf("engine.soft_reclaim_g4096_over_g16 %.3f ratio\n", g4096 / g16);
	}
	return 0;
}
