/* task.c: task membership (thread id -> group) for the engine. A chained
 * hash table under one mutex. Never reads /proc, never signals; exits are
 * reported by the daemon. Lock order: tree_lock, then the table's lock. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/task.h"

struct task_entry {
	pid_t tid;
	pid_t tgid;
	struct mcg_group *g;           /* holds a reference */
	int watch;                     /* the daemon's number for this thread */
	struct task_entry *next;
};

struct task_table {
	pthread_mutex_t lock;
	struct task_entry **buckets;
	size_t nbuckets;               /* a power of two */
	size_t count;
};

struct task_table *task_table_new(void)
{
	struct task_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->nbuckets = 256;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

void task_table_free(struct task_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->buckets[i]) {
			struct task_entry *te = t->buckets[i];

			t->buckets[i] = te->next;
			mcg_put(te->g);
			free(te);
		}
	pthread_mutex_destroy(&t->lock);
	free(t->buckets);
	free(t);
}

static size_t task_hash(const struct task_table *t, pid_t tid)
{
	return ((size_t)tid * 2654435761u) & (t->nbuckets - 1);
}

static struct task_entry **task_slot(struct task_table *t, pid_t tid)
{
	struct task_entry **pp = &t->buckets[task_hash(t, tid)];

	while (*pp && (*pp)->tid != tid)
		pp = &(*pp)->next;
	return pp;
}

/* Double the table when it is fuller than one entry per bucket. Failure to
 * grow only costs speed. */
static void task_grow(struct task_table *t)
{
	size_t n = t->nbuckets * 2;
	struct task_entry **nb;

	if (t->count < t->nbuckets || !(nb = calloc(n, sizeof(*nb))))
		return;
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->buckets[i]) {
			struct task_entry *te = t->buckets[i];
			size_t h = ((size_t)te->tid * 2654435761u) & (n - 1);

			t->buckets[i] = te->next;
			te->next = nb[h];
			nb[h] = te;
		}
	free(t->buckets);
	t->buckets = nb;
	t->nbuckets = n;
}

int task_attach(struct mcg_engine *e, pid_t tid, pid_t tgid, struct mcg_group *g,
		int watch, int *drop)
{
	struct task_table *t = e->tasks;
	struct task_entry **pp, *te;
	struct mcg_group *old = NULL;
	bool joined = false;
	int err = 0;

	*drop = watch;
	pthread_rwlock_rdlock(&e->tree_lock);
	if (g->removed) {
		pthread_rwlock_unlock(&e->tree_lock);
		return -ENODEV;
	}
	pthread_mutex_lock(&t->lock);
	pp = task_slot(t, tid);
	te = *pp;
	if (te && te->g == g) {
		/* already there */
	} else if (mcg_root(g)) {
		if (te) {
			*pp = te->next;
			old = te->g;
			*drop = te->watch;
			free(te);
			t->count--;
		}
	} else if (te) {
		old = te->g;
		mcg_get(g);
		te->g = g;
		te->tgid = tgid;
		joined = true;
	} else if ((te = malloc(sizeof(*te)))) {
		mcg_get(g);
		joined = true;
		*te = (struct task_entry){ .tid = tid, .tgid = tgid, .g = g, .watch = watch };
		*drop = -1;
		*pp = te;
		t->count++;
		task_grow(t);
	} else {
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&t->lock);
	if (joined)
		mcg_note_tasks(g, 1);
	if (old)
		mcg_note_tasks(old, -1);
	pthread_rwlock_unlock(&e->tree_lock);
	if (old)
		mcg_put(old);
	return err;
}

int task_exit(struct mcg_engine *e, pid_t tid, int watch)
{
	struct task_table *t = e->tasks;
	struct task_entry **pp, *te;

	pthread_rwlock_rdlock(&e->tree_lock);
	pthread_mutex_lock(&t->lock);
	pp = task_slot(t, tid);
	te = *pp;
	if (te && te->watch == watch) {
		*pp = te->next;
		t->count--;
	} else {
		te = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	if (te)
		mcg_note_tasks(te->g, -1);
	pthread_rwlock_unlock(&e->tree_lock);
	if (!te)
		return -ENOENT;
	mcg_put(te->g);
	free(te);
	return 0;
}

struct mcg_group *task_group(struct mcg_engine *e, pid_t tid)
{
	struct task_table *t = e->tasks;
	struct task_entry *te;
	struct mcg_group *g;

	pthread_mutex_lock(&t->lock);
	te = *task_slot(t, tid);
	g = te ? te->g : e->root;
	mcg_get(g);
	pthread_mutex_unlock(&t->lock);
	return g;
}

pid_t task_tgid(struct mcg_engine *e, pid_t tid)
{
	struct task_entry *te;
	pid_t tgid;

	pthread_mutex_lock(&e->tasks->lock);
	te = *task_slot(e->tasks, tid);
	tgid = te ? te->tgid : 0;
	pthread_mutex_unlock(&e->tasks->lock);
	return tgid;
}

bool task_in_child(struct mcg_engine *e, pid_t tid)
{
	bool in;

	pthread_mutex_lock(&e->tasks->lock);
	in = *task_slot(e->tasks, tid) != NULL;
	pthread_mutex_unlock(&e->tasks->lock);
	return in;
}

static int task_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Collect the tid (or, deduplicated, the tgid) of every entry of g into a
 * sorted array. */
static long task_collect(struct task_table *t, const struct mcg_group *g, bool want_tgid, pid_t **out)
{
	pid_t *v;
	size_t n = 0;

	pthread_mutex_lock(&t->lock);
	v = malloc((t->count + 1) * sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct task_entry *te = t->buckets[i]; te; te = te->next)
			if (te->g == g)
				v[n++] = want_tgid ? te->tgid : te->tid;
	pthread_mutex_unlock(&t->lock);
	qsort(v, n, sizeof(*v), task_cmp);
	if (want_tgid && n > 1) {
		size_t w = 1;

		for (size_t r = 1; r < n; r++)
			if (v[r] != v[w - 1])
				v[w++] = v[r];
		n = w;
	}
	*out = v;
	return (long)n;
}

long task_list(struct mcg_engine *e, struct mcg_group *g, bool tgids, pid_t **out)
{
	return task_collect(e->tasks, g, tgids, out);
}
