/* bgreclaim.h: watermarks and background reclaim (seed topic 1). Owns the
 * watermark rules (automatic values derived from the limit, explicit ones,
 * low <= high <= limit) and a small pool of workers that reclaim a group's
 * subtree from above its high watermark down to its low one. Never
 * charges; never blocks a charging thread (it only queues). */
#ifndef MEMCGFS_BGRECLAIM_H
#define MEMCGFS_BGRECLAIM_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;

int bgr_init(struct mcg_engine *e);      
/* The limit of g became limit: explicit watermarks above it are clamped.
 * Caller holds g->lock. */
void bgr_limit_changed(struct mcg_group *g, long limit);
/* After a charge reached the counters: queue every group on the path whose
 * usage is above its high watermark. */
void bgr_check(struct mcg_group *g);
/* Wait until no background reclaim is queued or running (tests). */
void bgr_quiesce(struct mcg_engine *e);

#endif
