/* charge.h: the try-charge loop (§5.4, seed topic 3) for the engine's own
 * modules: the stock, the counters, the reclaim throttle, direct reclaim,
 * retries, the OOM killer. Charging kernel memory and a new page are
 * public (engine.h); the stock, the batches and a page's release are the
 * charge core's (charge_core.h), uncharging and the group's end
 * uncharge.h's, and this header includes both for its callers. Never
 * picks pages to reclaim (reclaim.c) or victims (oom.c). */
#ifndef MEMCGFS_CHARGE_H
#define MEMCGFS_CHARGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/charge_core.h"
#include "engine/engine.h"
#include "engine/oom_wait.h"
#include "engine/page.h"
#include "engine/uncharge.h"

struct mcg_engine;
struct mcg_group;

/* Charge n pages to g from simulated CPU cpu: stock, batch, then direct
 * reclaim and retries, OOM as mode says (NULL: the default). 0, -ENOMEM,
 * or -EBUSY when the environment's throttle_slot refused a reclaim slot.
 * The root is never charged. */
int charge_try(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode);

#endif
