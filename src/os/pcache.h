/* pcache.h: the kernel's page-cache events for the daemon (eBPF, when this
 * build has it and the daemon may load programs). Wraps the tracer of
 * os/bpf/pcache.bpf.c: which processes it watches, and the events it
 * sends (pcache_event.h). Owns the loaded program and its ring buffer;
 * never decides what an event is charged to, and starts no thread. */
#ifndef MEMCGFS_PCACHE_H
#define MEMCGFS_PCACHE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "os/pcache_event.h"

struct pcache;

typedef void (*pcache_fn)(void *arg, const struct pcache_event *ev);

/* Load and attach the tracer; fn gets each event from pcache_consume.
 * 0, -ENOSYS (built without eBPF, or a kernel without BTF), -EPERM (no
 * privilege to load programs), or another load or attach error. */
int pcache_open(pcache_fn fn, void *arg, struct pcache **out);
void pcache_close(struct pcache *pc);
/* Watch process tgid from now on (its forks too, and theirs). */
int pcache_track(struct pcache *pc, pid_t tgid);
/* One PCACHE_ALARM event when process tgid's resident pages (its mm's
 * anon, file and shmem counters) reach pages, at once (the reader is
 * woken for it); pages 0: none. */
int pcache_alarm(struct pcache *pc, pid_t tgid, uint64_t pages);
/* A descriptor that polls readable while events wait. */
int pcache_fd(const struct pcache *pc);
/* Hand every waiting event to fn, in the order the kernel sent them.
 * Serialised: two callers never interleave. The count handed, or -errno. */
long pcache_consume(struct pcache *pc);
/* Events it could not send, by enum pcache_lost, summed over CPUs. */
void pcache_lost(struct pcache *pc, uint64_t lost[PCACHE_LOST_NR]);

#endif
