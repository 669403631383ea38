/* release.h: release_agent (the file) and release notification (running the
 * agent when a group with notify_on_release empties, §3.19). Owns the agent
 * path and the worker that spawns it; never decides when a group is empty
 * (the engine does). */
#ifndef MEMCGFS_RELEASE_H
#define MEMCGFS_RELEASE_H

#include "fs/cgfs.h"
#include "fs/grammar.h"

int release_agent_read(struct cgfs_req *r, int unused, struct cgfs_out *o);
int release_agent_write(struct cgfs_req *r, int unused, const struct gram_value *v);

struct release_runner *release_new(struct cgfs *fs);
void release_free(struct release_runner *rr);
/* The engine's mcg_release_fn: queues path; the agent runs on a worker. */
void release_notify(const char *path, void *arg);

#endif
