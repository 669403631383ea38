/* mirror_standin.c: file pages of real processes as stand-ins shared by
 * every process that maps the same device, inode and offset range,
 * charged to whoever faults them in first and left as page cache when the
 * mappings go (mapped_file while any process maps them). Never signals;
 * never frees a stand-in before teardown. Lock order: the files lock, then
 * engine locks (never while charging). */
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
		*f = (struct mirror_file){ .dev = v->dev, .ino = v->ino, .off = v->off, .npages = npages };
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

/* A mapping of f more (delta 1) or fewer (-1). The first mapping makes
 * the pages in memory mapped_file, the last one's going makes them page
 * cache nobody maps (as the kernel's mapcount does, for the file as a
 * whole: the stand-ins do not know which page which process maps). */
static void mirror_file_maps(struct mirror *m, struct mirror_file *f, int delta)
{
	bool edge;

	pthread_mutex_lock(&m->files_lock);
	edge = delta > 0 ? f->maps++ == 0 : --f->maps == 0;
	for (uint32_t i = 0; edge && i < f->npages; i++)
		vm_set_mapped(f->r, i, delta > 0);
	pthread_mutex_unlock(&m->files_lock);
}

int mirror_fill(struct mirror *m, struct mirror_map *mm, long rss, long dirty, unsigned cpu,
		bool trim)
{
	struct mirror_file *f = mm->f;
	bool pin = atomic_load(&f->pinned);
	struct charge_batch b;
	long need;

	/* the stand-in's object has one region, f->r: its resident count is
	 * the file's pages in memory. (Pages reclaim took since the last
	 * pageout are faulted back too: the sample was read after it, so
	 * they are still resident; the next sample pages them out.) */
	long have = atomic_load(&f->obj->resident);
	long faulted = mirror_pcache_faulted(m, f->dev, f->ino, f->off, f->npages);

	need = rss - have;
	/* pages of the range the kernel's events charged already (read(2)
	 * before the mapping faulted them) are not charged twice */
	if (need > 0)
		need -= mirror_pcache_held(m, f->dev, f->ino, f->off, f->npages);
	/* with the kernel's events, a mapping charges only the pages a page
	 * fault of a process of ours brought into the page cache (the kernel
	 * charged the others to whoever brought them in), and those the
	 * kernel has dropped since go */
	if (faulted >= 0 && have > faulted) {
		need = faulted - have;
		trim = true;
	} else if (faulted >= 0 && have + need > faulted) {
		need = faulted - have;
	}

	for (uint32_t i = 0; i < f->npages && need > 0; i++) {
		enum vm_fault fault;
		int err;

		if (vm_resident(f->r, i))
			continue;
		if ((err = vm_touch(mm->map, i, cpu, dirty-- > 0, &fault)))
			return err;
		if (pin)
			vm_pin(f->r, i, true);
		need--;
	}
	if (!trim || need >= 0)
		return 0;
	/* a confirmed pageout took them from the page cache too */
	charge_batch_begin(&b, m->env->eng);
	for (uint32_t i = f->npages; i-- > 0 && need < 0;)
		if (vm_resident(f->r, i)) {
			vm_discard(f->r, i, &b);
			need++;
		}
	charge_batch_end(&b);
	return 0;
}

struct mirror_map *mirror_map_for(struct mirror *m, struct mirror_proc *p,
					 const struct mirror_vma *v)
{
	struct mirror_file *f;
	struct mirror_map *mm;

	for (unsigned i = 0; i < p->nmap; i++)
		if (mirror_map_is(&p->map[i], v))
			return &p->map[i];
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
	mirror_file_maps(m, f, 1);
	return mm;
}

void mirror_map_gone(struct mirror *m, struct mirror_map *mm)
{
	mirror_file_unpin(mm->f);
	mirror_file_maps(m, mm->f, -1);
}
