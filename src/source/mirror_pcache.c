/* mirror_pcache.c: page cache that mirrored processes bring in without
 * mapping it (read(2), write(2), readahead), charged from the kernel's own
 * events (os/pcache.h) the moment they happen: each folio to the group of
 * the process that added it, dirty and clean as the real page is, gone
 * when the kernel drops it. Owns the stand-ins of those pages, by device,
 * inode and chunk of the file, and the thread that reads the events; never
 * charges a page the kernel did not report, never signals. Lock order:
 * the tracer's consume lock, then a record's lock, then the chunk table's
 * (chunks_lock), then engine locks. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "engine/engine.h"
#include "os/pcache.h"
#include "os/proc.h"
#include "source/mirror_int.h"

/* the kernel's dev_t (20 bits of minor) as /proc and stat(2) show it */
static unsigned long mirror_pc_dev(__u32 kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

static struct mirror_pc_chunk **mirror_pc_slot(struct mirror_pcache *pc, unsigned long dev,
					       unsigned long ino, uint64_t no)
{
	uint64_t h = ((dev * 31 + ino) * 1000003u + no) * 0x9e3779b97f4a7c15ull;
	struct mirror_pc_chunk **cp = &pc->chunk[h >> (64 - MIRROR_PC_HASH_BITS)];

	while (*cp && !((*cp)->dev == dev && (*cp)->ino == ino && (*cp)->no == no))
		cp = &(*cp)->next;
	return cp;
}

/* The chunk holding page index of the file, made when make (of shmem for
 * a tmpfs file); NULL without memory or (without make) when there is
 * none. Caller holds chunks_lock. */
static struct mirror_pc_chunk *mirror_pc_chunk(struct mirror *m, unsigned long dev,
					       unsigned long ino, uint64_t index, bool make,
					       bool shmem)
{
	struct mirror_pcache *pc = m->pc;
	struct mirror_pc_chunk **cp = mirror_pc_slot(pc, dev, ino, index / MIRROR_PC_CHUNK), *c;

	if (*cp || !make)
		return *cp;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	*c = (struct mirror_pc_chunk){ .dev = dev, .ino = ino, .no = index / MIRROR_PC_CHUNK };
	/* page cache belongs to no task: whoever adds a page pays for it */
	if ((shmem ? vm_shmem_file_new : vm_file_new)(m->env->eng, MIRROR_PC_CHUNK, &c->obj,
						      &c->r)) {
		free(c);
		return NULL;
	}
	c->obj->real = true;          /* (never in our swap: the real page stays) */
	*cp = c;
	pc->nchunks++;
	return c;
}

/* g's kernel memory from the events changes by delta bytes; its charge
 * follows the pages they round up to (a charge the limit refuses is
 * tried again at the next change). */
static void mirror_pc_kmem(struct mirror_pcache *pc, struct mcg_group *g, unsigned cpu, long delta,
			   struct charge_mode *mode)
{
	struct mirror_pc_kmem *k = NULL;
	long want;

	for (unsigned i = 0; i < pc->nkmem && !k; i++)
		if (pc->kmem[i].g == g)
			k = &pc->kmem[i];
	if (!k) {
		if (delta <= 0 || pc->nkmem == MIRROR_PC_KMEM_GROUPS)
			return;
		mcg_get(g);
		k = &pc->kmem[pc->nkmem++];
		*k = (struct mirror_pc_kmem){ .g = g };
	}
	if (delta < -k->bytes)
		delta = -k->bytes;
	k->bytes += delta;
	atomic_fetch_add(&pc->kmem_bytes, delta);
	want = (k->bytes + PC_PAGE_SIZE - 1) / PC_PAGE_SIZE;
	if (want > k->pages) {
		if (charge_kmem(g, cpu, want - k->pages, mode) == 0) {
			atomic_fetch_add(&pc->kmem_pages, want - k->pages);
			k->pages = want;
		}
	} else if (want < k->pages) {
		uncharge_kmem(g, k->pages - want);
		atomic_fetch_sub(&pc->kmem_pages, k->pages - want);
		k->pages = want;
	}
	if (k->bytes == 0 && k->pages == 0) {
		mcg_put(k->g);
		*k = pc->kmem[--pc->nkmem];
	}
}

/* Page j of c (counted) is dirty, or clean; its stand-in follows. */
static void mirror_pc_set_dirty(struct mirror_pc_chunk *c, uint32_t j, bool dirty)
{
	uint64_t bit = 1ull << (j % 64);

	/* (the stand-in always: the engine's reclaim may have cleaned it
	 * since its bit was set; a no-op for a fault's page, not here) */
	vm_set_dirty(c->r, j, dirty);
	if (!(c->dirty[j / 64] & bit) == !dirty)
		return;
	c->dirty[j / 64] ^= bit;
	c->ndirty += dirty ? 1 : -1u;
}

/* Page j of c was added (by a folio of nr pages) by a process of g (by a
 * fault: faulted): its block's tree node with the block's first page. */
static void mirror_pc_counted(struct mirror_pcache *pc, struct mirror_pc_chunk *c, uint32_t j,
			      struct mcg_group *g, uint32_t nr, bool faulted, unsigned cpu,
			      struct charge_mode *mode)
{
	unsigned b = j / MIRROR_PC_BLOCK;

	c->page[j] = MIRROR_PC_COUNTED | (faulted ? MIRROR_PC_FAULTED : 0);
	c->counted++;
	if (c->pages[b]++ > 0)
		return;
	mcg_get(g);
	c->kg[b] = g;
	if (nr < MIRROR_PC_BLOCK) {   /* (a larger folio sits in the node above) */
		c->node |= (uint16_t)(1u << b);
		mirror_pc_kmem(pc, g, cpu, pc->node_size, mode);
	}
}

/* Page j of c left the page cache: its buffer heads, and with the block's
 * last page its tree node, go. */
static void mirror_pc_uncounted(struct mirror_pcache *pc, struct mirror_pc_chunk *c, uint32_t j)
{
	unsigned b = j / MIRROR_PC_BLOCK;
	struct mcg_group *g = c->kg[b];

	if (c->page[j] & MIRROR_PC_BH_MASK)
		mirror_pc_kmem(pc, g, 0, -(long)(c->page[j] & MIRROR_PC_BH_MASK) * pc->bh_size, NULL);
	mirror_pc_set_dirty(c, j, false);
	c->page[j] = 0;
	c->counted--;
	if (--c->pages[b] > 0)
		return;
	if (c->node & (1u << b))
		mirror_pc_kmem(pc, g, 0, -pc->node_size, NULL);
	c->node &= (uint16_t)~(1u << b);
	c->kg[b] = NULL;
	mcg_put(g);
}

static void mirror_pc_chunk_free(struct mirror_pcache *pc, struct mirror_pc_chunk *c)
{
	struct mirror_pc_chunk **cp = mirror_pc_slot(pc, c->dev, c->ino, c->no);

	*cp = c->next;
	pc->nchunks--;
	for (uint32_t j = 0; c->counted > 0 && j < MIRROR_PC_CHUNK; j++)
		if (c->page[j] & MIRROR_PC_COUNTED)
			mirror_pc_uncounted(pc, c, j);
	vm_object_free(c->obj);
	free(c);
}

/* The live record of tgid, pinned: from the cache of the last event's, or
 * looked up (and cached). A process the mirror has no record of yet is a
 * fork of a mirrored one (the tracer follows forks before the daemon's
 * fork watch sees them): its record is made, in its parent's group. */
static struct mirror_proc *mirror_pc_proc(struct mirror *m, pid_t tgid, pid_t ptgid)
{
	struct mirror_pcache *pc = m->pc;
	struct mirror_proc *p = pc->last;

	if (p && p->tgid == tgid && !atomic_load(&p->gone))
		return p;
	if (p)
		pc->hooks.unpin(p);
	pc->last = NULL;
	if (!(p = pc->hooks.pin(m, tgid, false)) && ptgid > 0 && task_in_child(m->env->eng, ptgid))
		p = pc->hooks.pin(m, tgid, true);
	pc->last = p;
	return p;
}

/* The group a page tgid adds is charged to: its own, or, while the
 * daemon has not seen a fork yet, its parent's. Referenced; NULL: the
 * root's (never charged). */
static struct mcg_group *mirror_pc_group(struct mirror *m, pid_t tgid, pid_t ptgid)
{
	struct mcg_group *g = task_group(m->env->eng, tgid);

	if (mcg_is_root(g) && ptgid > 0) {
		mcg_put(g);
		g = task_group(m->env->eng, ptgid);
	}
	if (mcg_is_root(g)) {
		mcg_put(g);
		return NULL;
	}
	return g;
}

static void mirror_pc_add(struct mirror *m, const struct pcache_event *ev)
{
	struct mirror_pcache *pc = m->pc;
	struct mirror_proc *p = mirror_pc_proc(m, (pid_t)ev->tgid, (pid_t)ev->ptgid);
	unsigned long dev = mirror_pc_dev(ev->dev);
	unsigned cpu = ev->cpu % m->env->eng->m.cpus;
	struct mcg_group *g;

	if (!p || !(g = mirror_pc_group(m, (pid_t)ev->tgid, (pid_t)ev->ptgid))) {
		atomic_fetch_add(&pc->unattributed, ev->nr);
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (p->gone || !p->obj) {
		atomic_fetch_add(&pc->unattributed, ev->nr);
		goto out;
	}
	vm_object_set_group(p->obj, g);
	for (uint64_t i = ev->index; i < ev->index + ev->nr; i++) {
		struct mirror_pc_chunk *c;
		enum vm_fault fault;
		int err;

		/* (chunks go only in this thread: c stays without the lock) */
		pthread_mutex_lock(&pc->chunks_lock);
		c = mirror_pc_chunk(m, dev, ev->ino, i, true, ev->shmem);
		pthread_mutex_unlock(&pc->chunks_lock);
		/* a tmpfs folio back on the LRU (after an isolation) is
		 * reported again: charged already, and no access */
		if (c && (c->page[i % MIRROR_PC_CHUNK] & MIRROR_PC_COUNTED))
			continue;
		/* a fault's page is charged by the mapping's stand-in, if
		 * the sampler finds it mapped */
		err = !c ? -ENOMEM :
		      ev->fault ? 0 :
				  vm_touch_by(p->obj, c->r, (uint32_t)(i % MIRROR_PC_CHUNK), cpu, false,
					      &fault);
		if (err) {
			/* the rest of the folio is not charged either */
			atomic_fetch_add(&pc->failed, ev->index + ev->nr - i);
			mirror_oom(m, p);     /* (oom_kill_disable: stopped) */
			break;
		}
		mirror_pc_counted(pc, c, (uint32_t)(i % MIRROR_PC_CHUNK), g, ev->nr, ev->fault, cpu,
				  &p->mode);
		atomic_fetch_add(ev->fault ? &pc->faulted : &pc->added, 1);
	}
out:
	pthread_mutex_unlock(&p->lock);
	mcg_put(g);
}

static void mirror_pc_del(struct mirror *m, const struct pcache_event *ev)
{
	struct mirror_pcache *pc = m->pc;
	unsigned long dev = mirror_pc_dev(ev->dev);
	uint64_t first = UINT64_MAX, last = 0;   /* the faults' pages among them */
	struct charge_batch b;

	charge_batch_begin(&b, m->env->eng);
	pthread_mutex_lock(&pc->chunks_lock);
	for (uint64_t i = ev->index; i < ev->index + ev->nr; i++) {
		struct mirror_pc_chunk *c = mirror_pc_chunk(m, dev, ev->ino, i, false, false);

		if (!c || !(c->page[i % MIRROR_PC_CHUNK] & MIRROR_PC_COUNTED))
			continue;             /* (not ours) */
		if (vm_resident(c->r, (uint32_t)(i % MIRROR_PC_CHUNK)))
			vm_discard(c->r, (uint32_t)(i % MIRROR_PC_CHUNK), &b);
		if (!(c->page[i % MIRROR_PC_CHUNK] & MIRROR_PC_FAULTED)) {
			atomic_fetch_add(&pc->removed, 1);
		} else {
			first = i < first ? i : first;
			last = i;
		}
		mirror_pc_uncounted(pc, c, (uint32_t)(i % MIRROR_PC_CHUNK));
	}
	charge_batch_end(&b);
	/* chunks with nothing left go (a file read once must not cost the
	 * daemon memory for months) */
	for (uint64_t no = ev->index / MIRROR_PC_CHUNK; no <= (ev->index + ev->nr - 1) / MIRROR_PC_CHUNK;
	     no++) {
		struct mirror_pc_chunk *c =
			mirror_pc_chunk(m, dev, ev->ino, no * MIRROR_PC_CHUNK, false, false);

		if (c && c->counted == 0)
			mirror_pc_chunk_free(pc, c);
	}
	pthread_mutex_unlock(&pc->chunks_lock);
	/* (after the bits are clear: a sample filling a mapping meanwhile
	 * looks at them again after it touched, mirror_fill) */
	if (first <= last)
		pc->hooks.dropped(m, dev, ev->ino, first, last - first + 1);
}

static void mirror_pc_dirty(struct mirror *m, const struct pcache_event *ev)
{
	struct mirror_pcache *pc = m->pc;
	unsigned long dev = mirror_pc_dev(ev->dev);

	/* its buffer heads, per page (a block smaller than a page: more) */
	uint8_t heads = (uint8_t)(ev->bh / ev->nr > MIRROR_PC_BH_MASK ? MIRROR_PC_BH_MASK :
				  ev->bh / ev->nr);

	pthread_mutex_lock(&pc->chunks_lock);
	for (uint64_t i = ev->index; i < ev->index + ev->nr; i++) {
		struct mirror_pc_chunk *c = mirror_pc_chunk(m, dev, ev->ino, i, false, false);
		uint32_t j = (uint32_t)(i % MIRROR_PC_CHUNK);

		if (!c || !(c->page[j] & MIRROR_PC_COUNTED))
			continue;
		mirror_pc_set_dirty(c, j, true);
		if (heads && !(c->page[j] & MIRROR_PC_BH_MASK)) {
			c->page[j] |= heads;
			mirror_pc_kmem(pc, c->kg[j / MIRROR_PC_BLOCK], ev->cpu % m->env->eng->m.cpus,
				       (long)heads * pc->bh_size, &pc->kmode);
		}
	}
	pthread_mutex_unlock(&pc->chunks_lock);
}

/* The inode's writeback is over: every page of it is clean. */
static void mirror_pc_written(struct mirror *m, const struct pcache_event *ev)
{
	struct mirror_pcache *pc = m->pc;
	unsigned long dev = mirror_pc_dev(ev->dev);

	pthread_mutex_lock(&pc->chunks_lock);
	for (size_t b = 0; b < (1u << MIRROR_PC_HASH_BITS); b++)
		for (struct mirror_pc_chunk *c = pc->chunk[b]; c; c = c->next)
			if (c->dev == dev && c->ino == ev->ino)
				for (uint32_t i = 0; c->ndirty > 0 && i < MIRROR_PC_CHUNK; i++)
					mirror_pc_set_dirty(c, i, false);
	pthread_mutex_unlock(&pc->chunks_lock);
}

int mirror_pcache_alarm(struct mirror *m, pid_t tgid, uint64_t pages)
{
	return m->pc && m->pc->tracer ? pcache_alarm(m->pc->tracer, tgid, pages) : -ENOSYS;
}

void mirror_pcache_event(void *arg, const struct pcache_event *ev)
{
	struct mirror *m = arg;

	if (ev->op == PCACHE_ALARM) {
		atomic_fetch_add(&m->pc->alarms, 1);
		m->pc->hooks.alarmed(m, (pid_t)ev->tgid);
		return;
	}
	if (ev->op == PCACHE_MAKER) {
		struct mirror_pcache *pc = m->pc;

		/* told after pcache.lock (mirror_pc_tell_makers) */
		pthread_mutex_lock(&pc->makers_lock);
		if (pc->nmakers == MIRROR_PC_MAKERS)
			memmove(pc->maker_q, pc->maker_q + 1, sizeof(pc->maker_q[0]) * --pc->nmakers);
		pc->maker_q[pc->nmakers].child = (pid_t)ev->tgid;
		pc->maker_q[pc->nmakers].maker = (pid_t)ev->ptgid;
		pc->maker_q[pc->nmakers++].real = (pid_t)ev->index;
		pthread_mutex_unlock(&pc->makers_lock);
		return;
	}
	if (ev->op == PCACHE_WRITTEN) {
		mirror_pc_written(m, ev);
		return;
	}
	if (ev->nr == 0 || ev->nr > 1u << 18)
		return;
	switch (ev->op) {
	case PCACHE_ADD:
		mirror_pc_add(m, ev);
		break;
	case PCACHE_DEL:
		mirror_pc_del(m, ev);
		break;
	case PCACHE_DIRTY:
		mirror_pc_dirty(m, ev);
		break;
	}
}

/* The CLONE_PARENT forks read so far, to the file surface, in the order
 * made (no lock held). */
static void mirror_pc_tell_makers(struct mirror *m)
{
	struct mirror_pcache *pc = m->pc;

	pthread_mutex_lock(&pc->tell_lock);
	for (;;) {
		pid_t child, maker, real;

		pthread_mutex_lock(&pc->makers_lock);
		if (!pc->nmakers) {
			pthread_mutex_unlock(&pc->makers_lock);
			break;
		}
		child = pc->maker_q[0].child;
		maker = pc->maker_q[0].maker;
		real = pc->maker_q[0].real;
		memmove(pc->maker_q, pc->maker_q + 1, sizeof(pc->maker_q[0]) * --pc->nmakers);
		pthread_mutex_unlock(&pc->makers_lock);
		atomic_fetch_add(&pc->makers, 1);
		if (m->env && m->env->made_by)
			m->env->made_by(m->env->fs, child, maker, real);
	}
	pthread_mutex_unlock(&pc->tell_lock);
}

static void *mirror_pc_main(void *arg)
{
	struct mirror *m = arg;
	struct pollfd fds[2] = {
		{ .fd = pcache_fd(m->pc->tracer), .events = POLLIN },
		{ .fd = m->pc->stopfd, .events = POLLIN },
	};

	/* the tracer wakes it for every 64 KiB of events; what stays under
	 * that is read within MIRROR_PC_DRAIN_MS (or by a read of a group's
	 * files, or an exit, first) */
	for (;;) {
		if (poll(fds, 2, MIRROR_PC_DRAIN_MS) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		pcache_consume(m->pc->tracer);
		if (m->pc->tell_delay_ms) {
			bool queued;

			pthread_mutex_lock(&m->pc->makers_lock);
			queued = m->pc->nmakers > 0;
			pthread_mutex_unlock(&m->pc->makers_lock);
			if (queued)
				usleep(m->pc->tell_delay_ms * 1000u);
		}
		mirror_pc_tell_makers(m);
	}
	return NULL;
}

void mirror_pcache_sizes(struct mirror_pcache *pc)
{
	pc->node_size = proc_slab_size("radix_tree_node");
	pc->bh_size = proc_slab_size("buffer_head");
	if (pc->node_size <= 0)
		pc->node_size = MIRROR_PC_NODE_SIZE;
	if (pc->bh_size <= 0)
		pc->bh_size = MIRROR_PC_BH_SIZE;
	pc->kmode.nowait = true;
}

int mirror_pcache_open(struct mirror *m, const struct mirror_pc_hooks *hooks)
{
	struct mirror_pcache *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return -ENOMEM;
	pc->hooks = *hooks;
	pc->stopfd = -1;
	mirror_pcache_sizes(pc);
	pthread_mutex_init(&pc->chunks_lock, NULL);
	pthread_mutex_init(&pc->makers_lock, NULL);
	pthread_mutex_init(&pc->tell_lock, NULL);
	m->pc = pc;
	return 0;
}

int mirror_pcache_start(struct mirror *m, const struct mirror_pc_hooks *hooks)
{
	struct mirror_pcache *pc;
	const char *delay;
	int err = mirror_pcache_open(m, hooks);

	if (err)
		return err;
	pc = m->pc;
	if ((delay = getenv("MEMCGFS_TEST_TELL_DELAY_MS")))
		pc->tell_delay_ms = (unsigned)strtoul(delay, NULL, 10) % 10000u;
	if ((pc->stopfd = eventfd(0, EFD_CLOEXEC)) < 0)
		err = -errno;
	else if (!(err = pcache_open(mirror_pcache_event, m, &pc->tracer)) &&
		 pthread_create(&pc->thread, NULL, mirror_pc_main, m))
		err = -EAGAIN;
	if (!err)
		return 0;
	if (pc->tracer)
		pcache_close(pc->tracer);
	pc->tracer = NULL;
	if (pc->stopfd >= 0)
		close(pc->stopfd);
	pc->stopfd = -1;
	mirror_pcache_stop(m);
	return err;
}

void mirror_pcache_stop(struct mirror *m)
{
	struct mirror_pcache *pc = m->pc;
	uint64_t one = 1;

	if (!pc)
		return;
	if (pc->tracer) {             /* (none in the unit tests, which feed
				       * events, nor with the scan) */
		if (write(pc->stopfd, &one, sizeof(one)) != sizeof(one))
			abort();          /* (an eventfd write cannot fail here) */
		pthread_join(pc->thread, NULL);
		pcache_close(pc->tracer);
		close(pc->stopfd);
	}
	if (pc->last)
		pc->hooks.unpin(pc->last);
	for (size_t b = 0; b < (1u << MIRROR_PC_HASH_BITS); b++)
		while (pc->chunk[b])
			mirror_pc_chunk_free(pc, pc->chunk[b]);
	while (pc->nkmem > 0)         /* (every chunk gave its bytes back) */
		mirror_pc_kmem(pc, pc->kmem[0].g, 0, -pc->kmem[0].bytes, NULL);
	pthread_mutex_destroy(&pc->chunks_lock);
	pthread_mutex_destroy(&pc->makers_lock);
	pthread_mutex_destroy(&pc->tell_lock);
	free(pc);
	m->pc = NULL;
}

void mirror_pcache_track(struct mirror *m, pid_t tgid)
{
	if (m->pc && m->pc->tracer)
		(void)pcache_track(m->pc->tracer, tgid);
}

void mirror_pcache_drain(struct mirror *m)
{
	if (m->pc && m->pc->tracer)
		(void)pcache_consume(m->pc->tracer);
}

void mirror_pcache_place(struct mirror *m)
{
	if (!m->pc || !m->pc->tracer)
		return;
	/* (an event the tracer's thread is handling is queued once this
	 * returns: both consume under pcache.lock) */
	mirror_pcache_drain(m);
	mirror_pc_tell_makers(m);
}

/* Of pages [off, off + n) of the file: how many have a stand-in here, or
 * (faulted) how many a fault added, those with their bit set in bits if
 * given. -1 without the events. */
static long mirror_pc_count(struct mirror *m, unsigned long dev, unsigned long ino,
			    unsigned long off, unsigned long n, bool faulted, uint64_t *bits)
{
	struct mirror_pcache *pc = m ? m->pc : NULL;
	long count = 0;

	if (!pc || (faulted && pc->scan))
		return -1;
	pthread_mutex_lock(&pc->chunks_lock);
	for (unsigned long i = off; i < off + n;) {
		struct mirror_pc_chunk *c = mirror_pc_chunk(m, dev, ino, i, false, false);
		unsigned long end = (i / MIRROR_PC_CHUNK + 1) * MIRROR_PC_CHUNK;

		if (end > off + n)
			end = off + n;
		for (; c && i < end; i++) {
			bool in = faulted ? !!(c->page[i % MIRROR_PC_CHUNK] & MIRROR_PC_FAULTED) :
					    vm_resident(c->r, (uint32_t)(i % MIRROR_PC_CHUNK));

			count += in;
			if (in && bits)
				bits[(i - off) / 64] |= 1ull << ((i - off) % 64);
		}
		i = end;
	}
	pthread_mutex_unlock(&pc->chunks_lock);
	return count;
}

bool mirror_pcache_events(const struct mirror *m)
{
	return m->pc && !m->pc->scan;
}

void mirror_pcache_counts(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t off,
			  uint64_t n, long *counted, long *dirty)
{
	struct mirror_pcache *pc = m->pc;

	*counted = *dirty = 0;
	pthread_mutex_lock(&pc->chunks_lock);
	for (uint64_t i = off; i < off + n;) {
		struct mirror_pc_chunk *c = mirror_pc_chunk(m, dev, ino, i, false, false);
		uint64_t end = (i / MIRROR_PC_CHUNK + 1) * MIRROR_PC_CHUNK;

		if (end > off + n)
			end = off + n;
		if (c && i % MIRROR_PC_CHUNK == 0 && end - i == MIRROR_PC_CHUNK) {
			*counted += c->counted;   /* (a whole chunk) */
			*dirty += c->ndirty;
		} else {
			for (; c && i < end; i++) {
				uint32_t j = (uint32_t)(i % MIRROR_PC_CHUNK);

				*counted += !!(c->page[j] & MIRROR_PC_COUNTED);
				*dirty += (long)(c->dirty[j / 64] >> (j % 64) & 1);
			}
		}
		i = end;
	}
	pthread_mutex_unlock(&pc->chunks_lock);
}

void mirror_pcache_clean(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t off,
			 uint64_t n)
{
	struct mirror_pcache *pc = m->pc;

	pthread_mutex_lock(&pc->chunks_lock);
	for (uint64_t i = off; i < off + n; i++) {
		struct mirror_pc_chunk *c = mirror_pc_chunk(m, dev, ino, i, false, false);

		if (c)
			mirror_pc_set_dirty(c, (uint32_t)(i % MIRROR_PC_CHUNK), false);
		else
			i |= MIRROR_PC_CHUNK - 1;     /* (the next chunk) */
	}
	pthread_mutex_unlock(&pc->chunks_lock);
}

void mirror_pcache_remove(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t off,
			  uint64_t n)
{
	struct mirror_pcache *pc = m->pc;

	for (uint64_t no = off / MIRROR_PC_CHUNK; n > 0 && no <= (off + n - 1) / MIRROR_PC_CHUNK; no++) {
		uint64_t lo = no * MIRROR_PC_CHUNK > off ? no * MIRROR_PC_CHUNK : off;
		uint64_t hi = (no + 1) * MIRROR_PC_CHUNK < off + n ? (no + 1) * MIRROR_PC_CHUNK : off + n;
		struct mirror_pc_chunk *c;
		bool some;

		pthread_mutex_lock(&pc->chunks_lock);
		c = mirror_pc_chunk(m, dev, ino, lo, false, false);
		some = c && c->counted > 0;
		pthread_mutex_unlock(&pc->chunks_lock);
		if (some) {
			struct pcache_event ev = { .op = PCACHE_DEL, .ino = ino, .index = lo,
						   .nr = (__u32)(hi - lo),
						   .dev = (__u32)(major(dev) << 20 | minor(dev)) };

			mirror_pc_del(m, &ev);
		}
	}
}

long mirror_pcache_held(struct mirror *m, unsigned long dev, unsigned long ino, unsigned long off,
			unsigned long n)
{
	long held = mirror_pc_count(m, dev, ino, off, n, false, NULL);

	return held > 0 ? held : 0;
}

long mirror_pcache_faulted(struct mirror *m, unsigned long dev, unsigned long ino,
			   unsigned long off, unsigned long n, uint64_t *bits)
{
	return mirror_pc_count(m, dev, ino, off, n, true, bits);
}

int mirror_pcache_describe(struct mirror *m, char *buf, size_t size)
{
	struct mirror_pcache *pc = m->pc;
	uint64_t lost[PCACHE_LOST_NR];

	if (pc->tracer)
		pcache_lost(pc->tracer, lost);
	else
		memset(lost, 0, sizeof(lost));
	return snprintf(buf, size,
			"page_cache_pages_added %lu\n"
			"page_cache_pages_faulted %lu\n"
			"page_cache_pages_removed %lu\n"
			"page_cache_pages_unattributed %lu\n"
			"page_cache_charges_failed %lu\n"
			"page_cache_kmem_bytes %ld\n"
			"page_cache_kmem_pages %ld\n"
			"page_cache_events_lost %lu\n"
			"page_cache_alarms %lu\n"
			"real_processes_clone_parent %lu\n",
			(unsigned long)atomic_load(&pc->added), (unsigned long)atomic_load(&pc->faulted),
			(unsigned long)atomic_load(&pc->removed),
			(unsigned long)atomic_load(&pc->unattributed),
			(unsigned long)atomic_load(&pc->failed), atomic_load(&pc->kmem_bytes),
			atomic_load(&pc->kmem_pages),
			(unsigned long)lost[PCACHE_LOST_RING], (unsigned long)atomic_load(&pc->alarms),
			(unsigned long)atomic_load(&pc->makers));
}
