/* task.h: which group each task (thread id) belongs to. Owns the membership
 * map and the per-group task counts; never looks at /proc or pidfds (the
 * daemon does that and reports exits here). Tasks absent from the map are
 * in the root. */
#ifndef MEMCGFS_TASK_H
#define MEMCGFS_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mcg_engine;
struct mcg_group;
struct task_table;

struct task_table *task_table_new(void);
void task_table_free(struct task_table *t);

/* Put thread tid (of thread group tgid) into g. watch is an opaque number
 * the daemon ties to the thread (its pidfd), stored with a new entry. *drop
 * receives the number the table no longer holds and the caller must
 * release: watch itself when the thread was already tracked (or stays in
 * the root), the old entry's one when the thread returns to the root, else
 * -1. Moving into the current group succeeds. -ENODEV when g was removed,
 * -ENOMEM. */
int task_attach(struct mcg_engine *e, pid_t tid, pid_t tgid, struct mcg_group *g,
		int watch, int *drop);
/* Forget an exited thread whose entry still holds watch. 0, or -ENOENT. */
int task_exit(struct mcg_engine *e, pid_t tid, int watch);
/* The group of tid, referenced (mcg_put it). The root for untracked ones. */
struct mcg_group *task_group(struct mcg_engine *e, pid_t tid);
bool task_in_child(struct mcg_engine *e, pid_t tid);
/* Sorted thread ids of g (a non-root group), malloc'ed into *out. Returns
 * the count or -ENOMEM. With tgids, the thread group ids instead, sorted
 * and without duplicates. */
long task_list(struct mcg_engine *e, struct mcg_group *g, bool tgids, pid_t **out);

#endif
