/* bench_move.c: seed B2 (Nishimura 2009, seed 001's table) in the engine.
 * A task owning S of private anon memory (S = 252M, 512M, 1G) is moved:
 *   root_00      from the root to 00;
 *   00_01        from 00 to its sibling 01;
 *   00_01_swap   from 00, limited to S/2 so that half the task is in the
 *                simulated swap, to 01.
 * Each case runs batched (move_charges: bulk pre-charge below the common
 * ancestor, one uncharge) and naive (a try-charge of the whole hierarchy
 * and an uncharge per page, as before the seed's optimisation), 5 times
 * each, interleaved; the median is printed. move.charge_ms.<size> is the
 * time to fault the same pages in from nothing, measured in the same runs,
 * and move.over_charge.<case>.<size> (.min, .max) the batched move's time
 * over that baseline, run by run: median and range.
 * Prints "name value unit" lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_move_task.h"
#include "engine/engine.h"

#define RUNS 5

static const struct { const char *name; long mib; } sizes[] = {
	{ "252m", 252 }, { "512m", 512 }, { "1g", 1024 },
};
static const char *const cases[] = { "root_00", "00_01", "00_01_swap" };

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof(*v), cmp_double);
	return v[RUNS / 2];
}

struct result {
	double move_ms, charge_ms;
	long ops, moved;
};

/* One run of one case; fresh engine, so runs do not share state. */
static int run_case(int c, long pages, bool naive, struct result *res)
{
	struct move_task m;
	struct move_stats st;
	double t0;
	int err;

	if (move_task_new(&m, c, pages))
		return -1;
	t0 = now_ms();
	if (move_task_fault(&m)) {
		move_task_free(&m);
		return -1;
	}
	res->charge_ms = now_ms() - t0;
	t0 = now_ms();
	err = naive ? move_charges_naive(m.t, move_task_dst(&m), MOVE_ANON, &st) :
		      move_charges(m.t, move_task_dst(&m), MOVE_ANON, &st);
	res->move_ms = now_ms() - t0;
	res->ops = st.counter_ops;
	res->moved = st.pages + st.swap;
	move_task_free(&m);
	return err;
}

int main(void)
{
	double move[3][3][RUNS], naive[3][3][RUNS], charge[3][RUNS * 6], over[3][3][RUNS];
	long ops[3][3], nops[3][3];
	int nc[3] = { 0 };

	for (int run = 0; run < RUNS; run++)
		for (int s = 0; s < 3; s++)
			for (int c = 0; c < 3; c++)
				for (int v = 0; v < 2; v++) {
					long pages = sizes[s].mib * 256;
					struct result res = { 0 };

					if (run_case(c, pages, v, &res) || res.moved != pages) {
						fprintf(stderr, "bench_move: %s %s failed (moved %ld of %ld)\n",
							cases[c], sizes[s].name, res.moved, pages);
						return 1;
					}
					(v ? naive : move)[c][s][run] = res.move_ms;
					if (!v)
						over[c][s][run] = res.move_ms / res.charge_ms;
					(v ? nops : ops)[c][s] = res.ops;
					if (c == 1)   /* faulting S pages into 00 from nothing */
						charge[s][nc[s]++] = res.charge_ms;
				}
	/* the ratios run by run (before the medians below sort the runs), for
	 * their range: the run's noise beside each median */
	double lin[3][RUNS], c21[3][RUNS];

	for (int r = 0; r < RUNS; r++)
		for (int k = 0; k < 3; k++) {
			lin[k][r] = move[k][2][r] / move[k][0][r];
			c21[k][r] = move[1][k][r] / move[0][k][r];
		}
	for (int s = 0; s < 3; s++) {
		double cm;

		qsort(charge[s], (size_t)nc[s], sizeof(double), cmp_double);
		cm = charge[s][nc[s] / 2];
		printf("move.charge_ms.%s %.3f ms\n", sizes[s].name, cm);
		for (int c = 0; c < 3; c++) {
			double m = median(move[c][s]), n = median(naive[c][s]);

			printf("move.ms.%s.%s %.3f ms\n", cases[c], sizes[s].name, m);
			printf("move.naive_ms.%s.%s %.3f ms\n", cases[c], sizes[s].name, n);
			printf("move.counter_ops.%s.%s %ld ops\n", cases[c], sizes[s].name, ops[c][s]);
			printf("move.naive_counter_ops.%s.%s %ld ops\n", cases[c], sizes[s].name, nops[c][s]);
			printf("move.over_charge.%s.%s %.3f ratio\n", cases[c], sizes[s].name, median(over[c][s]));
			printf("move.over_charge.%s.%s.min %.3f ratio\n", cases[c], sizes[s].name, over[c][s][0]);
			printf("move.over_charge.%s.%s.max %.3f ratio\n", cases[c], sizes[s].name,
			       over[c][s][RUNS - 1]);
		}
	}
	for (int c = 0; c < 3; c++) {
		printf("move.linearity.%s %.2f ratio\n", cases[c], median(move[c][2]) / median(move[c][0]));
		(void)median(lin[c]);
		printf("move.linearity.%s.min %.2f ratio\n", cases[c], lin[c][0]);
		printf("move.linearity.%s.max %.2f ratio\n", cases[c], lin[c][RUNS - 1]);
	}
	for (int s = 0; s < 3; s++) {
		printf("move.case2_over_case1.%s %.2f ratio\n", sizes[s].name,
		       median(move[1][s]) / median(move[0][s]));
		(void)median(c21[s]);
		printf("move.case2_over_case1.%s.min %.2f ratio\n", sizes[s].name, c21[s][0]);
		printf("move.case2_over_case1.%s.max %.2f ratio\n", sizes[s].name, c21[s][RUNS - 1]);
		printf("move.naive_case2_over_case1.%s %.2f ratio\n", sizes[s].name,
		       median(naive[1][s]) / median(naive[0][s]));
	}
	return 0;
}
