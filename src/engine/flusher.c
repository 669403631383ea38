/* flusher.c: dirty page cache written by age and by amount, and writers
 * held to the disk's pace (issue 22, item 4), with the machine's disk
 * only (a replay's; the daemon has none), in simulated time.
 *
 * The flusher (pdflush, later the bdi flusher threads): every
 * dirty_writeback_interval (5 s) it writes the files first dirtied more
 * than dirty_expire (30 s) ago (kupdate), and whenever the dirty pages
 * are over the background threshold it writes files until they are
 * under it (background writeback). A file is
 * written from where its last writeback stopped (writeback_index), at
 * most MAX_WRITEBACK_PAGES a file a round, to its pages' places on the
 * disk, so a file written in order goes out in merged requests.
 *
 * balance_dirty_pages, every ratelimit_pages (32) pages a task dirtied:
 * over the background threshold the flusher is wanted; over the dirty
 * limit the task is held, the era's way: up to 3.1 (eras 2.6.24, 2.6.39)
 * it writes write_chunk (48) pages itself and naps (congestion_wait, HZ/10)
 * until under the limit or the chunk is written; from 3.2 (3.2, today) it
 * pauses, without I/O, for the pages it dirtied at the disk's rate divided
 * by the position ratio (1 + x^3, x the distance below the setpoint, the
 * middle of the two thresholds, over the limit's; at most MAX_PAUSE,
 * 200 ms), and not at all under the setpoint (freerun).
 *
 * 3.2's direct reclaim wakes it for the pages it scanned (reclaim.c's
 * reclaim_wake_flusher, through the engine's fl_kick and fl_kick_at):
 * its next pass writes that many pages, any file's.
 *
 * The thresholds are shares of dirtyable memory: free pages and page
 * cache, and anon pages too in 2.6.24 (determine_dirtyable_memory) and,
 * with swap, up to 3.13 (global_reclaimable_pages); 5 % and 10 % in
 * 2.6.24 (2.6.22's defaults), 10 % and 20 % from 2.6.30. Dirty counts
 * are the machine's (no cgroup writeback in cgroup v1's kernels).
 *
 * Lock order: the space's lock (the objects list), an object's, a
 * lruvec's (pgstate); the writeback device's and the disk's only with no
 * object lock held; the flusher's own lock alone. Owns the wake state and
 * the counts; never reclaims, never frees a page. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/blkdev.h"
#include "engine/engine.h"
#include "engine/flusher.h"
#include "engine/internal.h"
#include "engine/page.h"
#include "engine/page_state.h"
#include "engine/reclaim.h"
#include "engine/rstat.h"
#include "engine/vm.h"
#include "engine/writeback.h"

#define FL_EXPIRE_NS     30000000000ull   /* dirty_expire_centisecs 3000 */
#define FL_INTERVAL_NS    5000000000ull   /* dirty_writeback_centisecs 500 */
#define FL_MAX_WRITEBACK  1024            /* MAX_WRITEBACK_PAGES */
#define FL_RATELIMIT      32              /* ratelimit_pages' floor */
#define FL_WRITE_CHUNK    (FL_RATELIMIT * 3 / 2)   /* sync_writeback_pages */
#define FL_MAX_PAUSE_NS   200000000ull    /* MAX_PAUSE, HZ/5 */
#define FL_BATCH          64

struct flusher {
	pthread_mutex_t lock;
	uint64_t next;           /* the periodic wake */
	uint64_t wanted_at;      /* background writeback wanted since (0: not) */
	struct mcg_flusher_counts c;
};

int flusher_init(struct mcg_engine *e)
{
	struct flusher *f;

	if (!e->blk)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	f->next = env_now(&e->env) + FL_INTERVAL_NS;
	e->flusher = f;
	return 0;
}

void flusher_destroy(struct mcg_engine *e)
{
	if (!e->flusher)
		return;
	pthread_mutex_destroy(&e->flusher->lock);
	free(e->flusher);
	e->flusher = NULL;
}

/* Dirtyable memory, pages, as the era counted it. */
static long fl_dirtyable(struct mcg_engine *e)
{
	long n = page_nr_free(&e->pages) + rstat_lru(e->root, LRU_ACTIVE_FILE, -1) +
		 rstat_lru(e->root, LRU_INACTIVE_FILE, -1);
	bool anon = e->m.era == MCG_ERA_2_6_24 ||
		    (e->m.era != MCG_ERA_TODAY && e->m.swap_pages > 0);

	if (anon)
		n += rstat_lru(e->root, LRU_ACTIVE_ANON, -1) + rstat_lru(e->root, LRU_INACTIVE_ANON, -1);
	return n;
}

static void fl_thresholds(struct mcg_engine *e, long *bg, long *thresh)
{
	long d = fl_dirtyable(e);
	bool old = e->m.era == MCG_ERA_2_6_24;

	*bg = d * (old ? 5 : 10) / 100;
	*thresh = d * (old ? 10 : 20) / 100;
	if (*bg >= *thresh)
		*bg = *thresh / 2;
}

static long fl_dirty(struct mcg_engine *e)
{
	return rstat_item(e->root, STAT_DIRTY);
}

/* Up to max of file o's dirty pages under writeback from its
 * writeback_index on. A whole lap that leaves no dirty page (none met, or
 * every one met now written) makes the file clean: its age goes, and its
 * next dirtying starts a new one. */
static long fl_write_file(struct mcg_engine *e, struct vm_object *o, long max)
{
	struct vm_region *r = o->regions;
	long written = 0;
	uint32_t scanned = 0;
	bool busy = false;                /* dirty pages left behind */

	if (!r || !r->npages) {
		pthread_mutex_lock(&o->lock);
		o->dirtied_when = 0;
		pthread_mutex_unlock(&o->lock);
		return 0;
	}
	while (written < max && scanned < r->npages) {
		uint32_t idx[FL_BATCH], vpage[FL_BATCH];
		int n = 0;

		pthread_mutex_lock(&o->lock);
		while (n < FL_BATCH && written + n < max && scanned < r->npages) {
			uint32_t i = o->wb_index % r->npages;
			uint32_t v = atomic_load(&r->slot[i]);
			int st;

			o->wb_index = i + 1;
			scanned++;
			if (v == VM_EMPTY || (v & VM_TAG_MASK) != VM_TAG_PAGE)
				continue;
			st = pgstate_start_writeback(e, v);
			busy |= st < 0;
			if (st > 0) {
				idx[n] = v;
				vpage[n++] = r->vbase + i;
			}
		}
		if (scanned >= r->npages && !busy)
			o->dirtied_when = 0;          /* clean once these are out */
		pthread_mutex_unlock(&o->lock);
		for (int k = 0; k < n; k++)
			wb_submit(e, idx[k], vpage[k]);
		written += n;
	}
	return written;
}

/* One round over the files: those dirtied before cutoff (all, for
 * background writeback), up to the pages wanted. Space lock held by the
 * caller. */
static long fl_round(struct mcg_engine *e, uint64_t cutoff, long want)
{
	long written = 0;

	for (struct vm_object *o = vm_space_objects(e->vm); o && written < want; o = o->next) {
		uint64_t when;
		long max = want - written < FL_MAX_WRITEBACK ? want - written : FL_MAX_WRITEBACK;

		if (o->is_task)
			continue;
		pthread_mutex_lock(&o->lock);
		when = o->dirtied_when;
		pthread_mutex_unlock(&o->lock);
		if (!when || when > cutoff)
			continue;
		written += fl_write_file(e, o, max);
	}
	return written;
}

/* Write pages of the files dirtied before cutoff, rounds until want
 * pages went or a round wrote none. */
static long fl_write(struct mcg_engine *e, uint64_t cutoff, long want)
{
	pthread_mutex_t *vl = vm_space_lock(e->vm);
	long written = 0, got;

	pthread_mutex_lock(vl);
	do {
		got = fl_round(e, cutoff, want - written);
		written += got;
	} while (got && written < want);
	pthread_mutex_unlock(vl);
	return written;
}

uint64_t mcg_flusher_due(struct mcg_engine *e)
{
	struct flusher *f = e->flusher;
	uint64_t due;

	if (!f)
		return UINT64_MAX;
	uint64_t kick = atomic_load(&e->fl_kick_at);

	pthread_mutex_lock(&f->lock);
	due = f->wanted_at && f->wanted_at < f->next ? f->wanted_at : f->next;
	pthread_mutex_unlock(&f->lock);
	return kick && kick < due ? kick : due;
}

void mcg_flusher_step(struct mcg_engine *e)
{
	struct flusher *f = e->flusher;
	uint64_t now;
	long bg, thresh, dirty, written = 0, kicked;
	bool kupdate;

	if (!f)
		return;
	reclaim_wb_complete(e);                   /* what the disk wrote meanwhile */
	now = env_now(&e->env);
	fl_thresholds(e, &bg, &thresh);
	pthread_mutex_lock(&f->lock);
	kupdate = now >= f->next;
	if (kupdate)
		f->next = now + FL_INTERVAL_NS;
	f->wanted_at = 0;
	f->c.passes++;
	pthread_mutex_unlock(&f->lock);
	/* reclaim's wake (3.2's wakeup_flusher_threads): the pages it asked
	 * for, from any file */
	atomic_store(&e->fl_kick_at, 0);
	kicked = atomic_exchange(&e->fl_kick, 0);
	if (kicked > 0) {
		long got = fl_write(e, UINT64_MAX, kicked);

		written += got;
		pthread_mutex_lock(&f->lock);
		f->c.kicked += kicked;
		f->c.kick_written += got;
		pthread_mutex_unlock(&f->lock);
	}
	/* background: files in the objects' order until under the threshold */
	dirty = fl_dirty(e);
	if (dirty > bg)
		written += fl_write(e, UINT64_MAX, dirty - bg);
	if (kupdate && now > FL_EXPIRE_NS)
		written += fl_write(e, now - FL_EXPIRE_NS, LONG_MAX);
	pthread_mutex_lock(&f->lock);
	f->c.written += written;
	f->c.bg_thresh = bg;
	f->c.thresh = thresh;
	pthread_mutex_unlock(&f->lock);
}

/* 3.2's pause for pages dirtied at dirty pages (dirty + writeback) between
 * the setpoint and the limit: their time on the disk over the position
 * ratio 1 + x^3, x = (setpoint - dirty) / (limit - setpoint). */
static uint64_t fl_pause(struct mcg_engine *e, long pages, long dirty, long bg, long thresh)
{
	long setpoint = (bg + thresh) / 2;
	double x, pos;
	/* the disk's transfer of a page; a disk given only a seek transfers
	 * at the writeback device's rate (set by wb_init, which runs first:
	 * 100 MB/s unless the machine says) */
	uint64_t per_page = e->m.disk_xfer_ns ? e->m.disk_xfer_ns :
			    1000000000ull / e->m.wb_pages_per_s;
	double pause;

	if (dirty >= thresh)
		return FL_MAX_PAUSE_NS;
	x = (double)(setpoint - dirty) / (double)(thresh - setpoint + 1);
	pos = 1.0 + x * x * x;
	if (pos <= 0.0)
		return FL_MAX_PAUSE_NS;
	pause = (double)pages * (double)per_page / pos;
	return pause > (double)FL_MAX_PAUSE_NS ? FL_MAX_PAUSE_NS : (uint64_t)pause;
}

/* Up to 3.1: the writer writes a chunk itself and naps (congestion_wait,
 * the writes due by its end completing) until under the limit or the
 * chunk is out; at most FL_MAX_NAPS naps, should nothing complete. */
#define FL_MAX_NAPS 1000

static void fl_throttle_old(struct mcg_engine *e, long thresh)
{
	struct flusher *f = e->flusher;
	long written = 0;
	uint64_t t0 = env_now(&e->env);

	for (int naps = 0; naps < FL_MAX_NAPS; naps++) {
		written += fl_write(e, UINT64_MAX, FL_WRITE_CHUNK - written);
		if (fl_dirty(e) + rstat_item(e->root, STAT_WRITEBACK) <= thresh ||
		    written >= FL_WRITE_CHUNK)
			break;
		reclaim_congestion_nap(e);
	}
	pthread_mutex_lock(&f->lock);
	f->c.throttle_written += written;
	f->c.pause_ns += env_now(&e->env) - t0;
	pthread_mutex_unlock(&f->lock);
}

void flusher_dirtied(struct vm_object *who, struct vm_object *o)
{
	struct mcg_engine *e = o->eng;
	struct flusher *f = e->flusher;
	long bg, thresh, dirty, pages;
	uint64_t now, pause = 0;

	if (!f)
		return;
	now = env_now(&e->env);
	pthread_mutex_lock(&o->lock);
	if (!o->dirtied_when)
		o->dirtied_when = now ? now : 1;
	pthread_mutex_unlock(&o->lock);
	pthread_mutex_lock(&who->lock);
	pages = ++who->nr_dirtied;
	if (pages >= FL_RATELIMIT)
		who->nr_dirtied = 0;
	pthread_mutex_unlock(&who->lock);
	if (pages < FL_RATELIMIT)
		return;
	fl_thresholds(e, &bg, &thresh);
	dirty = fl_dirty(e);
	if (dirty > bg) {
		pthread_mutex_lock(&f->lock);
		if (!f->wanted_at)
			f->wanted_at = now ? now : 1;
		pthread_mutex_unlock(&f->lock);
	}
	dirty += rstat_item(e->root, STAT_WRITEBACK);
	if (e->m.era == MCG_ERA_2_6_24 || e->m.era == MCG_ERA_2_6_39) {
		if (dirty <= thresh)
			return;
		pthread_mutex_lock(&f->lock);
		f->c.throttled++;
		pthread_mutex_unlock(&f->lock);
		fl_throttle_old(e, thresh);
		return;
	}
	if (dirty <= (bg + thresh) / 2)
		return;                           /* freerun */
	pause = fl_pause(e, pages, dirty, bg, thresh);
	pthread_mutex_lock(&f->lock);
	f->c.throttled++;
	f->c.pause_ns += pause;
	pthread_mutex_unlock(&f->lock);
	env_sleep(&e->env, pause);
}

void mcg_flusher_counts(struct mcg_engine *e, struct mcg_flusher_counts *c)
{
	struct flusher *f = e->flusher;

	if (!f) {
		*c = (struct mcg_flusher_counts){ 0 };
		return;
	}
	pthread_mutex_lock(&f->lock);
	*c = f->c;
	pthread_mutex_unlock(&f->lock);
}
