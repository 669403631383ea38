/* memcg_policy.c: what is done to a group from above (engine.h):
 * its creation with the kernel memory it costs its parent (§11.5), its
 * removal (the stocks drained, the release agent's rule of §3.19), and
 * every setting with the rules of the contract: limits with the reclaim
 * that shrinks a group to them, force_empty, use_hierarchy, the soft
 * limit, swappiness, oom_control, move_charge_at_immigrate. Above the
 * charge path and reclaim, which it calls; the tree itself (links, ids,
 * references, names) is memcg.c's. Never does I/O; callers get 0 or a
 * negative errno. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bgreclaim.h"
#include "engine/charge.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/names.h"
#include "engine/oom_wait.h"
#include "engine/reclaim.h"
#include "engine/softlimit.h"

#define MCG_ENOTSUPP 524    /* the kernel-internal errno of kmem limits 5.16..6.5 */

/* A mkdir when every id is held: EBUSY from 6.12, ENOSPC before. */
static int mcg_ids_exhausted(const struct mcg_engine *e)
{
	return prof_has(&e->m.prof, PF_ID_EXHAUST_EBUSY) ? -EBUSY : -ENOSPC;
}

/* The errors of §4.1 that come before the allocation. Caller holds
 * tree_lock. */
static int mcg_create_check(struct mcg_engine *e, struct mcg_group *parent, const char *name)
{
	if (parent->removed)
		return -ENODEV;
	if (mcg_find_live(parent, name))
		return -EEXIST;
	if (e->nr_groups >= MCG_ID_MAX)
		return mcg_ids_exhausted(e);
	return 0;
}

/* Charge a new child's structures to parent (§11.5) as the kernel's
 * mem_cgroup_css_alloc does, through the stock, so that the parent's usage
 * shows the batch; *pages is what was charged. Never waits under
 * oom_kill_disable (no user fault: the kernel fails such a charge). Called
 * with no lock held: the charge may reclaim and OOM-kill. */
static int mcg_mkdir_charge(struct mcg_engine *e, struct mcg_group *parent, int cpu, long *pages)
{
	struct charge_mode mode = { .nowait = true };
	int err;

	*pages = 0;
	if (mcg_root(parent) || !prof_has(&e->m.prof, PF_MKDIR_KMEM))
		return 0;
	err = charge_kmem(parent, cpu >= 0 ? (unsigned)cpu % e->m.cpus : parent->id % e->m.cpus,
			  MCG_MKDIR_KMEM_PAGES, &mode);
	if (mode.over)
		mcg_put(mode.over);
	if (err)
		return -ENOMEM;
	*pages = MCG_MKDIR_KMEM_PAGES;
	return 0;
}

static int mcg_create_full(struct mcg_engine *e, struct mcg_group *parent, const char *name,
			   unsigned id, unsigned gen, int cpu,
			   int (*init)(struct mcg_group *g, void *arg), void *arg,
			   struct mcg_group **out);

int mcg_create(struct mcg_engine *e, struct mcg_group *parent, const char *name,
	       int (*init)(struct mcg_group *g, void *arg), void *arg,
	       struct mcg_group **out)
{
	return mcg_create_full(e, parent, name, 0, 0, -1, init, arg, out);
}

int mcg_create_on(struct mcg_engine *e, struct mcg_group *parent, const char *name, int cpu,
		  int (*init)(struct mcg_group *g, void *arg), void *arg,
		  struct mcg_group **out)
{
	return mcg_create_full(e, parent, name, 0, 0, cpu, init, arg, out);
}

int mcg_create_as(struct mcg_engine *e, struct mcg_group *parent, const char *name,
		  unsigned id, unsigned gen, int (*init)(struct mcg_group *g, void *arg),
		  void *arg, struct mcg_group **out)
{
	return mcg_create_full(e, parent, name, id, gen, -1, init, arg, out);
}

static int mcg_create_full(struct mcg_engine *e, struct mcg_group *parent, const char *name,
			   unsigned id, unsigned gen, int cpu,
			   int (*init)(struct mcg_group *g, void *arg), void *arg,
			   struct mcg_group **out)
{
	struct mcg_group *g;
	long charged;
	int err = mcg_check_name(name);

	if (err)
		return err;
	if (id > MCG_ID_MAX)
		return -EINVAL;
	pthread_rwlock_rdlock(&e->tree_lock);
	err = mcg_create_check(e, parent, name);
	pthread_rwlock_unlock(&e->tree_lock);
	if (err || (err = mcg_mkdir_charge(e, parent, cpu, &charged)))
		return err;
	pthread_rwlock_wrlock(&e->tree_lock);
	if ((err = mcg_create_check(e, parent, name))) {
		;                         /* changed while the charge ran */
	} else if (!(g = mcg_alloc(e, parent, name))) {
		err = -ENOMEM;
	} else if ((err = id ? mcg_id_claim(e, g, id, gen) : mcg_id_assign(e, g))) {
		mcg_free(g);           /* (no id: nothing of the table to clear) */
		if (err == -ENOSPC)    /* (every id held, dying groups' too) */
			err = mcg_ids_exhausted(e);
	} else if (init && (err = init(g, arg))) {
		mcg_free(g);
	} else {
		g->sibling = parent->children;
		if (g->sibling)
			g->sibling->sib_pp = &g->sibling;
		parent->children = g;
		g->sib_pp = &parent->children;
		g->linked = true;
		names_add(e, g);
		g->mkdir_kmem = charged;
		charged = 0;
		soft_link(g);
		parent->nr_live_children++;
		atomic_store(&parent->ever_populated, true);
		e->nr_groups++;
		if (out) {
			mcg_get(g);
			*out = g;
		}
	}
	pthread_rwlock_unlock(&e->tree_lock);
	uncharge_kmem(parent, charged);   /* (a failed creation's) */
	return err;
}

int mcg_remove(struct mcg_engine *e, struct mcg_group *g)
{
	char *release = NULL;

	pthread_rwlock_wrlock(&e->tree_lock);
	if (mcg_root(g) || g->removed) {
		pthread_rwlock_unlock(&e->tree_lock);
		return mcg_root(g) ? -EBUSY : -ENOENT;
	}
	if (atomic_load(&g->ntasks) || g->nr_live_children) {
		pthread_rwlock_unlock(&e->tree_lock);
		return -EBUSY;
	}
	names_del(e, g);          /* (before removed: never found as dying) */
	g->removed = true;
	g->parent->nr_live_children--;
	release = mcg_release_candidate(g->parent);
	pthread_rwlock_unlock(&e->tree_lock);
	/* Pages parked in stocks go back first. A group still holding charges
	 * stays linked, hidden, so that its pages keep counting in its
	 * ancestors (§4.2); it is reaped when they go. */
	charge_drain(e, g);
	uncharge_kmem_reparent(g);
	uncharge_reap(g);
	mcg_fire_release(e, release);
	return 0;
}

static long mcg_reclaim(struct mcg_group *g, long nr, bool may_swap)
{
	return reclaim_subtree(g, nr, may_swap, RECLAIM_DIRECT);   /* in the writer's thread */
}

static int mcg_shrink_to(struct mcg_group *g, enum mcg_counter c, long pages,
			 mcg_stop_fn stop, void *stop_arg)
{
	for (int round = 0;; round++) {
		if (stop && stop(stop_arg))
			return -EINTR;
		if (c == MCG_MEM && pages > pc_max(&g->cnt[MCG_MEMSW]))
			return -EINVAL;
		if (c == MCG_MEMSW && pages < pc_max(&g->cnt[MCG_MEM]))
			return -EINVAL;
		if (pc_set_max(&g->cnt[c], pages) == 0)
			return 0;
		/* The first failure only drains the per-CPU stocks; later ones
		 * must reclaim or give up. */
		if (round == 0)
			charge_drain(g->eng, g);
		else if (mcg_reclaim(g, pc_usage(&g->cnt[c]) - pages, c == MCG_MEM) == 0)
			return -EBUSY;
	}
}

int mcg_set_limit(struct mcg_group *g, enum mcg_counter c, long pages,
		  mcg_stop_fn stop, void *stop_arg)
{
	const struct prof *p = &g->eng->m.prof;
	int err = 0;

	if (mcg_root(g))
		return -EINVAL;
	if (pages > PC_MAX)
		pages = PC_MAX;
	pthread_mutex_lock(&g->lock);
	switch (c) {
	case MCG_MEM:
	case MCG_MEMSW:
		err = mcg_shrink_to(g, c, pages, stop, stop_arg);
		if (!err && c == MCG_MEM)
			bgr_limit_changed(g, pages);
		if (!err)
			oom_wake(g->eng);     /* a raised limit ends OOM waits */
		break;
	case MCG_KMEM:
		if (prof_has(p, PF_KMEM_LIMIT_IGNORED))
			err = 0;
		else if (prof_has(p, PF_KMEM_LIMIT_524))
			err = -MCG_ENOTSUPP;
		else
			err = pc_set_max(&g->cnt[c], pages);
		break;
	case MCG_TCP:
		err = pc_set_max(&g->cnt[c], pages);
		if (!err)
			atomic_store(&g->tcp_active, true);
		break;
	default:
		err = -EINVAL;
	}
	pthread_mutex_unlock(&g->lock);
	return err;
}

int mcg_force_empty(struct mcg_group *g, mcg_stop_fn stop, void *stop_arg)
{
	unsigned retries = prof_reclaim_retries(&g->eng->m.prof);

	if (mcg_root(g))
		return -EINVAL;
	charge_drain(g->eng, g);
	while (pc_usage(&g->cnt[MCG_MEM]) > 0 && retries > 0) {
		if (stop && stop(stop_arg))
			return -EINTR;
		if (mcg_reclaim(g, pc_usage(&g->cnt[MCG_MEM]), true) == 0)
			retries--;
	}
	return 0;
}

int mcg_set_use_hierarchy(struct mcg_group *g, unsigned long long v)
{
	struct mcg_engine *e = g->eng;
	int err = 0;

	if (prof_has(&e->m.prof, PF_HIERARCHY_ONLY))
		return v == 1 ? 0 : -EINVAL;
	pthread_rwlock_rdlock(&e->tree_lock);
	if (atomic_load(&g->use_hierarchy) == (v == 1) && v <= 1)
		err = 0;
	else if (v > 1 || (g->parent && atomic_load(&g->parent->use_hierarchy)))
		err = -EINVAL;
	else if (g->nr_live_children || g->children)
		err = -EBUSY;
	else
		atomic_store(&g->use_hierarchy, v == 1);
	pthread_rwlock_unlock(&e->tree_lock);
	return err;
}

void mcg_set_soft_limit(struct mcg_group *g, long pages)
{
	atomic_store(&g->soft_limit, pages);
	soft_limit_changed(g);
}

int mcg_set_swappiness(struct mcg_group *g, unsigned long long v)
{
	if (v > prof_swappiness_max(&g->eng->m.prof))
		return -EINVAL;
	if (mcg_root(g))
		atomic_store(&g->eng->vm_swappiness, (unsigned)v);
	else
		atomic_store(&g->swappiness, (unsigned)v);
	return 0;
}

int mcg_set_oom_control(struct mcg_group *g, unsigned long long v)
{
	if (mcg_root(g) || v > 1)
		return -EINVAL;
	atomic_store(&g->oom_kill_disable, v == 1);
	if (v == 0)
		oom_wake(g->eng);
	return 0;
}

int mcg_set_move_charge(struct mcg_group *g, unsigned long long v)
{
	if (prof_has(&g->eng->m.prof, PF_NO_MOVE_CHARGE) ? v != 0 : (v & ~3ull) != 0)
		return -EINVAL;
	atomic_store(&g->move_charge, (unsigned)v);
	return 0;
}
