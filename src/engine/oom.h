/* oom.h: the memory-cgroup OOM handler (§5.5): victim selection in the
 * subtree of the group over its limit, killing (reaping the victim's
 * memory and telling its owner), oom_kill counts, under_oom, and the wait
 * of oom_kill_disable. Never charges; never reclaims. */
#ifndef MEMCGFS_OOM_H
#define MEMCGFS_OOM_H

#include <stdbool.h>

struct mcg_engine;
struct mcg_group;

int oom_init(struct mcg_engine *e);
void oom_destroy(struct mcg_engine *e);

/* Called by the charge path when its retries are spent. true: memory was
 * (or may have been) freed, retry the charge; false: fail it. */
bool oom_handle(struct mcg_group *over);
/* Something that may end an OOM wait happened (uncharge, limit raised,
 * oom_kill_disable cleared): wake the waiters. Cheap when none wait. */
void oom_wake(struct mcg_engine *e);
/* For this thread: with oom_kill_disable, fail the charge instead of
 * waiting (a thread that serves many tasks, like the mirror, must not
 * sleep for one of them). */
void oom_set_nowait(bool on);
/* For this thread: a test that ends an oom_kill_disable wait with a failed
 * charge when it returns true (the task the thread charges for is gone),
 * asked at least every 50 ms while waiting. NULL: wait until room. */
void oom_set_cancel(bool (*cancelled)(void *arg), void *arg);
/* The group whose oom_kill_disable failed this thread's last charge,
 * referenced, or NULL; cleared by the call. */
struct mcg_group *oom_take_over(void);

#endif
