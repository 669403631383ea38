/* mirror_pcscan.c: page cache of mirrored processes when the kernel's
 * events cannot be had (no eBPF): the files each process has open, looked
 * at through duplicates of its descriptors (os/openfiles.h), compared with
 * what mirror_pcache.c counts of them, the differences handed to it as the
 * events the tracer would have sent (added, removed, dirtied) in the
 * process's name. A file is followed while some mirrored process has it
 * open; when the last one has closed it (or exited) its pages are
 * uncharged. Owns the list of files and of the processes it looks at;
 * never opens a path, never reads a file's data, never charges a page
 * cachestat(2) did not show. Lock order: the scan's lock (in place of the
 * tracer's consume lock), then m->lock briefly, then what the events take. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "os/openfiles.h"
#include "os/proc.h"
#include "source/mirror_int.h"

#define PCSCAN_BUCKET_BITS 10
#define PCSCAN_BUCKETS (1u << PCSCAN_BUCKET_BITS)
#define PCSCAN_RUN     32              /* pages an event names at most: a
					* folio smaller than a tree node's 64 */

struct pcscan_key {
	unsigned long dev, ino;
};

struct pcscan_file {
	unsigned long dev, ino;
	unsigned holders;             /* processes whose last walk found it open */
	bool shmem;
	unsigned bh_per_page;
	uint64_t cache, dirty, pages; /* cachestat and size at the last complete look */
	uint64_t top;                 /* one past the highest page handed over */
	uint64_t gen;                 /* the walk that looked last */
	struct pcscan_file *next;
};

struct pcscan_proc {
	struct mirror_proc *p;        /* pinned */
	uint64_t io[4];
	bool io_valid;
	int io_fd;                    /* its /proc/PID/io, opened at the first look */
	uint64_t looked_ns;           /* its last walk */
	/* when the thread's passes read its io counts next: a period that
	 * doubles while they stay still, up to MIRROR_SCAN_IDLE_NS */
	uint64_t next_ns, period_ns;
	struct pcscan_key *held;      /* what that walk found, sorted */
	size_t nheld;
	struct pcscan_proc *next;
};

struct mirror_pcscan {
	struct mirror *m;
	pthread_mutex_t lock;         /* a pass, the lists */
	pthread_t thread;
	int stopfd;
	struct pcscan_file *file[PCSCAN_BUCKETS];
	atomic_size_t nfiles;
	struct pcscan_proc *procs;
	uint64_t gen;
	uint64_t walked_ns;           /* the last pass's walks ... */
	bool walked;                  /* ... if there was one */
	bool thread_on;
	long budget;                  /* cachestat calls left in this pass */
	bool mincore;                 /* asked through mincore(2), not cachestat(2) */
	int cachestat_err;            /* why not cachestat (0: it is used) */
	_Atomic uint64_t walks, queries, refused, files_refused;
};

/* One walk of one process's descriptors. */
struct pcscan_walk {
	struct mirror_pcscan *sc;
	struct pcscan_proc *sp;
	struct pcscan_key *keys;
	size_t n, cap;
	int cpu;                      /* the CPU it ran on last (-1: not read yet) */
};

/* One file's comparison. */
struct pcscan_diff {
	struct pcscan_walk *w;
	struct pcscan_file *f;
	int fd;
};

static struct pcscan_file **pcscan_slot(struct mirror_pcscan *sc, unsigned long dev,
					unsigned long ino)
{
	uint64_t h = (dev * 1000003u + ino) * 0x9e3779b97f4a7c15ull;
	struct pcscan_file **fp = &sc->file[h >> (64 - PCSCAN_BUCKET_BITS)];

	while (*fp && !((*fp)->dev == dev && (*fp)->ino == ino))
		fp = &(*fp)->next;
	return fp;
}

/* k appended to w's keys: false without memory. */
static bool pcscan_key_push(struct pcscan_walk *w, struct pcscan_key k)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct pcscan_key *nk = realloc(w->keys, cap * sizeof(*nk));

		if (!nk)
			return false;
		w->keys = nk;
		w->cap = cap;
	}
	w->keys[w->n++] = k;
	return true;
}

static int pcscan_key_cmp(const void *a, const void *b)
{
	const struct pcscan_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Pages [index, index + n) of d's file as events of op, in runs. */
static void pcscan_emit(struct pcscan_diff *d, enum pcache_op op, uint64_t index, uint64_t n)
{
	struct mirror *m = d->w->sc->m;
	struct pcscan_file *f = d->f;

	if (op == PCACHE_DEL) {          /* (only the chunks that hold some) */
		mirror_pcache_remove(m, f->dev, f->ino, index, n);
		return;
	}
	/* (a mapping's stand-in made since the walk looked is the
	 * mapping's to charge) */
	if (op == PCACHE_ADD && mirror_files_known(m, f->dev, f->ino))
		return;
	if (op == PCACHE_ADD && d->w->cpu < 0) {
		int cpu = proc_cpu_of(d->w->sp->p->tgid);

		d->w->cpu = cpu >= 0 ? cpu : 0;
	}
	for (uint64_t i = index; i < index + n; i += PCSCAN_RUN) {
		uint32_t nr = (uint32_t)(index + n - i < PCSCAN_RUN ? index + n - i : PCSCAN_RUN);
		struct pcache_event ev = {
			.op = op, .tgid = (__u32)d->w->sp->p->tgid, .cpu = (__u32)(d->w->cpu > 0 ? d->w->cpu : 0),
			.dev = (__u32)(major(f->dev) << 20 | minor(f->dev)), .nr = nr,
			.shmem = f->shmem, .bh = nr * f->bh_per_page, .ino = f->ino, .index = i,
		};

		mirror_pcache_event(m, &ev);
	}
	if (op == PCACHE_ADD && index + n > f->top)
		f->top = index + n;
	/* one made while these were charged: its mapping's fill may have
	 * counted what the scan held before them. The fills that come
	 * after this see them all and give way (mirror_fill) */
	if (op == PCACHE_ADD && m->pc->hooks.resample && mirror_files_known(m, f->dev, f->ino))
		m->pc->hooks.resample(m, f->dev, f->ino);
}

/* cachestat(2) of pages [lo, lo + n) of d's file, paid from the pass's
 * budget: 0, -EAGAIN when it is spent, or the call's -errno. */
static int pcscan_ask(struct pcscan_diff *d, uint64_t lo, uint64_t n, uint64_t *kc, uint64_t *kd)
{
	struct mirror_pcscan *sc = d->w->sc;

	if (sc->budget < 1)
		return -EAGAIN;
	sc->budget--;
	atomic_fetch_add(&sc->queries, 1);
	if (sc->mincore)
		return openfiles_mincore(d->fd, lo, n, kc, kd);
	return openfiles_cachestat(d->fd, lo, n, kc, kd);
}

/* Make what is counted of pages [lo, lo + n) of d's file what the kernel
 * holds there (kc resident, kd dirty of them): halves until a range is all
 * or nothing. False when the pass's budget ran out first. */
static bool pcscan_range(struct pcscan_diff *d, uint64_t lo, uint64_t n, uint64_t kc, uint64_t kd)
{
	struct mirror_pcscan *sc = d->w->sc;
	struct pcscan_file *f = d->f;
	uint64_t half, c1, d1, c2, d2;
	long oc, od;
	bool done;

	if (f->shmem)
		kd = 0;                   /* (tmpfs pages count as shmem, never dirty) */
	mirror_pcache_counts(sc->m, f->dev, f->ino, lo, n, &oc, &od);
	if ((uint64_t)oc == kc && (uint64_t)od == kd)
		return true;
	if (kc == 0) {
		/* (asked again: a folio the kernel is moving, splitting or
		 * writing back may be passed over by one look) */
		if (pcscan_ask(d, lo, n, &c1, &d1) || c1 > 0)
			return false;
		pcscan_emit(d, PCACHE_DEL, lo, n);
		return true;
	}
	if (kc >= n) {
		pcscan_emit(d, PCACHE_ADD, lo, n);   /* (counted pages are passed by) */
		/* a charge refused, a process gone or in the root: not done */
		mirror_pcache_counts(sc->m, f->dev, f->ino, lo, n, &oc, &od);
		if ((uint64_t)oc < n)
			return false;
		if (kd >= n) {
			pcscan_emit(d, PCACHE_DIRTY, lo, n);
			return true;
		}
		if (kd == 0) {
			mirror_pcache_clean(sc->m, f->dev, f->ino, lo, n);
			return true;
		}
	}
	if (n < 2)
		return true;
	half = n / 2;
	if (pcscan_ask(d, lo, half, &c1, &d1) || pcscan_ask(d, lo + half, n - half, &c2, &d2))
		return false;
	/* (both halves, even when the first is left unfinished) */
	done = pcscan_range(d, lo, half, c1, d1);
	return pcscan_range(d, lo + half, n - half, c2, d2) && done;
}

/* A file of the walk's process: followed, and compared when the kernel's
 * counts of it moved since the last complete look. */
static int pcscan_seen(void *arg, const struct openfile *of)
{
	struct pcscan_walk *w = arg;
	struct mirror_pcscan *sc = w->sc;
	struct pcscan_file **fp = pcscan_slot(sc, of->dev, of->ino), *f = *fp;
	struct pcscan_diff d = { .w = w, .fd = of->fd };
	uint64_t kc, kd;
	int err;

	if (of->pages > MIRROR_SCAN_MAX_PAGES)
		return 0;                 /* (too large to follow: not seen) */
	if (!f && !(f = calloc(1, sizeof(*f))))
		return 1;
	if (!pcscan_key_push(w, (struct pcscan_key){ of->dev, of->ino })) {
		if (!*fp)
			free(f);
		return 1;
	}
	if (!*fp) {
		*f = (struct pcscan_file){ .dev = of->dev, .ino = of->ino, .shmem = of->shmem,
					   .bh_per_page = of->bh_per_page, .cache = UINT64_MAX };
		*fp = f;
		atomic_fetch_add(&sc->nfiles, 1);
	}
	if (f->gen == sc->gen)
		return 0;                 /* (another descriptor of it, this pass) */
	f->gen = sc->gen;
	/* a file some process maps is the mappings' stand-ins' to charge */
	if (mirror_files_known(sc->m, f->dev, f->ino))
		return 0;
	d.f = f;
	/* (its pages up to the size just read: one appended since is
	 * looked at when the size has moved) */
	if ((err = pcscan_ask(&d, 0, of->pages, &kc, &kd))) {
		if (err == -EPERM)
			atomic_fetch_add(&sc->files_refused, 1);
		return 0;
	}
	if (kc == f->cache && kd == f->dirty && of->pages == f->pages)
		return 0;
	/* pages past its end (truncated) are gone */
	if (f->top > of->pages) {
		pcscan_emit(&d, PCACHE_DEL, of->pages, f->top - of->pages);
		f->top = of->pages;
	}
	if (of->pages == 0 || pcscan_range(&d, 0, of->pages, kc, kd)) {
		f->cache = kc;
		f->dirty = kd;
		f->pages = of->pages;
	} else {
		f->cache = UINT64_MAX;    /* (unfinished: again next time) */
	}
	return 0;
}

/* One process fewer has the file open; with none left, it is uncharged. */
static void pcscan_unhold(struct mirror_pcscan *sc, const struct pcscan_key *k)
{
	struct pcscan_file **fp = pcscan_slot(sc, k->dev, k->ino), *f = *fp;

	if (!f || (f->holders > 0 && --f->holders > 0))
		return;
	/* (every page it handed over lies below top) */
	mirror_pcache_remove(sc->m, f->dev, f->ino, 0, f->top);
	*fp = f->next;
	atomic_fetch_sub(&sc->nfiles, 1);
	free(f);
}

/* The files sp's walk found (keys, sorted and unique) become what it
 * holds: those it no longer has lose a holder, new ones gain one. */
static void pcscan_hold(struct mirror_pcscan *sc, struct pcscan_proc *sp, struct pcscan_key *keys,
			size_t n)
{
	size_t i = 0, j = 0;

	while (i < sp->nheld || j < n) {
		int c = i == sp->nheld ? 1 : j == n ? -1 : pcscan_key_cmp(&sp->held[i], &keys[j]);

		if (c < 0) {
			pcscan_unhold(sc, &sp->held[i++]);
		} else if (c > 0) {
			struct pcscan_file *f = *pcscan_slot(sc, keys[j].dev, keys[j].ino);

			if (f)
				f->holders++;
			j++;
		} else {
			i++;
			j++;
		}
	}
	free(sp->held);
	sp->held = keys;
	sp->nheld = n;
}

static void pcscan_walk(struct mirror_pcscan *sc, struct pcscan_proc *sp, uint64_t now)
{
	struct pcscan_walk w = { .sc = sc, .sp = sp, .cpu = -1 };
	size_t k = 0;
	int err;

	sc->gen++;
	atomic_fetch_add(&sc->walks, 1);
	err = openfiles_each(sp->p->tgid, sp->p->pidfd, MIRROR_SCAN_FILES, pcscan_seen, &w);
	if (err == -EPERM)
		atomic_fetch_add(&sc->refused, 1);
	/* a walk that could not finish (past the bound, or a failure of the
	 * daemon's own) keeps what the last one found as well: only a
	 * complete one, or the process's end, lets go of a file */
	if (err && err != -EPERM && err != -ESRCH)
		for (size_t i = 0; i < sp->nheld; i++)
			if (!pcscan_key_push(&w, sp->held[i])) {
				free(w.keys);
				return;           /* (the old list stays as it is) */
			}
	if (w.n > 1)
		qsort(w.keys, w.n, sizeof(*w.keys), pcscan_key_cmp);
	for (size_t i = 0; i < w.n; i++)
		if (k == 0 || pcscan_key_cmp(&w.keys[k - 1], &w.keys[i]))
			w.keys[k++] = w.keys[i];
	pcscan_hold(sc, sp, w.keys, k);
	sp->looked_ns = now;
}

static void pcscan_proc_free(struct mirror_pcscan *sc, struct pcscan_proc *sp)
{
	for (size_t i = 0; i < sp->nheld; i++)
		pcscan_unhold(sc, &sp->held[i]);
	free(sp->held);
	if (sp->io_fd >= 0)
		close(sp->io_fd);
	sc->m->pc->hooks.unpin(sp->p);
	free(sp);
}

/* The mirror's records not followed yet join the list. Caller holds the
 * scan's lock. */
static void pcscan_sync(struct mirror_pcscan *sc)
{
	struct mirror *m = sc->m;

	pthread_mutex_lock(&m->lock);
	for (struct mirror_proc *p = m->procs; p; p = p->next) {
		struct pcscan_proc *sp;

		if (p->scanned || atomic_load(&p->gone) || p->pidfd < 0 ||
		    !(sp = calloc(1, sizeof(*sp))))
			continue;
		p->scanned = true;
		atomic_fetch_add(&p->refs, 1);
		sp->p = p;
		sp->io_fd = -1;
		sp->next = sc->procs;
		sc->procs = sp;
	}
	pthread_mutex_unlock(&m->lock);
}

/* A pass: processes gone let go of their files; with walk, those that
 * read or wrote since their last walk (or have not been walked for
 * MIRROR_SCAN_IDLE_NS) are walked. The thread's passes (due) look only at
 * processes whose period has come; a reader's look at every one. */
static void pcscan_pass(struct mirror_pcscan *sc, bool walk, bool due)
{
	uint64_t now = mirror_now(sc->m);

	pthread_mutex_lock(&sc->lock);
	/* (a reader's pass, which looks at every process, within the
	 * freshness of the last reader's) */
	if (walk && !due && sc->walked && now - sc->walked_ns < MIRROR_SCAN_FRESH_NS)
		walk = false;
	pcscan_sync(sc);
	sc->budget = MIRROR_SCAN_QUERIES;
	for (struct pcscan_proc **spp = &sc->procs; *spp;) {
		struct pcscan_proc *sp = *spp;
		uint64_t io[4];
		bool moved;

		if (atomic_load(&sp->p->gone)) {
			*spp = sp->next;
			pcscan_proc_free(sc, sp);
			continue;
		}
		spp = &sp->next;
		if (!walk || (due && now < sp->next_ns))
			continue;
		if (sp->io_fd < 0)
			sp->io_fd = proc_open(sp->p->tgid, "io");
		if (sp->io_fd < 0 || openfiles_io(sp->io_fd, io))
			continue;
		moved = !sp->io_valid || memcmp(io, sp->io, sizeof(io));
		sp->period_ns = moved || !sp->period_ns ? MIRROR_SCAN_PERIOD_NS :
			sp->period_ns >= MIRROR_SCAN_IDLE_NS / 2 ? MIRROR_SCAN_IDLE_NS :
							     2 * sp->period_ns;
		sp->next_ns = now + sp->period_ns - MIRROR_SCAN_FRESH_NS;   /* (a pass's lateness) */
		/* (still, it is looked at again only if it holds a file:
		 * what the host or another process did to it) */
		if (moved || (sp->nheld > 0 && now - sp->looked_ns >= MIRROR_SCAN_IDLE_NS)) {
			pcscan_walk(sc, sp, now);
			memcpy(sp->io, io, sizeof(io));
			sp->io_valid = true;
		}
	}
	/* the first goes last, so that each process in turn has the first
	 * of a pass's budget */
	if (sc->procs && sc->procs->next) {
		struct pcscan_proc *first = sc->procs, *last = first;

		while (last->next)
			last = last->next;
		sc->procs = first->next;
		first->next = NULL;
		last->next = first;
	}
	if (walk && !due) {
		sc->walked_ns = now;
		sc->walked = true;
	}
	pthread_mutex_unlock(&sc->lock);
}

static void *pcscan_main(void *arg)
{
	struct mirror_pcscan *sc = arg;
	struct pollfd fd = { .fd = sc->stopfd, .events = POLLIN };

	for (;;) {
		int n = poll(&fd, 1, (int)(MIRROR_SCAN_PERIOD_NS / 1000000));

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			break;
		pcscan_pass(sc, true, true);
	}
	return NULL;
}

/* Does this kernel answer cachestat(2) (6.5 on), or else mincore(2) of
 * a mapping (mincore: ask that only), and may we call it? 0 or -errno. */
static int pcscan_probe(bool mincore)
{
	int fd = memfd_create("memcgfs-probe", MFD_CLOEXEC), err;
	uint64_t c, d;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)OPENFILES_PAGE))
		err = -errno;
	else
		err = mincore ? openfiles_mincore(fd, 0, 1, &c, &d) : openfiles_cachestat(fd, 0, 0, &c, &d);
	close(fd);
	return err;
}

int mirror_pcscan_start(struct mirror *m, bool thread, bool mincore)
{
	struct mirror_pcscan *sc;
	int cs_err = mincore ? -ENOSYS : pcscan_probe(false), err = cs_err;

	/* without cachestat(2) (before 6.5), mincore(2) */
	if (err == -ENOSYS && (err = pcscan_probe(true)))
		return cs_err;
	if (err)
		return err;
	if (!(sc = calloc(1, sizeof(*sc))))
		return -ENOMEM;
	sc->m = m;
	sc->mincore = cs_err != 0;
	sc->cachestat_err = mincore ? 0 : cs_err;
	pthread_mutex_init(&sc->lock, NULL);
	m->pc->scan = true;
	sc->stopfd = -1;
	if (thread && ((sc->stopfd = eventfd(0, EFD_CLOEXEC)) < 0 ||
		       pthread_create(&sc->thread, NULL, pcscan_main, sc))) {
		err = sc->stopfd < 0 ? -errno : -EAGAIN;
		if (sc->stopfd >= 0)
			close(sc->stopfd);
		pthread_mutex_destroy(&sc->lock);
		free(sc);
		return err;
	}
	sc->thread_on = thread;
	m->scan = sc;
	return 0;
}

void mirror_pcscan_halt(struct mirror *m)
{
	struct mirror_pcscan *sc = m->scan;
	uint64_t one = 1;

	if (!sc || !sc->thread_on)
		return;
	if (write(sc->stopfd, &one, sizeof(one)) != sizeof(one))
		abort();                  /* (an eventfd write cannot fail here) */
	pthread_join(sc->thread, NULL);
	close(sc->stopfd);
	sc->thread_on = false;
}

void mirror_pcscan_stop(struct mirror *m)
{
	struct mirror_pcscan *sc = m->scan;

	if (!sc)
		return;
	mirror_pcscan_halt(m);
	while (sc->procs) {
		struct pcscan_proc *sp = sc->procs;

		sc->procs = sp->next;
		pcscan_proc_free(sc, sp);
	}
	pthread_mutex_destroy(&sc->lock);
	free(sc);
	m->scan = NULL;
}

void mirror_pcscan_drain(struct mirror *m, bool walk)
{
	if (m->scan)
		pcscan_pass(m->scan, walk, false);
}

const char *mirror_pcscan_way(const struct mirror *m, int *cachestat_err)
{
	const struct mirror_pcscan *sc = m->scan;

	*cachestat_err = sc ? sc->cachestat_err : 0;
	return !sc ? NULL : sc->mincore ? "mincore" : "cachestat";
}

int mirror_pcscan_describe(struct mirror *m, char *buf, size_t size)
{
	struct mirror_pcscan *sc = m->scan;
	size_t files;

	if (!sc)
		return 0;
	files = atomic_load(&sc->nfiles);   /* (no lock: a pass may be long) */
	return snprintf(buf, size,
			"page_cache_scan_files %zu\n"
			"page_cache_scan_walks %lu\n"
			"page_cache_scan_queries %lu\n"
			"page_cache_scan_refused %lu\n"
			"page_cache_scan_files_refused %lu\n",
			files, (unsigned long)atomic_load(&sc->walks),
			(unsigned long)atomic_load(&sc->queries),
			(unsigned long)atomic_load(&sc->refused),
			(unsigned long)atomic_load(&sc->files_refused));
}
