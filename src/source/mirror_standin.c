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

static unsigned mirror_inode_bucket(unsigned long dev, unsigned long ino)
{
	return (unsigned)(((dev * 31 + ino) * 0x9e3779b97f4a7c15ull) >> 32) % MIRROR_FILE_BUCKETS;
}

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
			unsigned ib = mirror_inode_bucket(v->dev, v->ino);

			f->next = m->files[b];
			m->files[b] = f;
			f->inext = m->by_inode[ib];
			m->by_inode[ib] = f;
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

/* Resident stand-ins of f whose file page has no bit in bits (the kernel
 * dropped it, or a fault of ours did not bring it in) go. */
static void mirror_fill_stale(struct mirror *m, struct mirror_file *f, const uint64_t *bits)
{
	struct charge_batch b;

	charge_batch_begin(&b, m->env->eng);
	for (uint32_t i = 0; i < f->npages; i++)
		if (!(bits[i / 64] >> (i % 64) & 1) && vm_resident(f->r, i))
			vm_discard(f->r, i, &b);
	charge_batch_end(&b);
}

int mirror_fill(struct mirror *m, struct mirror_map *mm, long rss, long dirty, unsigned cpu,
		bool trim)
{
	struct mirror_file *f = mm->f;
	bool pin = atomic_load(&f->pinned), touched = false;
	size_t words = ((size_t)f->npages + 63) / 64;
	/* with the kernel's events: which pages of the file a fault of a
	 * process of ours brought in and the kernel still has. Stand-in
	 * page i is the file's page off + i: only those may be resident,
	 * and each goes when the kernel drops its page (mirror_files_dropped)
	 * (without memory for the bits: by count, as without the events) */
	uint64_t *bits = mirror_pcache_events(m) ? calloc(words, sizeof(*bits)) : NULL;
	long faulted = mirror_pcache_faulted(m, f->dev, f->ino, f->off, f->npages, bits);
	struct charge_batch b;
	long need, have, held;
	int err = 0;

	if (bits)
		mirror_fill_stale(m, f, bits);
	/* the stand-in's object has one region, f->r: its resident count is
	 * the file's pages in memory. (Pages reclaim took since the last
	 * pageout are faulted back too: the sample was read after it, so
	 * they are still resident; the next sample pages them out.) */
	have = atomic_load(&f->obj->resident);
	need = rss - have;
	/* pages of the range the kernel's events charged already (read(2)
	 * before the mapping faulted them) are not charged twice; the scan
	 * of open files may charge them after this mapping did (it looked
	 * before the mapping was there, and then has the mapping sampled
	 * again, mirror_files_resample): the stand-ins then give way down to
	 * what the scan does not hold */
	held = need > 0 || !mirror_pcache_events(m) ?
		       mirror_pcache_held(m, f->dev, f->ino, f->off, f->npages) : 0;
	if (need > 0)
		need -= held;
	if (faulted < 0 && held > 0 && have + held > rss) {
		need = -(have + held - rss < have ? have + held - rss : have);
		trim = true;
	}
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

		if (vm_resident(f->r, i) || (bits && !(bits[i / 64] >> (i % 64) & 1)))
			continue;
		if ((err = vm_touch(mm->map, i, cpu, dirty-- > 0, &fault)))
			break;
		touched = true;
		if (pin)
			vm_pin(f->r, i, true);
		need--;
	}
	/* a page the kernel dropped while this looked at the bits: its
	 * event found no stand-in to take, this one is taken now */
	if (touched && bits) {
		memset(bits, 0, words * sizeof(*bits));
		if (mirror_pcache_faulted(m, f->dev, f->ino, f->off, f->npages, bits) >= 0)
			mirror_fill_stale(m, f, bits);
	}
	free(bits);
	if (err || !trim || need >= 0)
		return err;
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

bool mirror_files_known(struct mirror *m, unsigned long dev, unsigned long ino)
{
	bool known = false;

	pthread_mutex_lock(&m->files_lock);
	for (struct mirror_file *f = m->by_inode[mirror_inode_bucket(dev, ino)]; f && !known;
	     f = f->inext)
		known = f->dev == dev && f->ino == ino;
	pthread_mutex_unlock(&m->files_lock);
	return known;
}

void mirror_files_dropped(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t index,
			  uint64_t n)
{
	struct charge_batch b;

	charge_batch_begin(&b, m->env->eng);
	pthread_mutex_lock(&m->files_lock);
	for (struct mirror_file *f = m->by_inode[mirror_inode_bucket(dev, ino)]; f; f = f->inext) {
		uint64_t lo = index > f->off ? index : f->off;
		uint64_t hi = index + n < f->off + f->npages ? index + n : f->off + f->npages;

		if (f->dev != dev || f->ino != ino)
			continue;
		for (uint64_t i = lo; i < hi; i++)
			if (vm_resident(f->r, (uint32_t)(i - f->off)))
				vm_discard(f->r, (uint32_t)(i - f->off), &b);
	}
	pthread_mutex_unlock(&m->files_lock);
	charge_batch_end(&b);
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
