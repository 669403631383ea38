/* writeback.c: a FIFO of pages under writeback with completion times:
 * the machine's disk's (blkdev.c), when it has one, else the device's own
 * (max(now, previous completion) + 1/bandwidth + latency). Entries carry
 * the page's owner and group, so a page freed (and reused) while under
 * writeback is recognised and skipped. Lock order: wb lock, then the
 * disk's (blk_submit); the completion work runs after it is dropped. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "engine/blkdev.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/page_state.h"
#include "engine/writeback.h"

struct wb_entry {
	uint32_t idx, owner;
	uint16_t memcg;
	uint64_t done;
};

struct wb_dev {
	pthread_mutex_t lock;
	struct wb_entry *q;
	size_t head, len, cap;        /* ring */
	uint64_t last_done;
	atomic_long inflight, completed, rotated, immediate;
	atomic_long marked, listed, rescued;   /* seed topic 4's counts */
};

int wb_init(struct mcg_engine *e)
{
	struct wb_dev *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	if (!e->m.wb_pages_per_s)
		e->m.wb_pages_per_s = 25600;          /* 100 MB/s */
	if (!e->m.wb_latency_ns)
		e->m.wb_latency_ns = 5000000;         /* 5 ms */
	e->wb = w;
	return 0;
}

void wb_destroy(struct mcg_engine *e)
{
	if (!e->wb)
		return;
	pthread_mutex_destroy(&e->wb->lock);
	free(e->wb->q);
	free(e->wb);
	e->wb = NULL;
}

/* The ring is full: twice the room. false without memory. Lock held. */
static bool wb_grow(struct wb_dev *w)
{
	size_t ncap = w->cap ? w->cap * 2 : 256;
	struct wb_entry *nq = malloc(ncap * sizeof(*nq));

	if (!nq)
		return false;
	for (size_t i = 0; i < w->len; i++)
		nq[i] = w->q[(w->head + i) % (w->cap ? w->cap : 1)];
	free(w->q);
	w->q = nq;
	w->cap = ncap;
	w->head = 0;
	return true;
}

void wb_submit(struct mcg_engine *e, uint32_t idx, uint64_t pos)
{
	struct wb_dev *w = e->wb;
	struct page *p = &e->pages.pages[idx];
	uint64_t now = env_now(&e->env), done;
	struct blk_io io = { .go = now };

	pthread_mutex_lock(&w->lock);
	if (w->len == w->cap && !wb_grow(w)) {
		pthread_mutex_unlock(&w->lock);
		/* no memory for the queue: written at once, rather than
		 * left under writeback with nothing to end it */
		pgstate_flags(e, idx, 0, PG_WRITEBACK);
		return;
	}
	if (e->blk && !blk_submit(e, now, BLK_WRITE, pos, 1, &io)) {
		done = io.done;       /* the machine's disk, in its order */
	} else {
		uint64_t start = w->last_done > now ? w->last_done : now;

		w->last_done = start + 1000000000u / e->m.wb_pages_per_s;
		done = w->last_done + e->m.wb_latency_ns;
	}
	w->q[(w->head + w->len++) % w->cap] = (struct wb_entry){
		.idx = idx, .owner = p->owner, .memcg = p->memcg, .done = done,
	};
	atomic_fetch_add(&w->inflight, 1);
	pthread_mutex_unlock(&w->lock);
	if (io.go > now)
		env_sleep(&e->env, io.go - now);   /* the queue was full (get_request_wait) */
}

static bool wb_no_rotate(const struct mcg_engine *e)
{
#ifdef MCG_BENCH
	return e->m.wb_no_rotate;
#else
	(void)e;
	return false;
#endif
}

/* Write-back finished for one page: it is clean. One marked for reclaim
 * rotates to the inactive tail, or under the immediate policy goes now;
 * one that reclaim holds isolated is left to reclaim's decision. */
static void wb_finish(struct mcg_engine *e, const struct wb_entry *en, wb_reclaim_fn reclaim)
{
	struct page *p = &e->pages.pages[en->idx];
	unsigned id = en->memcg;
	struct mcg_group *g = mcg_by_id(e, id);
	struct lru_vec *v;
	bool reclaim_now = false;

	if (!g)
		return;
	v = lru_vec_of(e, g, en->idx);
	spin_lock(&v->lock);
	if (p->memcg != id && p->owner == en->owner && (p->flags & PG_WRITEBACK)) {
		/* moved to another group while written (move charge holds
		 * both groups' locks to change it, so this read is stable):
		 * finish it there */
		id = p->memcg;
		spin_unlock(&v->lock);
		mcg_put(g);
		if (!(g = mcg_by_id(e, id)))
			return;
		v = lru_vec_of(e, g, en->idx);
		spin_lock(&v->lock);
	}
	if (p->memcg == id && p->owner == en->owner && (p->flags & PG_WRITEBACK)) {
		bool was_reclaim = p->flags & PG_RECLAIM;
		bool isolated = p->kind & PS_ISOLATED;

		bool listed = !isolated && (p->kind & PS_IMMEDIATE);
		/* only a page reclaim marked rotates (rotate_reclaimable_page);
		 * one the flusher wrote stays where it is */
		bool stay = !isolated && !listed && (wb_no_rotate(e) || !was_reclaim);

		pgstate_stats(g, p, -1);
		if (!isolated && !stay)
			lru_unlink(e, g, en->idx);
		p->flags &= (uint8_t)~(PG_WRITEBACK | PG_RECLAIM);
		p->kind &= (uint8_t)~PS_IMMEDIATE;
		pgstate_stats(g, p, 1);
		if (isolated || stay) {
			/* reclaim holds it and decides; or (bench: no rotation)
			 * it stays where it is */
		} else if (was_reclaim && e->m.immediate_reclaim && !(p->flags & PG_REFERENCED)) {
			p->kind |= PS_ISOLATED;   /* ours now, as reclaim would hold it */
			reclaim_now = true;
		} else if (listed && (p->flags & (PG_REFERENCED | PG_ACTIVE | PG_DIRTY))) {
			/* off the immediate list, not reclaimable: another lap */
			lru_link(e, g, en->idx);
		} else {
			lru_link_tail(e, g, en->idx);
			if (was_reclaim)
				atomic_fetch_add(&e->wb->rotated, 1);
		}
	}
	spin_unlock(&v->lock);
	if (reclaim_now && reclaim(g, en->idx))
		atomic_fetch_add(&e->wb->immediate, 1);
	mcg_put(g);
}

/* Complete queued pages due by until (all of them up to idx's entry when
 * idx is not PAGE_NONE). Returns the completion time of idx's entry. */
static uint64_t wb_drain(struct mcg_engine *e, uint64_t until, uint32_t idx, wb_reclaim_fn reclaim)
{
	struct wb_dev *w = e->wb;
	uint64_t hit = 0;

	for (;;) {
		struct wb_entry en;

		pthread_mutex_lock(&w->lock);
		if (!w->len || (idx == PAGE_NONE && w->q[w->head].done > until) ||
		    (idx != PAGE_NONE && hit)) {
			pthread_mutex_unlock(&w->lock);
			return hit;
		}
		en = w->q[w->head];
		w->head = (w->head + 1) % w->cap;
		w->len--;
		pthread_mutex_unlock(&w->lock);
		if (en.idx == idx)
			hit = en.done;
		atomic_fetch_sub(&w->inflight, 1);
		atomic_fetch_add(&w->completed, 1);
		wb_finish(e, &en, reclaim);
	}
}

void wb_wait(struct mcg_engine *e, uint32_t idx, wb_reclaim_fn reclaim)
{
	struct wb_dev *w = e->wb;
	uint64_t now = env_now(&e->env), due = 0;
	bool queued = false;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->len && !queued; i++)
		if (w->q[(w->head + i) % w->cap].idx == idx) {
			due = w->q[(w->head + i) % w->cap].done;
			queued = true;
		}
	pthread_mutex_unlock(&w->lock);
	if (!queued)
		return;
	if (due > now)
		env_sleep(&e->env, due - now);   /* a simulated clock accounts it */
	wb_drain(e, due, idx, reclaim);
}

void wb_complete(struct mcg_engine *e, wb_reclaim_fn reclaim)
{
	if (!e->wb || atomic_load(&e->wb->inflight) == 0)
		return;
	wb_drain(e, env_now(&e->env), PAGE_NONE, reclaim);
}

void wb_note_marked(struct mcg_engine *e)
{
	atomic_fetch_add_explicit(&e->wb->marked, 1, memory_order_relaxed);
}

void wb_note_listed(struct mcg_engine *e)
{
	atomic_fetch_add_explicit(&e->wb->listed, 1, memory_order_relaxed);
}

void wb_note_rescued(struct mcg_engine *e, long n)
{
	atomic_fetch_add_explicit(&e->wb->rescued, n, memory_order_relaxed);
}

void wb_immediate_counts(struct mcg_engine *e, long *marked, long *listed, long *rescued)
{
	*marked = atomic_load(&e->wb->marked);
	*listed = atomic_load(&e->wb->listed);
	*rescued = atomic_load(&e->wb->rescued);
}

void wb_counts(struct mcg_engine *e, long *inflight, long *done, long *rotated, long *immediate)
{
	*inflight = atomic_load(&e->wb->inflight);
	*done = atomic_load(&e->wb->completed);
	*rotated = atomic_load(&e->wb->rotated);
	*immediate = atomic_load(&e->wb->immediate);
}
