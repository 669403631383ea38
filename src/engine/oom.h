/* oom.h: the memory-cgroup OOM handler (§5.5): victim selection in the
 * subtree of the group over its limit, killing (reaping the victim's
 * memory and telling its owner), oom_kill counts, under_oom, and the wait
 * of oom_kill_disable. Never charges; never reclaims. */
#ifndef MEMCGFS_OOM_H
#define MEMCGFS_OOM_H

#include <stdbool.h>

struct mcg_engine;
struct mcg_group;
struct charge_mode;

int oom_init(struct mcg_engine *e);
void oom_destroy(struct mcg_engine *e);

/* Called by the charge path when its retries are spent, with the charge's
 * mode (charge.h; NULL: the default). true: memory was (or may have been)
 * freed, retry the charge; false: fail it. */
bool oom_handle(struct mcg_group *over, struct charge_mode *mode);
/* Something that may end an OOM wait happened (uncharge, limit raised,
 * oom_kill_disable cleared): wake the waiters. Cheap when none wait. */
void oom_wake(struct mcg_engine *e);

#endif
