/* engine.h: the engine's public face, the one engine header the floors
 * above include (tests/layers/check_layers.sh). Everything a charge
 * source or the file surface uses is declared here, in this order:
 *   - the engine: its machine, environment and owner (new, free);
 *   - groups: the tree, lookups, walks, references, every accessor;
 *   - what is done to a group from above: mkdir, rmdir, limits, settings;
 *   - how a charge may wait (charge_mode), charging kernel memory and a
 *     new page, and the uncharge batch;
 *   - tasks and files: VM objects and regions, touching their pages;
 *   - task membership, and moving a task's charges;
 *   - watermarks and background reclaim;
 *   - statistics: a group's own and its subtree's, reclaim's, the
 *     writeback device's, swap's;
 *   - bench/ only (MCG_BENCH): the benchmarks' instruments.
 * With it come the engine's vocabulary headers: env.h (the environment),
 * profile.h (kernel versions), page_counter.h (page size, PC_MAX), page.h
 * (page kinds, nodes), stat.h (statistics items). The engine's modules
 * implement these in their own files and declare their engine-only calls
 * in their own headers. Never does I/O, never knows about files or FUSE;
 * calls return 0 or a negative errno. */
#ifndef MEMCGFS_ENGINE_H
#define MEMCGFS_ENGINE_H

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

/* ---- The engine: its machine, environment and owner (construct.c) ---- */

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
struct uncharge_frees;
struct charge_stock;
struct swap_dev;
struct task_table;
struct move_state;
struct name_index;
struct rstat_state;
struct soft_heap;
struct zone_state;
struct blk_dev;
struct flusher;

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

/* The machine's reclaim of its zones (zone.c): off, or one of seed topic
 * 5's three policies. */
enum mcg_zone_policy {
	MCG_ZONES_OFF,
	MCG_ZONES_FIXED,         /* 2.6.3: 32 a zone, kswapd to pages_high */
	MCG_ZONES_BATCHING,      /* zone-balancing-batching: reclaim_batch */
	MCG_ZONES_ACCUMULATE,    /* the priority-shift accumulators */
};

/* Whose reclaim physics (issue 22, item 5): the waits of a kernel era,
 * chosen by a scenario; the file surface stays the profile's (kernel=).
 * What each changes is in docs/design.md, "The block device". */
enum mcg_era {
	MCG_ERA_TODAY,           /* legacy memcg reclaim waits on writeback (3.6+) */
	MCG_ERA_2_6_24,          /* congestion_wait in the memcg charge loop and
				  * in every direct reclaim's priority loop */
	MCG_ERA_2_6_39,          /* wait_iff_congested in the priority loop; */
	MCG_ERA_3_2,             /* no wait on writeback in memcg reclaim */
};

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
	/* the machine's zones and kswapd (zone.c, seed topic 5): each node
	 * a zone, node 0 tried first; off: pages come from any node with a
	 * free one, and a full machine reclaims from the root */
	enum mcg_zone_policy zones;
	long min_free_pages;     /* with zones: 0 for 2.6.3's sqrt(16 × KiB) */
	/* the machine's block device in simulated time (blkdev.c), there
	 * when either cost is: a seek, ns per page transferred, and each
	 * direction's requests (0: BLK_NR_REQUESTS; the kernel's floor of
	 * BLK_NR_REQUESTS_MIN applies) */
	uint64_t disk_seek_ns, disk_xfer_ns;
	unsigned nr_requests;
	enum mcg_era era;        /* the reclaim physics' era (0: today's) */
	/* transparent huge pages, "always" (issue 22, item 6; replays): a
	 * task's first touch of an aligned 2M of an anon region asks for a
	 * huge page (compaction, reclaim for it, fallback); the free pages
	 * are kept by pageblock (page_pool_blocks) */
	bool thp;
	/* the machine's own OOM killer (the kernel's out_of_memory with no
	 * memcg; replays, whose tasks are all simulated): when no page is
	 * free and reclaim found none, the largest task of the whole machine
	 * is killed and the allocation tries again; off, the allocation fails
	 * with ENOMEM (the daemon never kills a real process for its
	 * simulated machine) */
	bool machine_oom;
#ifdef MCG_BENCH
	/* bench/ only (seed B4's variant a): a page's writeback end leaves it
	 * where it is, no rotation to the inactive tail */
	bool wb_no_rotate;
	bool no_accounting;      /* bench/ only: charge nothing (the baseline) */
	bool no_batch_uncharge;  /* bench/ only: every uncharge at once, per
				  * page (seed B3's variant c) */
	unsigned bench_batch;    /* bench/ only: the stock's batch in pages in
				  * place of the profile's (seed B3's v3 RFC:
				  * 64 on a kernel whose counters are not
				  * hierarchical); 0: the profile's */
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

/* The floors above read m, the machine, and nothing else of it. */
struct mcg_engine {
	struct mcg_machine m;
	struct mcg_env env;
	struct mcg_owner own;         /* ops never NULL (an empty table) */
	/* Reclaim asks a page's owner object to let it go; slot is the swap
	 * slot for anon/shmem pages, or SWAP_NONE for dropped page cache.
	 * false: keep the page. (vm_evict: the engine's objects own pages.) */
	bool (*evict)(uint32_t owner, uint32_t page, uint32_t slot, void *arg);
	void *evict_arg;
	/* Compaction asks the owner to let isolated page old be page nw
	 * (vm_migrate, with evict_arg); false: keep old. */
	bool (*migrate)(uint32_t owner, uint32_t old, uint32_t nw, void *arg);
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
	struct uncharge_frees *frees; /* removed groups' structures going (uncharge.c) */
	struct swap_dev *swap;        /* the simulated swap device (swap.c) */
	struct vm_space *vm;          /* simulated tasks' and files' pages */
	struct oom_state *oom;
	struct move_state *move;      /* the move in flight, if any */
	struct wb_dev *wb;
	struct bgr_pool *bgr;         /* NULL without watermarks */
	struct soft_heap *soft;       /* the groups over their soft limits */
	struct rstat_state *rstat;    /* hierarchical statistics' flush */
	struct name_index *names;     /* (parent, name) -> live child (names.c) */
	struct zone_state *zones;     /* with m.zones: watermarks' kswapd (zone.c) */
	struct blk_dev *blk;          /* with a disk: the block device (blkdev.c) */
	struct flusher *flusher;      /* with a disk: the flusher (flusher.c) */
	struct compact_state *compact; /* with m.thp: compaction's counts */
	/* 3.2's direct reclaim wakes the flusher for the pages it scanned
	 * (wakeup_flusher_threads): reclaim, which ranks below the flusher,
	 * adds the pages and the time; the flusher takes them */
	atomic_long fl_kick;
	_Atomic uint64_t fl_kick_at;
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

/* ---- Groups: the tree, references, accessors (memcg.c) ---- */

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

/* g is the hierarchy's root. (The engine's own modules read it inline:
 * internal.h's mcg_root.) */
bool mcg_is_root(const struct mcg_group *g);
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

/* What a usage file of counter c shows for g, in pages: its counter, or
 * for the root (no counter of its own) mcg_root_usage, plus swap in use
 * for memsw (§3.1, §3.6). */
long mcg_usage(struct mcg_group *g, enum mcg_counter c);

/* ---- What is done to a group from above (memcg_policy.c) ---- */

#include "engine/engine.h"

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
/* mcg_create, the child's structures charged through the stock of cpu
 * (the creating task's, as the kernel allocates them on the CPU the
 * mkdir runs on; -1: one of the parent's choosing, as mcg_create). */
int mcg_create_on(struct mcg_engine *e, struct mcg_group *parent, const char *name, int cpu,
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
/* memory.soft_limit_in_bytes: any value (§3.4); reclaim under global
 * pressure goes to the groups furthest over it first. */
void mcg_set_soft_limit(struct mcg_group *g, long pages);
int mcg_set_swappiness(struct mcg_group *g, unsigned long long v);

int mcg_set_oom_control(struct mcg_group *g, unsigned long long v);
int mcg_set_move_charge(struct mcg_group *g, unsigned long long v);

/* ---- How a charge may wait ---- */

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

/* ---- Charging kernel memory and pages; the uncharge batch ---- */

/* Kernel memory of g's tasks (page tables, stacks; no page of ours): as
 * cgroup v1 does, it is charged to memory and memsw (with reclaim) and to
 * kmem. 0, or -ENOMEM (nothing charged). */
int charge_kmem(struct mcg_group *g, unsigned cpu, long n, struct charge_mode *mode);

/* A new page of kind for g, charged as mode says (NULL: the default), on
 * g's LRU. flags may carry PG_ACTIVE (the list it starts on), PG_DIRTY,
 * PG_MAPPED, PG_MLOCKED. Returns the page or -ENOMEM. */
long charge_new_page(struct mcg_group *g, unsigned cpu, unsigned node, enum page_kind kind,
		     uint32_t owner, uint8_t flags, struct charge_mode *mode);

/* With m.thp: a huge page of kind for g, PAGE_BLOCK (512) pages whose
 * owners are owner to owner + 511, charged at once (one reclaim, no OOM
 * kill: the fault falls back) and each on g's LRU (the engine splits a
 * huge page at once: reclaim sees its base pages); flags may carry
 * PG_ACTIVE. Returns the first page, or -ENOMEM (no huge page, counted as
 * a fallback; or the charge failed) or the charge's -EBUSY (a replay's
 * reclaim slot: the fault waits and comes again). */
long charge_new_huge(struct mcg_group *g, unsigned cpu, unsigned node, enum page_kind kind,
		     uint32_t owner, uint8_t flags, struct charge_mode *mode);

/* A batch of uncharges and page frees (an unmap, an exit), a local of the
 * caller's passed down explicitly, as the kernel passes its uncharge
 * gather: uncharges of one group are summed and applied once, and freed
 * pages go back to the pool together under one free-list lock per node
 * (as release_pages does), at charge_batch_end, when the group changes or
 * when the list is full. */
#define CHARGE_BATCH_FREE 64

struct charge_batch {
	struct mcg_engine *e;
	struct mcg_group *g;          /* referenced while pages are pending */
	long pages;
	long memsw;
	int nfree;
	uint32_t free[CHARGE_BATCH_FREE];   /* released, not yet in the pool */
};

void charge_batch_begin(struct charge_batch *b, struct mcg_engine *e);

void charge_batch_end(struct charge_batch *b);

/* Free a page: off the LRU, statistics, uncharge, into b (NULL: at once). */
void charge_free_page(struct mcg_engine *e, uint32_t idx, struct charge_batch *b);

/* Pages currently parked in stocks, for the invariant checker. */
long charge_stocked(struct mcg_engine *e, struct mcg_group *g);

/* Kernel memory of g's tasks goes back (charge_kmem's): kmem, memory and
 * memsw; a removed group whose last charge it was is reaped. */
void uncharge_kmem(struct mcg_group *g, long n);
/* Wait until the structures of every group reaped so far have gone (their
 * mkdir charges off their parents: uncharge.c frees them two of the host
 * kernel's grace periods after the reap). */
void uncharge_frees_wait(struct mcg_engine *e);

static inline unsigned charge_reclaim_slots(unsigned cpus)
{
	return cpus / 4 + 1;
}

/* ---- Tasks and files: objects, regions, their pages (vm.c, vm_fault.c) ---- */

/* A task's address space or a file. Its lock guards its regions' slots. */
struct vm_object {
	struct mcg_engine *eng;
	pthread_mutex_t lock;
	struct mcg_group *g;          /* the group it charges (referenced) */
	bool is_task;
	bool real;                    /* stand-ins for a real process's memory:
				       * its anon and shmem cannot go to the
				       * simulated swap (the real pages stay) */
	atomic_bool unkillable;       /* never an OOM victim (PID 1,
				       * oom_score_adj -1000, enforce=none) */
	atomic_uint evicted;          /* pages reclaim took from this object:
				       * the mirror pages out real ranges */
	atomic_bool dead;             /* killed or being torn down: no faults */
	atomic_int refs;              /* the owner's, plus OOM's while it looks */
	uint32_t id;                  /* caller's number (a task id) */
	struct vm_region *regions;
	struct vm_object *next, *prev; /* the engine's list of objects */
	atomic_long resident;         /* pages mapped by its regions */
	atomic_long swapped;
	struct charge_mode *mode;     /* how its faults charge (NULL: the
				       * default); the owner's, set once */
	/* with the machine's disk (flusher.c), under the object's lock: a
	 * file's first dirtying since it was clean (0: clean) and where its
	 * writeback goes on from; a task's pages dirtied since its last
	 * balance_dirty_pages */
	uint64_t dirtied_when;
	uint32_t wb_index;
	unsigned nr_dirtied;
};

struct vm_region {
	struct vm_object *obj;
	enum page_kind kind;
	uint32_t vbase;               /* first virtual page number */
	uint32_t npages;
	uint32_t nchunks;
	_Atomic uint32_t *slot;       /* [npages] */
	struct vm_region *next;       /* in obj->regions */
	struct vm_region *file;       /* a task's file mapping: the file's region */
	uint32_t file_off;
	bool mapped;                  /* shmem its owner maps (vm_region_set_mapped) */
};

struct vm_object *vm_object_new(struct mcg_engine *e, struct mcg_group *g, bool is_task, uint32_t id);

/* A file of the page cache: an object owned by no task whose one region of
 * pages file pages is charged to whoever touches a page first. 0 and both
 * set, or -ENOMEM with nothing made. */
int vm_file_new(struct mcg_engine *e, uint32_t pages, struct vm_object **obj, struct vm_region **r);
/* The same for a file of tmpfs (a memfd, a SysV segment): its pages are
 * shmem, swap-backed, on the anon lists. */
int vm_shmem_file_new(struct mcg_engine *e, uint32_t pages, struct vm_object **obj,
		      struct vm_region **r);

/* The owner is done with o: frees every region (pages, slots, shadows)
 * and drops the owner's reference. No fault of o may be in flight, and no
 * mapping of o's file regions may remain. */
void vm_object_free(struct vm_object *o);

void vm_object_pin(struct vm_object *o);

void vm_object_unpin(struct vm_object *o);

/* How o's faults charge under oom_kill_disable (charge.h; NULL: wait).
 * Set before o charges anything; mode stays the owner's, and the owner
 * serialises o's faults when the mode has an out field to read. */
void vm_object_set_mode(struct vm_object *o, struct charge_mode *mode);

/* Charge future faults to g (a task moved groups). */
void vm_object_set_group(struct vm_object *o, struct mcg_group *g);

/* A region of npages of kind in o. -ENOMEM, -EINVAL. */
int vm_region_new(struct vm_object *o, enum page_kind kind, uint32_t npages, struct vm_region **out);

/* r (shmem of its owner) is mapped by the owner: its pages count as
 * mapped_file from their fault on, as a shmem page a process faults
 * through its mapping does. Set before r's first fault. */
void vm_region_set_mapped(struct vm_region *r);

/* A task's mapping of [off, off + npages) of a file's region. */
int vm_map_file(struct vm_object *task, struct vm_region *file, uint32_t off, uint32_t npages,
		struct vm_region **out);

void vm_region_free(struct vm_region *r);

/* Drop virtual page i (munmap of one page, or truncate for a file), its
 * uncharge gathered into b (charge.h; NULL: at once). */
void vm_discard(struct vm_region *r, uint32_t i, struct charge_batch *b);

/* Page i of r is in memory now (not empty, not swapped out). A racy read:
 * a concurrent fault or eviction may change it the next moment. */
bool vm_resident(const struct vm_region *r, uint32_t i);

/* mlock/munlock a resident page. */
void vm_mlock(struct vm_region *r, uint32_t i, bool lock);

/* Page i of a file's region r is mapped by some task, or by none any
 * more (mapped_file follows mappings). No-op when it is not resident. */
void vm_set_mapped(struct vm_region *r, uint32_t i, bool mapped);

/* Page i of a file's region r was dirtied (write(2), a store through a
 * shared mapping) or cleaned (written back, truncated) outside the
 * engine: dirty follows the real page's. No-op when it is not resident. */
void vm_set_dirty(struct vm_region *r, uint32_t i, bool dirty);

/* Make a resident page unevictable (PG_UNEVICTABLE) or evictable again:
 * reclaim passes it by. For stand-ins of real pages the real kernel would
 * not page out for us (the mirror's pageout back-off). */
void vm_pin(struct vm_region *r, uint32_t i, bool pin);

/* What a touch did, for statistics and tests. */
enum vm_fault {
	VM_HIT,        /* already resident */
	VM_MINOR,      /* new page (anon zero page, or file page in cache) */
	VM_MAJOR,      /* read in: swap-in, or a file page not in cache */
	VM_REFAULT,    /* a major fault that hit a shadow: it was evicted recently */
	VM_HUGE,       /* a transparent huge page: PAGE_BLOCK new pages at once */
};

/* Access virtual page i of r from simulated CPU cpu: fault it in if needed
 * (charging r's object's group, or for file pages the toucher's), mark it
 * referenced, dirty on write. 0 with *fault set, or -ENOMEM. */
int vm_touch(struct vm_region *r, uint32_t i, unsigned cpu, bool write, enum vm_fault *fault);

/* The same for task who, r being any region (a file's own: read(2) or
 * write(2) through the page cache, no mapping): charged to who's group,
 * as who's fault (its mode; -EFAULT once who is dead). */
int vm_touch_by(struct vm_object *who, struct vm_region *r, uint32_t i, unsigned cpu, bool write,
		enum vm_fault *fault);

/* ---- Task membership (task.c) ---- */

/* Put thread tid (of thread group tgid) into g. watch is an opaque number
 * the daemon ties to the thread (its pidfd), stored with a new entry. *drop
 * receives the number the table no longer holds and the caller must
 * release: watch itself when the thread was already tracked (or stays in
 * the root), the old entry's one when the thread returns to the root, else
 * -1. Moving into the current group succeeds. -ENODEV when g was removed,
 * -ENOMEM. */
int task_attach(struct mcg_engine *e, pid_t tid, pid_t tgid, struct mcg_group *g,
		int watch, int *drop);

/* Forget an exited thread whose entry still holds watch. 0, or -ENOENT. */
int task_exit(struct mcg_engine *e, pid_t tid, int watch);

/* The group of tid, referenced (mcg_put it). The root for untracked ones. */
struct mcg_group *task_group(struct mcg_engine *e, pid_t tid);

bool task_in_child(struct mcg_engine *e, pid_t tid);
/* The process of thread TID in a child group, 0 if it is in none. */
pid_t task_tgid(struct mcg_engine *e, pid_t tid);

/* Sorted thread ids of g (a non-root group), malloc'ed into *out. Returns
 * the count or -ENOMEM. With tgids, the thread group ids instead, sorted
 * and without duplicates. */
long task_list(struct mcg_engine *e, struct mcg_group *g, bool tgids, pid_t **out);

/* ---- Moving a task's charges (move.c) ---- */

#define MOVE_ANON 1u   /* anon pages and their swap entries */

#define MOVE_FILE 2u   /* file and shmem pages the task maps */

struct move_stats {
	long pages;        /* resident pages moved */
	long swap;         /* swap entries moved */
	long counter_ops;  /* page-counter levels touched (charge + uncharge) */
};

/* Move task o's charges selected by mask from the group they are charged
 * to (o's group) to dst, and make dst o's group. Pages charged elsewhere
 * (shared page cache first touched by another group) stay. 0, -ENODEV when
 * dst was removed (nothing moved), or -ENOMEM
 * when dst cannot take them even after reclaim: then nothing moved, and o
 * stays in its group. */
int move_charges(struct vm_object *o, struct mcg_group *dst, unsigned mask, struct move_stats *st);

/* ---- Watermarks and background reclaim (bgreclaim.c) ---- */

enum bgr_mark { BGR_HIGH, BGR_LOW };

/* Effective watermark in pages (PC_MAX at the root or without a limit). */
long bgr_wmark(struct mcg_group *g, enum bgr_mark m);

/* The explicit watermark in pages, or -1 when it is automatic. */
long bgr_wmark_explicit(struct mcg_group *g, enum bgr_mark m);

/* Set a watermark (pages), or return it to automatic. -EINVAL at the root,
 * above the limit, or against the other explicit watermark. */
int bgr_set_wmark(struct mcg_group *g, enum bgr_mark m, long pages, bool automatic);

/* An environment without workers (replay): one batch of background
 * reclaim for the first queued group, timed by the environment's clock. 1 when it did something (the caller
 * charges the scanning to its simulated reclaimer), 0 when nothing is due
 * (*next_due: when delayed work is, or UINT64_MAX). */
int bgr_step(struct mcg_engine *e, uint64_t *next_due);

/* with m.watermarks; workers start with the first work */
void bgr_destroy(struct mcg_engine *e);

/* ---- The machine's zones and kswapd (zone.c) ---- */

/* An environment without workers (replay), with m.zones: one pass of
 * kswapd's balance at its next priority. 1 when a pass ran (the caller
 * charges its scanning to its simulated kswapd), 0 when kswapd sleeps. */
int mcg_kswapd_step(struct mcg_engine *e);

/* With workers: stop kswapd's thread and wait for it (for good: later
 * wakes start nothing). Before what its reclaim reaches goes away (the
 * owner's usage hooks); mcg_engine_free does it too. */
void mcg_kswapd_stop(struct mcg_engine *e);

/* A policy by its name: off, fixed, batching or accumulate. 0 or -EINVAL. */
int mcg_zone_policy_parse(const char *name, enum mcg_zone_policy *policy);

struct mcg_zone_counts {
	long size, free, min, low, high, batch;   /* pages */
	long scan_direct, scan_kswapd, steal_direct, steal_kswapd;
	long allocstall, pageoutrun, kswapd_wakeups;   /* the machine's */
	long balances_done;    /* kswapd's balances ended (pageoutrun: begun) */
};

/* Zone (node) n's watermarks and counts; the reclaim counts are 0 without
 * m.zones. */
void mcg_zone_counts(struct mcg_engine *e, unsigned n, struct mcg_zone_counts *zc);

/* ---- The machine's block device (blkdev.c, simulated time) ---- */

enum blk_dir { BLK_READ, BLK_WRITE };

#define BLK_POS_NONE UINT64_MAX        /* a request that follows nothing */
#define BLK_NR_REQUESTS 128            /* BLKDEV_MAX_RQ: a direction's requests */
#define BLK_NR_REQUESTS_MIN 4          /* BLKDEV_MIN_RQ */
#define BLK_NR_REQUESTS_MAX 65536
#define BLK_MAX_REQ_PAGES 128          /* BLK_DEF_MAX_SECTORS, 1024 × 512 B */
#define BLK_CONGESTION_WAIT_NS 100000000ull   /* congestion_wait(.., HZ/10) */

struct blk_io {
	uint64_t go;     /* the submitter may go on: now, or later when its
			  * direction's requests were all in flight */
	uint64_t done;   /* its last page is written (read) */
};

struct blk_counts {
	long reads, writes;            /* pages */
	long requests, seq;            /* requests; those that paid no seek */
	long merges;                   /* submissions merged into a waiting request */
	long full_waits;               /* submitters that found the queue full */
	long naps, naps_early;         /* congestion waits; ended by a write */
	uint64_t busy_ns, full_wait_ns, nap_ns;
	unsigned nr_requests, congestion_on, congestion_off;
};

/* Submit pages pages from device page pos (below 2^62; BLK_POS_NONE: a
 * place nothing follows, so it pays a seek; a request at pos + pages, the
 * next one of a long submission included, pays none) in direction dir
 * at time now: 0 and *io, -ENODEV without a device, -EINVAL. */
int blk_submit(struct mcg_engine *e, uint64_t now, enum blk_dir dir, uint64_t pos, long pages,
	       struct blk_io *io);
/* dir's requests in flight at now reach its congestion threshold
 * (bdi_write_congested for BLK_WRITE). false without a device. */
bool blk_congested(struct mcg_engine *e, uint64_t now, enum blk_dir dir);
/* congestion_wait(WRITE, timeout) at now: when the nap ends, at most
 * now + timeout, earlier when writes in flight drop below the congestion
 * threshold (the first write completion if they are below it). */
uint64_t blk_congestion_wait(struct mcg_engine *e, uint64_t now, uint64_t timeout);
/* The device's counts and queue geometry (all 0 without one). */
void blk_counts(struct mcg_engine *e, struct blk_counts *c);

/* ---- The flusher and dirty throttling (flusher.c, with a disk) ---- */

/* An environment without workers (replay): when the flusher is due next
 * (its periodic wake, or when balance_dirty_pages wanted it), UINT64_MAX
 * without a disk. */
uint64_t mcg_flusher_due(struct mcg_engine *e);
/* One pass of the flusher at the environment's now: the files dirtied
 * more than dirty_expire (30 s) ago, and more while the dirty pages are
 * over the background threshold, written from where each file's
 * writeback stopped, at most MAX_WRITEBACK_PAGES (1024) a file a round;
 * the next periodic wake is dirty_writeback_interval (5 s) on. */
void mcg_flusher_step(struct mcg_engine *e);

struct mcg_flusher_counts {
	long written;          /* pages the flusher wrote */
	long passes;
	long throttled;        /* balance_dirty_pages holding a writer */
	long throttle_written; /* pages writers wrote themselves (<= 3.1) */
	uint64_t pause_ns;     /* writers' time held */
	long bg_thresh, thresh; /* the thresholds at the last check, pages */
	long kicked;           /* pages 3.2's direct reclaim asked it for */
	long kick_written;     /* of which written (what was dirty) */
};

void mcg_flusher_counts(struct mcg_engine *e, struct mcg_flusher_counts *c);

/* Huge pages and compaction (m.thp), the kernel's vmstat names. */
struct mcg_compact_counts {
	long thp_fault_alloc, thp_fault_fallback;
	long compact_stall, compact_success, compact_fail;
	long compact_pages_moved;      /* pages migrated */
	long compact_move_failed;      /* pages met that could not move
					* (dirty for asynchronous compaction,
					* under writeback) */
	long reclaim_for_order;        /* direct reclaims for a huge page */
};

/* All 0 without m.thp. */
void mcg_compact_counts(struct mcg_engine *e, struct mcg_compact_counts *c);

/* An era by its name: today, 2.6.24, 2.6.39 or 3.2. 0 or -EINVAL. */
int mcg_era_parse(const char *name, enum mcg_era *era);

/* ---- Statistics (stat.c, rstat.c, reclaim.c, writeback.c, swap.c) ---- */

/* Subtree sums of g, as of now: flushed first if anything under it
 * changed. The event items keep what reaped groups counted, as the
 * kernel's do. */
long rstat_item(struct mcg_group *g, enum stat_item it);

long rstat_lru(struct mcg_group *g, enum stat_lru l, int node);   /* node < 0: all */

/* A group's own values (its subtree's sums are rstat.h's rstat_item and
 * rstat_lru). */
long stat_local(const struct mcg_group *g, enum stat_item it);

/* LRU sizes in pages; node < 0 means all nodes. */
long stat_lru_local(const struct mcg_group *g, enum stat_lru l, int node);

/* Pages reclaim scanned and stole from g (not its subtree) on node. */
void reclaim_node_counts(struct mcg_group *g, unsigned node, long *scanned, long *stolen);

/* Pages in flight, completed, rotated, and reclaimed at completion. */
void wb_counts(struct mcg_engine *e, long *inflight, long *done, long *rotated, long *immediate);

void wb_immediate_counts(struct mcg_engine *e, long *marked, long *listed, long *rescued);

/* Pages swapped out so far (a cost model's I/O count). */
long swap_outs(struct mcg_engine *e);

#ifdef MCG_BENCH
/* ---- bench/ only: the instruments of the benchmarks ---- */

/* bench/ only (seed B3): this thread's charges that reached the charge
 * path (not the root's, not without accounting) and those the stock
 * served, since the last call, which resets them. */
struct charge_bench_counts {
	long charges, stock_hits;
};
void charge_bench_take(struct charge_bench_counts *out);

/* The sum over CPUs of the largest stock each held since the last call
 * (which resets them): a bound on the pages charged ahead of use at any
 * one moment (seed B3). */
long charge_bench_stock_max(struct mcg_engine *e);

/* bench/ only: the same move done as the 2009 code did before batching, a
 * try-charge of the whole hierarchy and an uncharge per page (the
 * baseline bench_move measures against). */
int move_charges_naive(struct vm_object *o, struct mcg_group *dst, unsigned mask,
		       struct move_stats *st);
#endif

#endif
