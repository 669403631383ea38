/* replay.c: the scenario language of docs/replay.md and its deterministic
 * scheduler. One engine per run, a simulated clock, a seeded xorshift RNG,
 * and always the task that is due first (ties by declaration order) runs
 * one step. Owns the simulated machine's time model: CPUs, the disk that
 * serves reads and swap writes one at a time, the groups' LRU locks in
 * simulated time. Never reads the real clock, never blocks (OOM waits
 * become retries one simulated millisecond later). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "replay/replay.h"
#include "source/workload.h"

#define RP_MAX       64           /* groups, files, tasks */
#define RP_STEP      64           /* pages touched per scheduling step */
#define RP_DEPTH     8            /* nested repeats */
#define RP_MAX_STEPS 50000000L
#define RP_SLICE     1000000ull   /* compute runs in 1 ms slices */
#define RP_SLOTS     8            /* throttle slots per group, at most */

enum rp_state { T_RUNNING, T_EXITED, T_KILLED };

struct rp_task {
	char name[WL_NAME];
	struct mcg_group *g;
	uint64_t ready;
	enum rp_state state;
	struct wl_op *ops;
	int nops, cap, pc;
	int rsp;
	long rleft[RP_DEPTH];
	struct wl_task wl;
	long stalls;
	long throttled;               /* waits for a direct-reclaim slot */
	uint64_t end;                 /* when it exited or was killed */
	uint64_t compute_left;        /* of the current compute op */
};

/* Direct-reclaim slots of one group in simulated time: each is free from
 * its time on (UINT64_MAX: held by the step running now). */
struct rp_slots {
	unsigned id;
	uint64_t until[RP_SLOTS];
};

struct rp_group {
	char path[256];
	struct mcg_group *g;
};

struct rp_file {
	char name[WL_NAME];
	struct vm_object *obj;
	struct vm_region *r;
};

struct rp_at {
	uint64_t t;
	int group;
	char key[WL_NAME], val[64];
	int line;
};

struct rp {
	struct mcg_engine *e;
	FILE *out, *err;
	int line;
	uint64_t rng;
	uint64_t now;
	struct wl_costs cost;
	uint64_t every, until;
	struct rp_group grp[RP_MAX];
	int ngrp;
	struct rp_file file[RP_MAX];
	int nfile;
	struct rp_task task[RP_MAX];
	int ntask;
	struct rp_at at[RP_MAX];
	int nat, next_at;
	struct mcg_machine m;
	uint64_t stall;               /* writeback waits not yet given to a task */
	bool machine_done;
	/* the cost model's reclaim side and the CPU model (docs/replay.md) */
	bool wmarks, throttle, cpu_model;
	uint64_t scan_ns, swapout_ns;
	uint64_t migrate_ns;          /* CPU time of a page compaction moves */
	uint64_t cpu_free[256];       /* when each simulated CPU is free */
	uint64_t step_cpu;            /* CPU time of the step running now */
	uint64_t cpu_busy;            /* ns of CPU used: work, scanning, spinning */
	uint64_t cpu_reclaim;         /* of which reclaim's: scanning, spinning */
	/* the simulated background reclaimer */
	bool bg_active;
	uint64_t bg_ready;
	/* the simulated kswapd (zones=): woken when the engine's count of
	 * wakeups moves, asleep once a pass finds every zone balanced */
	bool ks_active;
	uint64_t ks_ready;
	/* the simulated flusher (with a disk): free again after its last
	 * pass's waits */
	uint64_t fl_free;
	long ks_wakeups;
	/* throttled direct reclaim */
	struct rp_slots slots[RP_MAX];
	int nslots;
	uint64_t *held[RP_MAX];       /* slots taken by the step running now */
	int nheld;
	bool step_throttled;
	uint64_t throttle_until;
	/* the disk (disk_seek/disk_rate): the engine's block device (blkdev.c)
	 * takes the reads of major faults and the swap writes; a read that
	 * does not follow the previous access pays a seek */
	bool disk;
	/* during a step: the reclaim scan marks it started from (rp_clock) */
	const long *clock_mark;
	int clock_who;
	bool read_pending;               /* the step ended on a major fault */
	const struct vm_region *pend_r;  /* of page pend_page of pend_r */
	uint32_t pend_page;
	long reads, seq_reads, swap_writes;
	uint64_t io_wait;                /* ns */
	/* LRU locks in simulated time (lru_lock=1): each group's scanning
	 * runs under its lock, one reclaimer at a time, spinning on the CPU */
	bool lru_lock;
	uint64_t lock_free[RP_MAX];      /* when each group's lock is free */
	uint64_t lock_spin;              /* ns spent waiting for a lock */
	char tmp[64];
};

static int rp_fail(struct rp *rp, const char *fmt, ...)
{
	va_list ap;

	fprintf(rp->err, "replay: line %d: ", rp->line);
	va_start(ap, fmt);
	vfprintf(rp->err, fmt, ap);
	va_end(ap);
	fputc('\n', rp->err);
	return -EINVAL;
}

static int rp_find_group(struct rp *rp, const char *path)
{
	for (int i = 0; i < rp->ngrp; i++)
		if (!strcmp(rp->grp[i].path, path))
			return i;
	return -1;
}

static struct rp_task *rp_find_task(struct rp *rp, const char *name)
{
	for (int i = 0; i < rp->ntask; i++)
		if (!strcmp(rp->task[i].name, name))
			return &rp->task[i];
	return NULL;
}

static struct vm_region *rp_file_region(void *arg, const char *name)
{
	struct rp *rp = arg;

	for (int i = 0; i < rp->nfile; i++)
		if (!strcmp(rp->file[i].name, name))
			return rp->file[i].r;
	return NULL;
}

/* The engine asks for a direct-reclaim slot on over: at most ncpus/4 + 1
 * steps reclaim on one group at a time, in simulated time. A refused step
 * waits until the first slot is free, then retries its charge. */
static bool rp_throttle_slot(struct mcg_group *over, void *arg)
{
	struct rp *rp = arg;
	unsigned max = charge_reclaim_slots(rp->m.cpus);
	struct rp_slots *sl = NULL;
	uint64_t first = UINT64_MAX;

	for (int i = 0; i < rp->nslots && !sl; i++)
		if (rp->slots[i].id == mcg_id(over))
			sl = &rp->slots[i];
	if (!sl) {
		if (rp->nslots == RP_MAX)
			return true;          /* more groups than tracked: unthrottled */
		sl = &rp->slots[rp->nslots++];
		*sl = (struct rp_slots){ .id = mcg_id(over) };
	}
	if (max > RP_SLOTS)
		max = RP_SLOTS;
	/* a slot taken reads UINT64_MAX until its step ends, and only the
	 * running step holds slots */
	for (unsigned i = 0; i < max; i++)
		if (sl->until[i] == UINT64_MAX)
			return true;      /* this step holds one already */
	for (unsigned i = 0; i < max; i++) {
		if (sl->until[i] <= rp->now && rp->nheld < RP_MAX) {
			sl->until[i] = UINT64_MAX;
			rp->held[rp->nheld++] = &sl->until[i];
			return true;
		}
		if (sl->until[i] < first)
			first = sl->until[i];
	}
	rp->step_throttled = true;
	rp->throttle_until = first;
	return false;
}

/* (below: the environment and owner the simulated machine runs in) */
static const struct mcg_env_ops rp_env_ops;
static const struct mcg_owner_ops rp_owner_ops;

static int rp_machine(struct rp *rp)
{
	if (rp->machine_done)
		return 0;
	rp->machine_done = true;
	rp->m.watermarks = rp->wmarks;
	/* every task is simulated: a machine out of memory kills one, as the
	 * kernel's global OOM killer does, rather than leaving the task that
	 * ran out retrying until another exits */
	rp->m.machine_oom = true;
	/* one thread and no workers: the simulated reclaimer runs background
	 * reclaim (bgr_step), and nothing waits */
	rp->e = mcg_engine_new(&rp->m, &(struct mcg_env){ &rp_env_ops, rp },
			       &(struct mcg_owner){ &rp_owner_ops, rp });
	if (!rp->e)
		return rp_fail(rp, "cannot build the simulated machine");
	rp->grp[0] = (struct rp_group){ "/", rp->e->root };
	mcg_get(rp->e->root);
	rp->ngrp = 1;
	return 0;
}

static int rp_set(struct rp *rp, struct mcg_group *g, const char *key, const char *val)
{
	long pages;

	if (!strcmp(key, "limit") || !strcmp(key, "memsw")) {
		if ((pages = wl_pages(val)) < 0 && strcmp(val, "-1"))
			return rp_fail(rp, "bad size %s", val);
		return mcg_set_limit(g, key[0] == 'l' ? MCG_MEM : MCG_MEMSW,
				     strcmp(val, "-1") ? pages : PC_MAX, NULL, NULL) ?
			rp_fail(rp, "%s=%s refused", key, val) : 0;
	}
	if (!strcmp(key, "high") || !strcmp(key, "low")) {
		bool automatic = !strcmp(val, "-1");

		if (!rp->wmarks)
			return rp_fail(rp, "%s= needs machine watermarks=1", key);
		if ((pages = wl_pages(val)) < 0 && !automatic)
			return rp_fail(rp, "bad size %s", val);
		return bgr_set_wmark(g, key[0] == 'h' ? BGR_HIGH : BGR_LOW, pages, automatic) ?
			rp_fail(rp, "%s=%s refused", key, val) : 0;
	}
	if (!strcmp(key, "swappiness"))
		return mcg_set_swappiness(g, strtoull(val, NULL, 10)) ? rp_fail(rp, "bad swappiness") : 0;
	if (!strcmp(key, "oom_kill_disable"))
		return mcg_set_oom_control(g, strtoull(val, NULL, 10)) ? rp_fail(rp, "bad oom_kill_disable") : 0;
	return rp_fail(rp, "unknown group setting %s", key);
}

static int rp_parse_op(struct rp *rp, struct rp_task *t, char **argv, int argc)
{
	struct wl_op op;
	char msg[128];

	if (wl_parse(argv, argc, &op, msg, sizeof(msg)))
		return rp_fail(rp, "%s", msg);
	op.line = rp->line;
	if (op.code == WL_END) {
		int depth = 0;

		for (int i = t->nops - 1; i >= 0 && op.match < 0; i--) {
			if (t->ops[i].code == WL_END)
				depth++;
			else if (t->ops[i].code == WL_REPEAT && depth-- == 0)
				op.match = i;
		}
		if (op.match < 0)
			return rp_fail(rp, "end without repeat");
		t->ops[op.match].match = t->nops;
	}
	if (t->nops == t->cap) {
		struct wl_op *n = realloc(t->ops, (size_t)(t->cap = t->cap ? t->cap * 2 : 16) * sizeof(*n));

		if (!n)
			return rp_fail(rp, "out of memory");
		t->ops = n;
	}
	t->ops[t->nops++] = op;
	return 0;
}
/* machine's node_mem=SIZE,SIZE,...: each node's memory, adding up to the
 * machine's (nodes and memory follow from it when not given). */
static int rp_node_mem(struct rp *rp, char **argv, int argc, const char *v)
{
	char list[256], *nsave = NULL, *nw;
	long p;
	unsigned n = 0;
	long sum = 0;

	snprintf(list, sizeof(list), "%s", v);
	for (nw = strtok_r(list, ",", &nsave); nw; nw = strtok_r(NULL, ",", &nsave)) {
		if (n == 64 || (p = wl_pages(nw)) <= 0)
			return rp_fail(rp, "node_mem: SIZE,SIZE,... (one per node)");
		sum += rp->m.node_pages[n++] = p;
	}
	if (!wl_arg(argv, argc, "nodes"))
		rp->m.nodes = n;
	if (!wl_arg(argv, argc, "memory"))
		rp->m.mem_pages = sum;
	if (n != rp->m.nodes || sum != rp->m.mem_pages)
		return rp_fail(rp, "node_mem must give each of the nodes, adding up to memory");
	return 0;
}

/* machine key=value...: the simulated machine, its costs and policies (first) */
static int rp_st_machine(struct rp *rp, char **argv, int argc)
{
	const char *v;
	long p;

	if (rp->machine_done)
		return rp_fail(rp, "machine must come first");
	if ((v = wl_arg(argv, argc, "memory")) && (p = wl_pages(v)) > 0)
		rp->m.mem_pages = p;
	if ((v = wl_arg(argv, argc, "swap")) && (p = wl_pages(v)) >= 0)
		rp->m.swap_pages = p;
	if ((v = wl_arg(argv, argc, "cpus")))
		rp->m.cpus = (unsigned)strtoul(v, NULL, 10);
	if ((v = wl_arg(argv, argc, "nodes")))
		rp->m.nodes = (unsigned)strtoul(v, NULL, 10);
	if ((v = wl_arg(argv, argc, "writeback")) && (p = wl_pages(v)) > 0)
		rp->m.wb_pages_per_s = p;       /* per second */
	if ((v = wl_arg(argv, argc, "wb_latency")) && wl_time(v, &rp->m.wb_latency_ns))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "immediate")))
		rp->m.immediate_reclaim = strtoul(v, NULL, 10) != 0;
	if ((v = wl_arg(argv, argc, "immediate_list")))
		rp->m.immediate_list = strtoul(v, NULL, 10) != 0;
	if ((v = wl_arg(argv, argc, "dirty_ratio")))
		rp->m.node_dirty_ratio = (unsigned)strtoul(v, NULL, 10);
	if ((v = wl_arg(argv, argc, "wb_rotate")) && !strcmp(v, "0")) {
#ifdef MCG_BENCH
		rp->m.wb_no_rotate = true;
#else
		return rp_fail(rp, "wb_rotate=0 exists only in the benchmarks' build");
#endif
	}
	if ((v = wl_arg(argv, argc, "kernel")) && prof_parse(v, &rp->m.prof))
		return rp_fail(rp, "unsupported kernel=%s", v);
	if ((v = wl_arg(argv, argc, "watermarks")))
		rp->wmarks = strtoul(v, NULL, 10) != 0;
	if ((v = wl_arg(argv, argc, "throttle")))
		rp->throttle = strtoul(v, NULL, 10) != 0;
	if ((v = wl_arg(argv, argc, "cpu_model")))
		rp->cpu_model = strtoul(v, NULL, 10) != 0;
	if ((v = wl_arg(argv, argc, "lru_lock")))
		rp->lru_lock = strtoul(v, NULL, 10) != 0;
	if ((v = wl_arg(argv, argc, "disk_seek")) && wl_time(v, &rp->m.disk_seek_ns))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "disk_rate"))) {
		if ((p = wl_pages(v)) <= 0)
			return rp_fail(rp, "bad disk_rate %s", v);
		rp->m.disk_xfer_ns = 1000000000ull / (uint64_t)p;   /* per page */
	}
	if ((v = wl_arg(argv, argc, "nr_requests"))) {
		char *end;
		unsigned long n = strtoul(v, &end, 10);

		if (*end || n < 1 || n > BLK_NR_REQUESTS_MAX)
			return rp_fail(rp, "bad nr_requests %s (1 to %d)", v, BLK_NR_REQUESTS_MAX);
		rp->m.nr_requests = (unsigned)n;
	}
	rp->disk = rp->m.disk_seek_ns || rp->m.disk_xfer_ns;
	if ((v = wl_arg(argv, argc, "node_mem")) && rp_node_mem(rp, argv, argc, v))
		return -EINVAL;
	if ((v = wl_arg(argv, argc, "era")) && mcg_era_parse(v, &rp->m.era))
		return rp_fail(rp, "era=today|2.6.24|2.6.39|3.2");
	if ((v = wl_arg(argv, argc, "zones")) && mcg_zone_policy_parse(v, &rp->m.zones))
		return rp_fail(rp, "zones=off|fixed|batching|accumulate");
	if ((v = wl_arg(argv, argc, "min_free"))) {
		if ((p = wl_pages(v)) <= 0 || p >= rp->m.mem_pages)
			return rp_fail(rp, "bad min_free %s (more than 0, less than memory)", v);
		rp->m.min_free_pages = p;
	}
	/* per-node dirty limits (3.3's, node_dirty_ok since 4.8) are on where
	 * the era has them, today's, at vm_dirty_ratio (20 %), given a disk
	 * (the flusher's dirty page cache); dirty_ratio=0 turns them off */
	if (!wl_arg(argv, argc, "dirty_ratio") && rp->m.era == MCG_ERA_TODAY && rp->disk)
		rp->m.node_dirty_ratio = 20;
	if ((v = wl_arg(argv, argc, "thp"))) {
		if (strcmp(v, "always") && strcmp(v, "never"))
			return rp_fail(rp, "thp=always|never");
		rp->m.thp = !strcmp(v, "always");
	}
	if (rp->m.cpus < 1 || rp->m.cpus > 256 || rp->m.nodes < 1 || rp->m.nodes > 64)
		return rp_fail(rp, "cpus 1..256, nodes 1..64");
	return rp_machine(rp);
}

/* cost key=TIME...: simulated time of a touch, a fault, a major fault, a scan, a swap-out */
static int rp_st_cost(struct rp *rp, char **argv, int argc)
{
	const char *v;

	if ((v = wl_arg(argv, argc, "touch")) && wl_time(v, &rp->cost.touch))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "fault")) && wl_time(v, &rp->cost.fault))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "major")) && wl_time(v, &rp->cost.major))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "scan")) && wl_time(v, &rp->scan_ns))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "swapout")) && wl_time(v, &rp->swapout_ns))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "migrate")) && wl_time(v, &rp->migrate_ns))
		return rp_fail(rp, "bad time %s", v);
	return 0;
}

/* print every=TIME until=TIME: the timeline's rows */
static int rp_st_print(struct rp *rp, char **argv, int argc)
{
	const char *v;

	if ((v = wl_arg(argv, argc, "every")) && (wl_time(v, &rp->every) || !rp->every))
		return rp_fail(rp, "bad time %s", v);
	if ((v = wl_arg(argv, argc, "until")) && wl_time(v, &rp->until))
		return rp_fail(rp, "bad time %s", v);
	return 0;
}

/* group /PATH key=value...: a group and its settings */
static int rp_st_group(struct rp *rp, char **argv, int argc)
{
	char *slash = strrchr(argv[1], '/');
	char parent[256];
	int pi;
	struct mcg_group *g = NULL;

	if (argv[1][0] != '/' || !slash || !slash[1] || rp->ngrp == RP_MAX ||
	    strlen(argv[1]) >= sizeof(parent))
		return rp_fail(rp, "group /PATH (at most %d groups)", RP_MAX - 1);
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - argv[1]), argv[1]);
	if ((pi = rp_find_group(rp, slash == argv[1] ? "/" : parent)) < 0)
		return rp_fail(rp, "parent of %s not declared", argv[1]);
	if (mcg_create(rp->e, rp->grp[pi].g, slash + 1, NULL, NULL, &g))
		return rp_fail(rp, "cannot create %s", argv[1]);
	rp->grp[rp->ngrp].g = g;
	snprintf(rp->grp[rp->ngrp++].path, sizeof(rp->grp[0].path), "%s", argv[1]);
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			return rp_fail(rp, "key=value expected: %s", argv[i]);
		*eq = '\0';
		if (rp_set(rp, g, argv[i], eq + 1))
			return -EINVAL;
	}
	return 0;
}

/* file NAME SIZE: a file of the page cache */
static int rp_st_file(struct rp *rp, char **argv, int argc)
{
	struct rp_file *f = &rp->file[rp->nfile];
	long pages = wl_pages(argv[2]);

	if (rp->nfile == RP_MAX || pages <= 0)
		return rp_fail(rp, "file NAME SIZE");
	snprintf(f->name, WL_NAME, "%s", argv[1]);
	if (vm_file_new(rp->e, (uint32_t)pages, &f->obj, &f->r))
		return rp_fail(rp, "cannot make file %s", argv[1]);
	rp->nfile++;
	return 0;
}

/* task NAME group=PATH [cpu=N] [start=TIME]: a simulated task */
static int rp_st_task(struct rp *rp, char **argv, int argc)
{
	const char *v;
	struct rp_task *t = &rp->task[rp->ntask];
	int gi = (v = wl_arg(argv, argc, "group")) ? rp_find_group(rp, v) : -1;

	if (rp->ntask == RP_MAX || gi < 0 || rp_find_task(rp, argv[1]))
		return rp_fail(rp, "task NAME group=PATH (a declared group, a new name)");
	snprintf(t->name, WL_NAME, "%s", argv[1]);
	t->g = rp->grp[gi].g;
	t->wl.cpu = (v = wl_arg(argv, argc, "cpu")) ? (unsigned)strtoul(v, NULL, 10) : 0;
	t->wl.rng = &rp->rng;
	t->wl.file = rp_file_region;
	t->wl.file_arg = rp;
	if ((v = wl_arg(argv, argc, "start")) && wl_time(v, &t->ready))
		return rp_fail(rp, "bad time %s", v);
	t->state = T_RUNNING;
	rp->ntask++;
	return 0;
}

/* at TIME group PATH key=value: a timed setting */
static int rp_st_at(struct rp *rp, char **argv, int argc)
{
	struct rp_at *a = &rp->at[rp->nat];
	char *eq = strchr(argv[4], '=');

	if (rp->nat == RP_MAX || wl_time(argv[1], &a->t) || !eq ||
	    (a->group = rp_find_group(rp, argv[3])) < 0)
		return rp_fail(rp, "at TIME group PATH key=value");
	if (rp->nat && a->t < rp->at[rp->nat - 1].t)
		return rp_fail(rp, "at lines must come in time order");
	*eq = '\0';
	snprintf(a->key, WL_NAME, "%s", argv[4]);
	snprintf(a->val, sizeof(a->val), "%s", eq + 1);
	a->line = rp->line;
	rp->nat++;
	return 0;
}

static int rp_parse_line(struct rp *rp, char *line)
{
	char *argv[32], *hash;
	int argc;
	struct rp_task *t;

	if ((hash = strchr(line, '#')))
		*hash = '\0';
	if ((argc = wl_split(line, argv, 32)) == 0)
		return 0;
	if (!strcmp(argv[0], "seed") && argc == 2) {
		rp->rng = strtoull(argv[1], NULL, 10) * 2 + 1;
		return 0;
	}
	if (!strcmp(argv[0], "machine"))
		return rp_st_machine(rp, argv, argc);
	if (!strcmp(argv[0], "cost"))
		return rp_st_cost(rp, argv, argc);
	if (!strcmp(argv[0], "print"))
		return rp_st_print(rp, argv, argc);
	if (rp_machine(rp))
		return -EINVAL;
	if (!strcmp(argv[0], "group") && argc >= 2)
		return rp_st_group(rp, argv, argc);
	if (!strcmp(argv[0], "file") && argc == 3)
		return rp_st_file(rp, argv, argc);
	if (!strcmp(argv[0], "task") && argc >= 3)
		return rp_st_task(rp, argv, argc);
	if (!strcmp(argv[0], "at") && argc >= 5 && !strcmp(argv[2], "group"))
		return rp_st_at(rp, argv, argc);
	if (!(t = rp_find_task(rp, argv[0])))
		return rp_fail(rp, "unknown statement or task %s", argv[0]);
	return rp_parse_op(rp, t, argv + 1, argc - 1);
}

static void rp_exit(struct rp_task *t, enum rp_state how)
{
	t->end = t->ready;
	if (t->wl.obj) {
		wl_release(&t->wl);
		vm_object_free(t->wl.obj);
		t->wl.obj = NULL;
	}
	t->state = how;
}

/* One step of t: an operation, or up to RP_STEP pages of a touch. The
 * task's clock advances by what the step cost. */
static int rp_step(struct rp *rp, struct rp_task *t)
{
	struct wl_op *op;
	char msg[128];
	int ret;

	if (t->pc >= t->nops) {
		rp_exit(t, T_EXITED);
		return 0;
	}
	op = &t->ops[t->pc];
	rp->line = op->line;
	if (!t->wl.obj && !(t->wl.obj = vm_object_new(rp->e, t->g, true, (uint32_t)(t - rp->task))))
		return rp_fail(rp, "out of memory");
	switch (op->code) {
	case WL_SLEEP:
		t->ready += op->ns;
		break;
	case WL_COMPUTE: {
		uint64_t slice;

		if (!t->compute_left)
			t->compute_left = op->ns;
		slice = t->compute_left < RP_SLICE ? t->compute_left : RP_SLICE;
		rp->step_cpu += slice;
		if ((t->compute_left -= slice) > 0)
			return 0;
		break;
	}
	case WL_REPEAT:
		if (t->rsp == RP_DEPTH)
			return rp_fail(rp, "repeats nested too deep");
		t->rleft[t->rsp++] = op->count;
		break;
	case WL_END:
		if (--t->rleft[t->rsp - 1] > 0) {
			t->pc = op->match + 1;
			return 0;
		}
		t->rsp--;
		break;
	case WL_EXIT:
		rp_exit(t, T_EXITED);
		return 0;
	case WL_FORK: {
		struct rp_task *c = rp_find_task(rp, op->a);

		if (!c || c->state != T_RUNNING || c->pc || c->wl.obj)
			return rp_fail(rp, "task %s: cannot fork %s", t->name, op->a);
		c->g = t->g;
		c->ready = t->ready;
		break;
	}
	default: {
		uint64_t cpu = 0;

		ret = wl_exec(&t->wl, op, RP_STEP, &rp->cost, &cpu, msg, sizeof(msg));
		rp->step_cpu += cpu;
		if (ret < 0)
			return rp_fail(rp, "task %s: %s", t->name, msg);
		if (ret == WL_KILLED) {
			rp_exit(t, T_KILLED);
			return 0;
		}
		if (ret == WL_STALL && rp->step_throttled)
			return 0;         /* waits for a reclaim slot (rp_simulate) */
		if (ret == WL_STALL) {
			/* an OOM wait: retry the same page a millisecond later */
			t->stalls++;
			t->ready += WL_NS_MS;
			return 0;
		}
		if (ret == WL_AGAIN)
			return 0;
	}
	}
	t->pc++;
	return 0;
}

static void rp_print_time(FILE *out, uint64_t ns)
{
	if (ns % WL_NS_MS == 0)
		fprintf(out, "t=%" PRIu64 "ms", (uint64_t)(ns / WL_NS_MS));
	else
		fprintf(out, "t=%" PRIu64 "us", ns / 1000);
}

static void rp_print(struct rp *rp, uint64_t t)
{
	for (int i = 0; i < rp->ngrp; i++) {
		struct mcg_group *g = rp->grp[i].g;
		struct mcg_reclaim_counts rc;

		mcg_reclaim_counts(g, &rc);
		rp_print_time(rp->out, t);
		fprintf(rp->out, " %s usage=%ld max_usage=%ld failcnt=%lu rss=%ld cache=%ld swap=%ld"
			" pgfault=%ld pgmajfault=%ld refault_file=%ld refault_anon=%ld"
			" scan_direct=%ld steal_direct=%ld oom_kill=%lu\n",
			rp->grp[i].path,
			mcg_usage(g, MCG_MEM) * PC_PAGE_SIZE,
			mcg_max_usage(g, MCG_MEM) * PC_PAGE_SIZE, mcg_failcnt(g, MCG_MEM),
			rstat_item(g, STAT_RSS) * PC_PAGE_SIZE, rstat_item(g, STAT_CACHE) * PC_PAGE_SIZE,
			rstat_item(g, STAT_SWAP) * PC_PAGE_SIZE, rstat_item(g, STAT_PGFAULT),
			rstat_item(g, STAT_PGMAJFAULT), rstat_item(g, STAT_REFAULT_FILE),
			rstat_item(g, STAT_REFAULT_ANON), rc.scanned[0], rc.reclaimed[0],
			mcg_oom_kills(g));
		if (rp->wmarks || rp->throttle || rp->cpu_model)
			fprintf(rp->out, "  %s scan_bg=%ld steal_bg=%ld allocstall=%ld bg_runs=%ld\n",
				rp->grp[i].path, rc.scanned[1], rc.reclaimed[1], rc.allocstall,
				rc.bgr_runs);
	}
}

/* The end block's machine lines: each node's size, free pages and what
 * reclaim scanned and stole there (every group summed), with more than one
 * node; the disk's reads and waits, when there is a disk. */
static void rp_print_machine(struct rp *rp)
{
	for (unsigned n = 0; rp->m.nodes > 1 && n < rp->m.nodes; n++) {
		long scan = 0, steal = 0;

		for (int i = 0; i < rp->ngrp; i++) {
			long s, t;

			reclaim_node_counts(rp->grp[i].g, n, &s, &t);
			scan += s;
			steal += t;
		}
		fprintf(rp->out, "node %u size=%ld free=%ld scan=%ld steal=%ld", n,
			page_node_size(&rp->e->pages, n) * PC_PAGE_SIZE,
			page_node_free(&rp->e->pages, n) * PC_PAGE_SIZE, scan, steal);
		if (rp->m.zones) {
			struct mcg_zone_counts zc;

			mcg_zone_counts(rp->e, n, &zc);
			fprintf(rp->out, " min=%ld low=%ld high=%ld batch=%ld scan_direct=%ld"
				" scan_kswapd=%ld steal_direct=%ld steal_kswapd=%ld", zc.min, zc.low,
				zc.high, zc.batch, zc.scan_direct, zc.scan_kswapd, zc.steal_direct,
				zc.steal_kswapd);
		}
		fputc('\n', rp->out);
	}
	if (rp->m.zones) {
		struct mcg_zone_counts zc;

		mcg_zone_counts(rp->e, 0, &zc);
		fprintf(rp->out, "zones allocstall=%ld pageoutrun=%ld kswapd_wakeups=%ld\n",
			zc.allocstall, zc.pageoutrun, zc.kswapd_wakeups);
	}
	{
		long inflight, done, rotated, immediate, marked, listed, rescued;

		wb_counts(rp->e, &inflight, &done, &rotated, &immediate);
		wb_immediate_counts(rp->e, &marked, &listed, &rescued);
		if (inflight || done)
			fprintf(rp->out, "writeback inflight=%ld done=%ld rotated=%ld reclaimed_at_end=%ld"
				" marked=%ld immediate_listed=%ld rescued=%ld\n", inflight, done, rotated,
				immediate, marked, listed, rescued);
	}
	if (rp->disk) {
		struct mcg_flusher_counts fc;

		mcg_flusher_counts(rp->e, &fc);
		fprintf(rp->out, "flusher written=%ld passes=%ld throttled=%ld throttle_written=%ld"
			" pause_us=%" PRIu64 " bg_thresh=%ld thresh=%ld kicked=%ld kick_written=%ld\n",
			fc.written, fc.passes, fc.throttled, fc.throttle_written, fc.pause_ns / 1000,
			fc.bg_thresh, fc.thresh, fc.kicked, fc.kick_written);
	}
	if (rp->disk) {
		struct blk_counts bc;

		blk_counts(rp->e, &bc);
		fprintf(rp->out, "disk reads=%ld seq_reads=%ld swap_writes=%ld busy_us=%" PRIu64
			" io_wait_us=%" PRIu64 " nr_requests=%u full_waits=%ld full_wait_us=%" PRIu64
			" naps=%ld naps_early=%ld nap_us=%" PRIu64 "\n",
			rp->reads, rp->seq_reads, rp->swap_writes, bc.busy_ns / 1000, rp->io_wait / 1000,
			bc.nr_requests, bc.full_waits, bc.full_wait_ns / 1000, bc.naps, bc.naps_early,
			bc.nap_ns / 1000);
	}
	if (rp->m.thp) {
		struct mcg_compact_counts cc;

		mcg_compact_counts(rp->e, &cc);
		fprintf(rp->out, "thp fault_alloc=%ld fault_fallback=%ld compact_stall=%ld"
			" compact_success=%ld compact_fail=%ld pages_moved=%ld move_failed=%ld"
			" reclaim_for_order=%ld\n", cc.thp_fault_alloc, cc.thp_fault_fallback,
			cc.compact_stall, cc.compact_success, cc.compact_fail, cc.compact_pages_moved,
			cc.compact_move_failed, cc.reclaim_for_order);
	}
	if (rp->lru_lock)
		fprintf(rp->out, "lru_lock spin_us=%" PRIu64 "\n", rp->lock_spin / 1000);
	if (rp->cpu_model)
		fprintf(rp->out, "cpu busy_us=%" PRIu64 " reclaim_us=%" PRIu64 "\n",
			rp->cpu_busy / 1000, rp->cpu_reclaim / 1000);
}

/* The task due first; ties go to the one declared first. */
static struct rp_task *rp_next(struct rp *rp)
{
	struct rp_task *best = NULL;

	for (int i = 0; i < rp->ntask; i++)
		if (rp->task[i].state == T_RUNNING && (!best || rp->task[i].ready < best->ready))
			best = &rp->task[i];
	return best;
}

static void rp_scan_time(struct rp *rp, int who, const long *mark, uint64_t *scan);

/* The engine's clock: the step's start, what the step has waited so far
 * (a second wait in one step starts where the first ended), and the CPU
 * time of the scanning its reclaim has done so far (so that reclaim's
 * retries take time, and writes complete meanwhile, as in the kernel). */
static uint64_t rp_clock(void *arg)
{
	const struct rp *rp = arg;
	uint64_t t = rp->now + rp->stall;

	if (rp->clock_mark && rp->scan_ns) {
		uint64_t scan[RP_MAX];

		rp_scan_time((struct rp *)rp, rp->clock_who, rp->clock_mark, scan);
		for (int i = 0; i < rp->ngrp; i++)
			t += scan[i];
	}
	return t;
}

static void rp_kill(uint32_t id, struct mcg_group *over, struct mcg_group *vg, void *arg)
{
	struct rp *rp = arg;

	/* the engine reaps the memory; the task stops at its next step */
	if (id < (uint32_t)rp->ntask) {
		rp->task[id].state = T_KILLED;
		rp->task[id].end = rp->now;
	}
}

/* The engine's writeback waits, in simulated time: the task whose step
 * waited is charged them (rp_task_step). */
static void rp_sleep(uint64_t ns, void *arg)
{
	((struct rp *)arg)->stall += ns;
}

/* Throttling on: the engine asks for slots (rp_throttle_slot); off: every
 * direct reclaim goes ahead, as with no throttling at all. */
static bool rp_slot(struct mcg_group *over, void *arg)
{
	struct rp *rp = arg;

	return !rp->throttle || rp_throttle_slot(over, rp);
}

static const struct mcg_env_ops rp_env_ops = {
	.now = rp_clock,
	.sleep = rp_sleep,
	.throttle_slot = rp_slot,
};

static const struct mcg_owner_ops rp_owner_ops = { .kill = rp_kill };

/* Pages scanned so far by direct (who 0) or background (1) reclaim in
 * each group, into mark[]. */
static void rp_scan_marks(struct rp *rp, int who, long *mark)
{
	for (int i = 0; i < rp->ngrp; i++) {
		struct mcg_reclaim_counts rc;

		mcg_reclaim_counts(rp->grp[i].g, &rc);
		mark[i] = rc.scanned[who];
	}
}

/* The CPU time each group's scanning took since mark[] (into scan[],
 * ns): zero when the cost line gives scanning none. */
static void rp_scan_time(struct rp *rp, int who, const long *mark, uint64_t *scan)
{
	long now[RP_MAX];

	rp_scan_marks(rp, who, now);
	for (int i = 0; i < rp->ngrp; i++)
		scan[i] = (uint64_t)(now[i] - mark[i]) * rp->scan_ns;
}

static long rp_swapouts(struct rp *rp)
{
	return swap_outs(rp->e);
}

/* Pages compaction has moved so far (m.thp). */
static long rp_moved(struct rp *rp)
{
	struct mcg_compact_counts cc;

	mcg_compact_counts(rp->e, &cc);
	return cc.compact_pages_moved;
}

/* The major-fault hook (wl_costs.major_io): with a disk, the step ends on
 * the fault and its read is queued once the step's CPU work is done. */
static bool rp_major_io(void *arg, const struct vm_region *r, uint32_t i)
{
	struct rp *rp = arg;

	if (!rp->disk)
		return false;
	rp->read_pending = true;
	rp->pend_r = r;
	rp->pend_page = i;
	return true;
}

static uint64_t rp_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Run cpu ns of work that may start at ready, then each group's scanning
 * (scan[i] ns): under that group's LRU lock when lru_lock is on, one
 * scanner at a time, and a scanner waiting for the lock spins on its CPU
 * (a spinlock). With the CPU model, the work takes the CPU that is free
 * first (no more than cpus run at once). Returns when the CPU work ends. */
static uint64_t rp_run_cpu(struct rp *rp, uint64_t ready, uint64_t cpu, const uint64_t *scan)
{
	unsigned best = 0;
	uint64_t t = ready;

	if (rp->cpu_model) {
		for (unsigned i = 1; i < rp->m.cpus; i++)
			if (rp->cpu_free[i] < rp->cpu_free[best])
				best = i;
		t = rp_max(ready, rp->cpu_free[best]);
	}
	t += cpu;
	rp->cpu_busy += cpu;
	for (int i = 0; i < rp->ngrp; i++) {
		uint64_t t0 = t;

		if (!scan[i])
			continue;
		if (rp->lru_lock) {
			uint64_t start = rp_max(t, rp->lock_free[i]);

			rp->lock_spin += start - t;
			t = start + scan[i];
			rp->lock_free[i] = t;
		} else {
			t += scan[i];
		}
		rp->cpu_busy += t - t0;
		rp->cpu_reclaim += t - t0;
	}
	if (rp->cpu_model)
		rp->cpu_free[best] = t;
	return t;
}

/* Region r's page i's place on the disk: its page's number in the
 * simulated address space (the page of the file, for a file's mapping),
 * where the engine's writeback writes it too. */
static uint64_t rp_disk_pos(const struct vm_region *r, uint32_t i)
{
	const struct vm_region *t = r->file ? r->file : r;

	return (uint64_t)t->vbase + (r->file ? r->file_off : 0) + i;
}

/* What a step waits for once its CPU work ended at t, off the CPU: what
 * the engine made it wait (stall: writeback it met, a full request
 * queue), its swap-outs, and the read its step ended on. With a disk, the
 * engine's reclaim wrote the swap-outs to it through the swap cache (the
 * reclaimer waits only for a free request), and the read waits its turn
 * (a seek unless it follows the disk's previous access, then the
 * transfer); without one, a swap-out costs swapout ns of waiting. Returns
 * when the task is ready again. */
static uint64_t rp_run_io(struct rp *rp, uint64_t t, uint64_t stall, long swapouts)
{
	uint64_t t0 = t;

	t += stall;
	if (swapouts > 0 && rp->disk)
		rp->swap_writes += swapouts;      /* the engine wrote them to the disk */
	else if (swapouts > 0)
		t += (uint64_t)swapouts * rp->swapout_ns;
	if (rp->read_pending) {
		struct blk_counts before, after;
		struct blk_io io;

		rp->read_pending = false;
		blk_counts(rp->e, &before);
		if (!blk_submit(rp->e, t, BLK_READ, rp_disk_pos(rp->pend_r, rp->pend_page), 1, &io)) {
			blk_counts(rp->e, &after);
			rp->reads++;
			/* (a read merged into a waiting one follows it too) */
			rp->seq_reads += after.seq - before.seq + after.merges - before.merges;
			t = io.done;
		}
	}
	rp->io_wait += t - t0;
	return t;
}

/* One step of task t: its operation's CPU time plus what its direct
 * reclaim scanned, then the waits (writeback, swap-out I/O, a disk read,
 * a reclaim slot). The background reclaimer is woken if it sleeps. */
static int rp_task_step(struct rp *rp, struct rp_task *t)
{
	long mark[RP_MAX], out0 = rp_swapouts(rp), moved0 = rp_moved(rp);
	uint64_t scan[RP_MAX], end;
	int err;

	rp_scan_marks(rp, 0, mark);
	rp->step_cpu = 0;
	rp->nheld = 0;
	rp->step_throttled = false;
	rp->clock_mark = mark;
	rp->clock_who = 0;
	err = rp_step(rp, t);
	rp->clock_mark = NULL;
	rp_scan_time(rp, 0, mark, scan);
	/* compaction's page moves are the step's own CPU work */
	rp->step_cpu += (uint64_t)(rp_moved(rp) - moved0) * rp->migrate_ns;
	end = rp_run_cpu(rp, t->ready, rp->step_cpu, scan);
	t->ready = rp_run_io(rp, end, rp->stall, rp_swapouts(rp) - out0);
	rp->stall = 0;
	for (int h = 0; h < rp->nheld; h++)
		*rp->held[h] = t->ready;      /* the slots were held all step */
	rp->nheld = 0;
	if (rp->step_throttled) {
		t->throttled++;
		if (rp->throttle_until > t->ready)
			t->ready = rp->throttle_until;
	}
	if (rp->wmarks && !rp->bg_active) {
		rp->bg_active = true;
		if (rp->bg_ready < rp->now)
			rp->bg_ready = rp->now;
	}
	if (rp->m.zones && !rp->ks_active) {
		struct mcg_zone_counts zc;

		mcg_zone_counts(rp->e, 0, &zc);
		if (zc.kswapd_wakeups != rp->ks_wakeups) {
			rp->ks_wakeups = zc.kswapd_wakeups;
			rp->ks_active = true;
			if (rp->ks_ready < rp->now)
				rp->ks_ready = rp->now;
		}
	}
	return err;
}

/* One time slice of a simulated reclaimer, from *ready: step() batches
 * until they used RP_SLICE of CPU or it has nothing left to do. Their
 * scanning is CPU time (under the LRU locks with lru_lock), their
 * swap-outs I/O; a reclaimer never waits for writeback. Moves *ready past
 * the slice; false when the first batch found nothing (*ready stays). */
static bool rp_reclaimer_slice(struct rp *rp, uint64_t *ready,
			       bool (*step)(struct rp *rp, uint64_t *next), uint64_t *next)
{
	long mark[RP_MAX], out0 = rp_swapouts(rp);
	uint64_t cpu = 0, scan[RP_MAX], end, stall;
	bool worked = false;

	rp->now = *ready;
	rp_scan_marks(rp, 1, mark);
	rp->clock_mark = mark;
	rp->clock_who = 1;
	while (cpu < RP_SLICE && step(rp, next)) {
		worked = true;
		rp_scan_time(rp, 1, mark, scan);
		cpu = 0;
		for (int i = 0; i < rp->ngrp; i++)
			cpu += scan[i];
	}
	rp->clock_mark = NULL;
	stall = rp->stall;                /* a full request queue's waits */
	rp->stall = 0;
	if (!worked)
		return false;
	end = rp_run_cpu(rp, *ready, 0, scan);
	*ready = rp_run_io(rp, end, stall, rp_swapouts(rp) - out0);
	return true;
}

/* the background reclaimer's batch (bgr_step); *next: when delayed work is due */
static bool rp_bg_batch(struct rp *rp, uint64_t *next)
{
	return bgr_step(rp->e, next);
}

/* The simulated background reclaimer's slice; with nothing to do, it
 * sleeps until its delayed work is due, if any. */
static void rp_bg_step(struct rp *rp)
{
	uint64_t next = UINT64_MAX;

	if (rp_reclaimer_slice(rp, &rp->bg_ready, rp_bg_batch, &next))
		return;
	rp->bg_active = next != UINT64_MAX;
	if (rp->bg_active)
		rp->bg_ready = next;
}

/* kswapd's pass (mcg_kswapd_step) */
static bool rp_ks_pass(struct rp *rp, uint64_t *next)
{
	(void)next;
	return mcg_kswapd_step(rp->e);
}

/* The simulated kswapd's slice: balance passes until every zone is
 * balanced; then it sleeps until the next wake. */
static void rp_ks_step(struct rp *rp)
{
	if (!rp_reclaimer_slice(rp, &rp->ks_ready, rp_ks_pass, NULL))
		rp->ks_active = false;
}

/* The simulated flusher's pass at at (mcg_flusher_step); its waits for a
 * full request queue are its own time. */
static void rp_fl_step(struct rp *rp, uint64_t at)
{
	rp->now = at;
	rp->stall = 0;
	mcg_flusher_step(rp->e);
	rp->fl_free = rp->now + rp->stall;
	rp->stall = 0;
}

/* When the flusher runs next: when it is due, once free, not before now */
static uint64_t rp_fl_at(struct rp *rp)
{
	uint64_t due;

	if (!rp->disk)
		return UINT64_MAX;
	due = mcg_flusher_due(rp->e);
	if (due == UINT64_MAX)
		return due;
	return rp_max(rp_max(due, rp->fl_free), rp->now);
}

static int rp_simulate(struct rp *rp)
{
	uint64_t next_print = rp->every;
	long steps = 0;
	struct rp_task *t;
	int err = 0;

	while ((t = rp_next(rp)) && !err) {
		/* the next event: the task due first, or a reclaimer */
		bool bg = rp->bg_active && rp->bg_ready <= t->ready;
		uint64_t at = bg ? rp->bg_ready : t->ready;
		bool ks = rp->ks_active && rp->ks_ready <= at;
		uint64_t fl_at = rp_fl_at(rp);
		bool fl;

		if (ks) {
			bg = false;
			at = rp->ks_ready;
		}
		fl = fl_at <= at;
		if (fl) {
			bg = ks = false;
			at = fl_at;
		}

		if (rp->until && at > rp->until)
			break;
		while (rp->every && next_print <= at && (!rp->until || next_print <= rp->until)) {
			rp_print(rp, next_print);
			next_print += rp->every;
		}
		while (rp->next_at < rp->nat && rp->at[rp->next_at].t <= at) {
			struct rp_at *a = &rp->at[rp->next_at++];

			rp->line = a->line;
			if ((err = rp_set(rp, rp->grp[a->group].g, a->key, a->val)))
				return err;
		}
		if (bg) {
			rp_bg_step(rp);
			continue;
		}
		if (ks) {
			rp_ks_step(rp);
			continue;
		}
		if (fl) {
			rp_fl_step(rp, at);
			continue;
		}
		rp->now = t->ready;
		err = rp_task_step(rp, t);
		if (++steps > RP_MAX_STEPS)
			return rp_fail(rp, "more than %ld steps: stopping", RP_MAX_STEPS);
	}
	while (!err && rp->every && rp->until && next_print <= rp->until) {
		rp_print(rp, next_print);
		next_print += rp->every;
	}
	return err;
}

int replay_run(const char *text, FILE *out, FILE *err)
{
	struct rp *rp = calloc(1, sizeof(*rp));
	char *copy = strdup(text), *line, *save = NULL;
	int ret = 0;

	if (!rp || !copy) {
		free(rp);
		free(copy);
		return -ENOMEM;
	}
	rp->out = out;
	rp->err = err;
	rp->rng = 3;
	rp->cost = (struct wl_costs){ .touch = 100, .fault = 1000, .major = 50000,
				      .major_io = rp_major_io, .io_arg = rp };
	rp->m = (struct mcg_machine){ .mem_pages = 262144, .nodes = 1, .cpus = 4, .vm_swappiness = 60 };
	prof_init(&rp->m.prof, PROF_DEFAULT);
	/* strtok_r would merge empty lines and shift the numbers: split by hand */
	for (line = copy; line && !ret; line = save) {
		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		rp->line++;
		ret = rp_parse_line(rp, line);
	}
	if (!ret)
		ret = rp_machine(rp);
	if (!ret)
		ret = rp_simulate(rp);
	if (!ret) {
		fprintf(out, "end ");
		rp_print_time(out, rp->now);
		fputc('\n', out);
		rp_print(rp, rp->now);
		rp_print_machine(rp);
		for (int i = 0; i < rp->ntask; i++)
			fprintf(out, "task %s %s end=%" PRIu64 "us stalls=%ld%s\n", rp->task[i].name,
				rp->task[i].state == T_EXITED ? "exited" :
				rp->task[i].state == T_KILLED ? "killed" : "running",
				rp->task[i].state == T_RUNNING ? rp->now / 1000 : rp->task[i].end / 1000,
				rp->task[i].stalls,
				rp->throttle ? (snprintf(rp->tmp, sizeof(rp->tmp), " throttled=%ld",
							 rp->task[i].throttled), rp->tmp) : "");
	}
	for (int i = 0; i < rp->ntask; i++) {
		if (rp->task[i].wl.obj)
			rp_exit(&rp->task[i], T_EXITED);
		free(rp->task[i].ops);
	}
	for (int i = 0; i < rp->nfile; i++)
		vm_object_free(rp->file[i].obj);
	for (int i = 0; i < rp->ngrp; i++)
		mcg_put(rp->grp[i].g);
	mcg_engine_free(rp->e);
	free(copy);
	free(rp);
	return ret;
}
