/* bgreclaim.h: watermarks and background reclaim (seed topic 1). Owns the
 * watermark rules (automatic values derived from the limit, explicit ones,
 * low <= high <= limit) and a small pool of workers that reclaim a group's
 * subtree from above its high watermark down to its low one. Never
 * charges; never blocks a charging thread (it only queues). */
#ifndef MEMCGFS_BGRECLAIM_H
#define MEMCGFS_BGRECLAIM_H

#include <stdbool.h>
#include <stdint.h>

struct mcg_engine;
struct mcg_group;

enum bgr_mark { BGR_HIGH, BGR_LOW };

int bgr_init(struct mcg_engine *e);      /* with m.watermarks; workers start with the first work */
void bgr_destroy(struct mcg_engine *e);

/* Effective watermark in pages (PC_MAX at the root or without a limit). */
long bgr_wmark(struct mcg_group *g, enum bgr_mark m);
/* The explicit watermark in pages, or -1 when it is automatic. */
long bgr_wmark_explicit(struct mcg_group *g, enum bgr_mark m);
/* Set a watermark (pages), or return it to automatic. -EINVAL at the root,
 * above the limit, or against the other explicit watermark. */
int bgr_set_wmark(struct mcg_group *g, enum bgr_mark m, long pages, bool automatic);
/* The limit of g became limit: explicit watermarks above it are clamped.
 * Caller holds g->lock. */
void bgr_limit_changed(struct mcg_group *g, long limit);
/* After a charge reached the counters: queue every group on the path whose
 * usage is above its high watermark. */
void bgr_check(struct mcg_group *g);
/* Wait until no background reclaim is queued or running (tests). */
void bgr_quiesce(struct mcg_engine *e);
/* An environment without workers (replay): one batch of background
 * reclaim for the first queued group, timed by the environment's clock. 1 when it did something (the caller
 * charges the scanning to its simulated reclaimer), 0 when nothing is due
 * (*next_due: when delayed work is, or UINT64_MAX). */
int bgr_step(struct mcg_engine *e, uint64_t *next_due);

#endif
