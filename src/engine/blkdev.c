/* blkdev.c: the machine's one block device in simulated time (issue 22,
 * item 1). The disk serves requests one at a time in the order they come:
 * each starts when the disk is free and costs a seek (unless it follows
 * the previous request's last page) and its pages' transfer. A write or
 * read of many pages is cut into requests of at most BLK_MAX_REQ_PAGES,
 * and one that starts where the newest request of its direction ends
 * joins it while the disk has not started it (the elevator's back merge),
 * up to that size, even with requests of the other direction queued
 * behind it: reclaim's single-page writes to consecutive swap slots (swap
 * slots are taken in ascending order, swap.c) go out as one request, as
 * they did.
 *
 * The request queue is the block layer's of 2.6.x (ll_rw_blk.c, later
 * blk-core.c): each direction has nr_requests requests (BLKDEV_MAX_RQ,
 * 128), a submitter that finds its direction's all in flight waits for
 * the first to be freed (get_request_wait), and the direction is
 * congested from nr_congestion_on in flight until it drops below
 * nr_congestion_off (blk_queue_congestion_threshold: on = nr - nr/8 + 1,
 * at most nr; off = nr - nr/8 - nr/16 - 1, at least 1).
 *
 * Requests are served in order, so their completion times grow with each
 * submission; the queue keeps each direction's last nr_requests of them
 * in a ring. A direction is full at t when the oldest of those is still
 * in flight at t; the requests in flight at t are the ring's tail past t.
 * The congestion flag is read from that count (on at `on`), without the
 * kernel's memory of having crossed it: a queue between off and on reads
 * as not congested.
 *
 * congestion_wait (mm/backing-dev.c): a nap of up to its timeout on the
 * write direction's wait queue, which every freed write request wakes
 * while the direction is below off (__freed_request calling
 * clear_bdi_congested): so the nap ends when the writes in flight drop
 * below off, at the first completion when they already are, and lasts
 * the whole timeout when nothing is being written.
 *
 * Times are the caller's (the simulated clock of the step that submits),
 * so that a caller running ahead of others can use the device at its own
 * time. Lock order: the device's lock alone; nothing is called under it.
 * Owns the queue and the counters; never touches a page, never sleeps. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/blkdev.h"
#include "engine/engine.h"

/* positions from here on are the device's own, for requests that follow
 * nothing (BLK_POS_NONE); the caller's positions stay below */
#define BLK_POS_FRESH (1ull << 62)

struct blk_queue {
	uint64_t *done;          /* [nr]: the last nr completion times, a ring */
	unsigned next;           /* the oldest, where the next one goes */
	/* the newest request: when the disk starts it, its pages, and the
	 * page after its last (a request that follows it may merge) */
	uint64_t last_start, last_end;
	long last_pages;
};

struct blk_dev {
	pthread_mutex_t lock;
	unsigned nr, on, off;
	uint64_t seek_ns, xfer_ns;
	uint64_t free_at;        /* when the disk has served every request */
	uint64_t head;           /* the page after the last one served */
	int last_dir;            /* the direction of the disk's last request (-1: none) */
	uint64_t fresh;          /* where a request that follows nothing goes */
	struct blk_queue q[2];   /* BLK_READ, BLK_WRITE */
	struct blk_counts c;
};

int blk_init(struct mcg_engine *e)
{
	struct blk_dev *d;
	unsigned nr = e->m.nr_requests ? e->m.nr_requests : BLK_NR_REQUESTS;

	if (!e->m.disk_seek_ns && !e->m.disk_xfer_ns)
		return 0;
	if (nr > BLK_NR_REQUESTS_MAX)
		return -EINVAL;
	if (nr < BLK_NR_REQUESTS_MIN)
		nr = BLK_NR_REQUESTS_MIN;         /* queue_requests_store's floor */
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->nr = nr;
	d->on = nr - nr / 8 + 1 > nr ? nr : nr - nr / 8 + 1;
	d->off = nr - nr / 8 - nr / 16 - 1 < 1 ? 1 : nr - nr / 8 - nr / 16 - 1;
	d->seek_ns = e->m.disk_seek_ns;
	d->xfer_ns = e->m.disk_xfer_ns;
	d->head = BLK_POS_NONE;
	d->last_dir = -1;
	d->fresh = BLK_POS_FRESH;
	for (int i = 0; i < 2; i++) {
		d->q[i].done = calloc(nr, sizeof(*d->q[i].done));
		if (!d->q[i].done) {
			free(d->q[0].done);
			free(d);
			return -ENOMEM;
		}
	}
	pthread_mutex_init(&d->lock, NULL);
	e->m.nr_requests = nr;
	e->blk = d;
	return 0;
}

void blk_destroy(struct mcg_engine *e)
{
	struct blk_dev *d = e->blk;

	if (!d)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d->q[0].done);
	free(d->q[1].done);
	free(d);
	e->blk = NULL;
}

/* The i-th oldest of q's last nr completion times */
static uint64_t blk_nth(const struct blk_dev *d, const struct blk_queue *q, unsigned i)
{
	return q->done[(q->next + i) % d->nr];
}

/* How many of q's requests are in flight at t, and the ring index (from
 * the oldest) of the first of them. */
static unsigned blk_inflight(const struct blk_dev *d, const struct blk_queue *q, uint64_t t,
			     unsigned *first)
{
	unsigned i = 0;

	while (i < d->nr && blk_nth(d, q, i) <= t)
		i++;
	*first = i;
	return d->nr - i;
}

static void blk_count_pages(struct blk_dev *d, enum blk_dir dir, long n)
{
	if (dir == BLK_READ)
		d->c.reads += n;
	else
		d->c.writes += n;
}

int blk_submit(struct mcg_engine *e, uint64_t now, enum blk_dir dir, uint64_t pos, long pages,
	       struct blk_io *io)
{
	struct blk_dev *d = e->blk;
	struct blk_queue *q;
	uint64_t t = now;

	if (!d)
		return -ENODEV;
	if (pages <= 0 || (dir != BLK_READ && dir != BLK_WRITE))
		return -EINVAL;
	q = &d->q[dir];
	pthread_mutex_lock(&d->lock);
	if (pos == BLK_POS_NONE || pos >= BLK_POS_FRESH) {
		/* somewhere nothing was: its requests follow each other */
		pos = d->fresh;
		d->fresh += (uint64_t)pages + 1;
	}
	while (pages > 0) {
		long n = pages < BLK_MAX_REQ_PAGES ? pages : BLK_MAX_REQ_PAGES;
		uint64_t oldest = blk_nth(d, q, 0), start, cost;
		bool seq = pos == d->head;
		unsigned newest = (q->next + d->nr - 1) % d->nr;

		if (q->last_end == pos && q->last_start > t) {
			/* the elevator's back merge: onto the newest request
			 * of this direction, still waiting for the disk, even
			 * with others queued behind it (the merge hash finds
			 * it anywhere in the queue). It costs the disk no seek,
			 * only the transfer, which is added at the disk's end
			 * of the queue, since the times of the requests behind
			 * it are already given: the disk's busy time is
			 * right, and the merged pages complete with the
			 * disk's last request, no sooner than they would. */
			long m = BLK_MAX_REQ_PAGES - q->last_pages;
			/* the disk's last request is this direction's newest
			 * when no request of the other came after it */
			bool last = d->last_dir == (int)dir;

			if (m > n)
				m = n;
			if (m > 0) {
				cost = (uint64_t)m * d->xfer_ns;
				d->free_at += cost;
				d->c.busy_ns += cost;
				d->c.merges++;
				q->done[newest] = d->free_at;
				q->last_pages += m;
				q->last_end += (uint64_t)m;
				blk_count_pages(d, dir, m);
				pos += (uint64_t)m;
				if (last)
					d->head = pos;
				pages -= m;
				continue;
			}
		}

		if (oldest > t) {                 /* all nr in flight: wait for one */
			d->c.full_waits++;
			d->c.full_wait_ns += oldest - t;
			t = oldest;
		}
		start = t > d->free_at ? t : d->free_at;
		cost = (seq ? 0 : d->seek_ns) + (uint64_t)n * d->xfer_ns;
		d->free_at = start + cost;
		d->c.busy_ns += cost;
		d->c.requests++;
		d->c.seq += seq;
		q->done[q->next] = d->free_at;
		q->next = (q->next + 1) % d->nr;
		q->last_start = start;
		q->last_pages = n;
		d->last_dir = (int)dir;
		q->last_end = pos + (uint64_t)n;
		blk_count_pages(d, dir, n);
		pos += (uint64_t)n;
		d->head = pos;
		pages -= n;
	}
	io->go = t;
	io->done = d->free_at;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

bool blk_congested(struct mcg_engine *e, uint64_t now, enum blk_dir dir)
{
	struct blk_dev *d = e->blk;
	unsigned first, k;

	if (!d || (dir != BLK_READ && dir != BLK_WRITE))
		return false;
	pthread_mutex_lock(&d->lock);
	k = blk_inflight(d, &d->q[dir], now, &first);
	pthread_mutex_unlock(&d->lock);
	return k >= d->on;
}

uint64_t blk_congestion_wait(struct mcg_engine *e, uint64_t now, uint64_t timeout)
{
	struct blk_dev *d = e->blk;
	struct blk_queue *q;
	uint64_t wake = now + timeout;
	unsigned first, k;

	if (!d)
		return wake;
	q = &d->q[BLK_WRITE];
	pthread_mutex_lock(&d->lock);
	k = blk_inflight(d, q, now, &first);
	if (k) {
		/* the completion that leaves fewer than off in flight */
		unsigned j = k >= d->off ? k - d->off : 0;
		uint64_t t = blk_nth(d, q, first + j);

		if (t < wake) {
			wake = t;
			d->c.naps_early++;
		}
	}
	d->c.naps++;
	d->c.nap_ns += wake - now;
	pthread_mutex_unlock(&d->lock);
	return wake;
}

void blk_counts(struct mcg_engine *e, struct blk_counts *c)
{
	struct blk_dev *d = e->blk;

	if (!d) {
		*c = (struct blk_counts){ 0 };
		return;
	}
	pthread_mutex_lock(&d->lock);
	*c = d->c;
	c->nr_requests = d->nr;
	c->congestion_on = d->on;
	c->congestion_off = d->off;
	pthread_mutex_unlock(&d->lock);
}
