/* oom.c: the memcg OOM killer. The victim is the task (vm object) with
 * the largest resident + swapped footprint whose group is in the subtree
 * of the group that hit its limit (of the root for the machine's own OOM,
 * oom_machine). Killing reaps its memory at once and
 * tells its owner (the owner's kill). With oom_kill_disable the charging
 * thread waits in the OOM wait queue (oom_wait.c) until an uncharge, a
 * limit raise or oom_kill_disable=0, or fails at once when the charge's
 * mode (charge.h) says not to wait. Holds no lock of its own; the victim
 * is reaped and the hooks are called with none of the engine's held. */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/oom.h"
#include "engine/oom_wait.h"
#include "engine/vm.h"

/* The largest task of the subtree, referenced through its group; NULL if
 * there is none. A task with nothing charged yet is a victim too (§11.10:
 * at a limit of 0 the charging task itself is killed), as the kernel's
 * badness of 0 still beats no candidate. */
static struct vm_object *oom_select(struct mcg_group *over)
{
	struct vm_space *vs = over->eng->vm;
	struct vm_object *best = NULL;
	long best_size = 0;

	pthread_mutex_lock(vm_space_lock(vs));
	for (struct vm_object *o = vm_space_objects(vs); o; o = o->next) {
		long size;

		bool in;

		if (!o->is_task || atomic_load(&o->dead) || atomic_load(&o->unkillable))
			continue;
		pthread_mutex_lock(&o->lock);
		in = mcg_in_subtree(o->g, over);
		pthread_mutex_unlock(&o->lock);
		if (!in)
			continue;
		size = vm_object_footprint(o);
		if (!best || size > best_size) {
			best = o;
			best_size = size;
		}
	}
	if (best)
		vm_object_pin(best);
	pthread_mutex_unlock(vm_space_lock(vs));
	return best;
}

/* The victim's process dies whole: its other task objects (a simulated
 * task's own, and the mirror's stand-ins for its real growth, share its
 * id) are reaped with it, so that one kill is counted once even when each
 * of them has nothing charged yet. */
static void oom_reap_same_task(struct mcg_engine *e, struct vm_object *victim)
{
	struct vm_space *vs = e->vm;
	struct vm_object *more[4];
	int n;

	do {
		n = 0;
		pthread_mutex_lock(vm_space_lock(vs));
		for (struct vm_object *o = vm_space_objects(vs); o && n < 4; o = o->next)
			if (o != victim && o->is_task && o->id == victim->id && !atomic_load(&o->dead)) {
				vm_object_pin(o);
				more[n++] = o;
			}
		pthread_mutex_unlock(vm_space_lock(vs));
		for (int i = 0; i < n; i++) {
			vm_object_reap(more[i]);
			vm_object_unpin(more[i]);
		}
	} while (n == 4);
}

static bool oom_kill(struct mcg_group *over)
{
	struct mcg_engine *e = over->eng;
	struct vm_object *victim = oom_select(over);
	struct mcg_group *vg;

	if (!victim)
		return false;
	vg = vm_object_group(victim);
	atomic_fetch_add(&vg->oom_kill, 1);
	if (e->own.ops->kill)
		e->own.ops->kill(victim->id, over, vg, e->own.arg);
	vm_object_reap(victim);
	oom_reap_same_task(e, victim);
	vm_object_unpin(victim);
	mcg_put(vg);
	return true;
}

bool oom_machine(struct mcg_engine *e)
{
	return oom_kill(e->root);
}

/* OOM notifications of over's subtree fire (the owner's oom_event). */
static void oom_notify(struct mcg_group *over)
{
	struct mcg_engine *e = over->eng;

	if (e->own.ops->oom_event)
		e->own.ops->oom_event(over, e->own.arg);
}

/* oom_kill_disable: wait, marked under OOM, until something may have
 * changed. true (retry: the retry decides), or false when the charge's
 * cancel test (its mode) says its task is gone. */
static bool oom_wait(struct mcg_group *over, const struct charge_mode *mode)
{
	bool ok;

	atomic_fetch_add(&over->under_oom, 1);
	oom_notify(over);
	ok = oom_wait_room(over, mode);
	atomic_fetch_sub(&over->under_oom, 1);
	return ok;
}

bool oom_handle(struct mcg_group *over, struct charge_mode *mode)
{
	bool nowait = mode && mode->nowait;
	bool freed;

	if (atomic_load(&over->oom_kill_disable)) {
		/* a single-threaded engine never waits: nothing could wake it */
		if (!env_has_workers(&over->eng->env) || nowait) {
			oom_notify(over);
			if (nowait) {
				if (mode->over)
					mcg_put(mode->over);
				mcg_get(over);
				mode->over = over;
			}
			return false;     /* the caller retries later */
		}
		return oom_wait(over, mode);
	}
	/* the marker is set only while the killer runs (§3.15) */
	atomic_fetch_add(&over->under_oom, 1);
	oom_notify(over);
	freed = oom_kill(over);
	atomic_fetch_sub(&over->under_oom, 1);
	return freed;
}
