/* test_mirror.c: reading /proc/PID/smaps into what the mirror charges:
 * anon, shmem and file mappings keyed by device, inode and offset; and the
 * ledger of eras that says which group holds which charge (§11.9); the
 * page cache the kernel's events report. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "os/openfiles.h"

#include "engine/task.h"
#include "engine_fixture.h"
#include "source/mirror.h"
#include "source/mirror_int.h"
#include "suites.h"

static const char smaps_text[] =
	"55d0c0000000-55d0c0002000 r--p 00000000 fe:00 5308512                    /usr/bin/prog\n"
	"Size:                  8 kB\n"
	"Rss:                   8 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Dirty:         0 kB\n"
	"Anonymous:             0 kB\n"
	"VmFlags: rd mr mw me dw sd\n"
	"55d0c0002000-55d0c0012000 rw-p 00002000 fe:00 5308512                    /usr/bin/prog\n"
	"Rss:                  64 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Dirty:        24 kB\n"
	"Anonymous:            16 kB\n"
	"7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n"
	"Rss:               65536 kB\n"
	"Private_Dirty:     65536 kB\n"
	"Anonymous:         65536 kB\n"
	"7f1000000000-7f1000100000 rw-s 00000000 00:01 1029                       /dev/zero (deleted)\n"
	"Rss:                1024 kB\n"
	"Anonymous:             0 kB\n"
	"7f2000000000-7f2000010000 rw-s 00000000 00:1a 77                         /run/x.shm\n"
	"Rss:                  40 kB\n"
	"Anonymous:             0 kB\n"
	"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
	"Rss:                   8 kB\n"
	"Anonymous:             0 kB\n"
	/* the first SysV segment of a machine: shmid, and so inode, 0 */
	"7f3000000000-7f3000100000 rw-s 00000000 00:01 0                          /SYSV00000000 (deleted)\n"
	"Rss:                 512 kB\n"
	"Anonymous:             0 kB\n"
	"7f4000000000-7f4000100000 rw-p 00000000 00:00 0 \n"
	"Rss:                1024 kB\n"
	"Anonymous:          1024 kB\n"
	"Locked:              768 kB\n";

struct seen {
	int n;
	struct mirror_vma v[8];
};

static void collect(const struct mirror_vma *v, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->v[s->n++] = *v;
}

static bool tmpfs_1a(unsigned long dev, void *arg)
{
	(void)arg;
	return dev == makedev(0, 0x1a);
}

START_TEST(test_smaps_parse)
{
	struct seen s = { 0 };

	ck_assert_int_eq(mirror_parse_smaps(smaps_text, tmpfs_1a, NULL, collect, &s), 8);
	/* a read-only file mapping: rss, no anon, keyed by dev/ino/offset */
	ck_assert_uint_eq(s.v[0].ino, 5308512);
	ck_assert_uint_eq(s.v[0].dev, makedev(0xfe, 0));
	ck_assert_uint_eq(s.v[0].off, 0);
	ck_assert_int_eq(s.v[0].rss, 2);
	ck_assert(!s.v[0].shmem);
	/* a private writable file mapping: its COW pages are anon */
	ck_assert_uint_eq(s.v[1].off, 2);
	ck_assert_int_eq(s.v[1].rss, 16);
	ck_assert_int_eq(s.v[1].anon, 4);
	ck_assert_int_eq(s.v[1].dirty, 6);
	/* anonymous memory */
	ck_assert_uint_eq(s.v[2].ino, 0);
	ck_assert_int_eq(s.v[2].anon, 16384);
	/* shared anon (/dev/zero on the internal shm mount) and tmpfs */
	ck_assert(s.v[3].shmem);
	ck_assert_int_eq(s.v[3].rss, 256);
	ck_assert(s.v[4].shmem);
	ck_assert_int_eq(s.v[4].rss, 10);
	ck_assert(!s.v[5].shmem);
	ck_assert_uint_eq(s.v[5].ino, 0);
	/* SysV shm with shmid 0 is shmem all the same */
	ck_assert(s.v[6].shmem);
	ck_assert_int_eq(s.v[6].rss, 128);
	/* mlocked anon */
	ck_assert_int_eq(s.v[7].anon, 256);
	ck_assert_int_eq(s.v[7].locked, 192);
	ck_assert_int_eq(s.v[2].locked, 0);
}
END_TEST

/* An engine without stock (counts are exact) and one process's record
 * in it, its object in the root, charging as the mirror's do. */
static struct mcg_engine *ledger_setup_env(struct source_env *env, struct mirror *m,
					   struct mirror_proc *p, const struct mcg_env *menv)
{
	struct mcg_machine cfg = { .mem_pages = 4096, .nodes = 1, .cpus = 1, .vm_swappiness = 60,
				   .no_stock = true };

	prof_init(&cfg.prof, PROF_DEFAULT);
	env->eng = mcg_engine_new(&cfg, menv, NULL);
	*m = (struct mirror){ .env = env };
	*p = (struct mirror_proc){ .m = m };
	p->obj = vm_object_new(env->eng, env->eng->root, true, 1);
	p->obj->real = true;
	p->mode.nowait = true;
	vm_object_set_mode(p->obj, &p->mode);
	return env->eng;
}

static struct mcg_engine *ledger_setup(struct source_env *env, struct mirror *m,
				       struct mirror_proc *p)
{
	return ledger_setup_env(env, m, p, NULL);
}

/* A sample's anon, mlocked and shmem pages as the kernel counts them:
 * shmem is cache, shmem and mapped_file and never dirty; mlocked anon is
 * rss on the unevictable list; an mlock of what the group holds needs no
 * room (the anon goes before the locked comes). */
START_TEST(test_ledger_kinds)
{
	struct source_env env;
	struct mirror m;
	struct mirror_proc p;
	struct mirror_sample s = { 0 };
	struct mcg_engine *e = ledger_setup(&env, &m, &p);
	struct mcg_group *g = fixture_group(e, e->root, "g");

	ck_assert_int_eq(mcg_set_limit(g, MCG_MEM, 100, NULL, NULL), 0);
	vm_object_set_group(p.obj, g);
	s.anon = 100;
	ck_assert_int_eq(mirror_ledger_sample(&p, &s, g, 0), 0);
	/* 60 of the 100 mlocked: at the limit all along */
	s.anon = 40;
	s.locked = 60;
	ck_assert_int_eq(mirror_ledger_sample(&p, &s, g, 0), 0);
	ck_assert_int_eq(mirror_ledger_mem(&p), 100);
	ck_assert_int_eq(stat_local(g, STAT_RSS), 100);
	ck_assert_int_eq(stat_lru_local(g, LRU_UNEVICTABLE, -1), 60);
	CHECK_OK(e);
	/* munlock of 20, then shmem */
	ck_assert_int_eq(mcg_set_limit(g, MCG_MEM, 200, NULL, NULL), 0);
	s.anon = 60;
	s.locked = 40;
	s.shmem = 50;
	ck_assert_int_eq(mirror_ledger_sample(&p, &s, g, 0), 0);
	ck_assert_int_eq(stat_lru_local(g, LRU_UNEVICTABLE, -1), 40);
	ck_assert_int_eq(stat_local(g, STAT_RSS), 100);
	ck_assert_int_eq(stat_local(g, STAT_SHMEM), 50);
	ck_assert_int_eq(stat_local(g, STAT_CACHE), 50);
	ck_assert_int_eq(stat_local(g, STAT_MAPPED_FILE), 50);
	ck_assert_int_eq(stat_local(g, STAT_DIRTY), 0);
	CHECK_OK(e);
	/* the shmem unmapped: uncharged with its mapping */
	s.shmem = 0;
	ck_assert_int_eq(mirror_ledger_sample(&p, &s, g, 0), 0);
	ck_assert_int_eq(stat_local(g, STAT_MAPPED_FILE) + stat_local(g, STAT_SHMEM), 0);
	mirror_ledger_clear(&p);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_MEM]), 0);
	ck_assert_int_eq(stat_lru_local(g, LRU_UNEVICTABLE, -1), 0);
	CHECK_OK(e);
	free(p.era);
	vm_object_free(p.obj);
	mcg_put(g);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_smaps_empty)
{
	struct seen s = { 0 };

	ck_assert_int_eq(mirror_parse_smaps("", NULL, NULL, collect, &s), 0);
	ck_assert_int_eq(mirror_parse_smaps("garbage\nRss: 4 kB\n", NULL, NULL, collect, &s), 0);
	ck_assert_int_eq(s.n, 0);
}
END_TEST

/* The ledger of one process, driven as samples drive it. */
START_TEST(test_ledger_follows_the_faulting_group)
{
	struct source_env env;
	struct mirror m;
	struct mirror_proc p;
	struct mcg_engine *e = ledger_setup(&env, &m, &p);
	struct mcg_group *root = e->root;
	struct mcg_group *g = fixture_group(e, root, "g"), *h = fixture_group(e, root, "h");

	/* seen first in the root: what it has only counts there */
	ck_assert_int_eq(mirror_ledger_set(&p, MK_ANON, root, 100, 0), 0);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_KMEM, root, 3, 0), 0);
	ck_assert_int_eq(mirror_ledger(&p, MK_ANON), 100);
	ck_assert_int_eq(mirror_charged(&p), 0);
	ck_assert_int_eq(rstat_item(root, STAT_RSS), 0);
	/* in g: only the growth is g's, kernel memory too */
	vm_object_set_group(p.obj, g);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_ANON, g, 116, 0), 0);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_KMEM, g, 5, 0), 0);
	ck_assert_int_eq(stat_local(g, STAT_RSS), 16);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_KMEM]), 2);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_MEM]), 18);
	CHECK_OK(e);
	/* in h: g keeps what it has */
	vm_object_set_group(p.obj, h);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_ANON, h, 132, 0), 0);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_KMEM, h, 6, 0), 0);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_MEM]), 18);
	ck_assert_int_eq(pc_usage(&h->cnt[MCG_MEM]), 17);
	CHECK_OK(e);
	/* freeing: the current group's first, then the others, newest first */
	ck_assert_int_eq(mirror_ledger_set(&p, MK_ANON, h, 110, 0), 0);
	ck_assert_int_eq(stat_local(h, STAT_RSS), 0);
	ck_assert_int_eq(stat_local(g, STAT_RSS), 10);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_ANON, h, 50, 0), 0);
	ck_assert_int_eq(stat_local(g, STAT_RSS), 0);
	ck_assert_int_eq(mirror_ledger(&p, MK_ANON), 50);       /* the root's rest */
	ck_assert_int_eq(mirror_ledger_set(&p, MK_KMEM, h, 4, 0), 0);
	ck_assert_int_eq(pc_usage(&h->cnt[MCG_KMEM]), 0);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_KMEM]), 1);
	CHECK_OK(e);
	/* moved out of the root (move charge): its eras there stop counting,
	 * so the next growth charges them where it is */
	mirror_ledger_leave_root(&p, MK_ANON);
	ck_assert_int_eq(mirror_ledger(&p, MK_ANON), 0);
	ck_assert_int_eq(mirror_ledger_set(&p, MK_ANON, h, 50, 0), 0);
	ck_assert_int_eq(stat_local(h, STAT_RSS), 50);
	/* an execve: everything goes */
	mirror_ledger_clear(&p);
	ck_assert_int_eq(mirror_ledger(&p, MK_ANON) + mirror_ledger(&p, MK_KMEM), 0);
	ck_assert_uint_eq(p.nera, 0);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_MEM]) + pc_usage(&h->cnt[MCG_MEM]), 0);
	CHECK_OK(e);
	free(p.era);
	vm_object_free(p.obj);
	mcg_put(g);
	mcg_put(h);
	mcg_engine_free(e);
}
END_TEST

/* A file mapping's pages resident in the root are its base; in a child
 * only what is beyond it is charged, and what it loses goes from the base
 * first. */
START_TEST(test_file_base)
{
	struct mirror_map mm = { 0 };
	struct mirror_vma v = { .rss = 40, .dirty = 10 };

	mirror_file_base(&mm, &v, false);
	ck_assert_int_eq(mm.base, 40);
	v = (struct mirror_vma){ .rss = 48, .dirty = 30 };
	mirror_file_base(&mm, &v, true);
	ck_assert_int_eq(v.rss, 8);
	ck_assert_int_eq(v.dirty, 8);
	v = (struct mirror_vma){ .rss = 30 };
	mirror_file_base(&mm, &v, true);          /* paged out */
	ck_assert_int_eq(mm.base, 30);
	ck_assert_int_eq(v.rss, 0);
}
END_TEST

static uint64_t *frames(const uint64_t *v, size_t n)
{
	uint64_t *p = malloc((n ? n : 1) * sizeof(*p));

	ck_assert_ptr_nonnull(p);
	memcpy(p, v, n * sizeof(*p));
	return p;
}

/* Frames shared copy-on-write are counted by the oldest live process
 * mapping them: a younger one that claimed them first gives them up, a
 * frame nobody shares any more leaves the table, an exit hands them on. */
START_TEST(test_shared_oldest_counts)
{
	struct mirror_shared t = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct mirror_claimer parent = { .tgid = 100, .start = 10, .alive = true };
	struct mirror_claimer child = { .tgid = 200, .start = 20, .alive = true };
	const uint64_t all[] = { 7, 3, 5, 3 }, one[] = { 5 };
	uint64_t *many;

	/* nothing shared: nothing to claim (no array at all) */
	ck_assert_int_eq(mirror_shared_claim(&t, &child, NULL, 0, false), 0);
	ck_assert_uint_eq(t.n, 0);
	/* the child is looked at first: they are its, until the parent is */
	ck_assert_int_eq(mirror_shared_claim(&t, &child, frames(all, 4), 4, false), 0);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_int_eq(mirror_shared_claim(&t, &parent, frames(all, 4), 4, false), 0);
	ck_assert_int_eq(mirror_shared_claim(&t, &child, frames(all, 4), 4, false), 3);
	/* the child wrote two of them: those are the parent's alone now */
	ck_assert_int_eq(mirror_shared_claim(&t, &parent, frames(one, 1), 1, false), 0);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_int_eq(mirror_shared_claim(&t, &child, frames(one, 1), 1, false), 1);
	/* the parent exits: the child counts what it still maps */
	mirror_shared_forget(&t, &parent);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_int_eq(mirror_shared_claim(&t, &child, frames(one, 1), 1, false), 0);
	ck_assert_uint_eq(t.n, 1);
	/* many frames: the table grows, and every claim goes with its owner */
	many = malloc(5000 * sizeof(*many));
	ck_assert_ptr_nonnull(many);
	for (size_t i = 0; i < 5000; i++)
		many[i] = 0x100000 + i * 4099;
	ck_assert_int_eq(mirror_shared_claim(&t, &child, many, 5000, false), 0);
	ck_assert_uint_eq(t.n, 5000);
	parent = (struct mirror_claimer){ .tgid = 100, .start = 10, .alive = true };
	many = malloc(2500 * sizeof(*many));
	ck_assert_ptr_nonnull(many);
	for (size_t i = 0; i < 2500; i++)
		many[i] = 0x100000 + (2 * i) * 4099;
	ck_assert_int_eq(mirror_shared_claim(&t, &parent, many, 2500, false), 0);
	ck_assert_int_eq(mirror_shared_claim(&t, &child, frames(child.pfn, child.n), child.n, false), 2500);
	mirror_shared_forget(&t, &child);
	ck_assert_uint_eq(t.n, 2500);
	mirror_shared_forget(&t, &parent);
	ck_assert_uint_eq(t.n, 0);
	for (size_t i = 0; i < t.cap; i++)
		ck_assert_ptr_null(t.slot[i].owner);
	mirror_shared_free(&t);
}
END_TEST

/* The events' state as mirror_pcache_start makes it, without the tracer
 * (the tests feed the events), and m's locks. */
static struct mirror_pcache *pcache_fixture(struct mirror *m)
{
	static const struct mirror_pc_hooks hooks = {
		.pin = mirror_proc_pin, .unpin = mirror_proc_unpin,
		.alarmed = mirror_alarmed, .dropped = mirror_files_dropped,
	};
	struct mirror_pcache *pc = calloc(1, sizeof(*pc));

	ck_assert_ptr_nonnull(pc);
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->files_lock, NULL);
	pthread_mutex_init(&pc->chunks_lock, NULL);
	pc->stopfd = -1;
	pc->hooks = hooks;
	mirror_pcache_sizes(pc);
	m->pc = pc;
	return pc;
}

/* What pcache_fixture and proc_fixture made goes, with g and the engine;
 * nothing may hold p any more. */
static void pcache_teardown(struct mirror *m, struct mirror_proc *p, struct mcg_group *g)
{
	struct mcg_engine *e = m->env->eng;

	mirror_pcache_stop(m);
	ck_assert_int_eq(atomic_load(&p->refs), 1);
	vm_object_free(p->obj);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&m->lock);
	mcg_put(g);
	mcg_engine_free(e);
}

/* p as a live record of process tgid. */
static void proc_fixture(struct mirror_proc *p, pid_t tgid)
{
	p->tgid = tgid;
	atomic_init(&p->refs, 1);
	pthread_mutex_init(&p->lock, NULL);
	p->pidfd = -1;
	p->stat_fd = -1;
	atomic_init(&p->watch_fd, -1);
}

/* The page-cache tracer's events, fed as the kernel would send them: a
 * folio added by a process of g is charged to g, once, as inactive file
 * cache (shmem on the anon list for tmpfs); dirtied, then clean at the
 * end of its inode's writeback; uncharged at its removal, its chunk freed
 * with its last page; a fork the daemon has not seen yet charges its
 * parent's group; the sampler's mappings leave out what the events hold. */
START_TEST(test_pcache_events)
{
	struct source_env env;
	struct mirror m;
	struct mirror_proc p;
	struct mcg_engine *e = ledger_setup(&env, &m, &p);
	struct mcg_group *g = fixture_group(e, e->root, "g");
	struct mirror_pcache *pc = pcache_fixture(&m);
	struct pcache_event ev = { .op = PCACHE_ADD, .tgid = 100, .ptgid = 1, .dev = (8u << 20) | 1,
				   .nr = 16, .ino = 42, .index = 1020 };
	int drop;

	proc_fixture(&p, 100);
	m.procs = &p;
	ck_assert_int_eq(task_attach(e, 100, 100, g, -1, &drop), 0);

	/* 16 pages across two chunks (1020..1035), reported twice */
	mirror_pcache_event(&m, &ev);
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_CACHE), 16);
	ck_assert_int_eq(stat_lru_local(g, LRU_INACTIVE_FILE, -1), 16);
	ck_assert_int_eq(pc->nchunks, 2);
	ck_assert_int_eq(mirror_pcache_held(&m, makedev(8, 1), 42, 1024, 100), 12);
	ck_assert_int_eq(mirror_pcache_held(&m, makedev(8, 1), 43, 1024, 100), 0);
	/* kernel memory: the tree nodes of the two blocks of 64 they sit in,
	 * charged as the page they round up to */
	ck_assert_int_eq(atomic_load(&pc->kmem_bytes), 2 * pc->node_size);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_KMEM]), 1);
	CHECK_OK(e);
	/* dirtied with a buffer head each, written back */
	ev.op = PCACHE_DIRTY;
	ev.nr = 4;
	ev.bh = 4;
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_DIRTY), 4);
	ck_assert_int_eq(atomic_load(&pc->kmem_bytes), 2 * pc->node_size + 4 * pc->bh_size);
	ev = (struct pcache_event){ .op = PCACHE_WRITTEN, .dev = ev.dev, .ino = 42 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_DIRTY), 0);
	/* removed: the first chunk's four, then the rest with its chunk */
	ev = (struct pcache_event){ .op = PCACHE_DEL, .dev = ev.dev, .ino = 42, .index = 1020, .nr = 4 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_CACHE), 12);
	ck_assert_int_eq(pc->nchunks, 1);
	ev.index = 1024;
	ev.nr = 12;
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_CACHE), 0);
	ck_assert_int_eq(pc->nchunks, 0);
	ck_assert_int_eq(atomic_load(&pc->removed), 16);
	ck_assert_int_eq(atomic_load(&pc->kmem_bytes), 0);
	ck_assert_int_eq(pc_usage(&g->cnt[MCG_KMEM]), 0);
	CHECK_OK(e);
	/* a memfd's pages: shmem, swap-backed */
	ev = (struct pcache_event){ .op = PCACHE_ADD, .tgid = 100, .dev = 1, .ino = 7, .nr = 8,
				    .shmem = 1 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_SHMEM), 8);
	ck_assert_int_eq(stat_lru_local(g, LRU_INACTIVE_ANON, -1), 8);
	ev.op = PCACHE_DEL;
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_SHMEM), 0);
	/* pages a page fault brought in: not charged here (the sampler's
	 * mapping stand-in may), counted as faulted while in the cache */
	ev = (struct pcache_event){ .op = PCACHE_ADD, .tgid = 100, .dev = 1, .ino = 9, .nr = 4,
				    .fault = 1 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(g, STAT_CACHE), 0);
	ck_assert_int_eq(mirror_pcache_faulted(&m, makedev(0, 1), 9, 0, 64, NULL), 4);
	ck_assert_int_eq(mirror_pcache_held(&m, makedev(0, 1), 9, 0, 64), 0);
	ev.op = PCACHE_DEL;
	ev.nr = 2;
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(mirror_pcache_faulted(&m, makedev(0, 1), 9, 0, 64, NULL), 2);
	ck_assert_int_eq(mirror_pcache_faulted(NULL, 0, 9, 0, 64, NULL), -1);
	/* a process the daemon has no record of, in no group: not charged */
	ev = (struct pcache_event){ .op = PCACHE_ADD, .tgid = 300, .ptgid = 1, .dev = 1, .ino = 8,
				    .nr = 2 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(atomic_load(&pc->unattributed), 2);
	ck_assert_int_eq(stat_local(g, STAT_CACHE), 0);
	CHECK_OK(e);

	pcache_teardown(&m, &p, g);
}
END_TEST

static bool pcscan_test_mincore;   /* the scan asks mincore(2) */

/* Does what the scan counts of pages [0, n) of fd (dev, ino) match the
 * host's page cache, page by page? The first page that differs, or -1. */
static long pcscan_differs(struct mirror *m, int fd, unsigned long dev, unsigned long ino, long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t kc, kd;
		long oc, od;

		ck_assert_int_eq(openfiles_cachestat(fd, (uint64_t)i, 1, &kc, &kd), 0);
		if (pcscan_test_mincore)
			kd = 0;               /* (mincore cannot tell dirty pages) */
		mirror_pcache_counts(m, dev, ino, (uint64_t)i, 1, &oc, &od);
		if ((long)kc != oc || (long)kd != od)
			return i;
	}
	return -1;
}

/* The scan's clock (its passes are at most one per MIRROR_SCAN_FRESH_NS
 * of it): the test moves it. */
static uint64_t pcscan_test_now = 1000000000;

static uint64_t pcscan_test_clock(void *arg)
{
	return pcscan_test_now;
}

static void pcscan_test_sleep(uint64_t ns, void *arg)
{
	pcscan_test_now += ns;
}

static const struct mcg_env_ops pcscan_test_env_ops = { .now = pcscan_test_clock,
							 .sleep = pcscan_test_sleep };

/* A pass of the scan, the clock past the last one's freshness. */
static void pcscan_test_pass(struct mirror *m)
{
	pcscan_test_now += MIRROR_SCAN_FRESH_NS;
	mirror_pcscan_drain(m, true);
}

/* Without the kernel's events, the scan of open files (cachestat(2), and
 * in loop 1 mincore(2), the way of kernels before 6.5): a file the
 * process has open with every third page in the host's page cache is
 * charged exactly those pages, each as the kernel has it; pages the host
 * drops go at the next look, pages written are dirty (cachestat only:
 * mincore cannot tell); closed, the file's pages are uncharged. */
START_TEST(test_pcscan_pages)
{
	struct source_env env;
	struct mirror m;
	struct mirror_proc p;
	struct mcg_engine *e = ledger_setup_env(&env, &m, &p,
						&(struct mcg_env){ &pcscan_test_env_ops, NULL });
	struct mcg_group *g = fixture_group(e, e->root, "g");
	char path[] = "/var/tmp/memcgfs-pcscan.XXXXXX", buf[64];
	static char page[4096];
	int fd = mkstemp(path), statfd, drop;
	pid_t me = getpid();
	uint64_t kc, kd;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(fstat(fd, &st), 0);
	if (openfiles_cachestat(fd, 0, 0, &kc, &kd)) {
		/* (a kernel before 6.5: the scan does not start there) */
		fprintf(stderr, "test_pcscan_pages: no cachestat(2) here, skipped\n");
		close(fd);
		vm_object_free(p.obj);
		mcg_put(g);
		mcg_engine_free(e);
		return;
	}
	for (int i = 0; i < 300; i++)
		ck_assert_int_eq(write(fd, page, sizeof(page)), sizeof(page));
	ck_assert_int_eq(fsync(fd), 0);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);   /* (no readahead) */
	for (int i = 0; i < 300; i += 3)
		ck_assert_int_eq(pread(fd, page, 1, (off_t)i * 4096), 1);
	ck_assert_int_eq(openfiles_cachestat(fd, 0, 0, &kc, &kd), 0);
	ck_assert_uint_ge(kc, 100);
	ck_assert_uint_lt(kc, 300);

	pcache_fixture(&m);
	proc_fixture(&p, me);
	p.pidfd = (int)syscall(SYS_pidfd_open, me, 0);
	ck_assert_int_ge(p.pidfd, 0);
	m.procs = &p;
	ck_assert_int_eq(task_attach(e, me, me, g, -1, &drop), 0);
	ck_assert_int_eq(mirror_pcscan_start(&m, false, _i == 1), 0);
	{
		int cs_err;

		ck_assert_str_eq(mirror_pcscan_way(&m, &cs_err), _i == 1 ? "mincore" : "cachestat");
		ck_assert_int_eq(cs_err, 0);
	}
	pcscan_test_mincore = _i == 1;
	pcscan_test_pass(&m);
	ck_assert_int_eq(pcscan_differs(&m, fd, st.st_dev, st.st_ino, 300), -1);
	ck_assert_int_ge(stat_local(g, STAT_CACHE), (long)kc);
	CHECK_OK(e);
	/* the host drops the first half; a page is written (dirty) */
	posix_fadvise(fd, 0, 150 * 4096, POSIX_FADV_DONTNEED);
	ck_assert_int_eq(pwrite(fd, page, sizeof(page), 200 * 4096), sizeof(page));
	pcscan_test_pass(&m);
	ck_assert_int_eq(pcscan_differs(&m, fd, st.st_dev, st.st_ino, 300), -1);
	ck_assert_int_eq(openfiles_cachestat(fd, 0, 150, &kc, &kd), 0);
	ck_assert_uint_eq(kc, 0);
	CHECK_OK(e);
	/* closed: its pages go (a read of our own stat moves the io count) */
	close(fd);
	statfd = open("/proc/self/stat", O_RDONLY);
	ck_assert_int_gt(read(statfd, buf, sizeof(buf)), 0);
	close(statfd);
	pcscan_test_pass(&m);
	{
		long oc, od;

		mirror_pcache_counts(&m, st.st_dev, st.st_ino, 0, 300, &oc, &od);
		ck_assert_int_eq(oc, 0);
	}
	CHECK_OK(e);

	mirror_pcscan_stop(&m);
	close(p.pidfd);
	pcache_teardown(&m, &p, g);
}
END_TEST

/* mincore(2) through a mapping counts what cachestat(2) counts, range by
 * range, through a descriptor open for reading, for writing only (a
 * reading one of the daemon's own is made) and of a memfd, and faults
 * nothing in; dirty pages it cannot tell are 0. */
START_TEST(test_openfiles_mincore)
{
	char path[] = "/var/tmp/memcgfs-mincore.XXXXXX";
	static char page[4096];
	int fd = mkstemp(path), wfd, mfd;
	uint64_t kc, kd, mc, md;
	static const uint64_t ranges[][2] = { { 0, 0 }, { 0, 64 }, { 3, 9 }, { 60, 10 },
					      { 63, 1 }, { 64, 5 }, { 0, 1 } };

	ck_assert_int_ge(fd, 0);
	wfd = open(path, O_WRONLY);
	unlink(path);
	ck_assert_int_ge(wfd, 0);
	if (openfiles_cachestat(fd, 0, 0, &kc, &kd)) {
		fprintf(stderr, "test_openfiles_mincore: no cachestat(2) to compare with, skipped\n");
		close(fd);
		close(wfd);
		return;
	}
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(write(fd, page, sizeof(page)), sizeof(page));
	ck_assert_int_eq(fsync(fd), 0);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (int i = 0; i < 64; i += 4)
		ck_assert_int_eq(pread(fd, page, 1, (off_t)i * 4096), 1);
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		ck_assert_int_eq(openfiles_cachestat(fd, ranges[r][0], ranges[r][1], &kc, &kd), 0);
		ck_assert_int_eq(openfiles_mincore(fd, ranges[r][0], ranges[r][1], &mc, &md), 0);
		ck_assert_uint_eq(mc, kc);
		ck_assert_uint_eq(md, 0);
		ck_assert_int_eq(openfiles_mincore(wfd, ranges[r][0], ranges[r][1], &mc, &md), 0);
		ck_assert_uint_eq(mc, kc);
	}
	/* (nothing was faulted in by the looks) */
	ck_assert_int_eq(openfiles_cachestat(fd, 0, 64, &kc, &kd), 0);
	ck_assert_uint_le(kc, 16 + 4);   /* (a read-around may bring a neighbour) */
	ck_assert_int_eq(openfiles_mincore(fd, 0, 64, &mc, &md), 0);
	ck_assert_uint_eq(mc, kc);
	close(fd);
	close(wfd);

	mfd = memfd_create("memcgfs-mincore", MFD_CLOEXEC);
	ck_assert_int_ge(mfd, 0);
	ck_assert_int_eq(ftruncate(mfd, 32 * 4096), 0);
	for (int i = 0; i < 32; i += 2)
		ck_assert_int_eq(pwrite(mfd, page, sizeof(page), (off_t)i * 4096), sizeof(page));
	ck_assert_int_eq(openfiles_mincore(mfd, 0, 0, &mc, &md), 0);
	ck_assert_uint_eq(mc, 16);
	ck_assert_int_eq(openfiles_mincore(mfd, 31, 4, &mc, &md), 0);
	ck_assert_uint_eq(mc, 0);
	close(mfd);
}
END_TEST

/* A mapping's stand-ins are the file's own pages: the pages a fault of a
 * process of ours brought in, charged by the mapping that finds them,
 * each gone the moment the kernel drops its page, mapped or not; a
 * process of another group that faults them in again pays for them (the
 * stand-ins of the first, killed before a sample could see the kernel
 * drop them, once kept them resident and charged to the first). */
START_TEST(test_pcache_mapping_pages)
{
	struct source_env env;
	struct mirror m;
	struct mirror_proc p, p2;
	struct mcg_engine *e = ledger_setup(&env, &m, &p);
	struct mcg_group *a = fixture_group(e, e->root, "a"), *b = fixture_group(e, e->root, "b");
	struct pcache_event ev = { .op = PCACHE_ADD, .tgid = 100, .ptgid = 1, .dev = 1, .ino = 9,
				   .index = 0, .nr = 64, .fault = 1 };
	struct mirror_vma v = { .start = 1ul << 30, .end = (1ul << 30) + 64 * PC_PAGE_SIZE,
				.dev = makedev(0, 1), .ino = 9 };
	struct mirror_map *mm;
	int drop;

	pcache_fixture(&m);
	p2 = (struct mirror_proc){ .m = &m };
	p2.obj = vm_object_new(e, e->root, true, 1);
	p2.obj->real = true;
	p2.mode.nowait = true;
	vm_object_set_mode(p2.obj, &p2.mode);
	proc_fixture(&p, 100);
	proc_fixture(&p2, 200);
	p.next = &p2;
	m.procs = &p;
	ck_assert_int_eq(task_attach(e, 100, 100, a, -1, &drop), 0);
	ck_assert_int_eq(task_attach(e, 200, 200, b, -1, &drop), 0);

	/* a's process faults the 64 pages in and maps them: a pays, once */
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 0);
	vm_object_set_group(p.obj, a);
	ck_assert_ptr_nonnull(mm = mirror_map_for(&m, &p, &v));
	ck_assert_int_eq(mirror_fill(&m, mm, 64, 0, 0, false), 0);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 64);
	ck_assert_int_eq(stat_local(a, STAT_MAPPED_FILE), 64);
	ck_assert_int_eq(mirror_fill(&m, mm, 64, 0, 0, false), 0);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 64);
	CHECK_OK(e);
	/* the kernel drops 16 of them (a pageout), then the rest once the
	 * mapping has gone: each goes from a at once, with no sample */
	ev = (struct pcache_event){ .op = PCACHE_DEL, .dev = 1, .ino = 9, .index = 48, .nr = 16 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 48);
	ck_assert(!vm_resident(mm->f->r, 50) && vm_resident(mm->f->r, 47));
	mirror_map_gone(&m, mm);
	vm_region_free(mm->map);
	p.nmap = 0;
	ev.index = 0;
	ev.nr = 48;
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 0);
	CHECK_OK(e);
	/* b's process faults them in again: b pays, a nothing */
	ev = (struct pcache_event){ .op = PCACHE_ADD, .tgid = 200, .ptgid = 1, .dev = 1, .ino = 9,
				    .index = 0, .nr = 64, .fault = 1 };
	mirror_pcache_event(&m, &ev);
	vm_object_set_group(p2.obj, b);
	ck_assert_ptr_nonnull(mm = mirror_map_for(&m, &p2, &v));
	ck_assert_int_eq(mirror_fill(&m, mm, 64, 0, 0, false), 0);
	ck_assert_int_eq(stat_local(b, STAT_CACHE), 64);
	ck_assert_int_eq(stat_local(a, STAT_CACHE), 0);
	/* only pages a fault of ours brought in, and which: 8 read(2) by an
	 * outsider after the kernel dropped them are not b's */
	ev = (struct pcache_event){ .op = PCACHE_DEL, .dev = 1, .ino = 9, .index = 8, .nr = 8 };
	mirror_pcache_event(&m, &ev);
	ck_assert_int_eq(mirror_fill(&m, mm, 64, 0, 0, false), 0);
	ck_assert_int_eq(stat_local(b, STAT_CACHE), 56);
	for (uint32_t i = 0; i < 64; i++)
		ck_assert_int_eq(vm_resident(mm->f->r, i), i < 8 || i >= 16);
	CHECK_OK(e);

	mirror_map_gone(&m, mm);
	vm_region_free(mm->map);
	p2.nmap = 0;
	mirror_pcache_stop(&m);
	for (unsigned k = 0; k < MIRROR_FILE_BUCKETS; k++)
		while (m.files[k]) {
			struct mirror_file *f = m.files[k];

			m.files[k] = f->next;
			vm_object_free(f->obj);
			free(f);
		}
	free(p.map);
	free(p2.map);
	vm_object_free(p.obj);
	vm_object_free(p2.obj);
	pthread_mutex_destroy(&p.lock);
	pthread_mutex_destroy(&p2.lock);
	pthread_mutex_destroy(&m.files_lock);
	pthread_mutex_destroy(&m.lock);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(mirror)
{
	Suite *s = suite_create("mirror");
	TCase *tc = tcase_create("smaps");

	tcase_add_test(tc, test_smaps_parse);
	tcase_add_test(tc, test_smaps_empty);
	suite_add_tcase(s, tc);
	tc = tcase_create("ledger");
	tcase_add_test(tc, test_ledger_follows_the_faulting_group);
	tcase_add_test(tc, test_ledger_kinds);
	tcase_add_test(tc, test_file_base);
	tcase_add_test(tc, test_shared_oldest_counts);
	tcase_add_test(tc, test_pcache_events);
	tcase_add_test(tc, test_pcache_mapping_pages);
	tcase_add_loop_test(tc, test_pcscan_pages, 0, 2);
	tcase_add_test(tc, test_openfiles_mincore);
	suite_add_tcase(s, tc);
	return s;
}
