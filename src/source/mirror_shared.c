/* mirror_shared.c: anon pages real processes share copy-on-write (after a
 * fork, before either writes), counted once, as the kernel charged them
 * once: by the oldest live process that maps them. Owns the table of
 * claimed page frames and each process's claims; reads /proc/PID/pagemap
 * for the frames. Never charges, never signals; its lock is a leaf (taken
 * under a process's lock, nothing under it). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/mirror_int.h"

#define PM_PRESENT   (1ull << 63)
#define PM_FILE      (1ull << 61)   /* a file page, or shared anon (shmem) */
#define PM_EXCLUSIVE (1ull << 56)   /* mapped by this process alone */
#define PM_PFN_MASK  ((1ull << 55) - 1)

/* ---- the table: frame -> claimer, open addressing ---- */

static size_t shared_slot(const struct mirror_shared *t, uint64_t pfn)
{
	return (size_t)((pfn * 0x9e3779b97f4a7c15ull) >> 20) & (t->cap - 1);
}

static struct mirror_claim *shared_find(const struct mirror_shared *t, uint64_t pfn)
{
	if (!t->cap)
		return NULL;
	for (size_t i = shared_slot(t, pfn);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slot[i].owner)
			return NULL;
		if (t->slot[i].pfn == pfn)
			return &t->slot[i];
	}
}

static int shared_grow(struct mirror_shared *t)
{
	struct mirror_claim *old = t->slot;
	size_t oldcap = t->cap, cap = oldcap ? oldcap * 2 : 1024;

	if (!(t->slot = calloc(cap, sizeof(*t->slot)))) {
		t->slot = old;
		return -ENOMEM;
	}
	t->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].owner) {
			size_t j = shared_slot(t, old[i].pfn);

			while (t->slot[j].owner)
				j = (j + 1) & (cap - 1);
			t->slot[j] = old[i];
		}
	free(old);
	return 0;
}

static int shared_put(struct mirror_shared *t, uint64_t pfn, const struct mirror_claimer *c)
{
	size_t i;

	if ((t->n + 1) * 4 > t->cap * 3 && shared_grow(t))
		return -ENOMEM;
	for (i = shared_slot(t, pfn); t->slot[i].owner; i = (i + 1) & (t->cap - 1))
		;
	t->slot[i] = (struct mirror_claim){ .pfn = pfn, .owner = c };
	t->n++;
	return 0;
}

/* Remove e, shifting back the entries its slot kept from their own. */
static void shared_del(struct mirror_shared *t, struct mirror_claim *e)
{
	size_t i = (size_t)(e - t->slot), j = i;

	t->slot[i].owner = NULL;
	t->n--;
	for (;;) {
		size_t k;

		j = (j + 1) & (t->cap - 1);
		if (!t->slot[j].owner)
			return;
		k = shared_slot(t, t->slot[j].pfn);
		/* j's entry may move to i when its home k is not in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slot[i] = t->slot[j];
		t->slot[j].owner = NULL;
		i = j;
	}
}

/* c is older than d (started first; the same start: the lower pid). */
static bool shared_older(const struct mirror_claimer *c, const struct mirror_claimer *d)
{
	return c->start < d->start || (c->start == d->start && c->tgid < d->tgid);
}

static int shared_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

long mirror_shared_claim(struct mirror_shared *t, struct mirror_claimer *c, uint64_t *pfn,
			 size_t n, bool defer)
{
	size_t kept = 0;
	long others = 0;

	if (n)                               /* (pfn may be NULL then) */
		qsort(pfn, n, sizeof(*pfn), shared_cmp);
	pthread_mutex_lock(&t->lock);
	/* frames it no longer shares are not its any more */
	for (size_t i = 0; i < c->n; i++) {
		struct mirror_claim *e;

		if ((!n || !bsearch(&c->pfn[i], pfn, n, sizeof(*pfn), shared_cmp)) &&
		    (e = shared_find(t, c->pfn[i])) && e->owner == c)
			shared_del(t, e);
	}
	c->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct mirror_claim *e = shared_find(t, pfn[i]);

		if (i && pfn[i] == pfn[i - 1])
			continue;
		if ((e && e->owner != c && e->owner->alive && shared_older(e->owner, c)) ||
		    (!e && defer)) {
			others++;                 /* an older process counts it */
			continue;
		}
		if (e)
			e->owner = c;             /* (gone, or younger: it is c's now) */
		else if (shared_put(t, pfn[i], c))
			continue;                 /* (no memory: counted, unclaimed) */
		pfn[kept++] = pfn[i];
	}
	pthread_mutex_unlock(&t->lock);
	/* what it claims now, for the next time (the array is c's now) */
	free(c->pfn);
	c->pfn = pfn;
	c->n = kept;
	return others;
}

void mirror_shared_forget(struct mirror_shared *t, struct mirror_claimer *c)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < c->n; i++) {
		struct mirror_claim *e = shared_find(t, c->pfn[i]);

		if (e && e->owner == c)
			shared_del(t, e);
	}
	c->alive = false;
	pthread_mutex_unlock(&t->lock);
	free(c->pfn);
	c->pfn = NULL;
	c->n = 0;
}

void mirror_shared_free(struct mirror_shared *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}

/* ---- the frames of a process's shared anon pages ---- */

bool mirror_shared_visible(void)
{
	static volatile char probe = 1;
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	probe = 2;                        /* (present) */
	if (fd < 0)
		return false;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)&probe / PC_PAGE_SIZE * sizeof(e))) !=
	    sizeof(e))
		e = 0;
	close(fd);
	return (e & PM_PRESENT) && (e & PM_PFN_MASK);
}

long mirror_shared_frames(pid_t tgid, const struct mirror_range *r, size_t nr, uint64_t **out)
{
	uint64_t *v = NULL, buf[512];
	size_t n = 0, cap = 0;
	char path[64];
	int fd;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	for (size_t k = 0; k < nr; k++)
		for (unsigned long pg = r[k].start / PC_PAGE_SIZE; pg < r[k].end / PC_PAGE_SIZE;) {
			size_t want = r[k].end / PC_PAGE_SIZE - pg;
			ssize_t got;

			if (want > 512)
				want = 512;
			got = pread(fd, buf, want * sizeof(*buf), (off_t)(pg * sizeof(*buf)));
			if (got <= 0)
				break;
			for (size_t i = 0; i < (size_t)got / sizeof(*buf); i++) {
				uint64_t e = buf[i];

				if (!(e & PM_PRESENT) || (e & (PM_FILE | PM_EXCLUSIVE)) || !(e & PM_PFN_MASK))
					continue;       /* (no frame number: not privileged) */
				if (n == cap) {
					uint64_t *nv = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof(*v));

					if (!nv) {
						close(fd);
						free(v);
						return -ENOMEM;
					}
					v = nv;
				}
				v[n++] = e & PM_PFN_MASK;
			}
			pg += (size_t)got / sizeof(*buf);
		}
	close(fd);
	*out = v;
	return (long)n;
}
