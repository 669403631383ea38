/* oom.h: the memory-cgroup OOM killer (§5.5): victim selection in the
 * subtree of the group over its limit, killing (reaping the victim's
 * memory and telling its owner), oom_kill counts, under_oom; under
 * oom_kill_disable, the wait in the OOM wait queue (oom_wait.h); and the
 * machine's own OOM killer where the machine has one. Never charges;
 * never reclaims. */
#ifndef MEMCGFS_OOM_H
#define MEMCGFS_OOM_H

#include <stdbool.h>

struct mcg_engine;
struct mcg_group;
struct charge_mode;

/* Called by the charge path when its retries are spent, with the charge's
 * mode (charge.h; NULL: the default). true: memory was (or may have been)
 * freed, retry the charge; false: fail it. */
bool oom_handle(struct mcg_group *over, struct charge_mode *mode);

/* The machine is out of memory (m.machine_oom): the largest killable task
 * of the whole machine is killed, whatever its group's oom_kill_disable;
 * no group is marked under OOM and no OOM notification fires, as the
 * kernel's global OOM counts only the victim group's oom_kill. true if a
 * task was killed. */
bool oom_machine(struct mcg_engine *e);

#endif
