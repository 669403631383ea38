/* uncharge.h: charges going back, and a removed group's end when its last
 * charge goes (the kernel's last css_put: here whoever drops a group's
 * last charge, of any kind, calls uncharge_reap). Below the charge core
 * and swap, above the group tree and the soft-limit order. Owns the
 * reclaim throttle's wait queue and the usage-event count; never charges,
 * never reclaims. */
#ifndef MEMCGFS_UNCHARGE_H
#define MEMCGFS_UNCHARGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;

/* Throttled direct reclaim (seed topic 1, patches 5/8 and 8/8): at most
 * charge_reclaim_slots(cpus) tasks reclaim directly on one group; the
 * others wait here until a slot is released or memory is uncharged, then
 * retry their charge (charge.c). */
struct charge_throttle {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_int waiters;
	unsigned long gen;
};

/* Reaped groups whose structures (their mkdir charge on the parent) wait
 * for the host kernel's grace periods, and the worker that frees them. */
struct uncharge_frees {
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	struct mcg_group *head, **tail;
	unsigned pending;             /* queued or being freed */
	bool started, stop;
	pthread_t thread;
};

int uncharge_init(struct mcg_engine *e);
/* The worker stopped, and what it had queued freed at once (the first
 * thing of an engine's teardown, while every group is whole). */
void uncharge_frees_stop(struct mcg_engine *e);
void uncharge_destroy(struct mcg_engine *e);

/* n pages were charged to or uncharged from g (counters up to date): every
 * CHARGE_EVENTS_TARGET (128) of them on this thread, the owner's
 * usage_event checks thresholds. */
void uncharge_events(struct mcg_group *g, long n);
/* Throttled reclaimers may retry (a slot was released, memory went). */
void uncharge_throttle_wake(struct mcg_engine *e);
/* n pages off g's memory counter, and off memsw unless keep_memsw (as on
 * swap-out); nothing else (a stock's drain). */
void uncharge_counters(struct mcg_group *g, long n, bool keep_memsw);
/* n pages of g go back at once: counters, events, and a wake of whoever
 * waits for room. The root and an engine without accounting: nothing. */
void uncharge_pages(struct mcg_group *g, long n, bool keep_memsw);
/* g was removed and may hold its last charge no more: if nothing is
 * charged to it and it has no children, it leaves the tree (its sums stay
 * with its parent) and the soft-limit order; its parent's mkdir charge
 * goes two of the host's grace periods later (at once in an engine
 * without workers or whose environment cannot wait for them), and a
 * dying parent that waited for it follows. Called by whoever dropped a
 * charge of a removed group, with no engine lock held. */
void uncharge_reap(struct mcg_group *g);

/* Kernel memory of removed groups (kmem-reparent, 5.9 on, the kernel's
 * obj_cgroup reparenting at offline): g, removed, gives what is charged
 * to it to its parent's own, and what is charged or uncharged to it later
 * goes to the nearest ancestor that has not (uncharge_kmem_owner, read
 * without a lock: a charge that races the move is moved after it by
 * uncharge_kmem_charged). A removed group is then pinned by its pages
 * only, as on the kernel; before 5.9 kernel memory pins it (zombies). */
void uncharge_kmem_reparent(struct mcg_group *g);
struct mcg_group *uncharge_kmem_owner(struct mcg_group *g);
/* n pages just charged to g's counters as kernel memory become its own
 * (or the ancestor's it moved to): charge_kmem's last step. */
void uncharge_kmem_charged(struct mcg_group *g, long n);

#endif
