/* replay.c: the scenario language of docs/replay.md and its deterministic
 * scheduler. One engine per run, a simulated clock, a seeded xorshift RNG,
 * and always the task that is due first (ties by declaration order) runs
 * one step. Never reads the real clock, never blocks (OOM waits become
 * retries one simulated millisecond later). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memcg.h"
#include "engine/replay.h"
#include "engine/vm.h"
#include "engine/workload.h"
#include "engine/writeback.h"

#define RP_MAX       64           /* groups, files, tasks */
#define RP_STEP      64           /* pages touched per scheduling step */
#define RP_DEPTH     8            /* nested repeats */
#define RP_MAX_STEPS 50000000L

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
	struct mcg_config cfg;
	bool machine_done;
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

static int rp_machine(struct rp *rp)
{
	if (rp->machine_done)
		return 0;
	rp->machine_done = true;
	rp->cfg.oom_nowait = true;
	rp->e = mcg_engine_new(&rp->cfg);
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
static int rp_parse_line(struct rp *rp, char *line)
{
	char *argv[32], *save = NULL, *w;
	int argc = 0;
	const char *v;

	if ((w = strchr(line, '#')))
		*w = '\0';
	for (w = strtok_r(line, " \t\r", &save); w && argc < 32; w = strtok_r(NULL, " \t\r", &save))
		argv[argc++] = w;
	if (argc == 0)
		return 0;
	if (!strcmp(argv[0], "seed") && argc == 2) {
		rp->rng = strtoull(argv[1], NULL, 10) * 2 + 1;
		return 0;
	}
	if (!strcmp(argv[0], "machine")) {
		long p;

		if (rp->machine_done)
			return rp_fail(rp, "machine must come first");
		if ((v = wl_arg(argv, argc, "memory")) && (p = wl_pages(v)) > 0)
			rp->cfg.mem_pages = p;
		if ((v = wl_arg(argv, argc, "swap")) && (p = wl_pages(v)) >= 0)
			rp->cfg.swap_pages = p;
		if ((v = wl_arg(argv, argc, "cpus")))
			rp->cfg.cpus = (unsigned)strtoul(v, NULL, 10);
		if ((v = wl_arg(argv, argc, "nodes")))
			rp->cfg.nodes = (unsigned)strtoul(v, NULL, 10);
		if ((v = wl_arg(argv, argc, "writeback")) && (p = wl_pages(v)) > 0)
			rp->cfg.wb_pages_per_s = p;       /* per second */
		if ((v = wl_arg(argv, argc, "wb_latency")) && wl_time(v, &rp->cfg.wb_latency_ns))
			return rp_fail(rp, "bad time %s", v);
		if ((v = wl_arg(argv, argc, "immediate")))
			rp->cfg.immediate_reclaim = strtoul(v, NULL, 10) != 0;
		if ((v = wl_arg(argv, argc, "kernel")) && prof_parse(v, &rp->cfg.prof))
			return rp_fail(rp, "unsupported kernel=%s", v);
		if (rp->cfg.cpus < 1 || rp->cfg.cpus > 256 || rp->cfg.nodes < 1 || rp->cfg.nodes > 64)
			return rp_fail(rp, "cpus 1..256, nodes 1..64");
		return rp_machine(rp);
	}
	if (!strcmp(argv[0], "cost")) {
		if ((v = wl_arg(argv, argc, "touch")) && wl_time(v, &rp->cost.touch))
			return rp_fail(rp, "bad time %s", v);
		if ((v = wl_arg(argv, argc, "fault")) && wl_time(v, &rp->cost.fault))
			return rp_fail(rp, "bad time %s", v);
		if ((v = wl_arg(argv, argc, "major")) && wl_time(v, &rp->cost.major))
			return rp_fail(rp, "bad time %s", v);
		return 0;
	}
	if (!strcmp(argv[0], "print")) {
		if ((v = wl_arg(argv, argc, "every")) && (wl_time(v, &rp->every) || !rp->every))
			return rp_fail(rp, "bad time %s", v);
		if ((v = wl_arg(argv, argc, "until")) && wl_time(v, &rp->until))
			return rp_fail(rp, "bad time %s", v);
		return 0;
	}
	if (rp_machine(rp))
		return -EINVAL;
	if (!strcmp(argv[0], "group") && argc >= 2) {
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
	if (!strcmp(argv[0], "file") && argc == 3) {
		struct rp_file *f = &rp->file[rp->nfile];
		long pages = wl_pages(argv[2]);

		if (rp->nfile == RP_MAX || pages <= 0)
			return rp_fail(rp, "file NAME SIZE");
		snprintf(f->name, WL_NAME, "%s", argv[1]);
		f->obj = vm_object_new(rp->e, rp->e->root, false, 0);
		if (!f->obj || vm_region_new(f->obj, PK_FILE, (uint32_t)pages, &f->r))
			return rp_fail(rp, "cannot make file %s", argv[1]);
		rp->nfile++;
		return 0;
	}
	if (!strcmp(argv[0], "task") && argc >= 3) {
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
	if (!strcmp(argv[0], "at") && argc >= 5 && !strcmp(argv[2], "group")) {
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
	{
		struct rp_task *t = rp_find_task(rp, argv[0]);

		if (!t)
			return rp_fail(rp, "unknown statement or task %s", argv[0]);
		return rp_parse_op(rp, t, argv + 1, argc - 1);
	}
}

static void rp_exit(struct rp_task *t, enum rp_state how)
{
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
	default:
		ret = wl_exec(&t->wl, op, RP_STEP, &rp->cost, &t->ready, msg, sizeof(msg));
		if (ret < 0)
			return rp_fail(rp, "task %s: %s", t->name, msg);
		if (ret == WL_KILLED) {
			rp_exit(t, T_KILLED);
			return 0;
		}
		if (ret == WL_STALL) {
			/* an OOM wait: retry the same page a millisecond later */
			t->stalls++;
			t->ready += WL_NS_MS;
			return 0;
		}
		if (ret == WL_AGAIN)
			return 0;
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

		rp_print_time(rp->out, t);
		fprintf(rp->out, " %s usage=%ld max_usage=%ld failcnt=%lu rss=%ld cache=%ld swap=%ld"
			" pgfault=%ld pgmajfault=%ld refault_file=%ld refault_anon=%ld"
			" scan_direct=%ld steal_direct=%ld oom_kill=%lu\n",
			rp->grp[i].path,
			(mcg_is_root(g) ? mcg_root_usage(rp->e) : pc_usage(&g->cnt[MCG_MEM])) * PC_PAGE_SIZE,
			pc_watermark(&g->cnt[MCG_MEM]) * PC_PAGE_SIZE, pc_failcnt(&g->cnt[MCG_MEM]),
			stat_total(g, STAT_RSS) * PC_PAGE_SIZE, stat_total(g, STAT_CACHE) * PC_PAGE_SIZE,
			stat_total(g, STAT_SWAP) * PC_PAGE_SIZE, stat_total(g, STAT_PGFAULT),
			stat_total(g, STAT_PGMAJFAULT), stat_total(g, STAT_REFAULT_FILE),
			stat_total(g, STAT_REFAULT_ANON), atomic_load(&g->pg_scanned[0]),
			atomic_load(&g->pg_reclaimed[0]), atomic_load(&g->oom_kill));
	}
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

static uint64_t rp_clock(void *arg)
{
	return ((struct rp *)arg)->now;
}

static void rp_kill(uint32_t id, void *arg)
{
	struct rp *rp = arg;

	/* the engine reaps the memory; the task stops at its next step */
	if (id < (uint32_t)rp->ntask)
		rp->task[id].state = T_KILLED;
}

static int rp_simulate(struct rp *rp)
{
	uint64_t next_print = rp->every;
	long steps = 0;
	struct rp_task *t;
	int err = 0;

	while ((t = rp_next(rp)) && !err) {
		if (rp->until && t->ready > rp->until)
			break;
		while (rp->every && next_print <= t->ready && (!rp->until || next_print <= rp->until)) {
			rp_print(rp, next_print);
			next_print += rp->every;
		}
		while (rp->next_at < rp->nat && rp->at[rp->next_at].t <= t->ready) {
			struct rp_at *a = &rp->at[rp->next_at++];

			rp->line = a->line;
			if ((err = rp_set(rp, rp->grp[a->group].g, a->key, a->val)))
				return err;
		}
		rp->now = t->ready;
		err = rp_step(rp, t);
		t->ready += wb_take_stall();    /* waits for writeback, in simulated time */
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
	rp->cost = (struct wl_costs){ .touch = 100, .fault = 1000, .major = 50000 };
	rp->cfg = (struct mcg_config){ .mem_pages = 262144, .nodes = 1, .cpus = 4, .vm_swappiness = 60,
				       .kill = rp_kill, .hook_arg = rp,
				       .clock = rp_clock, .clock_arg = rp };
	prof_init(&rp->cfg.prof, PROF_DEFAULT);
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
		for (int i = 0; i < rp->ntask; i++)
			fprintf(out, "task %s %s stalls=%ld\n", rp->task[i].name,
				rp->task[i].state == T_EXITED ? "exited" :
				rp->task[i].state == T_KILLED ? "killed" : "running", rp->task[i].stalls);
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
