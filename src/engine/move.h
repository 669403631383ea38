/* move.h: move charge at immigrate (seed topic 2, §5.11): moving a task's
 * charges from its group to another, all or nothing, with bulk counter
 * operations below the common ancestor only. Owns the move; never decides
 * whether a move is allowed (profiles and the attach path do). */
#ifndef MEMCGFS_MOVE_H
#define MEMCGFS_MOVE_H

#include <stdbool.h>

struct mcg_engine;
struct mcg_group;
struct vm_object;

#define MOVE_ANON 1u   /* anon pages and their swap entries */
#define MOVE_FILE 2u   /* file and shmem pages the task maps */

struct move_stats {
	long pages;        /* resident pages moved */
	long swap;         /* swap entries moved */
	long counter_ops;  /* page-counter levels touched (charge + uncharge) */
};

/* Move task o's charges selected by mask from the group they are charged
 * to (o's group) to dst, and make dst o's group. Pages charged elsewhere
 * (shared page cache first touched by another group) stay. 0, -ENODEV when
 * dst was removed (nothing moved), or -ENOMEM
 * when dst cannot take them even after reclaim: then nothing moved, and o
 * stays in its group. */
int move_charges(struct vm_object *o, struct mcg_group *dst, unsigned mask, struct move_stats *st);
#ifdef MCG_BENCH
/* bench/ only: the same move done as the 2009 code did before batching, a
 * try-charge of the whole hierarchy and an uncharge per page (the
 * baseline bench_move measures against). */
int move_charges_naive(struct vm_object *o, struct mcg_group *dst, unsigned mask,
		       struct move_stats *st);
#endif

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
