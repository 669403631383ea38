/* spin.h: a spinlock for the engine's shortest critical sections (an LRU
 * list, a node's free list, a CPU's stock): a few instructions, nothing
 * that sleeps or takes another lock except as the lock order allows.
 * Uncontended it costs one atomic exchange, where a mutex costs two
 * atomics and a call; a waiter yields the CPU rather than burn it. Never
 * use it around anything that may block. */
#ifndef MEMCGFS_SPIN_H
#define MEMCGFS_SPIN_H

#include <sched.h>
#include <stdatomic.h>

typedef struct {
	atomic_int v;
} spin_t;

static inline void spin_init(spin_t *s)
{
	atomic_init(&s->v, 0);
}

/* Contended: out of line, so that the callers' fast paths stay lean. */
static __attribute__((noinline, unused)) void spin_lock_contended(spin_t *s)
{
	do
		while (atomic_load_explicit(&s->v, memory_order_relaxed))
			sched_yield();
	while (atomic_exchange_explicit(&s->v, 1, memory_order_acquire));
}

static inline void spin_lock(spin_t *s)
{
	if (__builtin_expect(atomic_exchange_explicit(&s->v, 1, memory_order_acquire), 0))
		spin_lock_contended(s);
}

static inline void spin_unlock(spin_t *s)
{
	atomic_store_explicit(&s->v, 0, memory_order_release);
}

#endif
