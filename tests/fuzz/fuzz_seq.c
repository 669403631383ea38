/* fuzz_seq.c: libFuzzer harness that runs its input as a program of engine
 * operations (groups, limits, settings, simulated tasks and files, faults,
 * attaches, charge moves, frees) on a fresh engine and checks invariants
 * after it and after teardown. Owns that engine only: never looks at or
 * signals a real process and never touches a file. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bgreclaim.h"
#include "engine/charge.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/internal.h"   /* (white-box: the engine's state between inputs) */
#include "engine/move.h"
#include "engine/reclaim.h"
#include "engine/swap.h"
#include "engine/task.h"
#include "engine/vm.h"
#include "fs/cgfiles.h"

#define FS_GROUPS  12
#define FS_TASKS   6
#define FS_FILES   3
#define FS_REGIONS 4
#define FS_TID0    100000       /* simulated thread ids: no real task is asked */

#define FS_FAIL(...) do {                                                   \
	fprintf(stderr, "fuzz_seq: " __VA_ARGS__);                          \
	fputc('\n', stderr);                                                \
	abort();                                                            \
} while (0)

struct fs_task {
	struct vm_object *o;         /* NULL: free slot */
	pid_t tid;
	int nr;
	struct vm_region *r[FS_REGIONS];
	int file[FS_REGIONS];        /* the mapped file's slot, or -1 */
};

struct fs_file {
	struct vm_object *o;         /* NULL: free slot */
	struct vm_region *r;
	int maps;                    /* task regions mapping it */
};

struct fs_state {
	struct cgfs fs;
	struct mcg_engine *e;
	struct mcg_group *g[FS_GROUPS];   /* referenced; [0] is the root */
	int ng;
	long kmem[FS_GROUPS];             /* kernel memory we charged */
	struct fs_task t[FS_TASKS];
	struct fs_file f[FS_FILES];
	pid_t next_tid;
	uint64_t now;
	const uint8_t *p, *end;           /* the program */
	unsigned step;
};

static const unsigned fs_versions[] = {
	PROF_KV(4, 19), PROF_KV(5, 10), PROF_KV(6, 12), PROF_KV(6, 18),
};

/* Limits, in pages; the last is "-1". */
static const long fs_limits[] = { 0, 1, 4, 16, 32, 64, 128, 256, 1024, PC_MAX };
#define FS_NLIMITS (sizeof(fs_limits) / sizeof(fs_limits[0]))

static const char *const fs_op_names[] = {
	"mkdir", "rmdir", "limit", "use_hierarchy", "move_charge", "task_new", "region", "map",
	"touch", "file_touch", "discard", "mlock", "region_free", "task_free", "attach", "move",
	"force_empty", "oom_control", "swappiness", "bgr", "drain", "kmem", "file_new",
	"file_free", "reclaim", "wmark", "check",
};

/* FUZZ_SEQ_TRACE=1: each operation and the groups' usage after it, to
 * read a reproducer (the harness is quiet otherwise). */
static bool fs_trace;
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fs_trace = getenv("FUZZ_SEQ_TRACE") != NULL;
	return 0;
}

static void fs_trace_op(struct fs_state *s, unsigned op)
{
	const size_t nops = sizeof(fs_op_names) / sizeof(fs_op_names[0]);

	fprintf(stderr, "%3u %-13s", s->step, fs_op_names[op % nops]);
	for (int i = 0; i < s->ng; i++)
		fprintf(stderr, " %u%s:%ld/%ld%s", s->g[i]->id, s->g[i]->removed ? "R" : "",
			pc_usage(&s->g[i]->cnt[MCG_MEM]), pc_usage(&s->g[i]->cnt[MCG_MEMSW]),
			s->g[i]->cnt[MCG_MEM].parent ? "" : "*");
	fputc('\n', stderr);
}

static unsigned fs_byte(struct fs_state *s)
{
	return s->p < s->end ? *s->p++ : 0;
}

static uint64_t fs_clock(void *arg)
{
	struct fs_state *s = arg;

	return s->now += 1000000;       /* simulated: writeback never sleeps */
}

static void fs_sleep(uint64_t ns, void *arg)
{
	/* simulated: a writeback wait passes no time */
}

static void fs_kill(uint32_t id, struct mcg_group *over, struct mcg_group *vg, void *arg)
{
	/* the engine reaps the victim; no process stands behind it */
}

static struct mcg_group *fs_group(struct fs_state *s)
{
	return s->g[fs_byte(s) % s->ng];
}

static struct fs_task *fs_task_of(struct fs_state *s)
{
	struct fs_task *t = &s->t[fs_byte(s) % FS_TASKS];

	return t->o ? t : NULL;
}

static void fs_mark_linked(const struct mcg_group *g, bool *linked)
{
	linked[g->id] = true;
	for (const struct mcg_group *c = g->children; c; c = c->sibling)
		fs_mark_linked(c, linked);
}

static void fs_check(struct fs_state *s, const char *when)
{
	struct mcg_engine *e = s->e;
	static bool linked[MCG_ID_MAX + 1];
	char msg[512];

	if (check_invariants(e, msg, sizeof(msg)))
		FS_FAIL("invariants %s (step %u, profile %u): %s", when, s->step,
			e->m.prof.version, msg);
	/* The checker counts pages per group of the tree; a page whose group
	 * has left the tree (reaped) would count nowhere. */
	memset(linked, 0, sizeof(linked));
	pthread_rwlock_rdlock(&e->tree_lock);
	fs_mark_linked(e->root, linked);
	pthread_rwlock_unlock(&e->tree_lock);
	for (uint32_t i = 0; i < e->pages.nr_pages; i++)
		if (e->pages.pages[i].memcg && !linked[e->pages.pages[i].memcg])
			FS_FAIL("%s (step %u, profile %u): page %u charged to group %u, which left the tree",
				when, s->step, e->m.prof.version, i, e->pages.pages[i].memcg);
	for (uint32_t i = 0; i < e->swap->nr_slots; i++)
		if (e->swap->memcg[i] && !linked[e->swap->memcg[i]])
			FS_FAIL("%s (step %u, profile %u): swap slot %u charged to group %u, which left the tree",
				when, s->step, e->m.prof.version, i, e->swap->memcg[i]);
}

/* One write(2) through the file table, as the daemon would do it. */
static int fs_write(struct fs_state *s, struct mcg_group *g, const char *name, const char *text)
{
	struct cgfs_fh fh = { .g = g, .uid = 0, .agent_cap = true };
	struct cgfs_req r = { .fs = &s->fs, .g = g, .fh = &fh, .pid = 0x3ffffff0 };
	int row = cgfs_file_lookup(&s->fs, name, mcg_is_root(g));

	if (row < 0)
		return -ENOENT;
	fh.row = row;
	return cgfs_file_write(&r, &cgfs_files[row], text, strlen(text));
}

static int fs_write_pages(struct fs_state *s, struct mcg_group *g, const char *name, long pages)
{
	char text[32];

	if (pages == PC_MAX)
		snprintf(text, sizeof(text), "-1");
	else
		snprintf(text, sizeof(text), "%ld", pages * PC_PAGE_SIZE);
	return fs_write(s, g, name, text);
}

/* The daemon's attach of a simulated task (tasks.c then sim.c): with
 * move_charge_at_immigrate on the destination (and the profile allowing
 * it), the charges move first and a failed move fails the attach. */
static void fs_attach(struct fs_state *s, struct fs_task *t, struct mcg_group *g)
{
	unsigned mask = atomic_load(&g->move_charge);
	struct move_stats st;
	int drop;

	if (g->removed)
		return;                                   /* ENODEV up front */
	if (!prof_has(&s->e->m.prof, PF_NO_MOVE_CHARGE) && mask && !atomic_load(&t->o->dead)) {
		if (move_charges(t->o, g, mask, &st))
			return;
	}
	task_attach(s->e, t->tid, t->tid, g, -1, &drop);
}

/* Before each of its operations a simulated task charges the group the
 * task table says it is in (sim.c). */
static void fs_task_group(struct fs_state *s, struct fs_task *t)
{
	struct mcg_group *g = task_group(s->e, t->tid);

	vm_object_set_group(t->o, g);
	mcg_put(g);
}

static void fs_region_free(struct fs_state *s, struct fs_task *t, int i)
{
	vm_region_free(t->r[i]);
	if (t->file[i] >= 0)
		s->f[t->file[i]].maps--;
	t->r[i] = t->r[t->nr - 1];
	t->file[i] = t->file[t->nr - 1];
	t->nr--;
}

static void fs_task_free(struct fs_state *s, struct fs_task *t)
{
	task_exit(s->e, t->tid, -1);      /* -ENOENT when it was in the root */
	for (int i = 0; i < t->nr; i++)
		if (t->file[i] >= 0)
			s->f[t->file[i]].maps--;
	vm_object_free(t->o);
	memset(t, 0, sizeof(*t));
}

enum fs_op {
	OP_MKDIR, OP_RMDIR, OP_LIMIT, OP_HIERARCHY, OP_MOVE_CHARGE, OP_TASK_NEW, OP_REGION,
	OP_MAP, OP_TOUCH, OP_FILE_TOUCH, OP_DISCARD, OP_MLOCK, OP_REGION_FREE, OP_TASK_FREE,
	OP_ATTACH, OP_MOVE, OP_FORCE_EMPTY, OP_OOM_CONTROL, OP_SWAPPINESS, OP_BGR, OP_DRAIN,
	OP_KMEM, OP_FILE_NEW, OP_FILE_FREE, OP_RECLAIM, OP_WMARK, OP_CHECK,
	OP__COUNT
};
_Static_assert(sizeof(fs_op_names) / sizeof(fs_op_names[0]) == OP__COUNT, "a name per operation");

static void fs_op(struct fs_state *s, unsigned op)
{
	static const char *const limit_files[] = {
		"memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.soft_limit_in_bytes",
		"memory.kmem.limit_in_bytes", "memory.kmem.tcp.limit_in_bytes",
	};
	struct mcg_group *g, *c;
	struct fs_task *t;
	struct fs_file *f;
	struct move_stats st;
	enum vm_fault fault;
	unsigned a, b, n;
	uint64_t due;
	char name[16];
	int drop;

	switch ((enum fs_op)(op % OP__COUNT)) {
	case OP_MKDIR:
		g = fs_group(s);
		snprintf(name, sizeof(name), "g%u", fs_byte(s) % 8);
		if (s->ng < FS_GROUPS && mcg_create(s->e, g, name, NULL, NULL, &c) == 0)
			s->g[s->ng++] = c;
		break;
	case OP_RMDIR:
		g = fs_group(s);
		if (mcg_remove(s->e, g) == 0 && !g->removed)
			FS_FAIL("rmdir succeeded, group not removed");
		break;
	case OP_LIMIT:
		g = fs_group(s);
		a = fs_byte(s);
		fs_write_pages(s, g, limit_files[a % 5], fs_limits[fs_byte(s) % FS_NLIMITS]);
		break;
	case OP_HIERARCHY:
		g = fs_group(s);
		mcg_set_use_hierarchy(g, fs_byte(s) % 3);
		break;
	case OP_MOVE_CHARGE:
		g = fs_group(s);
		mcg_set_move_charge(g, fs_byte(s) % 5);
		break;
	case OP_TASK_NEW:
		t = &s->t[fs_byte(s) % FS_TASKS];
		g = fs_group(s);
		if (t->o || g->removed)
			break;
		t->tid = s->next_tid++;
		if (!(t->o = vm_object_new(s->e, g, true, (uint32_t)t->tid)))
			FS_FAIL("vm_object_new");
		if (task_attach(s->e, t->tid, t->tid, g, -1, &drop))
			fs_task_free(s, t);
		break;
	case OP_REGION:
		t = fs_task_of(s);
		a = fs_byte(s);
		n = 1 + fs_byte(s) % 64;
		if (!t || t->nr == FS_REGIONS)
			break;
		if (vm_region_new(t->o, (enum page_kind)(PK_ANON + a % 3), n, &t->r[t->nr]) == 0)
			t->file[t->nr++] = -1;
		break;
	case OP_MAP:
		t = fs_task_of(s);
		a = fs_byte(s) % FS_FILES;
		b = fs_byte(s);
		n = 1 + fs_byte(s) % 64;
		f = &s->f[a];
		if (!t || !f->o || t->nr == FS_REGIONS)
			break;
		b %= f->r->npages;
		if (n > f->r->npages - b)
			n = f->r->npages - b;
		if (vm_map_file(t->o, f->r, b, n, &t->r[t->nr]) == 0) {
			t->file[t->nr++] = (int)a;
			f->maps++;
		}
		break;
	case OP_TOUCH:
	case OP_DISCARD:
	case OP_MLOCK: {
		struct vm_region *r;

		t = fs_task_of(s);
		a = fs_byte(s);
		b = fs_byte(s);
		n = 1 + fs_byte(s) % 48;
		if (!t || !t->nr)
			break;
		r = t->r[a % t->nr];
		fs_task_group(s, t);
		for (unsigned i = 0; i < n; i++) {
			uint32_t pg = (b + i) % r->npages;

			if (op % OP__COUNT == OP_TOUCH)
				vm_touch(r, pg, i & 1, a & 0x80, &fault);
			else if (op % OP__COUNT == OP_DISCARD)
				vm_discard(r, pg, NULL);
			else
				vm_mlock(r, pg, a & 0x80);
		}
		break;
	}
	case OP_FILE_TOUCH:
		f = &s->f[fs_byte(s) % FS_FILES];
		a = fs_byte(s);
		n = 1 + fs_byte(s) % 48;
		if (!f->o)
			break;
		for (unsigned i = 0; i < n; i++)
			vm_touch(f->r, (a + i) % f->r->npages, i & 1, a & 1, &fault);
		break;
	case OP_REGION_FREE:
		t = fs_task_of(s);
		a = fs_byte(s);
		if (t && t->nr)
			fs_region_free(s, t, (int)(a % t->nr));
		break;
	case OP_TASK_FREE:
		if ((t = fs_task_of(s)))
			fs_task_free(s, t);
		break;
	case OP_ATTACH:
		t = fs_task_of(s);
		g = fs_group(s);
		if (t)
			fs_attach(s, t, g);
		break;
	case OP_MOVE:
		/* the engine's move on its own, to any group: unlinked counters
		 * (use_hierarchy 0), the root and back, or a group rmdir has
		 * removed (ENODEV, nothing moved) */
		t = fs_task_of(s);
		g = fs_group(s);
		a = fs_byte(s);
		if (!t)
			break;
		move_charges(t->o, g, 1 + a % 3, &st);
		break;
	case OP_FORCE_EMPTY:
		fs_write(s, fs_group(s), "memory.force_empty", "1");
		break;
	case OP_OOM_CONTROL:
		g = fs_group(s);
		mcg_set_oom_control(g, fs_byte(s) % 2);
		break;
	case OP_SWAPPINESS:
		g = fs_group(s);
		mcg_set_swappiness(g, fs_byte(s) % 201);
		break;
	case OP_BGR:
		for (n = fs_byte(s) % 8; n > 0; n--)
			bgr_step(s->e, &due);
		break;
	case OP_DRAIN:
		a = fs_byte(s);
		charge_drain(s->e, a & 1 ? NULL : s->g[a % s->ng]);
		break;
	case OP_KMEM:
		a = fs_byte(s) % s->ng;
		b = fs_byte(s);
		n = 1 + b % 16;
		g = s->g[a];
		if (!(b & 0x80)) {
			if (charge_kmem(g, b & 1, n, NULL) == 0 && !mcg_is_root(g))
				s->kmem[a] += n;
		} else if (s->kmem[a] >= n) {
			uncharge_kmem(g, n);
			s->kmem[a] -= n;
		}
		break;
	case OP_FILE_NEW:
		f = &s->f[fs_byte(s) % FS_FILES];
		g = fs_group(s);
		n = 1 + fs_byte(s) % 64;
		if (f->o)
			break;
		/* page cache belongs to no task (sim.c makes it in the root) */
		if (!(f->o = vm_object_new(s->e, g, false, 0)))
			FS_FAIL("vm_object_new");
		if (vm_region_new(f->o, PK_FILE, n, &f->r)) {
			vm_object_free(f->o);
			memset(f, 0, sizeof(*f));
		}
		break;
	case OP_FILE_FREE:
		f = &s->f[fs_byte(s) % FS_FILES];
		if (f->o && !f->maps) {
			vm_object_free(f->o);
			memset(f, 0, sizeof(*f));
		}
		break;
	case OP_RECLAIM:
		g = fs_group(s);
		a = fs_byte(s);
		reclaim_subtree(g, 1 + a % 64, a & 0x80, RECLAIM_DIRECT);
		break;
	case OP_WMARK:
		g = fs_group(s);
		a = fs_byte(s);
		fs_write_pages(s, g, a & 1 ? "memory.high_watermark_in_bytes" :
			       "memory.low_watermark_in_bytes", fs_limits[fs_byte(s) % FS_NLIMITS]);
		break;
	case OP_CHECK:
		fs_check(s, "mid-program");
		break;
	case OP__COUNT:
		break;
	}
}

/* Byte 0: bits 0-1 profile, 2 swap, 3 no stock, 4 two nodes, 5 two CPUs,
 * 6 watermarks (background reclaim by OP_BGR), 7 a small machine. Then
 * operations, each an opcode byte and its argument bytes. */
/* What is left on counter pc once nothing else is charged: the structures
 * of the live groups whose mkdir charged a counter that leads to it
 * (§11.5: each child's cost is its parent's kernel memory; the root's
 * children cost nothing). */
static long fs_structures(struct fs_state *s, const struct pc_counter *pc)
{
	long n = 0;

	for (int i = 0; i < s->ng; i++) {
		const struct mcg_group *d = s->g[i];
		static const enum mcg_counter charged[] = { MCG_MEM, MCG_MEMSW, MCG_KMEM };

		if (!d->parent || !d->mkdir_kmem)
			continue;
		for (unsigned c = 0; c < sizeof(charged) / sizeof(charged[0]); c++)
			for (const struct pc_counter *up = &d->parent->cnt[charged[c]]; up; up = up->parent)
				if (up == pc)
					n += d->mkdir_kmem;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fs_state *s;
	struct mcg_machine cfg = { .vm_swappiness = 60 };
	/* one thread, no workers, simulated time; the killed task's owner */
	static const struct mcg_env_ops env_ops = { .now = fs_clock, .sleep = fs_sleep };
	static const struct mcg_owner_ops owner_ops = { .kill = fs_kill };
	unsigned b0;

	if (len < 1)
		return 0;
	if (!(s = calloc(1, sizeof(*s))))
		abort();
	b0 = data[0];
	prof_init(&cfg.prof, fs_versions[b0 & 3]);
	cfg.swap_pages = b0 & 4 ? 256 : 0;
	cfg.no_stock = b0 & 8;
	cfg.nodes = b0 & 16 ? 2 : 1;
	cfg.cpus = b0 & 32 ? 2 : 1;
	cfg.watermarks = b0 & 64;
	cfg.mem_pages = b0 & 128 ? 256 : 2048;
	if (!(s->e = mcg_engine_new(&cfg, &(struct mcg_env){ &env_ops, s },
				    &(struct mcg_owner){ &owner_ops, s })))
		FS_FAIL("engine");
	s->fs.eng = s->e;
	s->fs.prof = &s->e->m.prof;
	s->fs.watermarks = true;
	cgfs_init(&s->fs);
	mcg_get(s->e->root);
	s->g[0] = s->e->root;
	s->ng = 1;
	s->next_tid = FS_TID0;
	s->p = data + 1;
	s->end = data + len;
	for (s->step = 0; s->p < s->end; s->step++) {
		unsigned op = fs_byte(s);

		fs_op(s, op);
		if (fs_trace)
			fs_trace_op(s, op);
	}
	fs_check(s, "after the program");

	/* Tear down: everything charged goes, and the counters must say so. */
	for (int i = 0; i < FS_TASKS; i++)
		if (s->t[i].o)
			fs_task_free(s, &s->t[i]);
	for (int i = 0; i < FS_FILES; i++)
		if (s->f[i].o)
			vm_object_free(s->f[i].o);
	for (int i = 0; i < s->ng; i++)
		if (s->kmem[i])
			uncharge_kmem(s->g[i], s->kmem[i]);
	charge_drain(s->e, NULL);
	fs_check(s, "after teardown");
	for (uint32_t i = 0; i < s->e->pages.nr_pages; i++)
		if (s->e->pages.pages[i].memcg)
			FS_FAIL("page %u still owned by group %u after teardown", i,
				s->e->pages.pages[i].memcg);
	for (int i = 0; i < s->ng; i++) {
		struct mcg_group *g = s->g[i];

		for (int c = 0; c < MCG__NCOUNTERS; c++)
			if (pc_usage(&g->cnt[c]) != fs_structures(s, &g->cnt[c]))
				FS_FAIL("group %u counter %d: %ld pages after teardown, want %ld", g->id,
					c, pc_usage(&g->cnt[c]), fs_structures(s, &g->cnt[c]));
		if (g->removed && !g->reaped)
			FS_FAIL("removed group %u not reaped after teardown", g->id);
	}
	for (int i = 0; i < s->ng; i++)
		mcg_put(s->g[i]);
	mcg_engine_free(s->e);
	cgfs_destroy(&s->fs);
	free(s);
	return 0;
}
