/* tasks.h: the tasks and cgroup.procs files: listing members in the
 * reader's PID namespace and attaching real tasks (§3.18, §6.1). Owns the
 * checks of an attach; membership itself lives in the engine (task.c). */
#ifndef MEMCGFS_TASKS_H
#define MEMCGFS_TASKS_H

#include <stdbool.h>
#include <sys/types.h>

#include "engine/engine.h"

#include "fs/cgfs.h"
#include "fs/grammar.h"

enum { TASKS_THREADS, TASKS_PROCS };

int cgfs_tasks_read(struct cgfs_req *r, int procs, struct cgfs_out *o);
int cgfs_tasks_write(struct cgfs_req *r, int procs, const struct gram_value *v);

/* The credential rule of §6.1: may a writer move target? The uid that
 * counts is the opener's (recorded at open) from the 5.16 profile on, the
 * writer's current one before. Global root, the target's real uid or its
 * saved set-user-ID pass. */
bool cgfs_tasks_may_move(const struct prof *p, uid_t opener_uid, uid_t writer_uid,
			 uid_t target_ruid, uid_t target_suid);

/* Put one thread into g and keep its pidfd watched (or released).
 * Exiting threads are skipped silently. Caller holds fs->attach_lock. */
int cgfs_tasks_attach_thread(struct cgfs *fs, pid_t tid, pid_t tgid, struct mcg_group *g);

/* The watch of this mount's task lifetimes: exits leave their group, forks
 * join their parent's (pidwatch.h). */
struct pidwatch *cgfs_tasks_watch(struct cgfs *fs);
/* Its end: the watch freed, and what it kept of gone tasks let go (before
 * the engine goes; the sources that tell made_by are stopped). */
void cgfs_tasks_watch_end(struct cgfs *fs);
/* New process CHILD was made by MAKER, not its real parent REAL (clone
 * with CLONE_PARENT, which the page-cache tracer sees): where the fork's
 * process event placed it with REAL, it moves to MAKER's group, as the
 * kernel places a child in its maker's cgroup. */
void cgfs_tasks_made_by(struct cgfs *fs, pid_t child, pid_t maker, pid_t real);

/* Thread VTID (in the PID namespace of process CALLER, whose uid is
 * CALLER_UID) is about to clone(2) with CLONE_PARENT: the process a fork
 * event names next as a child of VTID's parent, within CGFS_MAKER_TICKS
 * and with VTID's real uid, is placed where VTID is, not where the parent
 * is. What memcgfs-run's supervisor tells where eBPF's fork events cannot
 * be had (the root's user.memcgfs.clone_parent.VTID, docs/files.md). 0,
 * -ESRCH, or -EACCES unless CALLER_UID could move VTID (tasks' rule). */
#define CGFS_MAKER_TICKS 1000   /* 10 s at USER_HZ 100 */
int cgfs_tasks_clone_parent(struct cgfs *fs, pid_t caller, uid_t caller_uid, pid_t vtid);

#endif
