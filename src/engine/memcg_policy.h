/* memcg_policy.h: what is done to a group from above: creation (with the
 * kernel memory it costs its parent), removal, and every setting with
 * the contract's rules, reclaiming where a limit asks for it. Never does
 * I/O, never knows about files or FUSE; 0 or a negative errno. */
#ifndef MEMCGFS_MEMCG_POLICY_H
#define MEMCGFS_MEMCG_POLICY_H

#include "engine/memcg.h"
#include "engine/memcg_policy.h"

/* -EEXIST, -ENODEV (parent removed), -EINVAL (newline in name),
 * -ENAMETOOLONG, -EBUSY/-ENOSPC (ID space full), -ENOMEM (also: the parent
 * cannot take the child's MCG_MKDIR_KMEM_PAGES, charged to it as kernel
 * memory through the normal charge path, with reclaim and OOM, never
 * waiting; the root is never charged; given back when the child is
 * reaped). init (may be NULL) runs on the new group before it becomes
 * visible; its error aborts the creation. */
int mcg_create(struct mcg_engine *e, struct mcg_group *parent, const char *name,
	       int (*init)(struct mcg_group *g, void *arg), void *arg,
	       struct mcg_group **out);
/* mcg_create with the id and generation the group had before a restart
 * (id 0: the next free one, as mcg_create): -EBUSY when id is taken,
 * -EINVAL above MCG_ID_MAX; the id's next holder gets gen + 1 or more. */
int mcg_create_as(struct mcg_engine *e, struct mcg_group *parent, const char *name,
		  unsigned id, unsigned gen, int (*init)(struct mcg_group *g, void *arg),
		  void *arg, struct mcg_group **out);

/* -EBUSY with tasks or live children, or for the root. */
int mcg_remove(struct mcg_engine *e, struct mcg_group *g);

/* Hard limits (memory, memsw, kmem in old profiles, tcp), in pages, with
 * every rule of §3.3/§3.6/§3.8/§5.7. stop may be NULL. */
int mcg_set_limit(struct mcg_group *g, enum mcg_counter c, long pages,
		  mcg_stop_fn stop, void *stop_arg);
int mcg_force_empty(struct mcg_group *g, mcg_stop_fn stop, void *stop_arg);

int mcg_set_use_hierarchy(struct mcg_group *g, unsigned long long v);
/* memory.soft_limit_in_bytes: any value (§3.5); reclaim under global
 * pressure goes to the groups furthest over it first. */
void mcg_set_soft_limit(struct mcg_group *g, long pages);
int mcg_set_swappiness(struct mcg_group *g, unsigned long long v);

int mcg_set_oom_control(struct mcg_group *g, unsigned long long v);
int mcg_set_move_charge(struct mcg_group *g, unsigned long long v);

#endif
