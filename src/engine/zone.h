/* zone.h: the machine's zones (seed topic 5): allocation against the
 * zones' watermarks, kswapd, and the machine's direct reclaim, in the
 * policy the machine names (mcg_machine.zones). Owns kswapd's state and
 * the zones' counters; never charges, never does I/O. */
#ifndef MEMCGFS_ZONE_H
#define MEMCGFS_ZONE_H

#include <stdint.h>

struct mcg_engine;

/* With m.zones: the zones' watermarks and kswapd's state. 0 or -ENOMEM. */
int zone_init(struct mcg_engine *e);
/* Stops kswapd's worker, if it started, and frees the zones' state. */
void zone_destroy(struct mcg_engine *e);

/* A free page for a charge, as 2.6.3's __alloc_pages found one: the zones
 * above their low marks (incremental min); else kswapd is woken and the
 * zones above their min marks; else direct reclaim, and again, until a
 * reclaim frees nothing. PAGE_NONE: out of memory. */
uint32_t zone_alloc(struct mcg_engine *e);

#endif
