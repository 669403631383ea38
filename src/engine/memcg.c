/* memcg.c: the engine's group tree: a group's allocation, id, links,
 * names, references and end (its last reference frees it), the walks, the
 * release agent's rule, renaming, and every accessor. Below the charge
 * path: what needs a charge or reclaim (creation, removal, limits and the
 * other settings) is memcg_policy.c's, and a removed group's reap when
 * its last charge goes is uncharge.c's. Never does I/O, never knows about
 * files, paths on disk or FUSE; callers get 0 or a negative errno. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/names.h"

static bool mcg_counter_tracks_failcnt(const struct prof *p, enum mcg_counter c)
{
	return c == MCG_MEM || !prof_has(p, PF_FAILCNT_MEM_ONLY);
}

struct mcg_group *mcg_alloc(struct mcg_engine *e, struct mcg_group *parent,
			    const char *name)
{
	/* aligned: the first cache line is the read-mostly one */
	struct mcg_group *g = aligned_alloc(64, sizeof(*g));
	bool linked = parent && atomic_load(&parent->use_hierarchy);

	if (!g)
		return NULL;
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	g->stat = aligned_alloc(64, STAT_SHARDS * sizeof(*g->stat));
	if (!g->name || !g->stat || lru_vecs_init(g, e->m.nodes)) {
		free(g->name);
		free(g->stat);
		free(g);
		return NULL;
	}
	memset(g->stat, 0, STAT_SHARDS * sizeof(*g->stat));
	g->eng = e;
	g->parent = parent;
	if (rstat_node_init(g)) {
		lru_vecs_destroy(g, e->m.nodes);
		free(g->name);
		free(g->stat);
		free(g);
		return NULL;
	}
	if (parent)
		mcg_get(parent);          /* a child, dying or not, pins its parent */
	g->depth = parent ? parent->depth + 1 : 0;
	atomic_init(&g->refs, 1);   /* the tree's reference */
	pthread_mutex_init(&g->lock, NULL);
	spin_init(&g->kmem_lock);
	for (int c = 0; c < MCG__NCOUNTERS; c++)
		pc_init(&g->cnt[c], linked ? &parent->cnt[c] : NULL,
			mcg_counter_tracks_failcnt(&e->m.prof, c));
	atomic_init(&g->soft_limit, PC_MAX);
	atomic_init(&g->wmark[0], -1);
	atomic_init(&g->wmark[1], -1);
	if (parent) {
		atomic_init(&g->swappiness, mcg_swappiness(parent));
		atomic_init(&g->oom_kill_disable, atomic_load(&parent->oom_kill_disable));
		atomic_init(&g->notify_on_release, atomic_load(&parent->notify_on_release));
		atomic_init(&g->clone_children, atomic_load(&parent->clone_children));
		atomic_init(&g->use_hierarchy, prof_has(&e->m.prof, PF_HIERARCHY_ONLY) ||
			    atomic_load(&parent->use_hierarchy));
	} else {
		atomic_init(&g->use_hierarchy, prof_has(&e->m.prof, PF_HIERARCHY_ONLY));
	}
	return g;
}

/* The slot of id (id_lock held), its chunk made first if make; NULL when
 * there is no chunk (every id of it free) or no memory for one. */
static struct mcg_group *_Atomic *mcg_id_slot(struct mcg_engine *e, unsigned id, bool make)
{
	struct mcg_group *_Atomic *chunk = atomic_load(&e->by_id[id >> MCG_ID_CHUNK_SHIFT]);

	if (!chunk && make) {
		if (!(chunk = calloc(MCG_ID_CHUNK, sizeof(*chunk))))
			return NULL;
		atomic_store_explicit(&e->by_id[id >> MCG_ID_CHUNK_SHIFT], chunk, memory_order_release);
	}
	return chunk ? &chunk[id & (MCG_ID_CHUNK - 1)] : NULL;
}

static bool mcg_id_taken(struct mcg_engine *e, unsigned id)
{
	struct mcg_group *_Atomic *slot = mcg_id_slot(e, id, false);

	return slot && atomic_load(slot);
}

/* id_lock held: g takes id (free); -ENOMEM without a chunk for it. */
static int mcg_id_publish(struct mcg_engine *e, struct mcg_group *g, unsigned id, unsigned gen)
{
	struct mcg_group *_Atomic *slot = mcg_id_slot(e, id, true);

	if (!slot)
		return -ENOMEM;
	g->id = id;
	g->gen = gen;
	if (e->gen_next < gen + 1)
		e->gen_next = gen + 1;
	e->by_id_live[id >> MCG_ID_CHUNK_SHIFT]++;
	atomic_store_explicit(slot, g, memory_order_release);
	return 0;
}

/* Take the lowest free id at or after next_id (wrapping), as an IDR would
 * hand them out cyclically, with the next generation (one counter for
 * every id: an inode number and its generation never name two groups).
 * -ENOMEM; -ENOSPC when every id is taken: the caller checked nr_groups <
 * MCG_ID_MAX, but a reaped group keeps its id until it is freed, which a
 * reference held elsewhere (an open handle on it) can put off. */
int mcg_id_assign(struct mcg_engine *e, struct mcg_group *g)
{
	unsigned tries = 0;
	int err;

	pthread_mutex_lock(&e->id_lock);
	while (mcg_id_taken(e, e->next_id) && tries++ < MCG_ID_MAX)
		e->next_id = e->next_id % MCG_ID_MAX + 1;
	if (tries > MCG_ID_MAX)
		err = -ENOSPC;
	else if (!(err = mcg_id_publish(e, g, e->next_id, e->gen_next)))
		e->next_id = e->next_id % MCG_ID_MAX + 1;
	pthread_mutex_unlock(&e->id_lock);
	return err;
}

/* Give g the id and generation it had before a restart: -EBUSY when the
 * id is taken. Every later group gets a generation above gen. */
int mcg_id_claim(struct mcg_engine *e, struct mcg_group *g, unsigned id, unsigned gen)
{
	int err;

	pthread_mutex_lock(&e->id_lock);
	err = mcg_id_taken(e, id) ? -EBUSY : mcg_id_publish(e, g, id, gen);
	pthread_mutex_unlock(&e->id_lock);
	return err;
}

void mcg_ids_get(struct mcg_engine *e, unsigned *next_id, unsigned *gen_floor)
{
	pthread_mutex_lock(&e->id_lock);
	*next_id = e->next_id;
	*gen_floor = e->gen_next;
	pthread_mutex_unlock(&e->id_lock);
}

int mcg_ids_restore(struct mcg_engine *e, unsigned next_id, unsigned gen_floor)
{
	if (next_id == 0 || next_id > MCG_ID_MAX)
		return -EINVAL;
	pthread_mutex_lock(&e->id_lock);
	e->next_id = next_id;
	if (e->gen_next < gen_floor)
		e->gen_next = gen_floor;
	pthread_mutex_unlock(&e->id_lock);
	return 0;
}

struct mcg_group *mcg_by_id(struct mcg_engine *e, unsigned id)
{
	struct mcg_group *_Atomic *slot;
	struct mcg_group *g;

	if (id == 0 || id > MCG_ID_MAX)
		return NULL;
	pthread_mutex_lock(&e->id_lock);
	slot = mcg_id_slot(e, id, false);
	g = slot ? atomic_load(slot) : NULL;
	/* Get unless zero: a group whose last reference is going stays in the
	 * table until mcg_free takes it out under this lock. */
	if (g) {
		int r = atomic_load(&g->refs);

		while (r > 0 && !atomic_compare_exchange_weak(&g->refs, &r, r + 1))
			;
		if (r == 0)
			g = NULL;
	}
	pthread_mutex_unlock(&e->id_lock);
	return g;
}

void mcg_free(struct mcg_group *g)
{
	struct mcg_engine *e = g->eng;

	if (g->id) {
		unsigned c = g->id >> MCG_ID_CHUNK_SHIFT;

		pthread_mutex_lock(&e->id_lock);
		atomic_store(mcg_id_slot(e, g->id, false), NULL);
		/* no reader can be in a chunk whose ids are all free: the
		 * others take id_lock, a pinned one holds a group of it */
		if (--e->by_id_live[c] == 0) {
			free(atomic_load(&e->by_id[c]));
			atomic_store(&e->by_id[c], NULL);
		}
		pthread_mutex_unlock(&e->id_lock);
	}

	if (e->own.ops->free)
		e->own.ops->free(g, e->own.arg);
	pthread_mutex_destroy(&g->lock);
	lru_vecs_destroy(g, e->m.nodes);
	rstat_node_free(g);
	free(g->stat);
	free(g->name);
	if (g->parent && !e->tearing_down)
		mcg_put(g->parent);
	free(g);
}

void mcg_free_subtree(struct mcg_group *g)
{
	while (g->children) {
		struct mcg_group *c = g->children;

		g->children = c->sibling;
		mcg_free_subtree(c);
	}
	mcg_free(g);
}

void mcg_get(struct mcg_group *g)
{
	atomic_fetch_add(&g->refs, 1);
}

void mcg_put(struct mcg_group *g)
{
	if (atomic_fetch_sub(&g->refs, 1) == 1)
		mcg_free(g);
}

/* Caller holds tree_lock. */
struct mcg_group *mcg_find_live(struct mcg_group *parent, const char *name)
{
	return names_find(parent->eng, parent, name);
}

struct mcg_group *mcg_lookup(struct mcg_engine *e, struct mcg_group *parent, const char *name)
{
	struct mcg_group *c;

	pthread_rwlock_rdlock(&e->tree_lock);
	c = mcg_find_live(parent, name);
	if (c)
		mcg_get(c);
	pthread_rwlock_unlock(&e->tree_lock);
	return c;
}

int mcg_check_name(const char *name)
{
	if (strchr(name, '\n'))
		return -EINVAL;
	if (strlen(name) > MCG_NAME_MAX)
		return -ENAMETOOLONG;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EEXIST;
	return 0;
}

void mcg_unlink(struct mcg_group *g)
{
	*g->sib_pp = g->sibling;
	if (g->sibling)
		g->sibling->sib_pp = g->sib_pp;
	g->sibling = NULL;
	g->sib_pp = NULL;
	g->linked = false;
	g->eng->nr_groups--;
}

struct mcg_group *mcg_iter(struct mcg_group *top, struct mcg_group *prev)
{
	struct mcg_engine *e = top->eng;
	struct mcg_group *next = NULL;

	pthread_rwlock_rdlock(&e->tree_lock);
	if (!prev) {
		next = top;
	} else if (prev == top || prev->linked) {
		/* a linked group's ancestors are linked (a parent is reaped
		 * only once it has no children), so their siblings are live */
		if (!(next = prev->children))
			for (struct mcg_group *i = prev; i != top && !next; i = i->parent)
				next = i->sibling;
	}
	/* else prev was reaped meanwhile: where it stood is lost, the walk
	 * ends (its caller's next pass starts again from top) */
	if (next)
		mcg_get(next);
	pthread_rwlock_unlock(&e->tree_lock);
	if (prev)
		mcg_put(prev);
	return next;
}

void mcg_walk(struct mcg_engine *e, void (*fn)(struct mcg_group *g, unsigned depth, void *arg),
	      void *arg)
{
	struct mcg_group *g = e->root;
	unsigned depth = 0;

	pthread_rwlock_rdlock(&e->tree_lock);
	while (g) {
		/* a removed group has no live children: its subtree is skipped */
		if (!g->removed)
			fn(g, depth, arg);
		if (!g->removed && g->children) {
			g = g->children;
			depth++;
			continue;
		}
		while (g != e->root && !g->sibling) {
			g = g->parent;
			depth--;
		}
		g = g == e->root ? NULL : g->sibling;
	}
	pthread_rwlock_unlock(&e->tree_lock);
}

/* Release rule of §3.19, evaluated by the caller under tree_lock: the
 * returned path (malloc'ed) is handed to the hook after unlocking. */
char *mcg_release_candidate(struct mcg_group *g)
{
	char buf[4096];

	if (!g || !g->eng->own.ops->release || !atomic_load(&g->notify_on_release) ||
	    !atomic_load(&g->ever_populated) || atomic_load(&g->ntasks) || g->nr_live_children || g->removed)
		return NULL;
	if (mcg_path(NULL, g, buf, sizeof(buf)) < 0)
		return NULL;
	return strdup(buf);
}

void mcg_fire_release(struct mcg_engine *e, char *path)
{
	if (path) {
		e->own.ops->release(path, e->own.arg);
		free(path);
	}
}

int mcg_rename(struct mcg_engine *e, struct mcg_group *g, const char *name)
{
	int err = mcg_check_name(name);
	char *dup;

	if (err)
		return err;
	if (!(dup = strdup(name)))
		return -ENOMEM;
	pthread_rwlock_wrlock(&e->tree_lock);
	if (g->removed || mcg_root(g)) {
		err = g->removed ? -ENODEV : -EBUSY;
	} else if (strcmp(g->name, name) == 0) {
		err = 0;
	} else if (mcg_find_live(g->parent, name)) {
		err = -EEXIST;
	} else {
		char *old = g->name;

		names_del(e, g);
		g->name = dup;
		names_add(e, g);
		dup = old;
	}
	pthread_rwlock_unlock(&e->tree_lock);
	free(dup);
	return err;
}

void mcg_for_each_child(struct mcg_engine *e, struct mcg_group *g,
			void (*fn)(struct mcg_group *child, void *arg), void *arg)
{
	pthread_rwlock_rdlock(&e->tree_lock);
	for (struct mcg_group *c = g->children; c; c = c->sibling)
		if (!c->removed)
			fn(c, arg);
	pthread_rwlock_unlock(&e->tree_lock);
}

unsigned mcg_nr_children(struct mcg_engine *e, struct mcg_group *g)
{
	unsigned n;

	pthread_rwlock_rdlock(&e->tree_lock);
	n = g->nr_live_children;
	pthread_rwlock_unlock(&e->tree_lock);
	return n;
}

/* With e == NULL the caller already holds tree_lock. */
int mcg_path(struct mcg_engine *e, struct mcg_group *g, char *buf, size_t size)
{
	size_t pos = size;
	int ret;

	if (size < 2)
		return -ENAMETOOLONG;
	if (e)
		pthread_rwlock_rdlock(&e->tree_lock);
	buf[--pos] = '\0';
	for (struct mcg_group *i = g; i && !mcg_root(i); i = i->parent) {
		size_t len = strlen(i->name);

		if (len + 1 > pos) {
			pos = SIZE_MAX;
			break;
		}
		pos -= len;
		memcpy(buf + pos, i->name, len);
		buf[--pos] = '/';
	}
	if (e)
		pthread_rwlock_unlock(&e->tree_lock);
	if (pos == SIZE_MAX)
		return -ENAMETOOLONG;
	if (pos == size - 1)
		buf[--pos] = '/';
	memmove(buf, buf + pos, size - pos);
	ret = (int)(size - pos - 1);
	return ret;
}

long mcg_hierarchical_limit(struct mcg_group *g, enum mcg_counter c)
{
	long min = PC_MAX;

	for (struct pc_counter *i = &g->cnt[c]; i; i = i->parent)
		if (pc_max(i) < min)
			min = pc_max(i);
	return min;
}

unsigned mcg_swappiness(struct mcg_group *g)
{
	return mcg_root(g) ? atomic_load(&g->eng->vm_swappiness) : atomic_load(&g->swappiness);
}

long mcg_root_usage(struct mcg_engine *e)
{
	return rstat_item(e->root, STAT_CACHE) + rstat_item(e->root, STAT_RSS);
}

long mcg_usage(struct mcg_group *g, enum mcg_counter c)
{
	if (mcg_root(g) && (c == MCG_MEM || c == MCG_MEMSW))
		return mcg_root_usage(g->eng) + (c == MCG_MEMSW ? rstat_item(g, STAT_SWAP) : 0);
	return pc_usage(&g->cnt[c]);
}

void mcg_note_tasks(struct mcg_group *g, long delta)
{
	char *release = NULL;

	/* Caller holds tree_lock (read) so g cannot be removed meanwhile. */
	if (atomic_fetch_add(&g->ntasks, delta) + delta == 0 && delta < 0)
		release = mcg_release_candidate(g);
	else if (delta > 0)
		atomic_store(&g->ever_populated, true);
	if (release)
		mcg_fire_release(g->eng, release);
}

/* ---- accessors for the layers above (engine.h) ---- */

bool mcg_is_root(const struct mcg_group *g)
{
	return g->parent == NULL;
}

bool mcg_in_subtree(const struct mcg_group *g, const struct mcg_group *top)
{
	for (; g; g = g->parent)
		if (g == top)
			return true;
	return false;
}

unsigned mcg_id(const struct mcg_group *g)
{
	return g->id;
}

unsigned mcg_gen(const struct mcg_group *g)
{
	return g->gen;
}

struct mcg_group *mcg_parent(const struct mcg_group *g)
{
	return g->parent;
}

const char *mcg_name(const struct mcg_group *g)
{
	return g->name;
}

bool mcg_removed(const struct mcg_group *g)
{
	return atomic_load(&g->removed);
}

long mcg_limit(const struct mcg_group *g, enum mcg_counter c)
{
	return pc_max(&g->cnt[c]);
}

long mcg_max_usage(const struct mcg_group *g, enum mcg_counter c)
{
	return pc_watermark(&g->cnt[c]);
}

unsigned long mcg_failcnt(const struct mcg_group *g, enum mcg_counter c)
{
	return pc_failcnt(&g->cnt[c]);
}

void mcg_reset_max_usage(struct mcg_group *g, enum mcg_counter c)
{
	pc_reset_watermark(&g->cnt[c]);
}

void mcg_reset_failcnt(struct mcg_group *g, enum mcg_counter c)
{
	pc_reset_failcnt(&g->cnt[c]);
}

long mcg_soft_limit(const struct mcg_group *g)
{
	return atomic_load(&g->soft_limit);
}

bool mcg_use_hierarchy(const struct mcg_group *g)
{
	return atomic_load(&g->use_hierarchy);
}

unsigned mcg_move_charge(const struct mcg_group *g)
{
	return atomic_load(&g->move_charge);
}

bool mcg_oom_kill_disable(const struct mcg_group *g)
{
	return atomic_load(&g->oom_kill_disable);
}

unsigned long mcg_oom_kills(const struct mcg_group *g)
{
	return atomic_load(&g->oom_kill);
}

bool mcg_under_oom(const struct mcg_group *g)
{
	for (; g; g = g->parent)
		if (atomic_load(&g->under_oom) > 0)
			return true;
	return false;
}

void mcg_under_oom_add(struct mcg_group *g, int delta)
{
	atomic_fetch_add(&g->under_oom, delta);
}

bool mcg_flag(const struct mcg_group *g, enum mcg_flag f)
{
	return atomic_load(f == MCG_FLAG_NOTIFY_ON_RELEASE ? &g->notify_on_release : &g->clone_children);
}

void mcg_set_flag(struct mcg_group *g, enum mcg_flag f, bool on)
{
	atomic_store(f == MCG_FLAG_NOTIFY_ON_RELEASE ? &g->notify_on_release : &g->clone_children, on);
}

void mcg_reclaim_counts(const struct mcg_group *g, struct mcg_reclaim_counts *out)
{
	for (int i = 0; i < 2; i++) {
		out->scanned[i] = atomic_load(&g->pg_scanned[i]);
		out->reclaimed[i] = atomic_load(&g->pg_reclaimed[i]);
	}
	out->bgr_runs = atomic_load(&g->bgr_runs);
	out->allocstall = atomic_load(&g->allocstall);
}

void *mcg_owner_data(const struct mcg_group *g)
{
	return g->owner_data;
}

void mcg_set_owner_data(struct mcg_group *g, void *data)
{
	g->owner_data = data;
}
