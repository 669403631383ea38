/* flusher.h: dirty page cache written by age and by amount, and writers
 * held to the disk's pace (issue 22, item 4), with the machine's disk
 * only. Its public face (mcg_flusher_step, mcg_flusher_due) is in
 * engine.h; vm_fault.c tells it of every file page a write dirtied
 * (flusher_dirtied). Owns the flusher's wake state and its counts; never
 * reclaims, never frees a page. */
#ifndef MEMCGFS_FLUSHER_H
#define MEMCGFS_FLUSHER_H

#include <stdint.h>

struct mcg_engine;
struct vm_object;

/* With the machine's disk: the flusher's state. 0 or -ENOMEM. */
int flusher_init(struct mcg_engine *e);
void flusher_destroy(struct mcg_engine *e);

/* Task who dirtied a page of file o (its first dirtying since o was
 * clean starts o's age). Every FLUSHER_RATELIMIT pages a task dirtied,
 * balance_dirty_pages: over the background threshold the flusher is
 * wanted; over the dirty limit the task is held (the era's way) through
 * the environment's sleep. Called with no lock held. */
void flusher_dirtied(struct vm_object *who, struct vm_object *o);

#endif
