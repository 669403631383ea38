/* bench_charge.c: seed B3 (KAMEZAWA's "reduce lock contention", seed 003,
 * and the merged commits' map/fault/unmap loop): charge throughput against
 * threads. Each of T threads (T = 1, 2, 4, 8; each its own simulated CPU)
 * owns a private 1 MiB region of a simulated task and loops: fault every
 * page in (a write: a charge each), then unmap them all at once (one
 * uncharge gather, as munmap's zap). Variants:
 *   a  no accounting at all (the engine built with the baseline switch)
 *   b  the tasks in the root group (no counter)
 *   c  a child group, per-page counters: no stock, every uncharge per page
 *   d  c + batched uncharge (one counter update per unmap)
 *   e  d + the per-CPU stock with a 32-page batch (profile 5.15)
 *   f  d + the per-CPU stock with a 64-page batch (profile 6.12)
 * A round runs one slice of each variant (a fixed number of faults split
 * among the threads, ~20-60 ms), in an order that rotates round by round,
 * and takes each variant's ratio to a's slice of the same round: a
 * neighbour's load changes over seconds, a round takes ~0.3 s. Prints, per
 * variant v and T:
 *   b3.faults_per_s.<v>.t<T>          median over rounds
 *   b3.keeps.<v>.t<T> (.min, .max)    v over a, median and range of rounds
 *   b3.counter_ops_per_charge.<v>.t<T> counter levels updated (charge and
 *                                     uncharge) per page charged
 *   b3.stock_hit_pct.<v>.t<T>         charges the stock served
 * and b3.keeps.e (= b3.keeps.e.t2, the cores of this machine),
 * b3.speedup.f_over_c.t2 (.min, .max), and the over-charge: pages
 * charged ahead of use, parked in the per-CPU stocks. After the rounds,
 * WATCH_SLICES more slices of e and f run with a watcher thread that
 * samples the stocks' total all along (slices not timed: the watcher
 * takes CPU); b3.max_overcharge_pages is the largest total seen, against
 * b3.overcharge_bound_pages = T * (batch - 1) at that slice's T and
 * batch. The program fails if a sample, or any CPU's own largest stock
 * (tracked by the engine's bench build in every slice) summed over CPUs,
 * is above the bound. Also b3.ncpus_online (T above it: threads share
 * cores). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

#define REGION_PAGES    256               /* 1 MiB */
#define SLICE_FAULTS    (REGION_PAGES * 1024L)
#define ROUNDS          31
#define WATCH_SLICES    4
#define MAX_T           8
#define NVAR            6

struct variant {
	char name;
	bool no_acct, root, no_stock, no_batch;
	const char *kernel;           /* the profile: its stock batch */
};

static const struct variant vars[NVAR] = {
	{ 'a', true, false, true, false, "6.12" },
	{ 'b', false, true, true, false, "6.12" },
	{ 'c', false, false, true, true, "6.12" },
	{ 'd', false, false, true, false, "6.12" },
	{ 'e', false, false, false, false, "5.15" },
	{ 'f', false, false, false, false, "6.12" },
};

/* One variant at one T: its engine, group and the threads' tasks. */
struct setup {
	const struct variant *v;
	unsigned t;
	struct mcg_engine *e;
	struct mcg_group *g;
	struct vm_object *obj[MAX_T];
	struct vm_region *reg[MAX_T];
	double rate[ROUNDS];
	long charges, stock_hits, levels;  /* summed over threads and rounds */
	long faults;
};

struct crew {
	unsigned n;
	pthread_t th[MAX_T];
	pthread_barrier_t start, done;
	struct setup *s;              /* NULL: exit */
	pthread_mutex_t lock;         /* the counts' sums */
};

struct crew_arg {
	struct crew *c;
	unsigned i;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n, double *lo, double *hi)
{
	double s[ROUNDS];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	if (lo)
		*lo = s[0];
	if (hi)
		*hi = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The watcher: samples the stocks' total while a slice runs. */
struct watch {
	struct mcg_engine *e;
	atomic_bool stop;
	long max;
};

static void *watch_main(void *p)
{
	struct watch *w = p;

	while (!atomic_load(&w->stop)) {
		long n = charge_stocked(w->e, NULL);

		if (n > w->max)
			w->max = n;
	}
	return NULL;
}

static int setup_init(struct setup *s, const struct variant *v, unsigned t)
{
	struct mcg_machine m = {
		.mem_pages = 65536, .nodes = 1, .cpus = t, .vm_swappiness = 60,
		.no_stock = v->no_stock, .no_accounting = v->no_acct, .no_batch_uncharge = v->no_batch,
	};

	memset(s, 0, sizeof(*s));
	s->v = v;
	s->t = t;
	if (prof_parse(v->kernel, &m.prof) || !(s->e = mcg_engine_new(&m, NULL, NULL)))
		return -1;
	if (v->root) {
		s->g = s->e->root;
		mcg_get(s->g);
	} else if (mcg_create(s->e, s->e->root, "b3", NULL, NULL, &s->g)) {
		return -1;
	}
	for (unsigned i = 0; i < t; i++)
		if (!(s->obj[i] = vm_object_new(s->e, s->g, true, i + 1)) ||
		    vm_region_new(s->obj[i], PK_ANON, REGION_PAGES, &s->reg[i]))
			return -1;
	return 0;
}

static void setup_fini(struct setup *s)
{
	for (unsigned i = 0; i < s->t; i++)
		if (s->obj[i])
			vm_object_free(s->obj[i]);
	mcg_put(s->g);
	mcg_engine_free(s->e);
}

/* Thread i's share of a slice: fault the region in, unmap it, again. */
static void slice_work(struct crew *c, struct setup *s, unsigned i)
{
	struct vm_region *r = s->reg[i];
	long want = SLICE_FAULTS / s->t, done = 0;
	struct charge_bench_counts cnt;

	(void)pc_bench_take_levels();
	charge_bench_take(&cnt);
	while (done < want) {
		struct charge_batch b;

		for (uint32_t p = 0; p < REGION_PAGES; p++) {
			enum vm_fault f;

			if (vm_touch(r, p, i, true, &f) == 0 && f != VM_HIT)
				done++;
		}
		charge_batch_begin(&b, s->e);
		for (uint32_t p = 0; p < REGION_PAGES; p++)
			vm_discard(r, p, &b);
		charge_batch_end(&b);
	}
	charge_bench_take(&cnt);
	pthread_mutex_lock(&c->lock);
	s->charges += cnt.charges;
	s->stock_hits += cnt.stock_hits;
	s->levels += pc_bench_take_levels();
	s->faults += done;
	pthread_mutex_unlock(&c->lock);
}

static void *crew_main(void *p)
{
	struct crew_arg *a = p;
	struct crew *c = a->c;

	for (;;) {
		pthread_barrier_wait(&c->start);
		if (!c->s)
			return NULL;
		slice_work(c, c->s, a->i);
		pthread_barrier_wait(&c->done);
	}
}

/* One slice of s: faults per second. */
static double crew_run(struct crew *c, struct setup *s)
{
	long before = s->faults;
	double t0 = now_s();

	c->s = s;
	pthread_barrier_wait(&c->start);
	pthread_barrier_wait(&c->done);
	return (double)(s->faults - before) / (now_s() - t0);
}

int main(int argc, char **argv)
{
	static const unsigned ts[] = { 1, 2, 4, 8 };
	/* --quick (make bench with BENCH_QUICK=1): 7 rounds, not 31 */
	int rounds = argc > 1 && strcmp(argv[1], "--quick") == 0 ? 7 : ROUNDS;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	long max_over = 0, bound_at_max = 0;
	double keeps_e_t2 = 0, keeps_e_lo = 0, keeps_e_hi = 0, fc_t2[ROUNDS], fc_lo = 0, fc_hi = 0;
	int fail = 0;

	printf("b3.ncpus_online %ld cpus\n", ncpus);
	for (size_t ti = 0; ti < sizeof(ts) / sizeof(ts[0]); ti++) {
		unsigned t = ts[ti];
		struct setup s[NVAR];
		struct crew c = { .n = t };
		struct crew_arg a[MAX_T];
		double keeps[NVAR][ROUNDS];

		for (int v = 0; v < NVAR; v++)
			if (setup_init(&s[v], &vars[v], t)) {
				fprintf(stderr, "bench_charge: cannot set up %c at T=%u\n", vars[v].name, t);
				return 1;
			}
		pthread_mutex_init(&c.lock, NULL);
		pthread_barrier_init(&c.start, NULL, t + 1);
		pthread_barrier_init(&c.done, NULL, t + 1);
		for (unsigned i = 0; i < t; i++) {
			a[i] = (struct crew_arg){ &c, i };
			pthread_create(&c.th[i], NULL, crew_main, &a[i]);
		}
		/* a warm-up slice each: descriptors resident, stocks filled */
		for (int v = 0; v < NVAR; v++) {
			crew_run(&c, &s[v]);
			s[v].charges = s[v].stock_hits = s[v].levels = s[v].faults = 0;
			(void)charge_bench_stock_max(s[v].e);
		}
		for (int r = 0; r < rounds; r++) {
			for (int k = 0; k < NVAR; k++) {
				int v = (k + r) % NVAR;        /* the order rotates */

				s[v].rate[r] = crew_run(&c, &s[v]);
				if (!vars[v].no_stock) {
					/* the stocks' largest sum this slice, and the
					 * stocked pages left now, nothing being mapped */
					long over = charge_bench_stock_max(s[v].e);
					long left = mcg_usage(s[v].g, MCG_MEM);
					long batch = (long)prof_charge_batch(&s[v].e->m.prof);
					long bound = (long)t * (batch - 1);

					if (left > over)
						over = left;
					if (over > bound) {
						fprintf(stderr, "bench_charge: %c T=%u over-charge %ld > bound %ld\n",
							vars[v].name, t, over, bound);
						fail = 1;
					}
				}
			}
			for (int v = 0; v < NVAR; v++)
				keeps[v][r] = s[v].rate[r] / s[0].rate[r];
			if (t == 2)
				fc_t2[r] = s[5].rate[r] / s[2].rate[r];
		}
		/* the over-charge seen, in slices of e and f with the watcher */
		for (int v = 4; v < NVAR; v++)
			for (int k = 0; k < WATCH_SLICES; k++) {
				struct watch w = { .e = s[v].e };
				pthread_t wt;
				long bound = (long)t * ((long)prof_charge_batch(&s[v].e->m.prof) - 1);

				pthread_create(&wt, NULL, watch_main, &w);
				crew_run(&c, &s[v]);
				atomic_store(&w.stop, true);
				pthread_join(wt, NULL);
				if (w.max > max_over) {
					max_over = w.max;
					bound_at_max = bound;
				}
				if (w.max > bound) {
					fprintf(stderr, "bench_charge: %c T=%u stocks held %ld > bound %ld\n",
						vars[v].name, t, w.max, bound);
					fail = 1;
				}
			}
		c.s = NULL;
		pthread_barrier_wait(&c.start);
		for (unsigned i = 0; i < t; i++)
			pthread_join(c.th[i], NULL);
		for (int v = 0; v < NVAR; v++) {
			double lo, hi, k = median(keeps[v], rounds, &lo, &hi);
			char n = vars[v].name;

			printf("b3.faults_per_s.%c.t%u %.0f faults/s\n", n, t, median(s[v].rate, rounds, NULL, NULL));
			printf("b3.keeps.%c.t%u %.3f ratio\n", n, t, k);
			printf("b3.keeps.%c.t%u.min %.3f ratio\n", n, t, lo);
			printf("b3.keeps.%c.t%u.max %.3f ratio\n", n, t, hi);
			printf("b3.counter_ops_per_charge.%c.t%u %.3f ops\n", n, t,
			       s[v].faults ? (double)s[v].levels / (double)s[v].faults : 0.0);
			printf("b3.stock_hit_pct.%c.t%u %.1f %%\n", n, t,
			       s[v].charges ? 100.0 * (double)s[v].stock_hits / (double)s[v].charges : 0.0);
			if (t == 2 && n == 'e') {
				keeps_e_t2 = k;
				keeps_e_lo = lo;
				keeps_e_hi = hi;
			}
			setup_fini(&s[v]);
		}
		if (t == 2) {
			double m = median(fc_t2, rounds, &fc_lo, &fc_hi);

			printf("b3.speedup.f_over_c.t2 %.3f ratio\n", m);
			printf("b3.speedup.f_over_c.t2.min %.3f ratio\n", fc_lo);
			printf("b3.speedup.f_over_c.t2.max %.3f ratio\n", fc_hi);
		}
		pthread_barrier_destroy(&c.start);
		pthread_barrier_destroy(&c.done);
		pthread_mutex_destroy(&c.lock);
		fflush(stdout);
	}
	printf("b3.keeps.e %.3f ratio\n", keeps_e_t2);
	printf("b3.keeps.e.min %.3f ratio\n", keeps_e_lo);
	printf("b3.keeps.e.max %.3f ratio\n", keeps_e_hi);
	printf("b3.max_overcharge_pages %ld pages\n", max_over);
	printf("b3.overcharge_bound_pages %ld pages\n", bound_at_max);
	printf("b3.overcharge_bound_held %d bool\n", !fail);
	return fail;
}
