/* page_counter.h: hierarchical, lock-free page counters (usage, max,
 * watermark, failcnt, parent link). Knows nothing of groups, pages or files;
 * never sleeps and never takes a lock. */
#ifndef MEMCGFS_PAGE_COUNTER_H
#define MEMCGFS_PAGE_COUNTER_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>

#define PC_PAGE_SIZE  4096L
#define PC_PAGE_SHIFT 12
/* The largest page count: LONG_MAX bytes rounded down to pages. "-1". */
#define PC_MAX        (LONG_MAX / PC_PAGE_SIZE)

struct pc_counter {
	atomic_long usage;
	atomic_long max;
	atomic_long watermark;
	atomic_ulong failcnt;
	struct pc_counter *parent;   /* NULL at the root or without hierarchy */
	bool track_failcnt;          /* failures of charges started here count */
};

void pc_init(struct pc_counter *c, struct pc_counter *parent, bool track_failcnt);

/* Add n pages here and at every ancestor, ignoring limits. Cannot fail. */
void pc_charge(struct pc_counter *c, long n);

/* Add n pages here and at every ancestor unless a level would exceed its max.
 * Returns true on success. On failure nothing stays charged, *fail (if not
 * NULL) names the level that refused, and that level's failcnt moved when
 * c->track_failcnt is set. */
bool pc_try_charge(struct pc_counter *c, long n, struct pc_counter **fail);

/* Remove n pages here and at every ancestor; clamps at 0. */
void pc_uncharge(struct pc_counter *c, long n);

/* The same, for the levels from c up to, not including, stop (a common
 * ancestor whose usage does not change). Returns the levels touched. */
int pc_try_charge_upto(struct pc_counter *c, long n, struct pc_counter *stop,
		       struct pc_counter **fail);
int pc_uncharge_upto(struct pc_counter *c, long n, struct pc_counter *stop);

/* Set max. -EBUSY when usage is above it (only this level is checked). */
int pc_set_max(struct pc_counter *c, long max);

static inline long pc_usage(const struct pc_counter *c) { return atomic_load(&c->usage); }
static inline long pc_max(const struct pc_counter *c) { return atomic_load(&c->max); }
static inline long pc_watermark(const struct pc_counter *c) { return atomic_load(&c->watermark); }
static inline unsigned long pc_failcnt(const struct pc_counter *c) { return atomic_load(&c->failcnt); }

#ifdef MCG_BENCH
/* bench/ only: counter levels this thread updated (atomic read-modify-
 * writes of a shared usage: the seed's res_counter lock acquisitions)
 * since the last call, which resets the count. */
long pc_bench_take_levels(void);
#endif

void pc_reset_watermark(struct pc_counter *c);
void pc_reset_failcnt(struct pc_counter *c);

#endif
