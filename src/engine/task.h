/* task.h: which group each task (thread id) belongs to. Owns the membership
 * map and the per-group task counts; never looks at /proc or pidfds (the
 * daemon does that and reports exits here). Tasks absent from the map are
 * in the root. */
#ifndef MEMCGFS_TASK_H
#define MEMCGFS_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;
struct task_table;

struct task_table *task_table_new(void);
void task_table_free(struct task_table *t);

#endif
