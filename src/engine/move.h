/* move.h: move charge at immigrate (seed topic 2, §5.11): moving a task's
 * charges from its group to another, all or nothing, with bulk counter
 * operations below the common ancestor only. Owns the move; never decides
 * whether a move is allowed (profiles and the attach path do). */
#ifndef MEMCGFS_MOVE_H
#define MEMCGFS_MOVE_H

#include <stdbool.h>

#include "engine/engine.h"

struct mcg_engine;
struct mcg_group;
struct vm_object;

int move_init(struct mcg_engine *e);
void move_destroy(struct mcg_engine *e);
/* Moves are serialised; between begin and end, a charge that would OOM in
 * a group whose subtree holds the source or the destination waits for the
 * end instead ("avoid oom during recharge"). */
void move_begin(struct mcg_group *from, struct mcg_group *to);
void move_end(struct mcg_engine *e);
/* The charge path's question before an OOM: true when it waited for a
 * move touching over and should retry. */
bool move_wait(struct mcg_group *over);

#endif
