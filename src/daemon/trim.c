/* trim.c: the heap trim after removals. glibc keeps freed pages in its
 * heaps until malloc_trim returns them; a removed tree's groups are freed
 * by the removals themselves and by what let go of them afterwards, so a
 * trim follows every TRIM_EVERY removals and, once, TRIM_QUIET_MS after
 * the last one. Never takes a lock of the engine or of the file surface;
 * never trims on a request's path before its reply. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "daemon/trim.h"

struct trim {
	pthread_mutex_t lock;
	pthread_cond_t cond;           /* a removal, or stop */
	unsigned long removed;         /* removals since the last trim */
	struct timespec last;          /* CLOCK_MONOTONIC of the last removal */
	bool stop, threaded;
	atomic_ulong trims;
	pthread_t thread;
};

static void trim_now(struct trim *t)
{
	malloc_trim(0);
	atomic_fetch_add(&t->trims, 1);
}

static void *trim_main(void *arg)
{
	struct trim *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec until = t->last, now;
		long ns = until.tv_nsec + TRIM_QUIET_MS * 1000000L;

		if (!t->removed) {
			pthread_cond_wait(&t->cond, &t->lock);
			continue;
		}
		/* until the quiet time after the last removal is over */
		until.tv_sec += ns / 1000000000L;
		until.tv_nsec = ns % 1000000000L;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec < until.tv_sec || (now.tv_sec == until.tv_sec && now.tv_nsec < until.tv_nsec)) {
			pthread_cond_timedwait(&t->cond, &t->lock, &until);
			continue;
		}
		t->removed = 0;
		pthread_mutex_unlock(&t->lock);
		trim_now(t);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

struct trim *trim_start(void)
{
	struct trim *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	t->threaded = pthread_create(&t->thread, NULL, trim_main, t) == 0;
	return t;
}

void trim_stop(struct trim *t)
{
	if (!t)
		return;
	if (t->threaded) {
		pthread_mutex_lock(&t->lock);
		t->stop = true;
		pthread_cond_signal(&t->cond);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
	}
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void trim_removed(struct trim *t)
{
	bool now;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	clock_gettime(CLOCK_MONOTONIC, &t->last);
	if ((now = ++t->removed >= TRIM_EVERY))
		t->removed = 0;
	else if (t->removed == 1)
		pthread_cond_signal(&t->cond);   /* (later ones find it waiting out the quiet) */
	pthread_mutex_unlock(&t->lock);
	if (now)
		trim_now(t);
}

unsigned long trim_count(const struct trim *t)
{
	return t ? atomic_load(&((struct trim *)t)->trims) : 0;
}

unsigned long trim_pending(struct trim *t)
{
	unsigned long n;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	n = t->removed;
	pthread_mutex_unlock(&t->lock);
	return n;
}
