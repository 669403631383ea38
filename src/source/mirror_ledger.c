/* mirror_ledger.c: a mirrored process's anon, shmem and kernel memory as
 * a ledger of eras (one per stay in a group): growth goes to the current
 * group, shrinkage comes from the current group's eras first, then the
 * others, most recent first; eras of the root only count (§11.9: what a
 * process faulted before it entered a child is not charged to it); file
 * mappings' bases; and a simulated task's baseline and slack. Never reads
 * /proc, never signals. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/engine.h"
#include "os/proc.h"
#include "os/watchdog.h"
#include "source/mirror_int.h"

#define MIRROR_STACK_PAGES 4          /* THREAD_SIZE: 16 KiB a thread */

long mirror_ledger(const struct mirror_proc *p, enum mirror_kind kind)
{
	long n = 0;

	for (unsigned i = 0; i < p->nera; i++)
		if (p->era[i].kind == kind)
			n += p->era[i].pages;
	return n;
}

long mirror_charged(const struct mirror_proc *p)
{
	long n = 0;

	for (unsigned i = 0; i < p->nera; i++)
		if (!mcg_is_root(p->era[i].g))
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
static struct mirror_era *mirror_era_for(struct mirror_proc *p, enum mirror_kind kind,
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
	if (mcg_is_root(e->g)) {
		e->pages += n;            /* the root's: counted, never charged */
		return 0;
	}
	if (e->kind == MK_KMEM) {
		/* refused (a limit): tried again at the next sample */
		if (charge_kmem(e->g, cpu, n, &p->mode) == 0)
			e->pages += n;
		return 0;
	}
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
			if ((err = vm_region_new(p->obj, e->kind == MK_SHMEM ? PK_SHMEM : PK_ANON,
						 (uint32_t)size, &e->reg[e->nreg])))
				return err;
			/* shmem the process maps: mapped_file while it does */
			if (e->kind == MK_SHMEM)
				vm_region_set_mapped(e->reg[e->nreg]);
			e->nreg++;
			e->cap += size;
		}
		if (!(r = mirror_era_slot(e, e->pages, &off)))
			return -EINVAL;
		/* (shmem is never dirty page cache: it is swap-backed, and
		 * the kernel counts no shmem page in dirty) */
		if ((err = vm_touch(r, off, cpu, e->kind != MK_SHMEM, &f)))
			return err;
		if (e->kind == MK_LOCKED)
			vm_mlock(r, off, true);
		e->pages++;
	}
	return 0;
}

static void mirror_era_trim(struct mirror_era *e, long n, struct charge_batch *b)
{
	if (n > e->pages)
		n = e->pages;
	if (mcg_is_root(e->g) || e->kind == MK_KMEM) {
		if (!mcg_is_root(e->g))
			uncharge_kmem(e->g, n);
		e->pages -= n;
		return;
	}
	for (; n > 0 && e->pages > 0; n--) {
		struct vm_region *r;
		uint32_t off;

		e->pages--;
		if ((r = mirror_era_slot(e, e->pages, &off)))
			vm_discard(r, off, b);
	}
	/* regions wholly above the fill line go */
	while (e->nreg && e->cap - (long)e->reg[e->nreg - 1]->npages >= e->pages) {
		e->cap -= e->reg[e->nreg - 1]->npages;
		vm_region_free(e->reg[--e->nreg]);
	}
}

/* Forget empty eras, keeping the order of the others. */
static void mirror_era_compact(struct mirror_proc *p)
{
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

/* Give back n pages of kind: the current group's eras first, then the
 * others, most recent first. */
static void mirror_shrink(struct mirror_proc *p, enum mirror_kind kind, struct mcg_group *cur,
			  long n)
{
	struct charge_batch b;

	charge_batch_begin(&b, p->m->env->eng);
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = p->nera; i-- > 0 && n > 0;) {
			struct mirror_era *e = &p->era[i];
			long take;

			if (e->kind != kind || (pass == 0) != (e->g == cur))
				continue;
			take = n < e->pages ? n : e->pages;
			mirror_era_trim(e, take, &b);
			n -= take;
		}
	charge_batch_end(&b);
	mirror_era_compact(p);
}

int mirror_ledger_set(struct mirror_proc *p, enum mirror_kind kind, struct mcg_group *g,
		      long want, unsigned cpu)
{
	long have = mirror_ledger(p, kind);
	struct mirror_era *e;

	if (want < have)
		mirror_shrink(p, kind, g, have - want);
	else if (want > have && (e = mirror_era_for(p, kind, g)))
		return mirror_grow(p, e, want - have, cpu);
	return 0;
}

int mirror_ledger_sample(struct mirror_proc *p, const struct mirror_sample *s,
			 struct mcg_group *g, unsigned cpu)
{
	const struct { enum mirror_kind kind; long want; } k[] = {
		{ MK_ANON, s->anon }, { MK_LOCKED, s->locked }, { MK_SHMEM, s->shmem },
	};
	int err = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]) && !err; i++)
			if ((k[i].want < mirror_ledger(p, k[i].kind)) == (pass == 0))
				err = mirror_ledger_set(p, k[i].kind, g, k[i].want, cpu);
	return err;
}

long mirror_ledger_mem(const struct mirror_proc *p)
{
	return mirror_ledger(p, MK_ANON) + mirror_ledger(p, MK_LOCKED) + mirror_ledger(p, MK_SHMEM);
}

void mirror_ledger_clear(struct mirror_proc *p)
{
	for (enum mirror_kind k = MK_ANON; k <= MK_KMEM; k++)
		mirror_shrink(p, k, NULL, mirror_ledger(p, k));
}

void mirror_ledger_leave_root(struct mirror_proc *p, enum mirror_kind kind)
{
	for (unsigned i = 0; i < p->nera; i++)
		if (p->era[i].kind == kind && mcg_is_root(p->era[i].g))
			p->era[i].pages = 0;
	mirror_era_compact(p);
}

/* Page tables (VmPTE) and a kernel stack per thread, in pages, of the
 * task read in t (NULL: it could not be); -1 when unknown. */
long mirror_kmem_pages(const struct proc_task *t)
{
	if (!t || t->vm_pte_kb < 0 || t->threads < 0)
		return -1;
	return t->vm_pte_kb / (PC_PAGE_SIZE / 1024) + t->threads * MIRROR_STACK_PAGES;
}

void mirror_file_base(struct mirror_map *mm, struct mirror_vma *v, bool in_child)
{
	if (!in_child) {
		if (v->rss > mm->base)
			mm->base = v->rss;
	} else if (v->rss < mm->base) {
		mm->base = v->rss;        /* they went first (paged out, dropped) */
	}
	v->rss -= mm->base;
	if (v->dirty > v->rss)
		v->dirty = v->rss;
}

/* Take n pages of growth out of the slack a simulated task may keep. */
long mirror_sim_take(long *budget, long n)
{
	long take;

	if (n <= 0)
		return 0;
	take = n < *budget ? n : *budget;
	*budget -= take;
	return n - take;
}

/* A simulated task's sample as the ledger must see it: only growth past
 * its baseline, beyond MIRROR_SIM_SLACK in all, is its group's. Anon and
 * shmem take from the slack here; then each file mapping, in the sample's
 * order (mirror_sim_file); kernel memory gets what is left (p->sim_left). */
void mirror_sim_budget(struct mirror_proc *p, struct mirror_sample *s)
{
	long budget = MIRROR_SIM_SLACK / PC_PAGE_SIZE;

	s->anon = mirror_sim_take(&budget, s->anon - p->base_anon);
	s->locked = mirror_sim_take(&budget, s->locked - p->base_locked);
	s->shmem = mirror_sim_take(&budget, s->shmem - p->base_shmem);
	p->sim_left = budget;
}

/* The same for one file mapping v of the sample, whose record the caller
 * has looked up (mm; NULL: none, so no baseline). */
void mirror_sim_file(struct mirror_proc *p, const struct mirror_map *mm, struct mirror_vma *v)
{
	v->rss = mirror_sim_take(&p->sim_left, v->rss - (mm ? mm->base : 0));
	if (v->dirty > v->rss)
		v->dirty = v->rss;
}
