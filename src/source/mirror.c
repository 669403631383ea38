/* mirror.c: real processes as stand-in pages. One thread samples every
 * mirrored process from /proc/PID/smaps (more often near a limit, and on
 * reads of usage and statistics) and reconciles the engine with it:
 *  - anon and shmem growth is charged to the process's current group, in a
 *    ledger of eras (one per stay in a group); shrinkage uncharges the
 *    current group's eras first, then the others, most recent first;
 *  - file pages are stand-ins shared by every process that maps the same
 *    device, inode and offset range, charged to the group that faults them
 *    in first, and left as page cache when the mapping goes;
 *  - what the engine's reclaim evicts from a file stand-in is paged out of
 *    the real process with process_madvise(MADV_PAGEOUT);
 *  - an OOM kill of a stand-in object is a SIGKILL (the engine's kill hook),
 *    and with oom_kill_disable the growing process gets SIGSTOP, under_oom,
 *    and SIGCONT once the group has room again.
 * Lock order: a process's lock, then engine locks; the mirror's own lock
 * and the file table's are never held while charging. Never signals the
 * daemon, any PID 1 or an oom_score_adj -1000 process. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine/charge.h"
#include "engine/memcg.h"
#include "engine/move.h"
#include "engine/oom.h"
#include "engine/task.h"
#include "engine/vm.h"
#include "source/mirror.h"
#include "source/source.h"
#include "source/proc.h"
#include "source/sim.h"
#include "source/watchdog.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define MIRROR_FILE_BUCKETS 1024
#define MIRROR_MAX_FILES    65536
#define MIRROR_REGION_MIN   256          /* ledger regions grow 256 .. 65536 pages */
#define MIRROR_REGION_MAX   65536
#define MIRROR_IOV          64

struct mirror_file {
	unsigned long dev, ino, off;
	uint32_t npages;
	struct vm_object *obj;
	struct vm_region *r;
	struct mirror_file *next;
};

/* Pages of one kind charged during one stay in a group, filled from 0. */
struct mirror_era {
	enum page_kind kind;
	struct mcg_group *g;          /* referenced */
	long pages;
	long cap;                     /* sum of the regions' sizes */
	struct vm_region **reg;
	unsigned nreg;
};

struct mirror_map {
	unsigned long start;
	struct mirror_file *f;
	struct vm_region *map;        /* the process's mapping of f->r */
	unsigned seen;                /* f's evictions already paged out here */
	long base;                    /* resident before it became a simulated task */
	bool alive;
};

struct mirror_proc {
	struct mirror *m;
	pid_t tgid;
	int pidfd;
	atomic_int refs;
	pthread_mutex_t lock;         /* everything below */
	struct vm_object *obj;
	struct mirror_era *era;       /* oldest first */
	unsigned nera;
	struct mirror_map *map;
	unsigned nmap, capmap;
	uint64_t born_ns;             /* when the mirror first saw it */
	uint64_t last_ns;
	_Atomic uint64_t next_ns;     /* also set by mirror_track */
	long last_pages;
	struct mcg_group *stopped;    /* SIGSTOPped for this group's OOM */
	struct mcg_group *kmem_g;     /* where its kernel memory is charged */
	long kmem;                    /* pages: page tables and kernel stacks */
	atomic_bool gone;             /* set under lock; read without by the reaper */
	bool sim;                     /* a simulated task: charged past its baseline */
	long base_anon, base_shmem;   /* its memory when it connected */
	long base_kmem;               /* its page tables and stacks then */
	long sim_left;                /* slack the last sample left for kmem */
	struct mirror_proc *next;
};

struct mirror {
	struct source_env *env;
	bool enforce;
	pthread_mutex_t lock;         /* procs, stop */
	pthread_cond_t wake;
	struct mirror_proc *procs;
	atomic_int nprocs;
	bool stop;
	pthread_t thread;
	pthread_mutex_t files_lock;   /* files, nfiles, tmpfs */
	struct mirror_file *files[MIRROR_FILE_BUCKETS];
	unsigned nfiles;
	unsigned long tmpfs[64];      /* devices of tmpfs-like mounts */
	unsigned ntmpfs;
	uint64_t tmpfs_loaded;
};

/* One sample of a process. */
struct mirror_sample {
	long anon, shmem;
	struct mirror_vma *files;
	size_t n, cap;
};

static uint64_t mirror_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Every signal goes through the pidfd the mirror holds, which names the
 * process itself (a reused PID is never signalled); the pidfd stays open
 * until the record is freed. */
static int mirror_signal(struct mirror_proc *p, int sig)
{
	return proc_pidfd_signal(p->pidfd, p->tgid, sig);
}

/* ---- smaps ---- */

static long mirror_kb_pages(const char *p)
{
	return strtol(p, NULL, 10) / (PC_PAGE_SIZE / 1024);
}

long mirror_parse_smaps(const char *text, bool (*is_tmpfs)(unsigned long dev, void *arg),
			void *arg, void (*fn)(const struct mirror_vma *v, void *arg), void *fn_arg)
{
	struct mirror_vma cur = { 0 };
	bool have = false;
	long count = 0;

	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pathpos = 0;

		if ((isdigit((unsigned char)*line) || (*line >= 'a' && *line <= 'f')) &&
		    sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &pathpos) == 7) {
			const char *path = line + pathpos;

			if (have) {
				fn(&cur, fn_arg);
				count++;
			}
			cur = (struct mirror_vma){ .start = start, .end = end,
						   .off = off / (unsigned long)PC_PAGE_SIZE,
						   .dev = makedev(maj, min), .ino = ino };
			cur.shmem = ino && ((maj == 0 && min == 1) || !strncmp(path, "/memfd:", 7) ||
					    !strncmp(path, "/SYSV", 5) || !strncmp(path, "/dev/zero", 9) ||
					    (is_tmpfs && is_tmpfs(cur.dev, arg)));
			have = true;
		} else if (have && !strncmp(line, "Rss:", 4)) {
			cur.rss = mirror_kb_pages(line + 4);
		} else if (have && !strncmp(line, "Anonymous:", 10)) {
			cur.anon = mirror_kb_pages(line + 10);
		} else if (have && !strncmp(line, "Shared_Dirty:", 13)) {
			cur.dirty += mirror_kb_pages(line + 13);
		} else if (have && !strncmp(line, "Private_Dirty:", 14)) {
			cur.dirty += mirror_kb_pages(line + 14);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (have) {
		fn(&cur, fn_arg);
		count++;
	}
	return count;
}

static void mirror_load_tmpfs(struct mirror *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	m->ntmpfs = 0;
	m->tmpfs_loaded = mirror_now();
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && m->ntmpfs < 64) {
		unsigned maj, min;
		char *sep = strstr(line, " - ");
		char type[32];

		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || !sep ||
		    sscanf(sep + 3, "%31s", type) != 1)
			continue;
		if (!strcmp(type, "tmpfs") || !strcmp(type, "devtmpfs") || !strcmp(type, "ramfs"))
			m->tmpfs[m->ntmpfs++] = makedev(maj, min);
	}
	fclose(f);
}

static bool mirror_is_tmpfs(unsigned long dev, void *arg)
{
	struct mirror *m = arg;
	bool found = false;

	if (major(dev) != 0)
		return false;
	pthread_mutex_lock(&m->files_lock);
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (unsigned i = 0; i < m->ntmpfs && !found; i++)
			found = m->tmpfs[i] == dev;
		if (!found && pass == 0 && mirror_now() - m->tmpfs_loaded > 1000000000ull)
			mirror_load_tmpfs(m);    /* a mount we have not seen yet? */
		else
			break;
	}
	pthread_mutex_unlock(&m->files_lock);
	return found;
}

static void mirror_sample_vma(const struct mirror_vma *v, void *arg)
{
	struct mirror_sample *s = arg;
	long rest = v->rss - v->anon;

	s->anon += v->anon;
	if (!v->ino || rest <= 0)
		return;                   /* [vdso] and the like are not charged */
	if (v->shmem) {
		s->shmem += rest;
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		struct mirror_vma *nv = realloc(s->files, cap * sizeof(*nv));

		if (!nv)
			return;
		s->files = nv;
		s->cap = cap;
	}
	s->files[s->n] = *v;
	s->files[s->n].rss = rest;
	s->files[s->n].dirty = v->dirty > v->anon ? v->dirty - v->anon : 0;
	s->n++;
}

/* -ESRCH when the process is gone (a zombie has no mappings). */
static int mirror_read(struct mirror *m, pid_t tgid, struct mirror_sample *s)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	s->anon = s->shmem = 0;
	s->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -ESRCH;
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			char *nb = realloc(buf, cap + 262144);

			if (!nb) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap += 262144;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf || len == 0) {
		free(buf);
		return -ESRCH;
	}
	buf[len] = '\0';
	mirror_parse_smaps(buf, mirror_is_tmpfs, m, mirror_sample_vma, s);
	free(buf);
	return 0;
}

/* ---- file stand-ins ---- */

static struct mirror_file *mirror_file_get(struct mirror *m, const struct mirror_vma *v)
{
	uint32_t npages = (uint32_t)((v->end - v->start) / PC_PAGE_SIZE);
	uint64_t h = (v->dev * 31 + v->ino) * 1000003u + v->off * 131 + npages;
	struct mirror_file *f;
	unsigned b = (unsigned)(h % MIRROR_FILE_BUCKETS);

	pthread_mutex_lock(&m->files_lock);
	for (f = m->files[b]; f; f = f->next)
		if (f->dev == v->dev && f->ino == v->ino && f->off == v->off && f->npages == npages)
			break;
	if (!f && m->nfiles < MIRROR_MAX_FILES && npages > 0 && (f = calloc(1, sizeof(*f)))) {
		*f = (struct mirror_file){ v->dev, v->ino, v->off, npages, NULL, NULL, NULL };
		/* page cache belongs to no task: first touch decides the charge */
		if (vm_file_new(m->env->eng, npages, &f->obj, &f->r)) {
			free(f);
			f = NULL;
		} else {
			f->next = m->files[b];
			m->files[b] = f;
			m->nfiles++;
		}
	}
	pthread_mutex_unlock(&m->files_lock);
	return f;
}

/* ---- the ledger ---- */

static long mirror_ledger(const struct mirror_proc *p, enum page_kind kind)
{
	long n = 0;

	for (unsigned i = 0; i < p->nera; i++)
		if (p->era[i].kind == kind)
			n += p->era[i].pages;
	return n;
}

static struct vm_region *mirror_era_slot(struct mirror_era *e, long idx, uint32_t *off)
{
	for (unsigned i = 0; i < e->nreg; i++) {
		if (idx < (long)e->reg[i]->npages) {
			*off = (uint32_t)idx;
			return e->reg[i];
		}
		idx -= e->reg[i]->npages;
	}
	return NULL;
}

/* The era new pages of kind go to: the newest of that kind if it is g's,
 * else a new one. */
static struct mirror_era *mirror_era_for(struct mirror_proc *p, enum page_kind kind,
					 struct mcg_group *g)
{
	struct mirror_era *ne;

	for (unsigned i = p->nera; i-- > 0;)
		if (p->era[i].kind == kind) {
			if (p->era[i].g == g)
				return &p->era[i];
			break;
		}
	if (!(ne = realloc(p->era, (p->nera + 1) * sizeof(*ne))))
		return NULL;
	p->era = ne;
	mcg_get(g);
	ne[p->nera] = (struct mirror_era){ .kind = kind, .g = g };
	return &ne[p->nera++];
}

static int mirror_grow(struct mirror_proc *p, struct mirror_era *e, long n, unsigned cpu)
{
	for (; n > 0; n--) {
		struct vm_region *r;
		enum vm_fault f;
		uint32_t off = 0;
		int err;

		if (e->pages == e->cap) {
			long size = e->cap < MIRROR_REGION_MIN ? MIRROR_REGION_MIN :
				    e->cap > MIRROR_REGION_MAX ? MIRROR_REGION_MAX : e->cap;
			struct vm_region **nr = realloc(e->reg, (e->nreg + 1) * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			e->reg = nr;
			if ((err = vm_region_new(p->obj, e->kind, (uint32_t)size, &e->reg[e->nreg])))
				return err;
			e->nreg++;
			e->cap += size;
		}
		if (!(r = mirror_era_slot(e, e->pages, &off)))
			return -EINVAL;
		if ((err = vm_touch(r, off, cpu, true, &f)))
			return err;
		e->pages++;
	}
	return 0;
}

static void mirror_era_trim(struct mirror_era *e, long n)
{
	for (; n > 0 && e->pages > 0; n--) {
		struct vm_region *r;
		uint32_t off;

		e->pages--;
		if ((r = mirror_era_slot(e, e->pages, &off)))
			vm_discard(r, off);
	}
	/* regions wholly above the fill line go */
	while (e->nreg && e->cap - (long)e->reg[e->nreg - 1]->npages >= e->pages) {
		e->cap -= e->reg[e->nreg - 1]->npages;
		vm_region_free(e->reg[--e->nreg]);
	}
}

/* Give back n pages of kind: the current group's eras first, then the
 * others, most recent first. */
static void mirror_shrink(struct mirror_proc *p, enum page_kind kind, struct mcg_group *cur, long n)
{
	charge_batch_begin();
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = p->nera; i-- > 0 && n > 0;) {
			struct mirror_era *e = &p->era[i];
			long take;

			if (e->kind != kind || (pass == 0) != (e->g == cur))
				continue;
			take = n < e->pages ? n : e->pages;
			mirror_era_trim(e, take);
			n -= take;
		}
	charge_batch_end();
	/* forget empty eras, keeping the order of the others */
	for (unsigned i = 0; i < p->nera;) {
		if (p->era[i].pages == 0 && p->era[i].nreg == 0) {
			mcg_put(p->era[i].g);
			free(p->era[i].reg);
			memmove(&p->era[i], &p->era[i + 1], (p->nera - i - 1) * sizeof(*p->era));
			p->nera--;
		} else {
			i++;
		}
	}
}

/* ---- kernel memory ---- */

#define MIRROR_STACK_PAGES 4          /* THREAD_SIZE: 16 KiB a thread */

/* Page tables (VmPTE) and a kernel stack per thread, in pages, of the
 * task read in t (NULL: it could not be); -1 when unknown. */
static long mirror_kmem_pages(const struct proc_task *t)
{
	if (!t || t->vm_pte_kb < 0 || t->threads < 0)
		return -1;
	return t->vm_pte_kb / (PC_PAGE_SIZE / 1024) + t->threads * MIRROR_STACK_PAGES;
}

/* Charge p's kernel memory to g (NULL: nowhere). It follows the process's
 * current group; a charge that fails is tried again next sample. */
static void mirror_kmem(struct mirror_proc *p, struct mcg_group *g, long want, unsigned cpu)
{
	if (p->kmem_g && p->kmem_g != g) {
		charge_kmem_uncharge(p->kmem_g, p->kmem);
		mcg_put(p->kmem_g);
		p->kmem_g = NULL;
		p->kmem = 0;
	}
	if (!g)
		return;
	if (!p->kmem_g) {
		mcg_get(g);
		p->kmem_g = g;
	}
	if (want > p->kmem && charge_kmem(g, cpu, want - p->kmem) == 0)
		p->kmem = want;
	else if (want < p->kmem) {
		charge_kmem_uncharge(g, p->kmem - want);
		p->kmem = want;
	}
}

/* ---- enforcement ---- */

/* A charge failed. With oom_kill_disable the group named the engine's OOM
 * and this process stops until there is room. */
static void mirror_oom(struct mirror *m, struct mirror_proc *p)
{
	struct mcg_group *over = oom_take_over();

	if (!over)
		return;                   /* nothing killable: retried next time */
	if (!m->enforce || p->stopped) {
		mcg_put(over);
		return;
	}
	/* the watchdog learns of the stop first, so that the process is
	 * continued if the daemon dies by any means from here on; without a
	 * watchdog nothing would, so it is not stopped */
	if (watchdog_stopped(m->env->watchdog, p->pidfd, (uintptr_t)p)) {
		mcg_put(over);
		return;
	}
	if (mirror_signal(p, SIGSTOP)) {
		watchdog_continued(m->env->watchdog, (uintptr_t)p);
		mcg_put(over);
		return;
	}
	atomic_fetch_add(&over->under_oom, 1);
	p->stopped = over;
}

static void mirror_cont(struct mirror_proc *p)
{
	if (!p->stopped)
		return;
	mirror_signal(p, SIGCONT);
	watchdog_continued(p->m->env->watchdog, (uintptr_t)p);
	atomic_fetch_sub(&p->stopped->under_oom, 1);
	mcg_put(p->stopped);
	p->stopped = NULL;
}

/* Page out, in the real process, the mappings whose stand-ins reclaim took
 * pages from since this process last looked. true if it did any. */
static bool mirror_pageout(struct mirror *m, struct mirror_proc *p)
{
	struct iovec iov[MIRROR_IOV];
	int n = 0;
	bool any = false;

	if (!m->enforce) {
		for (unsigned i = 0; i < p->nmap; i++)   /* account only */
			p->map[i].seen = atomic_load(&p->map[i].f->obj->evicted);
		return false;
	}
	for (unsigned i = 0; i < p->nmap; i++) {
		struct mirror_map *mm = &p->map[i];
		unsigned ev = atomic_load(&mm->f->obj->evicted);

		if (ev == mm->seen)
			continue;
		mm->seen = ev;
		iov[n].iov_base = (void *)mm->start;
		iov[n].iov_len = (size_t)mm->f->npages * PC_PAGE_SIZE;
		if (++n == MIRROR_IOV) {
			process_madvise(p->pidfd, iov, (size_t)n, MADV_PAGEOUT, 0u);
			n = 0;
			any = true;
		}
	}
	if (n) {                          /* the rest, in one call */
		process_madvise(p->pidfd, iov, (size_t)n, MADV_PAGEOUT, 0u);
		any = true;
	}
	return any;
}

/* ---- one sample ---- */

/* The pidfd turns readable when the process has exited. */
static bool mirror_exited(struct mirror_proc *p)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) != 0;
}

/* Fault in stand-ins until the shared file holds as many pages as this
 * mapping has resident. */
static int mirror_fill(struct mirror_map *mm, long rss, long dirty, unsigned cpu)
{
	long need;

	/* reclaim took pages since the last pageout: they leave the real
	 * process first (next sample), rather than fault back in here */
	if (atomic_load(&mm->f->obj->evicted) != mm->seen)
		return 0;
	/* the stand-in's object has one region, f->r: its resident count is
	 * the file's pages in memory */
	need = rss - atomic_load(&mm->f->obj->resident);

	for (uint32_t i = 0; i < mm->f->npages && need > 0; i++) {
		enum vm_fault f;
		int err;

		if (vm_resident(mm->f->r, i))
			continue;
		if ((err = vm_touch(mm->map, i, cpu, dirty-- > 0, &f)))
			return err;
		need--;
	}
	return 0;
}

static struct mirror_map *mirror_map_for(struct mirror *m, struct mirror_proc *p,
					 const struct mirror_vma *v)
{
	struct mirror_file *f;
	struct mirror_map *mm;

	for (unsigned i = 0; i < p->nmap; i++) {
		mm = &p->map[i];
		if (mm->start == v->start && mm->f->dev == v->dev && mm->f->ino == v->ino &&
		    mm->f->off == v->off && mm->f->npages == (v->end - v->start) / PC_PAGE_SIZE)
			return mm;
	}
	if (!(f = mirror_file_get(m, v)))
		return NULL;
	if (p->nmap == p->capmap) {
		unsigned cap = p->capmap ? 2 * p->capmap : 16;
		struct mirror_map *nm = realloc(p->map, cap * sizeof(*nm));

		if (!nm)
			return NULL;
		p->map = nm;
		p->capmap = cap;
	}
	mm = &p->map[p->nmap];
	*mm = (struct mirror_map){ .start = v->start, .f = f, .seen = atomic_load(&f->obj->evicted) };
	if (vm_map_file(p->obj, f->r, 0, f->npages, &mm->map))
		return NULL;
	p->nmap++;
	return mm;
}

static bool mirror_near_limit(struct mcg_group *g, long *headroom)
{
	bool near = false;

	*headroom = PC_MAX;
	for (; g && !mcg_is_root(g); g = g->parent) {
		long max = pc_max(&g->cnt[MCG_MEM]), use = pc_usage(&g->cnt[MCG_MEM]);

		if (max == PC_MAX)
			continue;
		if (max - use < *headroom)
			*headroom = max - use;
		near |= use * 10 >= max * 9;
	}
	return near;
}

static void mirror_release(struct mirror_proc *p);

/* Take n pages of growth out of the slack a simulated task may keep. */
static long mirror_sim_take(long *budget, long n)
{
	long take;

	if (n <= 0)
		return 0;
	take = n < *budget ? n : *budget;
	*budget -= take;
	return n - take;
}

/* A simulated task's sample as the ledger must see it: only growth past
 * its baseline, beyond MIRROR_SIM_SLACK in all, is its group's. */
static void mirror_sim_budget(struct mirror_proc *p, struct mirror_sample *s)
{
	long budget = MIRROR_SIM_SLACK / PC_PAGE_SIZE;

	s->anon = mirror_sim_take(&budget, s->anon - p->base_anon);
	s->shmem = mirror_sim_take(&budget, s->shmem - p->base_shmem);
	for (size_t i = 0; i < s->n; i++) {
		long base = 0;

		for (unsigned j = 0; j < p->nmap; j++)
			if (p->map[j].start == s->files[i].start &&
			    p->map[j].f->ino == s->files[i].ino && p->map[j].f->dev == s->files[i].dev)
				base = p->map[j].base;
		s->files[i].rss = mirror_sim_take(&budget, s->files[i].rss - base);
		if (s->files[i].dirty > s->files[i].rss)
			s->files[i].dirty = s->files[i].rss;
	}
	p->sim_left = budget;             /* the rest is for kernel memory */
}

/* Reconcile p with /proc. Caller holds p->lock. */
static void mirror_sample(struct mirror *m, struct mirror_proc *p)
{
	struct mcg_engine *e = m->env->eng;
	struct mirror_sample s = { 0 };
	struct proc_task task, *t;        /* its /proc status, read once */
	unsigned cpu = (unsigned)p->tgid % e->cfg.cpus;
	struct mcg_group *g;
	uint64_t now = mirror_now(), period;
	long headroom, total;
	bool in_child;
	int err = 0;

	if (p->gone)
		return;
	t = proc_read_task(p->tgid, &task) == 0 ? &task : NULL;
	if (atomic_load(&p->obj->dead) || mirror_exited(p)) {
		mirror_release(p);       /* killed or exited */
		return;
	}
	/* a simulated task's fork connects on its own in a moment; one that
	 * does not within the grace is mirrored like any other process */
	if (!p->sim && p->nera == 0 && p->nmap == 0 && now - p->born_ns < MIRROR_FORK_GRACE_NS &&
	    sim_fork_of_task(m->env->sim, p->tgid, t ? t->ppid : 0)) {
		p->next_ns = now + MIRROR_NEAR_PERIOD_NS;
		return;
	}
	if (mirror_read(m, p->tgid, &s)) {
		/* no mappings for a moment (an exec switching them): again soon */
		free(s.files);
		p->next_ns = now + MIRROR_NEAR_PERIOD_NS;
		return;
	}
	if (mirror_pageout(m, p) && mirror_read(m, p->tgid, &s)) {
		free(s.files);           /* (exiting meanwhile: next time) */
		return;
	}
	if (p->sim)
		mirror_sim_budget(p, &s);
	atomic_store(&p->obj->unkillable, !m->enforce || proc_oom_exempt_task(p->tgid, t));
	g = task_group(e, p->tgid);
	in_child = !mcg_is_root(g);
	if (!in_child && p->nera == 0 && p->nmap == 0 && !p->sim) {
		mcg_put(g);
		mirror_release(p);       /* back in the root with nothing charged */
		free(s.files);
		return;
	}
	if (p->stopped) {
		long missing = s.anon + s.shmem - mirror_ledger(p, PK_ANON) - mirror_ledger(p, PK_SHMEM);
		struct mcg_group *o = p->stopped;

		if (!atomic_load(&o->oom_kill_disable) ||
		    pc_max(&o->cnt[MCG_MEM]) - pc_usage(&o->cnt[MCG_MEM]) >= (missing > 0 ? missing : 1))
			mirror_cont(p);  /* room again (or the killer may act) */
	}
	if (!p->stopped) {
		vm_object_set_group(p->obj, g);
		for (int k = 0; k < 2 && !err; k++) {
			enum page_kind kind = k ? PK_SHMEM : PK_ANON;
			long want = k ? s.shmem : s.anon, have = mirror_ledger(p, kind);
			struct mirror_era *era;

			if (want < have)
				mirror_shrink(p, kind, g, have - want);
			else if (want > have && in_child && (era = mirror_era_for(p, kind, g)))
				err = mirror_grow(p, era, want - have, cpu);
		}
		for (unsigned i = 0; i < p->nmap; i++)
			p->map[i].alive = false;
		for (size_t i = 0; i < s.n; i++) {
			struct mirror_map *mm = mirror_map_for(m, p, &s.files[i]);

			if (!mm)
				continue;
			mm->alive = true;
			if (in_child && !err)
				err = mirror_fill(mm, s.files[i].rss, s.files[i].dirty, cpu);
		}
		/* unmapped: the mapping goes, its pages stay as page cache */
		for (unsigned i = 0; i < p->nmap;)
			if (!p->map[i].alive) {
				vm_region_free(p->map[i].map);
				p->map[i] = p->map[--p->nmap];
			} else {
				i++;
			}
		if (err == -ENOMEM)
			mirror_oom(m, p);
		else if (err == -EFAULT)
			mirror_release(p);   /* the OOM killer chose it */
		if (!p->gone) {
			long kmem = mirror_kmem_pages(t);

			if (kmem >= 0 && p->sim)
				kmem = mirror_sim_take(&p->sim_left, kmem - p->base_kmem);
			if (kmem >= 0)
				mirror_kmem(p, in_child ? g : NULL, kmem, cpu);
		}
	}
	free(s.files);
	if (p->gone) {
		mcg_put(g);
		return;
	}
	/* next sample: sooner near a limit, and before growth at the last
	 * rate could reach it */
	total = mirror_ledger(p, PK_ANON) + mirror_ledger(p, PK_SHMEM);
	period = mirror_near_limit(g, &headroom) ? MIRROR_NEAR_PERIOD_NS : MIRROR_PERIOD_NS;
	if (p->last_ns && total > p->last_pages && headroom < PC_MAX) {
		uint64_t reach = (uint64_t)((double)headroom * (double)(now - p->last_ns) /
					    (double)(total - p->last_pages) / 2);

		if (reach < period)
			period = reach > MIRROR_NEAR_PERIOD_NS ? reach : MIRROR_NEAR_PERIOD_NS;
	}
	p->last_pages = total;
	p->last_ns = now;
	p->next_ns = now + period;
	mcg_put(g);
}

/* Every stand-in of p goes: anon and shmem uncharged, file pages stay as
 * page cache. Caller holds p->lock. */
static void mirror_release(struct mirror_proc *p)
{
	if (p->gone)
		return;
	p->gone = true;
	mirror_cont(p);
	mirror_kmem(p, NULL, 0, 0);
	for (unsigned i = 0; i < p->nera; i++) {
		mcg_put(p->era[i].g);
		free(p->era[i].reg);
	}
	free(p->era);
	free(p->map);
	p->era = NULL;
	p->map = NULL;
	p->nera = p->nmap = p->capmap = 0;
	vm_object_free(p->obj);          /* its regions, mappings included */
	p->obj = NULL;
	/* the pidfd stays until the record goes: mirror_kill may hold it */
}

static void mirror_unpin(struct mirror_proc *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	close(p->pidfd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Pinned processes of the list, for work outside the mirror's lock. */
static struct mirror_proc **mirror_snapshot(struct mirror *m, size_t *n)
{
	struct mirror_proc **v;
	size_t k = 0;

	pthread_mutex_lock(&m->lock);
	v = malloc(((size_t)atomic_load(&m->nprocs) + 1) * sizeof(*v));
	for (struct mirror_proc *p = m->procs; p && v; p = p->next) {
		atomic_fetch_add(&p->refs, 1);
		v[k++] = p;
	}
	pthread_mutex_unlock(&m->lock);
	*n = k;
	return v;
}

/* Unlink released processes. Caller holds m->lock. */
static void mirror_reap_locked(struct mirror *m)
{
	for (struct mirror_proc **pp = &m->procs; *pp;) {
		struct mirror_proc *p = *pp;

		/* no p->lock here: a sample holding it may be inside the OOM
		 * killer, which looks processes up under m->lock */
		if (atomic_load(&p->gone)) {
			*pp = p->next;
			atomic_fetch_sub(&m->nprocs, 1);
			mirror_unpin(p);
		} else {
			pp = &p->next;
		}
	}
}

static void *mirror_main(void *arg)
{
	struct mirror *m = arg;

	oom_set_nowait(true);            /* one thread serves every process */
	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		uint64_t now = mirror_now(), next = now + MIRROR_PERIOD_NS;
		struct mirror_proc **v;
		struct timespec ts;
		size_t n;

		pthread_mutex_unlock(&m->lock);
		v = mirror_snapshot(m, &n);
		for (size_t i = 0; v && i < n; i++) {
			struct mirror_proc *p = v[i];

			pthread_mutex_lock(&p->lock);
			if (!p->gone && p->next_ns <= mirror_now())
				mirror_sample(m, p);
			if (!p->gone && p->next_ns < next)
				next = p->next_ns;
			pthread_mutex_unlock(&p->lock);
			mirror_unpin(p);
		}
		free(v);
		pthread_mutex_lock(&m->lock);
		mirror_reap_locked(m);
		if (m->stop)
			break;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		pthread_cond_timedwait(&m->wake, &m->lock, &ts);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

struct mirror *mirror_start(struct source_env *env, bool enforce)
{
	struct mirror *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;

	if (!m)
		return NULL;
	m->env = env;
	m->enforce = enforce;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->files_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &ca);
	pthread_condattr_destroy(&ca);
	mirror_load_tmpfs(m);
	if (pthread_create(&m->thread, NULL, mirror_main, m)) {
		pthread_cond_destroy(&m->wake);
		pthread_mutex_destroy(&m->lock);
		pthread_mutex_destroy(&m->files_lock);
		free(m);
		return NULL;
	}
	return m;
}

void mirror_stop(struct mirror *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	while (m->procs) {
		struct mirror_proc *p = m->procs;

		m->procs = p->next;
		pthread_mutex_lock(&p->lock);
		mirror_release(p);       /* continues what it stopped */
		pthread_mutex_unlock(&p->lock);
		mirror_unpin(p);
	}
	for (unsigned b = 0; b < MIRROR_FILE_BUCKETS; b++)
		while (m->files[b]) {
			struct mirror_file *f = m->files[b];

			m->files[b] = f->next;
			vm_object_free(f->obj);
			free(f);
		}
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->files_lock);
	free(m);
}

/* The record of tgid, pinned, or NULL. */
static struct mirror_proc *mirror_find(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	for (p = m->procs; p; p = p->next)
		if (p->tgid == tgid) {
			atomic_fetch_add(&p->refs, 1);
			break;
		}
	pthread_mutex_unlock(&m->lock);
	return p;
}

/* The live record of tgid, made if there is none (with a duplicate of
 * pidfd, or a pidfd of its own when pidfd is -1), pinned; NULL when it
 * cannot be had. Caller holds m->lock. */
static struct mirror_proc *mirror_get_locked(struct mirror *m, pid_t tgid, int pidfd)
{
	struct mirror_proc *p;

	for (p = m->procs; p; p = p->next)
		if (p->tgid == tgid && !atomic_load(&p->gone))
			break;
	if (!p && !m->stop && (p = calloc(1, sizeof(*p)))) {
		p->m = m;
		p->tgid = tgid;
		p->born_ns = mirror_now();
		p->pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 0) :
			   (int)syscall(SYS_pidfd_open, tgid, 0);
		p->obj = p->pidfd >= 0 ? vm_object_new(m->env->eng, m->env->eng->root, true, (uint32_t)tgid) :
					 NULL;
		if (!p->obj) {
			if (p->pidfd >= 0)
				close(p->pidfd);
			free(p);
			return NULL;
		}
		p->obj->real = true;
		atomic_init(&p->refs, 1);
		pthread_mutex_init(&p->lock, NULL);
		p->next = m->procs;
		m->procs = p;
		atomic_fetch_add(&m->nprocs, 1);
	}
	if (p)
		atomic_fetch_add(&p->refs, 1);
	return p;
}

void mirror_track(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p;

	if (!m || tgid == getpid())
		return;
	pthread_mutex_lock(&m->lock);
	if ((p = mirror_get_locked(m, tgid, -1))) {
		p->next_ns = 0;          /* sample it now (racy hint, fine) */
		pthread_cond_signal(&m->wake);
	}
	pthread_mutex_unlock(&m->lock);
	if (p)
		mirror_unpin(p);
}

int mirror_declare(struct mirror *m, pid_t tgid, int pidfd)
{
	struct mirror_sample s = { 0 };
	struct mirror_proc *p;
	int err = 0;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	p = mirror_get_locked(m, tgid, pidfd);
	pthread_mutex_unlock(&m->lock);
	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&p->lock);     /* after a sample in progress */
	if (p->gone || p->nera || p->nmap || p->kmem) {
		err = -EBUSY;             /* mirrored: it cannot opt out */
	} else if (!p->sim && (err = mirror_read(m, tgid, &s)) == 0) {
		/* what it has now is its own from before; only growth past
		 * MIRROR_SIM_SLACK is charged from here on */
		struct proc_task task;

		p->base_anon = s.anon;
		p->base_shmem = s.shmem;
		p->base_kmem = proc_read_task(tgid, &task) == 0 ? mirror_kmem_pages(&task) : 0;
		if (p->base_kmem < 0)
			p->base_kmem = 0;
		for (size_t i = 0; i < s.n; i++) {
			struct mirror_map *mm = mirror_map_for(m, p, &s.files[i]);

			if (mm)
				mm->base = s.files[i].rss;
		}
		p->sim = true;
	}
	pthread_mutex_unlock(&p->lock);
	free(s.files);
	mirror_unpin(p);
	return err;
}

void mirror_refresh(struct mirror *m, struct mcg_group *g)
{
	struct mirror_proc **v;
	size_t n;

	if (!m || atomic_load(&m->nprocs) == 0)
		return;
	v = mirror_snapshot(m, &n);
	oom_set_nowait(true);
	for (size_t i = 0; v && i < n; i++) {
		struct mirror_proc *p = v[i];
		struct mcg_group *pg = task_group(m->env->eng, p->tgid);
		bool mine = mcg_in_subtree(pg, g);

		mcg_put(pg);
		if (mine) {
			pthread_mutex_lock(&p->lock);
			if (!p->gone && mirror_now() - p->last_ns > MIRROR_READ_AGE_NS)
				mirror_sample(m, p);
			pthread_mutex_unlock(&p->lock);
		}
		mirror_unpin(p);
	}
	oom_set_nowait(false);
	free(v);
}

int mirror_move(struct mirror *m, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	struct mirror_proc *p = NULL;
	struct move_stats st;
	struct mcg_group *cur;
	int err = 0;

	if (!(p = mirror_find(m, tgid)))
		return 0;
	pthread_mutex_lock(&p->lock);
	if (!p->gone && !atomic_load(&p->obj->dead)) {
		/* the source is the group the process is in now */
		cur = task_group(m->env->eng, tgid);
		vm_object_set_group(p->obj, cur);
		err = move_charges(p->obj, dst, mask, &st);
		for (unsigned i = 0; !err && i < p->nera; i++) {
			struct mirror_era *e = &p->era[i];

			if (e->g == cur && (e->kind == PK_ANON ? mask & MOVE_ANON : mask & MOVE_FILE)) {
				mcg_get(dst);
				mcg_put(e->g);
				e->g = dst;
			}
		}
		mcg_put(cur);
	}
	pthread_mutex_unlock(&p->lock);
	mirror_unpin(p);
	return err;
}

bool mirror_kill(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p = mirror_find(m, tgid);

	if (!p)
		return false;
	/* no p->lock: the killer may run inside this process's own sample */
	if (m->enforce)
		mirror_signal(p, SIGKILL);
	mirror_unpin(p);
	return true;
}

static int mirror_src_move(void *self, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	return mirror_move(self, tgid, dst, mask);
}

static void mirror_src_attached(void *self, pid_t tgid)
{
	mirror_track(self, tgid);
}

static void mirror_src_refresh(void *self, struct mcg_group *g)
{
	mirror_refresh(self, g);
}

static bool mirror_src_kill(void *self, pid_t pid)
{
	return mirror_kill(self, pid);
}

const struct source_ops mirror_source_ops = {
	.name = "mirror",
	.move = mirror_src_move,
	.attached = mirror_src_attached,
	.refresh = mirror_src_refresh,
	.kill = mirror_src_kill,
};
