/* memcg.h: the group tree of the engine and each group's settings and
 * counters: lifetime (ids, links, refcounts, dying groups), renaming,
 * walks and accessors. Creation, removal and the setting rules of the
 * contract are memcg_policy.h's. Never does I/O, never knows about files
 * or FUSE. */
#ifndef MEMCGFS_MEMCG_H
#define MEMCGFS_MEMCG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/env.h"
#include "engine/page.h"
#include "engine/page_counter.h"
#include "engine/profile.h"
#include "engine/stat.h"

#define MCG_ID_MAX 65535   /* groups alive at once, dying ones and the root included */
#define MCG_ID_CHUNK_SHIFT 8
#define MCG_ID_CHUNK  (1u << MCG_ID_CHUNK_SHIFT)                 /* slots a chunk */
#define MCG_ID_CHUNKS ((MCG_ID_MAX >> MCG_ID_CHUNK_SHIFT) + 1)
/* A group's name: cgroupfs takes every name the VFS passes (§11.6), and
 * FUSE passes up to PATH_MAX - 1 bytes. */
#define MCG_NAME_MAX 4095
/* What a child's control structures cost its parent in kernel memory
 * (§11.5: 20,480 bytes measured on 6.18; kept equal on older profiles
 * that charge it, 5.9 and later). */
#define MCG_MKDIR_KMEM_PAGES 5

enum mcg_counter {
	MCG_MEM,
	MCG_MEMSW,
	MCG_KMEM,
	MCG_TCP,
	MCG__NCOUNTERS
};

struct mcg_engine;
struct mcg_group;
struct vm_space;
struct oom_state;
struct wb_dev;
struct bgr_pool;
struct charge_throttle;
struct charge_stock;
struct swap_dev;
struct task_table;
struct move_state;
struct name_index;
struct rstat_state;
struct soft_heap;

/* Called when a group with notify_on_release set becomes empty after having
 * had tasks or children: after an rmdir with no engine lock held, but on a
 * task's exit with tree_lock held for reading, so it may only queue the
 * path (malloc'ed, the hook's to free). path is relative to the hierarchy
 * root ("/a/b"). */
typedef void (*mcg_release_fn)(const char *path, void *arg);
/* Called once when a group's memory is finally freed, for its owner's data. */
typedef void (*mcg_free_fn)(struct mcg_group *g, void *arg);
/* Asked between reclaim rounds of long operations: true to stop (EINTR). */
typedef bool (*mcg_stop_fn)(void *arg);

/* The simulated machine: plain data, read by every module. */
struct mcg_machine {
	struct prof prof;
	long mem_pages;
	long swap_pages;
	unsigned nodes;          /* 0: 1 */
	/* each node's pages, adding up to mem_pages (all 0: an even split);
	 * allocation tries the toucher's node first, then the next ones */
	long node_pages[PAGE_MAX_NODES];
	unsigned cpus;           /* 0: 1 */
	unsigned vm_swappiness;  /* the simulated vm.swappiness */
	bool no_stock;           /* no per-CPU charge stock: every charge reaches
				  * the counters (exact counts for tests) */
	long wb_pages_per_s;     /* writeback device bandwidth (default 25600) */
	uint64_t wb_latency_ns;  /* and latency (default 5 ms) */
	bool immediate_reclaim;  /* reclaim pages at writeback completion */
	/* seed topic 4, patch 11/11 (RFC only): a file page reclaim marked
	 * for reclaim, under writeback, waits on an immediate list that
	 * reclaim never scans, and goes to the inactive tail when clean */
	bool immediate_list;
	/* per-node dirty limits (3.3's, seed topic 4.4), in % of a node's
	 * pages: a written page-cache page is allocated on the first node
	 * under its limit (0: off) */
	unsigned node_dirty_ratio;
	bool watermarks;         /* watermarks and background reclaim are on */
#ifdef MCG_BENCH
	/* bench/ only (seed B5): reclaim walks the nodes in order and stops
	 * as soon as it has enough, the fixed form the default replaced */
	bool node_reclaim_fixed;
	/* bench/ only (seed B4's variant a): a page's writeback end leaves it
	 * where it is, no rotation to the inactive tail */
	bool wb_no_rotate;
	bool no_accounting;      /* bench/ only: charge nothing (the baseline) */
	bool no_batch_uncharge;  /* bench/ only: every uncharge at once, per
				  * page (seed B3's variant c) */
#endif
};

/* The layer that owns the engine: what it is told. Every hook is optional
 * and gets the owner's one argument last. */
struct mcg_owner_ops {
	/* The OOM killer chose task id (a vm object's id) of group victim,
	 * for an OOM of over: tell its owner (before the engine reaps it). */
	void (*kill)(uint32_t id, struct mcg_group *over, struct mcg_group *victim, void *arg);
	/* An OOM starts in over: OOM notifications of its subtree fire. */
	void (*oom_event)(struct mcg_group *over, void *arg);
	/* Every CHARGE_EVENTS_TARGET (128) pages charged or uncharged on a
	 * thread: usage thresholds of g and its ancestors are due a check
	 * (§5.12). May be called with an object lock held. */
	void (*usage_event)(struct mcg_group *g, void *arg);
	/* Reclaim aimed at g scanned and reclaimed pages, its priority going
	 * down to prio (§5.14, vmpressure). */
	void (*pressure_event)(struct mcg_group *g, long scanned, long reclaimed, int prio,
			       void *arg);
	mcg_release_fn release;
	mcg_free_fn free;
};

struct mcg_owner {
	const struct mcg_owner_ops *ops;
	void *arg;
};

struct mcg_engine {
	struct mcg_machine m;
	struct mcg_env env;
	struct mcg_owner own;         /* ops never NULL (an empty table) */
	/* Reclaim asks a page's owner object to let it go; slot is the swap
	 * slot for anon/shmem pages, or SWAP_NONE for dropped page cache.
	 * false: keep the page. (vm_evict: the engine's objects own pages.) */
	bool (*evict)(uint32_t owner, uint32_t page, uint32_t slot, void *arg);
	void *evict_arg;
	pthread_rwlock_t tree_lock;   /* links, names, removed flags */
	struct mcg_group *root;
	unsigned nr_groups;           /* alive, dying and root included */
	bool tearing_down;            /* mcg_engine_free is running */
	pthread_mutex_t id_lock;      /* by_id, by_id_live, gen_next, next_id */
	/* id -> group in chunks of MCG_ID_CHUNK slots, each made when an id
	 * in it is first taken and freed when its last holder goes, so that
	 * the table costs what the live ids do (an IDR's radix nodes) */
	struct mcg_group *_Atomic *_Atomic *by_id;   /* [MCG_ID_CHUNKS] */
	unsigned short *by_id_live;   /* [MCG_ID_CHUNKS]: taken slots */
	unsigned gen_next;            /* the next group's generation (any id) */
	unsigned next_id;
	atomic_uint vm_swappiness;
	struct task_table *tasks;
	struct page_pool pages;       /* the simulated machine's memory */
	struct charge_stock *stock;   /* [cpus] */
	struct charge_throttle *throttle;
	struct swap_dev *swap;        /* the simulated swap device (swap.c) */
	struct vm_space *vm;          /* simulated tasks' and files' pages */
	struct oom_state *oom;
	struct move_state *move;      /* the move in flight, if any */
	struct wb_dev *wb;
	struct bgr_pool *bgr;         /* NULL without watermarks */
	struct soft_heap *soft;       /* the groups over their soft limits */
	struct rstat_state *rstat;    /* hierarchical statistics' flush */
	struct name_index *names;     /* (parent, name) -> live child (names.c) */
	/* with m.node_dirty_ratio: each node's dirty and writeback page cache */
	atomic_long node_dirty[PAGE_MAX_NODES];
};

/* An engine for machine m in environment env (NULL: env_real), telling
 * owner (NULL: nobody). NULL without memory or for an impossible machine. */
struct mcg_engine *mcg_engine_new(const struct mcg_machine *m, const struct mcg_env *env,
				  const struct mcg_owner *owner);
void mcg_engine_free(struct mcg_engine *e);
/* bench/'s baseline that charges nothing: compiled in only there
 * (MCG_BENCH), so the production charge path never tests it. */
static inline bool mcg_no_accounting(const struct mcg_engine *e)
{
#ifdef MCG_BENCH
	return e->m.no_accounting;
#else
	return false;
#endif
}

/* bench/'s per-page uncharge (B3's variant c): compiled in only there. */
static inline bool mcg_no_batch_uncharge(const struct mcg_engine *e)
{
#ifdef MCG_BENCH
	return e->m.no_batch_uncharge;
#else
	return false;
#endif
}

/* The engine's clock (its environment's), ns. */
static inline uint64_t mcg_now(const struct mcg_engine *e)
{
	return env_now(&e->env);
}

/* The child named name of parent, with a reference, or NULL. Removed
 * groups are invisible. */
struct mcg_group *mcg_lookup(struct mcg_engine *e, struct mcg_group *parent, const char *name);
/* What keeps inode numbers of a restarted hierarchy from naming a group
 * they never named: the next id to hand out and a generation above every
 * one handed out so far. mcg_ids_restore (before any child is created)
 * sets them back: -EINVAL for an id out of range. */
void mcg_ids_get(struct mcg_engine *e, unsigned *next_id, unsigned *gen_floor);
int mcg_ids_restore(struct mcg_engine *e, unsigned next_id, unsigned gen_floor);
/* Call fn for every live group in pre-order (parents before children),
 * with its depth (the root's is 0), all under tree_lock held for reading,
 * so that the walk sees one tree: names are stable, and fn may take a
 * reference and locks below tree_lock, never a tree function. */
void mcg_walk(struct mcg_engine *e, void (*fn)(struct mcg_group *g, unsigned depth, void *arg),
	      void *arg);
/* Walk top's subtree in pre-order, dying groups included, as the kernel's
 * mem_cgroup_iter does: the group after prev (NULL: top itself), referenced,
 * or NULL at the end. prev's reference passes to the call; a caller that
 * stops early puts the last group itself. No allocation, no lock held
 * between steps; a group reaped under the walk ends it early. */
struct mcg_group *mcg_iter(struct mcg_group *top, struct mcg_group *prev);
/* -EEXIST, -EINVAL (newline), -ENODEV (removed). */
int mcg_rename(struct mcg_engine *e, struct mcg_group *g, const char *name);

/* The group holding id, referenced, or NULL (free id, or being freed). */
struct mcg_group *mcg_by_id(struct mcg_engine *e, unsigned id);

void mcg_get(struct mcg_group *g);
void mcg_put(struct mcg_group *g);

/* Reading a group: the layers above use these, never its fields (which
 * are the engine's, internal.h). */
unsigned mcg_id(const struct mcg_group *g);
unsigned mcg_gen(const struct mcg_group *g);     /* groups that held the id before */
/* g's parent, unreferenced (a group pins its parent), NULL for the root. */
struct mcg_group *mcg_parent(const struct mcg_group *g);
/* g's name: stable while tree_lock is held (mcg_for_each_child's fn). */
const char *mcg_name(const struct mcg_group *g);
bool mcg_removed(const struct mcg_group *g);      /* rmdir'ed */
/* A counter's limit, high-water mark and failcnt, in pages; the resets of
 * memory.max_usage_in_bytes and memory.failcnt. */
long mcg_limit(const struct mcg_group *g, enum mcg_counter c);
long mcg_max_usage(const struct mcg_group *g, enum mcg_counter c);
unsigned long mcg_failcnt(const struct mcg_group *g, enum mcg_counter c);
void mcg_reset_max_usage(struct mcg_group *g, enum mcg_counter c);
void mcg_reset_failcnt(struct mcg_group *g, enum mcg_counter c);
long mcg_soft_limit(const struct mcg_group *g);
bool mcg_use_hierarchy(const struct mcg_group *g);
unsigned mcg_move_charge(const struct mcg_group *g);
bool mcg_oom_kill_disable(const struct mcg_group *g);
unsigned long mcg_oom_kills(const struct mcg_group *g);
/* g or an ancestor is under OOM (memory.oom_control's under_oom). */
bool mcg_under_oom(const struct mcg_group *g);
/* A source keeps a task stopped for g's OOM (+1) or lets it go (-1). */
void mcg_under_oom_add(struct mcg_group *g, int delta);
/* The flags a file writes as it reads them. */
enum mcg_flag { MCG_FLAG_NOTIFY_ON_RELEASE, MCG_FLAG_CLONE_CHILDREN };
bool mcg_flag(const struct mcg_group *g, enum mcg_flag f);
void mcg_set_flag(struct mcg_group *g, enum mcg_flag f, bool on);
/* Reclaim activity of g (not its subtree): [0] direct, [1] background. */
struct mcg_reclaim_counts {
	long scanned[2];
	long reclaimed[2];
	long bgr_runs;                /* background reclaim runs */
	long allocstall;              /* charges that went into direct reclaim */
};
void mcg_reclaim_counts(const struct mcg_group *g, struct mcg_reclaim_counts *out);
/* The layer above's own data of g (src/fs: its node metadata). */
void *mcg_owner_data(const struct mcg_group *g);
void mcg_set_owner_data(struct mcg_group *g, void *data);

/* g is the hierarchy's root. (The engine's own modules get an inline
 * version from internal.h: the name is parenthesised here for it.) */
bool (mcg_is_root)(const struct mcg_group *g);
/* g is top or one of its descendants (removed ones included). */
bool mcg_in_subtree(const struct mcg_group *g, const struct mcg_group *top);

/* Names of the live children, for readdir: calls fn for each under the read
 * lock (fn must not call back into the engine). */
void mcg_for_each_child(struct mcg_engine *e, struct mcg_group *g,
			void (*fn)(struct mcg_group *child, void *arg), void *arg);
unsigned mcg_nr_children(struct mcg_engine *e, struct mcg_group *g);
/* "/a/b" (the root is "/"). Returns the length or -ENAMETOOLONG. */
int mcg_path(struct mcg_engine *e, struct mcg_group *g, char *buf, size_t size);

/* min of the limits from g to the root along linked counters */
long mcg_hierarchical_limit(struct mcg_group *g, enum mcg_counter c);

unsigned mcg_swappiness(struct mcg_group *g);

/* The root's usage_in_bytes: the global formula applied to the simulated
 * machine (file pages + anon pages), in pages. */
long mcg_root_usage(struct mcg_engine *e);
/* What a usage file of counter c shows for g, in pages: its counter, or
 * for the root (no counter of its own) mcg_root_usage, plus swap in use
 * for memsw (§3.1, §3.6). */
long mcg_usage(struct mcg_group *g, enum mcg_counter c);


/* Task count bookkeeping, for task.c only. */
void mcg_note_tasks(struct mcg_group *g, long delta);

#endif
