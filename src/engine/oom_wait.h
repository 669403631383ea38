/* oom_wait.h: the OOM wait queue: where a charge under oom_kill_disable
 * waits for room (§5.5), and what wakes it (an uncharge, a limit raised,
 * oom_kill_disable cleared). Owns the queue alone: never kills, never
 * charges, never reclaims. Below the charge core, which wakes it on
 * every uncharge. */
#ifndef MEMCGFS_OOM_WAIT_H
#define MEMCGFS_OOM_WAIT_H

#include <stdbool.h>

struct mcg_engine;
struct mcg_group;

/* How a charge may wait for room under oom_kill_disable, passed down with
 * each charge as the kernel passes gfp_t (never per-thread state). A task's
 * owner keeps one per task (vm_object_set_mode) and serialises the task's
 * charges; NULL is the default: wait until there is room. */
struct charge_mode {
	/* Fail the charge instead of waiting: a thread that serves many
	 * tasks (the mirror's) must not sleep for one of them. */
	bool nowait;
	/* Asked at least every 50 ms while waiting: true ends the wait with
	 * a failed charge (the task the charge is for is gone). */
	bool (*cancelled)(void *arg);
	void *cancel_arg;
	/* Out, with nowait: the group whose oom_kill_disable failed the
	 * last charge, referenced (the owner puts it), or left as it was. */
	struct mcg_group *over;
};

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
