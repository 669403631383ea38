/* event.h: cgroup.event_control registrations (§3.17): validation of a
 * registration write, the list of registrations, and signalling them.
 * Owns the duplicated eventfds, the threshold sides and the pressure
 * windows; never decides when to check (the engine's hooks do). */
#ifndef MEMCGFS_EVENT_H
#define MEMCGFS_EVENT_H

#include "fs/cgfs.h"
#include "fs/grammar.h"

/* Registrations a non-root user may hold, and all users together; past
 * either a registration fails ENOSPC. */
#define EVENT_USER_REGS 256
#define EVENT_MAX_REGS  16384
/* A registration whose eventfd no process but the daemon holds any more
 * is dropped within this (plus the time of one look through /proc). */
#define EVENT_REAP_MS   500

struct event_registry *event_new(void);
void event_free(struct event_registry *er);

int event_control_write(struct cgfs_req *r, int unused, const struct gram_value *v);
/* rmdir: every registration of g is signalled once and dropped. */
void event_group_removed(struct cgfs *fs, struct mcg_group *g);
/* The engine's oom_event hook: an OOM starts in over; the OOM
 * registrations on over and on every descendant fire (§5.13). */
void event_oom(struct mcg_group *over, void *fs);
/* The engine's usage_event hook: thresholds on g and its ancestors that
 * usage crossed since their last check fire (§5.12). */
void event_usage(struct mcg_group *g, void *fs);
/* The engine's pressure_event hook: vmpressure windows and levels (§5.14). */
void event_pressure(struct mcg_group *g, long scanned, long reclaimed, int prio, void *fs);

#endif
