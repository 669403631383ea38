/* writeback.h: the simulated writeback device. Reclaim queues dirty page
 * cache here instead of writing it; each page completes after the device's
 * latency, at its bandwidth, in order. At completion a page marked for
 * reclaim rotates to the inactive tail (reclaim finds it next) or, with
 * the immediate-reclaim policy (seed topic 4), is handed isolated to the
 * reclaim function its caller passes, which frees it on the spot. Owns
 * the queue and the clock's use; never scans LRUs, never frees a page. */
#ifndef MEMCGFS_WRITEBACK_H
#define MEMCGFS_WRITEBACK_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;

/* Reclaim page idx of g, isolated by the device for it: true if freed.
 * (Reclaim's own, passed down: reclaim_wb_complete, reclaim.c.) */
typedef bool (*wb_reclaim_fn)(struct mcg_group *g, uint32_t idx);

int wb_init(struct mcg_engine *e);
void wb_destroy(struct mcg_engine *e);
/* Queue page idx (charged, isolated or listed; its owner is vpage), to
 * be written at pos of the machine's disk when there is one (the vpage of
 * a file page, wb_swap_pos(slot) for a swap-out), whose full queue makes
 * the caller wait (through the environment's sleep) for a request. */
void wb_submit(struct mcg_engine *e, uint32_t idx, uint64_t pos);

/* A swap slot's place on the machine's disk: the swap area, after every
 * virtual page's. */
static inline uint64_t wb_swap_pos(uint32_t slot)
{
	return (1ull << 40) + slot;
}
/* Complete everything due by now; pages for immediate reclaim go to
 * RECLAIM. Cheap when nothing is due. */
void wb_complete(struct mcg_engine *e, wb_reclaim_fn reclaim);
/* Memcg reclaim met page idx under writeback, marked for reclaim: wait
 * for it (legacy memcg has no dirty throttling, so the kernel waits too)
 * through the environment's sleep: the real one sleeps, a simulated one
 * accounts the wait, and the device completes it at once. Everything
 * queued before it completes as well (immediate reclaim: RECLAIM). */
void wb_wait(struct mcg_engine *e, uint32_t idx, wb_reclaim_fn reclaim);
/* Seed topic 4's counts: reclaim kept a dirty or writeback file page,
 * marked for reclaim (nr_vmscan_immediate_reclaim); put one on the
 * immediate list; moved n stranded ones back (pgrescued). */
void wb_note_marked(struct mcg_engine *e);
void wb_note_listed(struct mcg_engine *e);
void wb_note_rescued(struct mcg_engine *e, long n);

#endif
