/* bench_b3sim.c: seed B3 in simulated time (issue 23, item 1): the merged
 * commits' map/fault/unmap loop on 8 CPUs and Balbir's 24-way run, with the
 * cost of contention modelled where the real 2-core machine cannot show it.
 * Owns the model: simulated CPUs, one contended cache-line resource and the
 * calibration; the engine decides which charges and uncharges reach the
 * counters (stock hits, batched uncharge). Never reads a clock: every
 * figure is simulated time, the same on every run.
 *
 * The model. T simulated CPUs each fault the pages of a private 1 MiB
 * region in (one charge each) and unmap it (one uncharge each, or one
 * batch), in a loop, as the merged commits' benchmark did. A fault costs
 * BASE of CPU time; then the CPU performs the fault's operations on the
 * memcg's shared cache lines, and the unmap's after its pages:
 *   - css_get at each charge and css_put at each uncharge, in every
 *     variant that accounts ((b) to (f)): 2.6.32's __mem_cgroup_try_charge
 *     takes a css reference per charge and __mem_cgroup_uncharge_common
 *     drops it per page (the batched uncharge of 2.6.33 batches the
 *     counters, not the reference);
 *   - one operation per counter level the engine updates (its profile 4.19:
 *     a child of the root is not hierarchical, as use_hierarchy's default
 *     was; memory and memory+swap, as with swap accounting on), under that
 *     counter's spinlock.
 * The memcg's first cache lines hold the css reference count, the memory
 * counter and its lock, and the memory+swap counter (2.6.32's struct
 * mem_cgroup: css (32 bytes), then struct res_counter res (56) and memsw),
 * so these operations are modelled as one resource that serves one
 * operation at a time, first come first served. An operation by the CPU
 * that last held the lines, found free, costs nothing; otherwise the lines
 * move, and a hand-off costs HANDOFF times the number of CPUs spinning on
 * them at that moment (the receiver included): with a ticket spinlock the
 * holder's release invalidates every waiter's copy and the line is then
 * read by each in turn, so a hand-off's time grows linearly with the
 * waiters (Boyd-Wickizer, Kaashoek, Morris, Zeldovich, "Non-scalable locks
 * are dangerous", Linux Symposium 2012, sections 2 and 3). A CPU waits on
 * the resource by spinning: its time counts as the fault's.
 *
 * Parameters. BASE comes from the seed's (a): 40,156,968 faults in 60 s on
 * 8 CPUs without memcg, 11.95 us a fault. HANDOFF is calibrated so that (c)
 * at T=8 keeps the seed's 18,444,157 / 40,156,968 = 45.9 % of (a), by
 * bisection. Nothing else is fitted: (b), (d), (e) and (f) at T=8 are
 * held-out checks against the seed's 91.3, 67.6 and 85.2 %, and (f) over
 * (c) at T=24 is a prediction of Balbir's 24-way figure (87,975,343 /
 * 28,964,117 = 3.04; cycles per fault 1/3.04).
 *
 * Prints "name value unit" lines: b3.sim.fault_base_us, b3.sim.handoff_ns,
 * b3.sim.keeps.<v>.t<T> (of (a)), b3.sim.ops_per_fault.<v>.t<T>,
 * b3.sim.spin_pct.<v>.t<T> (CPU time spent waiting for the lines),
 * b3.sim.speedup.f_over_c.t<T>, b3.sim.cycles_per_fault.f_over_c.t24, and
 * the over-charge the stocks held at any step (b3.sim.max_overcharge_pages)
 * against ncpus x (batch - 1). Exit 1 if the bound is broken.
 * Usage: bench_b3sim [--quick | --selftest] */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

#define REGION_PAGES  256             /* 1 MiB, as bench_charge */
#define MAX_CPUS      24
#define NVAR          6

/* the seed's table C (merged commits 569b846d and cdec2e42): 8 CPUs, 60 s */
#define SEED_CPUS     8
#define SEED_SECONDS  60.0
#define SEED_A_FAULTS 40156968.0
#define SEED_C_FAULTS 18444157.0

struct variant {
	char name;
	bool no_acct, root, no_stock, no_batch;
	unsigned batch;               /* the stock's (0: none) */
};

static const struct variant vars[NVAR] = {
	{ 'a', true, false, true, false, 0 },
	{ 'b', false, true, true, false, 0 },
	{ 'c', false, false, true, true, 0 },
	{ 'd', false, false, true, false, 0 },
	{ 'e', false, false, false, false, 32 },   /* merged 2.6.33 */
	{ 'f', false, false, false, false, 64 },   /* the v3 RFC Balbir ran */
};

/* the memcg's shared lines: the css reference count's (atomics: one move
 * per operation, served in turn) and the two counters' spinlocks (ticket
 * locks: a hand-off costs more with each CPU spinning) */
enum { RES_CSS, RES_MEM, RES_MEMSW, NRES };
#define STEP_OPS      (3 * REGION_PAGES + 4)

struct line {
	bool ticket, busy;
	int holder, owner;            /* owner: who had it last (-1: none) */
	uint64_t until;
	int q[MAX_CPUS], qh, qn;
};

struct simcpu {
	uint64_t t;                   /* its next action is due (ns) */
	uint64_t req;                 /* when it queued */
	unsigned char op[STEP_OPS];   /* the step's operations, in order */
	int nops, next;
	bool waiting, faulting;
	uint32_t page;                /* next page to fault */
	uint64_t faults, spin;
	uint64_t rng;                 /* its own random sequence (xorshift64) */
	struct vm_object *obj;
	struct vm_region *reg;
};

struct run {
	const struct variant *v;
	unsigned t;
	double keeps, ops_per_fault, spin_pct;
	uint64_t faults;
	long max_over, bound;
};

/* A fault's CPU time: exponential with mean BASE, from C's own sequence,
 * the same on every run. */
static uint64_t fault_ns(struct simcpu *c, double base)
{
	double u;

	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	u = ((double)(c->rng >> 11) + 0.5) / 9007199254740992.0;   /* (0, 1) */
	return (uint64_t)(-base * log(u) + 0.5);
}

/* LEVELS counter updates (the engine walks memory, then memory+swap) into
 * C's list after what is there. */
static void add_levels(struct simcpu *c, long levels)
{
	for (long k = 0; k < levels && c->nops < STEP_OPS; k++)
		c->op[c->nops++] = (unsigned char)(k % 2 ? RES_MEMSW : RES_MEM);
}

/* CPU I at its time T asks for line L: done at once (its own line, free),
 * or holding it until L->until, or queued. */
static void line_ask(struct line *l, struct simcpu *cpu, int i, double handoff)
{
	struct simcpu *c = &cpu[i];
	uint64_t cost;

	if (l->busy) {
		l->q[(l->qh + l->qn) % MAX_CPUS] = i;
		l->qn++;
		c->waiting = true;
		c->req = c->t;
		return;
	}
	if (l->owner == i) {
		c->next++;
		return;
	}
	cost = (uint64_t)(handoff + 0.5);
	l->busy = true;
	l->holder = l->owner = i;
	l->until = c->t + cost;
	c->spin += cost;
	c->t = l->until;
}

/* Its holder is done with line L at L->until: to the first in line, the
 * move costing HANDOFF, times the CPUs spinning on a ticket lock. */
static void line_release(struct line *l, struct simcpu *cpu, double handoff)
{
	int j;

	l->busy = false;
	cpu[l->holder].next++;
	if (!l->qn)
		return;
	j = l->q[l->qh];
	l->busy = true;
	l->holder = l->owner = j;
	l->until += (uint64_t)(handoff * (l->ticket ? l->qn : 1) + 0.5);
	l->qh = (l->qh + 1) % MAX_CPUS;
	l->qn--;
	cpu[j].waiting = false;
	cpu[j].spin += l->until - cpu[j].req;
	cpu[j].t = l->until;
}

/* Run variant V on T CPUs for DUR ns of simulated time with hand-off cost
 * HANDOFF ns; BASE ns a fault. Fills R. 0, or -1 when the engine fails. */
static int simulate(const struct variant *v, unsigned t, double base, double handoff, uint64_t dur,
		    struct run *r)
{
	struct mcg_machine m = {
		.mem_pages = 65536, .nodes = 1, .cpus = t, .vm_swappiness = 60,
		.no_stock = v->no_stock, .no_accounting = v->no_acct,
		.no_batch_uncharge = v->no_batch, .bench_batch = v->batch,
	};
	static struct simcpu cpu[MAX_CPUS];
	struct line ln[NRES];
	struct mcg_engine *e;
	struct mcg_group *g;
	uint64_t ops = 0, faults = 0, spin = 0;
	long max_over = 0;

	memset(cpu, 0, sizeof(cpu));
	for (int k = 0; k < NRES; k++)
		ln[k] = (struct line){ .ticket = k != RES_CSS, .owner = -1, .holder = -1 };
	if (prof_parse("4.19", &m.prof) || !(e = mcg_engine_new(&m, NULL, NULL)))
		return -1;
	if (v->root) {
		g = e->root;
		mcg_get(g);
	} else if (mcg_create(e, e->root, "b3", NULL, NULL, &g)) {
		mcg_engine_free(e);
		return -1;
	}
	for (unsigned i = 0; i < t; i++)
		cpu[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
	for (unsigned i = 0; i < t; i++)
		if (!(cpu[i].obj = vm_object_new(e, g, true, i + 1)) ||
		    vm_region_new(cpu[i].obj, PK_ANON, REGION_PAGES, &cpu[i].reg))
			return -1;
	(void)pc_bench_take_levels();
	for (;;) {
		int i = -1;
		struct simcpu *c;
		bool held = false;

		for (unsigned k = 0; k < t; k++)
			if (!cpu[k].waiting && (i < 0 || cpu[k].t < cpu[i].t))
				i = (int)k;
		if (i < 0 || cpu[i].t >= dur)
			break;
		c = &cpu[i];
		for (int k = 0; k < NRES && !held; k++)
			if (ln[k].busy && ln[k].holder == i) {
				line_release(&ln[k], cpu, handoff);   /* its operation done */
				held = true;
			}
		if (held)
			continue;
		if (c->next < c->nops) {
			line_ask(&ln[c->op[c->next]], cpu, i, handoff);
			continue;
		}
		if (c->faulting) {            /* the last fault's operations done */
			c->faults++;
			c->faulting = false;
		}
		c->nops = c->next = 0;
		if (c->page < REGION_PAGES) {
			enum vm_fault f;

			if (vm_touch(c->reg, c->page++, (unsigned)i, true, &f))
				return -1;
			if (!v->no_acct)
				c->op[c->nops++] = RES_CSS;              /* css_get */
			add_levels(c, pc_bench_take_levels());
			c->faulting = true;
			c->t += fault_ns(c, base);
		} else {
			struct charge_batch b;

			/* page by page: its counters (per page in (c)), its
			 * css_put; a batch's counters at the end */
			charge_batch_begin(&b, e);
			for (uint32_t p = 0; p < REGION_PAGES; p++) {
				vm_discard(c->reg, p, &b);
				add_levels(c, pc_bench_take_levels());
				if (!v->no_acct && c->nops < STEP_OPS)
					c->op[c->nops++] = RES_CSS;      /* css_put */
			}
			charge_batch_end(&b);
			add_levels(c, pc_bench_take_levels());
			c->page = 0;
		}
		ops += (uint64_t)c->nops;
		if (!v->no_stock) {
			long over = charge_stocked(e, NULL);

			if (over > max_over)
				max_over = over;
		}
	}
	for (unsigned i = 0; i < t; i++) {
		faults += cpu[i].faults;
		spin += cpu[i].spin;
		vm_object_free(cpu[i].obj);
	}
	r->v = v;
	r->t = t;
	r->faults = faults;
	r->ops_per_fault = faults ? (double)ops / (double)faults : 0;
	r->spin_pct = 100.0 * (double)spin / ((double)t * (double)dur);
	r->max_over = max_over;
	r->bound = v->batch ? (long)t * ((long)v->batch - 1) : 0;
	mcg_put(g);
	mcg_engine_free(e);
	return 0;
}

/* The lines' rules, checked on a handful of CPUs (--selftest): a ticket
 * lock's hand-off grows with the CPUs spinning on it, an atomic's does
 * not, and a line its last holder finds free costs nothing. 0 if they
 * hold. */
static int selftest(void)
{
	static struct simcpu cpu[MAX_CPUS];
	const double h = 100;
	int bad = 0;

	for (int ticket = 0; ticket < 2; ticket++) {
		struct line l = { .ticket = ticket, .owner = -1, .holder = -1 };
		uint64_t prev;

		memset(cpu, 0, sizeof(cpu));
		for (int i = 0; i < 5; i++)
			cpu[i].nops = 1;
		line_ask(&l, cpu, 0, h);               /* CPU 0 takes it: one move */
		bad |= !(l.busy && l.holder == 0 && l.until == 100);
		for (int i = 1; i < 5; i++)            /* four spin behind it */
			line_ask(&l, cpu, i, h);
		bad |= l.qn != 4;
		prev = l.until;
		for (int k = 0; k < 4; k++) {          /* each release hands it on */
			int waiting = l.qn;

			line_release(&l, cpu, h);
			bad |= l.until - prev != (uint64_t)(h * (ticket ? waiting : 1));
			bad |= cpu[l.holder].t != l.until || cpu[l.holder].waiting;
			prev = l.until;
		}
		line_release(&l, cpu, h);
		bad |= l.busy || l.owner != 4;
		cpu[4].next = 0;
		line_ask(&l, cpu, 4, h);               /* its own, free: no move */
		bad |= l.busy || cpu[4].next != 1 || cpu[4].t != prev;
	}
	printf("selftest: %s\n", bad ? "FAILED" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;

	if (argc > 1 && strcmp(argv[1], "--selftest") == 0)
		return selftest();
	/* simulated time per run: enough region cycles per CPU that the
	 * start (empty stocks, lines nobody holds) is a small part */
	uint64_t dur = quick ? 100000000ull : 2000000000ull;
	double base = SEED_SECONDS * 1e9 * SEED_CPUS / SEED_A_FAULTS;
	double target = SEED_C_FAULTS / SEED_A_FAULTS, lo = 0, hi = 20000, handoff;
	static const unsigned ts[] = { 1, 2, 4, 8, 16, 24 };
	struct run r, res[NVAR][6];
	int fail = 0;

	/* HANDOFF: (c) at T=8 keeps the seed's share of (a) (each of the
	 * same T, CPUs and random sequences); keeps falls as the hand-off
	 * grows */
	struct run a8;

	if (simulate(&vars[0], SEED_CPUS, base, 0, dur, &a8))
		return 1;
	for (int k = 0; k < (quick ? 14 : 30); k++) {
		double mid = (lo + hi) / 2;

		if (simulate(&vars[2], SEED_CPUS, base, mid, dur, &r))
			return 1;
		if ((double)r.faults / (double)a8.faults > target)
			lo = mid;
		else
			hi = mid;
	}
	handoff = (lo + hi) / 2;
	printf("b3.sim.fault_base_us %.3f us\n", base / 1000);
	printf("b3.sim.handoff_ns %.1f ns\n", handoff);
	for (size_t ti = 0; ti < sizeof(ts) / sizeof(ts[0]); ti++)
		for (int v = 0; v < NVAR; v++) {
			struct run *x = &res[v][ti];

			if (simulate(&vars[v], ts[ti], base, handoff, dur, x)) {
				fprintf(stderr, "bench_b3sim: %c at T=%u failed\n", vars[v].name, ts[ti]);
				return 1;
			}
			/* of (a) at the same T: the same faults' times */
			x->keeps = res[0][ti].faults ? (double)x->faults / (double)res[0][ti].faults : 0;
			printf("b3.sim.keeps.%c.t%u %.3f ratio\n", vars[v].name, ts[ti], x->keeps);
			printf("b3.sim.ops_per_fault.%c.t%u %.3f ops\n", vars[v].name, ts[ti],
			       x->ops_per_fault);
			printf("b3.sim.spin_pct.%c.t%u %.1f %%\n", vars[v].name, ts[ti], x->spin_pct);
		}
	long max_over = 0, bound = 0;

	for (size_t ti = 0; ti < sizeof(ts) / sizeof(ts[0]); ti++) {
		printf("b3.sim.speedup.f_over_c.t%u %.3f ratio\n", ts[ti],
		       res[5][ti].keeps / res[2][ti].keeps);
		for (int v = 4; v < NVAR; v++) {
			if (res[v][ti].max_over > res[v][ti].bound) {
				fprintf(stderr, "bench_b3sim: %c T=%u stocks held %ld > bound %ld\n",
					vars[v].name, ts[ti], res[v][ti].max_over, res[v][ti].bound);
				fail = 1;
			}
			if (res[v][ti].max_over >= max_over) {
				max_over = res[v][ti].max_over;
				bound = res[v][ti].bound;
			}
		}
	}
	/* every CPU busy (faulting or spinning) all along: cycles per fault
	 * go as the inverse of the fault rate */
	printf("b3.sim.cycles_per_fault.f_over_c.t24 %.3f ratio\n", res[2][5].keeps / res[5][5].keeps);
	printf("b3.sim.max_overcharge_pages %ld pages\n", max_over);
	printf("b3.sim.overcharge_bound_pages %ld pages\n", bound);
	printf("b3.sim.overcharge_bound_held %d bool\n", !fail);
	return fail;
}
