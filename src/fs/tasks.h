/* tasks.h: the tasks and cgroup.procs files: listing members in the
 * reader's PID namespace and attaching real tasks (§3.18, §6.1). Owns the
 * checks of an attach; membership itself lives in the engine (task.c). */
#ifndef MEMCGFS_TASKS_H
#define MEMCGFS_TASKS_H

#include <sys/types.h>

#include "fs/cgfs.h"
#include "fs/grammar.h"

enum { TASKS_THREADS, TASKS_PROCS };

int cgfs_tasks_read(struct cgfs_req *r, int procs, struct cgfs_out *o);
int cgfs_tasks_write(struct cgfs_req *r, int procs, const struct gram_value *v);

/* Put one thread into g and keep its pidfd watched (or released).
 * Exiting threads are skipped silently. Caller holds fs->attach_lock. */
int cgfs_tasks_attach_thread(struct cgfs *fs, pid_t tid, pid_t tgid, struct mcg_group *g);

#endif
