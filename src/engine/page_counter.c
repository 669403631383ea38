/* page_counter.c: hierarchical page counters, lock-free with atomics.
 * Owns usage/max/watermark/failcnt arithmetic only. Never sleeps, never
 * allocates, never looks at groups, pages or LRUs. */
#include <errno.h>
#include <stddef.h>

#include "engine/page_counter.h"

#ifdef MCG_BENCH
static __thread long pc_bench_levels;
#define PC_BENCH_LEVEL() (pc_bench_levels++)

long pc_bench_take_levels(void)
{
	long n = pc_bench_levels;

	pc_bench_levels = 0;
	return n;
}
#else
#define PC_BENCH_LEVEL() ((void)0)
#endif

void pc_init(struct pc_counter *c, struct pc_counter *parent, bool track_failcnt)
{
	atomic_init(&c->usage, 0);
	atomic_init(&c->max, PC_MAX);
	atomic_init(&c->watermark, 0);
	atomic_init(&c->failcnt, 0);
	c->parent = parent;
	c->track_failcnt = track_failcnt;
}

/* Raise the watermark to at least v. Racy against a concurrent reset, but a
 * watermark that is briefly one charge behind only affects statistics. */
static void pc_bump_watermark(struct pc_counter *c, long v)
{
	long w = atomic_load_explicit(&c->watermark, memory_order_relaxed);

	while (v > w && !atomic_compare_exchange_weak_explicit(&c->watermark, &w, v,
				memory_order_relaxed, memory_order_relaxed))
		;
}

static void pc_cancel(struct pc_counter *c, long n)
{
	long old = atomic_fetch_sub(&c->usage, n);

	/* Clamp an underflow to 0; the caller uncharged more than it charged.
	 * Racy: a concurrent charge between the two operations may be lost
	 * from the clamp, which matches what an unbalanced caller deserves. */
	if (old - n < 0) {
		long cur = old - n;
		atomic_compare_exchange_strong(&c->usage, &cur, 0);
	}
}

void pc_charge(struct pc_counter *c, long n)
{
	for (; c; c = c->parent)
		pc_bump_watermark(c, atomic_fetch_add(&c->usage, n) + n);
}

int pc_try_charge_upto(struct pc_counter *c, long n, struct pc_counter *stop,
		       struct pc_counter **fail)
{
	struct pc_counter *i, *j;
	int levels = 0;

	for (i = c; i != stop; i = i->parent, levels++) {
		long nu = atomic_fetch_add(&i->usage, n) + n;

		PC_BENCH_LEVEL();
		/* The max is read without ordering against other chargers: two
		 * racing chargers may both fail where one could have won. That
		 * costs a retry, never an over-charge. */
		if (nu > atomic_load_explicit(&i->max, memory_order_relaxed)) {
			atomic_fetch_sub(&i->usage, n);
			/* Racy increment semantics are fine: failcnt is statistics. */
			if (c->track_failcnt)
				atomic_fetch_add_explicit(&i->failcnt, 1, memory_order_relaxed);
			for (j = c; j != i; j = j->parent)
				pc_cancel(j, n);
			if (fail)
				*fail = i;
			return -1;
		}
		pc_bump_watermark(i, nu);
	}
	return levels;
}

bool pc_try_charge(struct pc_counter *c, long n, struct pc_counter **fail)
{
	return pc_try_charge_upto(c, n, NULL, fail) >= 0;
}

int pc_uncharge_upto(struct pc_counter *c, long n, struct pc_counter *stop)
{
	int levels = 0;

	for (; c != stop; c = c->parent, levels++) {
		PC_BENCH_LEVEL();
		pc_cancel(c, n);
	}
	return levels;
}

void pc_uncharge(struct pc_counter *c, long n)
{
	pc_uncharge_upto(c, n, NULL);
}

int pc_set_max(struct pc_counter *c, long max)
{
	for (;;) {
		long old = atomic_load(&c->max);
		long usage = atomic_load(&c->usage);

		if (usage > max)
			return -EBUSY;
		if (!atomic_compare_exchange_strong(&c->max, &old, max))
			continue;
		/* A charge may have slipped in between the usage read and the
		 * exchange; if it pushed usage over the new max, undo and let the
		 * caller reclaim. */
		if (atomic_load(&c->usage) <= max || max >= old)
			return 0;
		atomic_store(&c->max, old);
	}
}

void pc_reset_watermark(struct pc_counter *c)
{
	atomic_store(&c->watermark, atomic_load(&c->usage));
}

void pc_reset_failcnt(struct pc_counter *c)
{
	atomic_store(&c->failcnt, 0);
}
