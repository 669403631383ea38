/* oom_wait.h: the OOM wait queue: where a charge under oom_kill_disable
 * waits for room (§5.5), and what wakes it (an uncharge, a limit raised,
 * oom_kill_disable cleared). Owns the queue alone: never kills, never
 * charges, never reclaims. Below the charge core, which wakes it on
 * every uncharge. */
#ifndef MEMCGFS_OOM_WAIT_H
#define MEMCGFS_OOM_WAIT_H

#include <stdbool.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;

int oom_init(struct mcg_engine *e);
void oom_destroy(struct mcg_engine *e);

/* Something that may end an OOM wait happened: wake the waiters. Cheap
 * when none wait. */
void oom_wake(struct mcg_engine *e);

/* Waits while over's killer is disabled and its usage is at its limit,
 * until a wake; with a cancel test in the charge's MODE (charge.h), asks
 * it every OOM_CANCEL_MS. true (the caller retries its charge), or false
 * when the cancel test says the task is gone. */
bool oom_wait_room(struct mcg_group *over, const struct charge_mode *mode);

#endif
