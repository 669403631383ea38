/* move.c: move charge at immigrate. Under the task's lock (so its slots
 * cannot change) the eligible pages are counted; the destination is
 * pre-charged in bulk up to, not including, the lowest common ancestor
 * (whose usage does not change: the kernel charges to the root and can
 * fail at a busy ancestor for nothing); each page then changes owner and
 * LRU under the isolation protocol; the source is uncharged once at the
 * end. Never charges page by page (except in the naive variant, the
 * benchmark's baseline, built only for bench/: MCG_BENCH). While a move
 * is in flight, charges that would OOM under its source or destination
 * wait for it instead. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/move.h"
#include "engine/oom_wait.h"
#include "engine/page_state.h"
#include "engine/reclaim.h"
#include "engine/softlimit.h"
#include "engine/swap.h"
#include "engine/uncharge.h"
#include "engine/vm.h"

/* Where a bulk charge of dst (and uncharge of src) stops: the lowest
 * counter that both counters' chains pass through, whose usage a move does
 * not change, or NULL when the chains never meet (use_hierarchy 0 leaves a
 * child's counters unlinked from its parent's). Found on the counters, not
 * on the group tree: the two differ exactly when use_hierarchy is 0. */
static struct pc_counter *move_stop(struct mcg_group *src, struct mcg_group *dst,
				    enum mcg_counter c)
{
	/* the root's own pages were never in its counter: a move from it
	 * charges the whole chain, the root's counter included */
	if (mcg_root(src))
		return NULL;
	for (struct pc_counter *i = &dst->cnt[c]; i; i = i->parent)
		for (struct pc_counter *j = &src->cnt[c]; j; j = j->parent)
			if (i == j)
				return i;
	return NULL;
}

static bool move_eligible(const struct vm_region *r, unsigned mask)
{
	if (r->file || r->kind != PK_ANON)
		return mask & MOVE_FILE;
	return mask & MOVE_ANON;
}

/* Visit each slot of the task's eligible regions. For file mappings the
 * slot lives in the file's region, under the file object's lock, which the
 * walk holds around the region; fn(NULL) ends each region, still under
 * that lock. */
typedef void (*move_fn)(struct mcg_engine *e, _Atomic uint32_t *slot, unsigned src_id,
			void *arg);

static void move_walk(struct vm_object *o, unsigned mask, unsigned src_id, move_fn fn, void *arg)
{
	for (struct vm_region *r = o->regions; r; r = r->next) {
		struct vm_region *t = r->file ? r->file : r;
		uint32_t off = r->file ? r->file_off : 0;

		if (!move_eligible(r, mask))
			continue;
		if (t->obj != o)
			pthread_mutex_lock(&t->obj->lock);
		for (uint32_t i = 0; i < r->npages; i++)
			fn(o->eng, &t->slot[off + i], src_id, arg);
		fn(o->eng, NULL, src_id, arg);
		if (t->obj != o)
			pthread_mutex_unlock(&t->obj->lock);
	}
}

struct move_count {
	long pages, swap;
};

static void move_count_slot(struct mcg_engine *e, _Atomic uint32_t *slot, unsigned src_id, void *arg)
{
	struct move_count *c = arg;
	uint32_t v;

	if (!slot || (v = atomic_load(slot)) == VM_EMPTY)
		return;
	if ((v & VM_TAG_MASK) == VM_TAG_PAGE && e->pages.pages[v].memcg == src_id)
		c->pages++;
	else if ((v & VM_TAG_MASK) == VM_TAG_SWAP && swap_owner(e, v & ~VM_TAG_MASK) == src_id)
		c->swap++;
}

#define MOVE_BATCH 256

struct move_ctx {
	struct mcg_group *src, *dst;
	long pages, swap, budget;
	uint32_t batch[MOVE_BATCH];   /* pages to move, in walk order */
	int n;
};

/* Move the batched pages from src's LRUs to dst's, holding both lruvec
 * locks (taken in address order; only movers ever hold two). The task
 * (or file) lock held by the walk keeps the owners from freeing them. A
 * page reclaim holds isolated stays where it is (it is leaving anyway).
 * Statistics and list sizes change once per batch. */
static void move_flush(struct mcg_engine *e, struct move_ctx *m)
{
	long d[STAT__COUNT] = { 0 }, lru[LRU__COUNT] = { 0 };
	struct page *pg = e->pages.pages;
	int i = 0;

	while (i < m->n) {
		unsigned node = page_node_of(&e->pages, m->batch[i]);
		struct lru_vec *sv = &m->src->lruvec[node], *dv = &m->dst->lruvec[node];

		/* in address order, so two lruvecs are always taken alike */
		spin_lock(sv < dv ? &sv->lock : &dv->lock);
		spin_lock(sv < dv ? &dv->lock : &sv->lock);
		for (; i < m->n && page_node_of(&e->pages, m->batch[i]) == node; i++) {
			uint32_t idx = m->batch[i];
			struct page *p = &pg[idx];

			if (m->budget <= 0 || p->memcg != m->src->id || (p->kind & PS_ISOLATED))
				continue;
			p->memcg = (uint16_t)m->dst->id;
			lru[lru_transfer(e, m->src, m->dst, idx)]++;
			pgstate_stat_delta(p, d, 1);
			m->pages++;
			m->budget--;
		}
		for (int l = 0; l < LRU__COUNT; l++)
			if (lru[l]) {
				lru_size_add(sv, (enum stat_lru)l, -lru[l]);
				lru_size_add(dv, (enum stat_lru)l, lru[l]);
				lru[l] = 0;
			}
		spin_unlock(&dv->lock);
		spin_unlock(&sv->lock);
	}
	pgstate_stats_apply(m->src, d, -1);
	pgstate_stats_apply(m->dst, d, 1);
	m->n = 0;
}

static void move_slot(struct mcg_engine *e, _Atomic uint32_t *slot, unsigned src_id, void *arg)
{
	struct move_ctx *m = arg;
	uint32_t v;

	if (!slot) {
		move_flush(e, m);         /* before the region's lock goes */
		return;
	}
	if ((v = atomic_load_explicit(slot, memory_order_relaxed)) == VM_EMPTY)
		return;
	if ((v & VM_TAG_MASK) == VM_TAG_PAGE) {
		m->batch[m->n++] = v;
		if (m->n == MOVE_BATCH)
			move_flush(e, m);
	} else if ((v & VM_TAG_MASK) == VM_TAG_SWAP && swap_move(e, v & ~VM_TAG_MASK, m->src, m->dst)) {
		m->swap++;
	}
}

struct move_state {
	pthread_mutex_t serial;       /* one move at a time */
	pthread_mutex_t lock;         /* from, to */
	pthread_cond_t done;
	struct mcg_group *from, *to;  /* the move in flight (not referenced) */
	pthread_t mover;
};

int move_init(struct mcg_engine *e)
{
	struct move_state *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return -ENOMEM;
	pthread_mutex_init(&ms->serial, NULL);
	pthread_mutex_init(&ms->lock, NULL);
	pthread_cond_init(&ms->done, NULL);
	e->move = ms;
	return 0;
}

void move_destroy(struct mcg_engine *e)
{
	struct move_state *ms = e->move;

	if (!ms)
		return;
	pthread_mutex_destroy(&ms->serial);
	pthread_mutex_destroy(&ms->lock);
	pthread_cond_destroy(&ms->done);
	free(ms);
	e->move = NULL;
}

void move_begin(struct mcg_group *from, struct mcg_group *to)
{
	struct move_state *ms = from->eng->move;

	pthread_mutex_lock(&ms->serial);
	pthread_mutex_lock(&ms->lock);
	ms->from = from;
	ms->to = to;
	ms->mover = pthread_self();
	pthread_mutex_unlock(&ms->lock);
}

void move_end(struct mcg_engine *e)
{
	struct move_state *ms = e->move;

	pthread_mutex_lock(&ms->lock);
	ms->from = ms->to = NULL;
	pthread_cond_broadcast(&ms->done);
	pthread_mutex_unlock(&ms->lock);
	pthread_mutex_unlock(&ms->serial);
}

bool move_wait(struct mcg_group *over)
{
	struct move_state *ms = over->eng->move;
	bool waited = false;

	if (!ms)
		return false;
	pthread_mutex_lock(&ms->lock);
	while (ms->from && !pthread_equal(ms->mover, pthread_self()) &&
	       (mcg_in_subtree(ms->from, over) || mcg_in_subtree(ms->to, over))) {
		pthread_cond_wait(&ms->done, &ms->lock);
		waited = true;
	}
	pthread_mutex_unlock(&ms->lock);
	return waited;
}

/* Naive pre-charge: one page at a time, the whole hierarchy each time. */
static int move_precharge_naive(struct mcg_group *dst, long pages, long swap, int *ops)
{
	struct pc_counter *fail = NULL;
	long i = 0, j = 0;

	for (; i < pages + swap; i++) {
		int lw = pc_try_charge_upto(&dst->cnt[MCG_MEMSW], 1, NULL, &fail);

		if (lw < 0)
			break;
		*ops += lw;
		if (i < pages) {
			int lm = pc_try_charge_upto(&dst->cnt[MCG_MEM], 1, NULL, &fail);

			if (lm < 0) {
				pc_uncharge(&dst->cnt[MCG_MEMSW], 1);
				break;
			}
			*ops += lm;
			j++;
		}
	}
	if (i == pages + swap)
		return 0;
	pc_uncharge(&dst->cnt[MCG_MEMSW], i);
	pc_uncharge(&dst->cnt[MCG_MEM], j);
	return -ENOMEM;
}

static void move_uncharge_naive(struct mcg_group *g, long pages, long swap, int *ops)
{
	for (long i = 0; i < pages + swap; i++) {
		*ops += pc_uncharge_upto(&g->cnt[MCG_MEMSW], 1, NULL);
		if (i < pages)
			*ops += pc_uncharge_upto(&g->cnt[MCG_MEM], 1, NULL);
	}
}

/* One move's counters: where the bulk operations stop (the common
 * ancestor's counters; NULL for the naive move, which goes to the root),
 * and the page-counter levels touched. */
struct move_plan {
	struct mcg_group *src, *dst;
	struct pc_counter *stop_mem, *stop_sw;
	bool naive;
	int ops;
};

/* Pre-charge dst in bulk for what c counted, below the common ancestor,
 * reclaiming in dst once when it cannot take it. Called and returning
 * with o's lock held (dropped around the reclaim). 0, -ENODEV (dst was
 * reaped: nothing charged), -ENOMEM (nothing charged). */
static int move_precharge(struct vm_object *o, struct move_plan *pl, const struct move_count *c)
{
	struct mcg_group *dst = pl->dst;
	struct pc_counter *fail = NULL;
	int lm, lw;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (pl->naive) {
			lw = lm = move_precharge_naive(dst, c->pages, c->swap, &pl->ops);
		} else {
			lw = pc_try_charge_upto(&dst->cnt[MCG_MEMSW], c->pages + c->swap,
						pl->stop_sw, &fail);
			lm = lw < 0 ? -1 : pc_try_charge_upto(&dst->cnt[MCG_MEM], c->pages,
							      pl->stop_mem, &fail);
		}
		/* Dekker with uncharge_reap, as charge_new_page: charged first,
		 * then reaped read; a reaped destination gives it all back */
		if (lw >= 0 && lm >= 0 && atomic_load(&dst->reaped)) {
			pc_uncharge_upto(&dst->cnt[MCG_MEM], c->pages, pl->stop_mem);
			pc_uncharge_upto(&dst->cnt[MCG_MEMSW], c->pages + c->swap, pl->stop_sw);
			return -ENODEV;
		}
		if (lw >= 0 && lm >= 0) {
			pl->ops += pl->naive ? 0 : lw + lm;
			return 0;
		}
		if (!pl->naive && lw >= 0)
			pc_uncharge_upto(&dst->cnt[MCG_MEMSW], c->pages + c->swap, pl->stop_sw);
		if (attempt == 1)
			break;
		/* make room in the destination once (not in src: the task's
		 * pages are not touched by this reclaim, they are src's) */
		pthread_mutex_unlock(&o->lock);
		reclaim_subtree(dst, c->pages, true, RECLAIM_DIRECT);
		pthread_mutex_lock(&o->lock);
	}
	return -ENOMEM;
}

/* After the walk moved m of what c counted: the source gives up what
 * moved (the root's pages were never charged), and unused pre-charge
 * goes back. */
static void move_settle(struct move_plan *pl, const struct move_count *c, const struct move_ctx *m)
{
	struct mcg_group *src = pl->src, *dst = pl->dst;

	if (pl->naive) {
		if (!mcg_root(src))
			move_uncharge_naive(src, m->pages, m->swap, &pl->ops);
		pc_uncharge(&dst->cnt[MCG_MEM], c->pages - m->pages);
		pc_uncharge(&dst->cnt[MCG_MEMSW], c->pages - m->pages + c->swap - m->swap);
		return;
	}
	if (m->pages && !mcg_root(src)) {
		pl->ops += pc_uncharge_upto(&src->cnt[MCG_MEM], m->pages, pl->stop_mem);
		pl->ops += pc_uncharge_upto(&src->cnt[MCG_MEMSW], m->pages, pl->stop_sw);
	}
	if (m->swap && !mcg_root(src))
		pl->ops += pc_uncharge_upto(&src->cnt[MCG_MEMSW], m->swap, pl->stop_sw);
	if (c->pages > m->pages) {
		pl->ops += pc_uncharge_upto(&dst->cnt[MCG_MEM], c->pages - m->pages, pl->stop_mem);
		pl->ops += pc_uncharge_upto(&dst->cnt[MCG_MEMSW], c->pages - m->pages, pl->stop_sw);
	}
	if (c->swap > m->swap)
		pl->ops += pc_uncharge_upto(&dst->cnt[MCG_MEMSW], c->swap - m->swap, pl->stop_sw);
}

static int move_do(struct vm_object *o, struct mcg_group *dst, unsigned mask, bool naive,
		   struct move_stats *st)
{
	struct mcg_engine *e = o->eng;
	struct mcg_group *src = vm_object_group(o);
	struct move_plan pl = { .src = src, .dst = dst, .naive = naive };
	struct move_count c = { 0, 0 };
	struct move_ctx m;
	int err;

	*st = (struct move_stats){ 0 };
	if (src == dst || !mask || mcg_root(dst)) {
		/* nothing to move (a move to the root only drops charges: the
		 * root is never charged) */
		vm_object_set_group(o, dst);
		mcg_put(src);
		return 0;
	}
	if (atomic_load(&dst->removed)) {
		mcg_put(src);             /* rmdir won: nothing to attach to */
		return -ENODEV;
	}
	pl.stop_mem = naive ? NULL : move_stop(src, dst, MCG_MEM);
	pl.stop_sw = naive ? NULL : move_stop(src, dst, MCG_MEMSW);
	move_begin(src, dst);
	pthread_mutex_lock(&o->lock);
	move_walk(o, mask, src->id, move_count_slot, &c);
	if ((err = move_precharge(o, &pl, &c))) {
		pthread_mutex_unlock(&o->lock);
		move_end(e);
		mcg_put(src);
		return err;
	}
	soft_charged(dst);                /* the pre-charge raised its usage */
	m = (struct move_ctx){ .src = src, .dst = dst, .budget = c.pages };
	move_walk(o, mask, src->id, move_slot, &m);
	move_settle(&pl, &c, &m);
	o->g = dst;                       /* new growth goes to dst too */
	mcg_get(dst);
	pthread_mutex_unlock(&o->lock);
	move_end(e);
	oom_wake(e);                      /* both sides may have waiters */
	*st = (struct move_stats){ m.pages, m.swap, pl.ops };
	/* a removed source may be empty now: reap it while our references
	 * still hold it, and release them last */
	if (atomic_load(&src->removed))
		uncharge_reap(src);
	mcg_put(src);                     /* o's old reference */
	mcg_put(src);                     /* ours */
	return 0;
}

int move_charges(struct vm_object *o, struct mcg_group *dst, unsigned mask, struct move_stats *st)
{
	return move_do(o, dst, mask, false, st);
}

#ifdef MCG_BENCH
/* (elsewhere naive is false, and the compiler drops its branches) */
int move_charges_naive(struct vm_object *o, struct mcg_group *dst, unsigned mask,
		       struct move_stats *st)
{
	return move_do(o, dst, mask, true, st);
}
#endif
