/* internal.h: what only the engine's own modules may see: a group's fields
 * and the helpers that read them inline on the charge path, the slot tags
 * of virtual pages, and the calls that build and tear down the tree. No
 * file under src/ outside src/engine/ includes it (tests/layers checks);
 * the floors above use the modules' public headers and their accessors.
 * The engine's white-box unit tests (tests/unit, the sequence fuzzer)
 * include it. */
#ifndef MEMCGFS_ENGINE_INTERNAL_H
#define MEMCGFS_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "engine/engine.h"
#include "engine/page_counter.h"
#include "engine/rstat.h"
#include "engine/spin.h"
#include "engine/stat.h"

struct mcg_group {
	/* Read on every charge and uncharge, written almost never: one cache
	 * line of its own, so no counter or reference count written by another
	 * CPU evicts it (cf. the kernel's padding in struct page_counter). */
	struct mcg_engine *eng;
	unsigned id;                  /* 1..MCG_ID_MAX, recycled after the group is freed */
	unsigned gen;                 /* how many groups held this id before */
	struct mcg_group *parent;
	struct stat_shard *stat;      /* [STAT_SHARDS], summed on read */
	struct lru_vec *lruvec;       /* [nodes], with the LRU sizes */
	unsigned depth;
	atomic_bool removed;          /* rmdir'ed: hidden, dying while charged */
	atomic_bool reaped;           /* unlinked for good: charges go to the parent */
	bool linked;                  /* in its parent's children list */

	atomic_int refs __attribute__((aligned(64)));
	struct mcg_group *children;   /* first child; dying ones included */
	struct mcg_group *sibling;
	struct mcg_group **sib_pp;    /* what points at it in the children list */
	struct mcg_group *name_next;  /* the name index's chain (names.c) */
	char *name;
	unsigned nr_live_children;
	atomic_bool ever_populated;       /* had tasks or children: release rule */

	pthread_mutex_t lock;         /* serialises setting writes */
	struct pc_counter cnt[MCG__NCOUNTERS] __attribute__((aligned(64)));
	atomic_long soft_limit;
	/* the soft-limit order (softlimit.c): while the group is in it, a
	 * bound on its excess over soft_limit; 0 out of it */
	atomic_long soft_key;
	unsigned soft_pos;            /* its place in the order + 1, 0: out (soft_heap.lock) */
	unsigned long soft_seq;       /* when it was linked: the walk takes siblings newest first */
	atomic_uint swappiness;
	atomic_bool oom_kill_disable;
	atomic_int under_oom;         /* nesting count: > 0 reads as 1 */
	atomic_ulong oom_kill;
	atomic_uint move_charge;
	atomic_bool use_hierarchy;
	atomic_bool notify_on_release;
	atomic_bool clone_children;
	atomic_bool tcp_active;
	atomic_long ntasks;
	atomic_long wmark[2];         /* explicit high/low in pages, -1: automatic */
	atomic_bool bgr_queued;       /* background reclaim queued or running */
	atomic_long bgr_runs;         /* background reclaim runs (pgoutrun) */
	atomic_long allocstall;       /* charges that went into direct reclaim */
	atomic_long kmem_local;       /* kernel memory charged here (not children) */
	/* removed, with kmem-reparent: its kernel memory is its parent's, and
	 * what is charged or uncharged to it later is too (the kernel's
	 * obj_cgroup, reparented at offline). Set once, under kmem_lock, a
	 * leaf that covers kmem_local's changes against the move */
	atomic_bool kmem_moved;
	spin_t kmem_lock;
	long mkdir_kmem;              /* pages its mkdir charged to its parent (§11.5),
				       * given back two grace periods after it
				       * is reaped (uncharge.c) */
	struct mcg_group *free_next;  /* reaped, its structures waiting to go */
	atomic_int reclaimers;        /* tasks in direct reclaim on this group */
	/* reclaim activity, split by whose thread reclaimed: indexed by enum
	 * reclaim_ctx, [0] direct (any reason), [1] background */
	atomic_long pg_scanned[2];
	atomic_long pg_reclaimed[2];

	void *owner_data;             /* for the layer above (src/fs) */
	struct rstat_node rs;         /* hierarchical sums (rstat.h) */
};

static inline void stat_add(struct mcg_group *g, enum stat_item it, long delta)
{
	stat_shard_add(g->stat, it, delta);
	rstat_updated(&g->rs);
}

/* The group holding id, unreferenced and without a lock: only for a caller
 * that holds something pinning the group (a charged page of it). */
static inline struct mcg_group *mcg_by_id_pinned(struct mcg_engine *e, unsigned id)
{
	/* (the pinned group keeps its chunk: a chunk goes with its last id) */
	struct mcg_group *_Atomic *chunk =
		atomic_load_explicit(&e->by_id[id >> MCG_ID_CHUNK_SHIFT], memory_order_acquire);

	return atomic_load_explicit(&chunk[id & (MCG_ID_CHUNK - 1)], memory_order_acquire);
}

/* g is the hierarchy's root: engine.h's mcg_is_root, inline for the
 * charge path. */
static inline bool mcg_root(const struct mcg_group *g)
{
	return g->parent == NULL;
}

/* Slot tags of a virtual page (vm.c), in the top two bits. */
#define VM_TAG_MASK    0xC0000000u
#define VM_TAG_PAGE    0x00000000u
#define VM_TAG_SWAP    0x40000000u
#define VM_TAG_SHADOW  0x80000000u
#define VM_EMPTY       0xFFFFFFFFu

/* memcg.c: a new group under parent (NULL: the root), not yet linked nor
 * numbered; NULL without memory. */
struct mcg_group *mcg_alloc(struct mcg_engine *e, struct mcg_group *parent, const char *name);
/* memcg.c: give g the next free id (the caller checked there is one);
 * -ENOMEM without memory for the id table's chunk. */
int mcg_id_assign(struct mcg_engine *e, struct mcg_group *g);
/* memcg.c: free g now, references or not (a group mcg_create never
 * linked). */
void mcg_free(struct mcg_group *g);
/* memcg.c: free g and everything below it, references or not (teardown). */
void mcg_free_subtree(struct mcg_group *g);
/* memcg.c, for memcg_policy.c: the live child of parent named name (or
 * NULL), with tree_lock held; whether name may name a group (0, -EINVAL,
 * -ENAMETOOLONG); claim id at generation gen for g (-EBUSY when taken);
 * the release agent's rule of §3.19 evaluated under tree_lock (the path,
 * malloc'ed, or NULL), and its firing once the lock is dropped. */
struct mcg_group *mcg_find_live(struct mcg_group *parent, const char *name);
int mcg_check_name(const char *name);
int mcg_id_claim(struct mcg_engine *e, struct mcg_group *g, unsigned id, unsigned gen);
char *mcg_release_candidate(struct mcg_group *g);
void mcg_fire_release(struct mcg_engine *e, char *path);
/* g leaves its parent's list and the group count (uncharge_reap, with
 * tree_lock held for writing); the tree's reference stays for the caller
 * to put. */
void mcg_unlink(struct mcg_group *g);

/* memcg.c, for the engine only: the pre-order walk with dying groups, the
 * root's usage, the task counts. */
/* Walk top's subtree in pre-order, dying groups included, as the kernel's
 * mem_cgroup_iter does: the group after prev (NULL: top itself), referenced,
 * or NULL at the end. prev's reference passes to the call; a caller that
 * stops early puts the last group itself. No allocation, no lock held
 * between steps; a group reaped under the walk ends it early. */
struct mcg_group *mcg_iter(struct mcg_group *top, struct mcg_group *prev);

/* The root's usage_in_bytes: the global formula applied to the simulated
 * machine (file pages + anon pages), in pages. */
long mcg_root_usage(struct mcg_engine *e);

/* Task count bookkeeping, for task.c only. */
void mcg_note_tasks(struct mcg_group *g, long delta);

#endif
