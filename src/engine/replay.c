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

#define RP_NAME     32
#define RP_MAX      64            /* groups, files, tasks, regions per task */
#define RP_STEP     64            /* pages touched per scheduling step */
#define RP_DEPTH    8             /* nested repeats */
#define RP_NS_MS    1000000ull
#define RP_MAX_STEPS 50000000L

enum rp_code { OP_ALLOC, OP_MAP, OP_TOUCH, OP_FREE, OP_MLOCK, OP_MUNLOCK, OP_SLEEP, OP_REPEAT,
	       OP_END, OP_EXIT, OP_FORK };
enum rp_pattern { PAT_SEQ, PAT_RANDOM, PAT_HOT };
enum rp_state { T_WAITING, T_RUNNING, T_EXITED, T_KILLED };

struct rp_op {
	enum rp_code code;
	char a[RP_NAME], b[RP_NAME];
	enum page_kind kind;
	long pages, off, count;
	enum rp_pattern pattern;
	unsigned hot_p, hot_q;
	bool write;
	uint64_t ns;
	int line;
	int match;                    /* repeat <-> end */
};

struct rp_region {
	char name[RP_NAME];
	struct vm_region *r;
};

struct rp_task {
	char name[RP_NAME];
	struct mcg_group *g;
	unsigned cpu;
	uint64_t ready;
	enum rp_state state;
	struct rp_op *ops;
	int nops, cap, pc;
	long done;                    /* pages done of the current touch */
	int rsp;
	long rleft[RP_DEPTH];
	struct vm_object *obj;
	struct rp_region reg[RP_MAX];
	int nreg;
	long stalls;
};

struct rp_group {
	char path[256];
	struct mcg_group *g;
};

struct rp_file {
	char name[RP_NAME];
	struct vm_object *obj;
	struct vm_region *r;
};

struct rp_at {
	uint64_t t;
	int group;
	char key[RP_NAME], val[64];
	int line;
};

struct rp {
	struct mcg_engine *e;
	FILE *out, *err;
	int line;
	uint64_t rng;
	uint64_t now;
	uint64_t cost_touch, cost_fault, cost_major;
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

static uint64_t rp_rand(struct rp *rp)
{
	/* xorshift64*: fixed, portable, and all the randomness there is */
	rp->rng ^= rp->rng >> 12;
	rp->rng ^= rp->rng << 25;
	rp->rng ^= rp->rng >> 27;
	return rp->rng * 2685821657736338717ull;
}

/* "64M" -> bytes. -1 on garbage. */
static long long rp_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;

	if (end == s)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 't': shift += 10; /* fall through */
	case 'g': shift += 10; /* fall through */
	case 'm': shift += 10; /* fall through */
	case 'k': shift += 10; end++; break;
	case '\0': break;
	default: return -1;
	}
	return *end ? -1 : (long long)(v << shift);
}

static long rp_pages(const char *s)
{
	long long b = rp_size(s);

	return b < 0 ? -1 : (long)((b + PC_PAGE_SIZE - 1) / PC_PAGE_SIZE);
}

/* "10ms" -> ns. */
static int rp_time(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul;

	if (end == s)
		return -1;
	if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1000;
	else if (!strcmp(end, "ms"))
		mul = RP_NS_MS;
	else if (!strcmp(end, "s"))
		mul = 1000 * RP_NS_MS;
	else
		return -1;
	*ns = v * mul;
	return 0;
}

/* key=value arguments: the value of key, or NULL. */
static const char *rp_arg(char **argv, int argc, const char *key)
{
	size_t k = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, k) && argv[i][k] == '=')
			return argv[i] + k + 1;
	return NULL;
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
		if ((pages = rp_pages(val)) < 0 && strcmp(val, "-1"))
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
	struct rp_op op = { .line = rp->line, .match = -1 };
	const char *v;

	if (argc < 1)
		return rp_fail(rp, "missing operation");
	if (!strcmp(argv[0], "alloc") && argc == 4) {
		op.code = OP_ALLOC;
		if (!strcmp(argv[1], "anon"))
			op.kind = PK_ANON;
		else if (!strcmp(argv[1], "shmem"))
			op.kind = PK_SHMEM;
		else
			return rp_fail(rp, "alloc anon|shmem NAME SIZE");
		snprintf(op.a, RP_NAME, "%s", argv[2]);
		if ((op.pages = rp_pages(argv[3])) <= 0)
			return rp_fail(rp, "bad size %s", argv[3]);
	} else if (!strcmp(argv[0], "map") && argc >= 3) {
		op.code = OP_MAP;
		snprintf(op.a, RP_NAME, "%s", argv[1]);
		snprintf(op.b, RP_NAME, "%s", argv[2]);
		op.off = (v = rp_arg(argv, argc, "offset")) ? rp_pages(v) : 0;
		op.pages = (v = rp_arg(argv, argc, "size")) ? rp_pages(v) : 0;
		if (op.off < 0 || op.pages < 0)
			return rp_fail(rp, "bad offset or size");
	} else if (!strcmp(argv[0], "touch") && argc >= 3) {
		op.code = OP_TOUCH;
		snprintf(op.a, RP_NAME, "%s", argv[1]);
		if (!strcmp(argv[2], "seq"))
			op.pattern = PAT_SEQ;
		else if (!strcmp(argv[2], "random"))
			op.pattern = PAT_RANDOM;
		else if (sscanf(argv[2], "hot=%u/%u", &op.hot_p, &op.hot_q) == 2 &&
			 op.hot_p <= 100 && op.hot_q > 0 && op.hot_q < 100)
			op.pattern = PAT_HOT;
		else
			return rp_fail(rp, "touch NAME seq|random|hot=P/Q");
		op.count = (v = rp_arg(argv, argc, "count")) ? strtol(v, NULL, 10) : 0;
		for (int i = 3; i < argc; i++)
			op.write |= !strcmp(argv[i], "write");
	} else if ((!strcmp(argv[0], "free") || !strcmp(argv[0], "mlock") ||
		    !strcmp(argv[0], "munlock")) && argc == 2) {
		op.code = argv[0][0] == 'f' ? OP_FREE : argv[0][1] == 'l' ? OP_MLOCK : OP_MUNLOCK;
		snprintf(op.a, RP_NAME, "%s", argv[1]);
	} else if (!strcmp(argv[0], "sleep") && argc == 2) {
		op.code = OP_SLEEP;
		if (rp_time(argv[1], &op.ns))
			return rp_fail(rp, "bad time %s", argv[1]);
	} else if (!strcmp(argv[0], "repeat") && argc == 2) {
		op.code = OP_REPEAT;
		if ((op.count = strtol(argv[1], NULL, 10)) < 1)
			return rp_fail(rp, "repeat needs a count of at least 1");
	} else if (!strcmp(argv[0], "end") && argc == 1) {
		int depth = 0;

		op.code = OP_END;
		for (int i = t->nops - 1; i >= 0 && op.match < 0; i--) {
			if (t->ops[i].code == OP_END)
				depth++;
			else if (t->ops[i].code == OP_REPEAT && depth-- == 0)
				op.match = i;
		}
		if (op.match < 0)
			return rp_fail(rp, "end without repeat");
		t->ops[op.match].match = t->nops;
	} else if (!strcmp(argv[0], "exit") && argc == 1) {
		op.code = OP_EXIT;
	} else if (!strcmp(argv[0], "fork") && argc == 2) {
		op.code = OP_FORK;
		snprintf(op.a, RP_NAME, "%s", argv[1]);
	} else {
		return rp_fail(rp, "unknown operation %s", argv[0]);
	}
	if (t->nops == t->cap) {
		struct rp_op *n = realloc(t->ops, (size_t)(t->cap = t->cap ? t->cap * 2 : 16) * sizeof(*n));

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
		if ((v = rp_arg(argv, argc, "memory")) && (p = rp_pages(v)) > 0)
			rp->cfg.mem_pages = p;
		if ((v = rp_arg(argv, argc, "swap")) && (p = rp_pages(v)) >= 0)
			rp->cfg.swap_pages = p;
		if ((v = rp_arg(argv, argc, "cpus")))
			rp->cfg.cpus = (unsigned)strtoul(v, NULL, 10);
		if ((v = rp_arg(argv, argc, "nodes")))
			rp->cfg.nodes = (unsigned)strtoul(v, NULL, 10);
		if ((v = rp_arg(argv, argc, "kernel")) && prof_parse(v, &rp->cfg.prof))
			return rp_fail(rp, "unsupported kernel=%s", v);
		if (rp->cfg.cpus < 1 || rp->cfg.cpus > 256 || rp->cfg.nodes < 1 || rp->cfg.nodes > 64)
			return rp_fail(rp, "cpus 1..256, nodes 1..64");
		return rp_machine(rp);
	}
	if (!strcmp(argv[0], "cost")) {
		if ((v = rp_arg(argv, argc, "touch")) && rp_time(v, &rp->cost_touch))
			return rp_fail(rp, "bad time %s", v);
		if ((v = rp_arg(argv, argc, "fault")) && rp_time(v, &rp->cost_fault))
			return rp_fail(rp, "bad time %s", v);
		if ((v = rp_arg(argv, argc, "major")) && rp_time(v, &rp->cost_major))
			return rp_fail(rp, "bad time %s", v);
		return 0;
	}
	if (!strcmp(argv[0], "print")) {
		if ((v = rp_arg(argv, argc, "every")) && (rp_time(v, &rp->every) || !rp->every))
			return rp_fail(rp, "bad time %s", v);
		if ((v = rp_arg(argv, argc, "until")) && rp_time(v, &rp->until))
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
		long pages = rp_pages(argv[2]);

		if (rp->nfile == RP_MAX || pages <= 0)
			return rp_fail(rp, "file NAME SIZE");
		snprintf(f->name, RP_NAME, "%s", argv[1]);
		f->obj = vm_object_new(rp->e, rp->e->root, false, 0);
		if (!f->obj || vm_region_new(f->obj, PK_FILE, (uint32_t)pages, &f->r))
			return rp_fail(rp, "cannot make file %s", argv[1]);
		rp->nfile++;
		return 0;
	}
	if (!strcmp(argv[0], "task") && argc >= 3) {
		struct rp_task *t = &rp->task[rp->ntask];
		int gi = (v = rp_arg(argv, argc, "group")) ? rp_find_group(rp, v) : -1;

		if (rp->ntask == RP_MAX || gi < 0 || rp_find_task(rp, argv[1]))
			return rp_fail(rp, "task NAME group=PATH (a declared group, a new name)");
		snprintf(t->name, RP_NAME, "%s", argv[1]);
		t->g = rp->grp[gi].g;
		t->cpu = (v = rp_arg(argv, argc, "cpu")) ? (unsigned)strtoul(v, NULL, 10) : 0;
		if ((v = rp_arg(argv, argc, "start")) && rp_time(v, &t->ready))
			return rp_fail(rp, "bad time %s", v);
		t->state = T_RUNNING;
		rp->ntask++;
		return 0;
	}
	if (!strcmp(argv[0], "at") && argc >= 5 && !strcmp(argv[2], "group")) {
		struct rp_at *a = &rp->at[rp->nat];
		char *eq = strchr(argv[4], '=');

		if (rp->nat == RP_MAX || rp_time(argv[1], &a->t) || !eq ||
		    (a->group = rp_find_group(rp, argv[3])) < 0)
			return rp_fail(rp, "at TIME group PATH key=value");
		if (rp->nat && a->t < rp->at[rp->nat - 1].t)
			return rp_fail(rp, "at lines must come in time order");
		*eq = '\0';
		snprintf(a->key, RP_NAME, "%s", argv[4]);
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

static struct rp_region *rp_region(struct rp_task *t, const char *name)
{
	for (int i = 0; i < t->nreg; i++)
		if (!strcmp(t->reg[i].name, name))
			return &t->reg[i];
	return NULL;
}

static int rp_add_region(struct rp *rp, struct rp_task *t, const char *name, struct vm_region *r)
{
	if (t->nreg == RP_MAX || rp_region(t, name)) {
		vm_region_free(r);
		rp->line = t->ops[t->pc].line;
		return rp_fail(rp, "task %s: region %s exists or too many regions", t->name, name);
	}
	snprintf(t->reg[t->nreg].name, RP_NAME, "%s", name);
	t->reg[t->nreg++].r = r;
	return 0;
}

static void rp_drop_region(struct rp_task *t, struct rp_region *reg)
{
	vm_region_free(reg->r);
	*reg = t->reg[--t->nreg];
}

/* Which page the next touch of op hits. */
static uint32_t rp_pick(struct rp *rp, const struct rp_op *op, struct vm_region *r, long done)
{
	uint32_t n = r->npages, hot;

	switch (op->pattern) {
	case PAT_SEQ:
		return (uint32_t)(done % n);
	case PAT_RANDOM:
		return (uint32_t)(rp_rand(rp) % n);
	case PAT_HOT:
	default:
		hot = n * op->hot_q / 100;
		if (hot == 0)
			hot = 1;
		if (rp_rand(rp) % 100 < op->hot_p || hot == n)
			return (uint32_t)(rp_rand(rp) % hot);
		return hot + (uint32_t)(rp_rand(rp) % (n - hot));
	}
}

static void rp_exit(struct rp_task *t, enum rp_state how)
{
	if (t->obj) {
		vm_object_free(t->obj);
		t->obj = NULL;
	}
	t->nreg = 0;
	t->state = how;
}

/* One step of t: an operation, or up to RP_STEP pages of a touch. The
 * task's clock advances by what the step cost. */
static int rp_step(struct rp *rp, struct rp_task *t)
{
	struct rp_op *op;
	struct rp_region *reg;

	if (t->pc >= t->nops) {
		rp_exit(t, T_EXITED);
		return 0;
	}
	op = &t->ops[t->pc];
	if (!t->obj && !(t->obj = vm_object_new(rp->e, t->g, true, (uint32_t)(t - rp->task))))
		return rp_fail(rp, "out of memory");
	switch (op->code) {
	case OP_ALLOC: {
		struct vm_region *r;

		if (vm_region_new(t->obj, op->kind, (uint32_t)op->pages, &r))
			return rp_fail(rp, "task %s: cannot allocate %s", t->name, op->a);
		if (rp_add_region(rp, t, op->a, r))
			return -EINVAL;
		break;
	}
	case OP_MAP: {
		struct rp_file *f = NULL;
		struct vm_region *r;

		for (int i = 0; i < rp->nfile; i++)
			if (!strcmp(rp->file[i].name, op->a))
				f = &rp->file[i];
		rp->line = op->line;
		if (!f)
			return rp_fail(rp, "no file %s", op->a);
		if (vm_map_file(t->obj, f->r, (uint32_t)op->off,
				op->pages ? (uint32_t)op->pages : f->r->npages - (uint32_t)op->off, &r))
			return rp_fail(rp, "task %s: bad mapping of %s", t->name, op->a);
		if (rp_add_region(rp, t, op->b, r))
			return -EINVAL;
		break;
	}
	case OP_TOUCH: {
		long total;

		rp->line = op->line;
		if (!(reg = rp_region(t, op->a)))
			return rp_fail(rp, "task %s: no region %s", t->name, op->a);
		total = op->count ? op->count : reg->r->npages;
		for (int i = 0; i < RP_STEP && t->done < total; i++) {
			enum vm_fault f;
			uint64_t rng = rp->rng;
			int err = vm_touch(reg->r, rp_pick(rp, op, reg->r, t->done), t->cpu, op->write, &f);

			if (err == -EFAULT) {             /* killed by the OOM killer */
				rp_exit(t, T_KILLED);
				return 0;
			}
			if (err) {
				/* an OOM wait: retry the same page a millisecond later */
				rp->rng = rng;
				t->stalls++;
				t->ready += RP_NS_MS;
				return 0;
			}
			t->done++;
			t->ready += rp->cost_touch + (f == VM_MINOR ? rp->cost_fault : 0) +
				    (f == VM_MAJOR || f == VM_REFAULT ? rp->cost_major : 0);
		}
		if (t->done < total)
			return 0;
		t->done = 0;
		break;
	}
	case OP_FREE:
		rp->line = op->line;
		if (!(reg = rp_region(t, op->a)))
			return rp_fail(rp, "task %s: no region %s", t->name, op->a);
		rp_drop_region(t, reg);
		break;
	case OP_MLOCK:
	case OP_MUNLOCK:
		rp->line = op->line;
		if (!(reg = rp_region(t, op->a)))
			return rp_fail(rp, "task %s: no region %s", t->name, op->a);
		for (uint32_t i = 0; i < reg->r->npages; i++)
			vm_mlock(reg->r, i, op->code == OP_MLOCK);
		break;
	case OP_SLEEP:
		t->ready += op->ns;
		break;
	case OP_REPEAT:
		if (t->rsp == RP_DEPTH)
			return rp_fail(rp, "repeats nested too deep");
		t->rleft[t->rsp++] = op->count;
		break;
	case OP_END:
		if (--t->rleft[t->rsp - 1] > 0) {
			t->pc = op->match + 1;
			return 0;
		}
		t->rsp--;
		break;
	case OP_EXIT:
		rp_exit(t, T_EXITED);
		return 0;
	case OP_FORK: {
		struct rp_task *c = rp_find_task(rp, op->a);

		rp->line = op->line;
		if (!c || c->state != T_RUNNING || c->pc || c->obj)
			return rp_fail(rp, "task %s: cannot fork %s", t->name, op->a);
		c->g = t->g;
		c->ready = t->ready;
		break;
	}
	}
	t->pc++;
	return 0;
}

static void rp_print_time(FILE *out, uint64_t ns)
{
	if (ns % RP_NS_MS == 0)
		fprintf(out, "t=%" PRIu64 "ms", (uint64_t)(ns / RP_NS_MS));
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
	rp->cost_touch = 100;
	rp->cost_fault = 1000;
	rp->cost_major = 50000;
	rp->cfg = (struct mcg_config){ .mem_pages = 262144, .nodes = 1, .cpus = 4, .vm_swappiness = 60,
				       .kill = rp_kill, .hook_arg = rp };
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
		if (rp->task[i].obj)
			vm_object_free(rp->task[i].obj);
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
