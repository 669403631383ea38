/* trim.h: giving a taken-down tree's memory back to the system. Owns the
 * count of removals since the daemon's heap was last trimmed and the
 * thread that trims it once removals stop; never frees anything itself
 * (the engine frees groups; this only returns freed pages). */
#ifndef MEMCGFS_TRIM_H
#define MEMCGFS_TRIM_H

/* Removals between two trims made on the removing thread, so that a long
 * teardown does not hold the whole tree's heap until it ends. */
#define TRIM_EVERY 1024
/* Quiet time after the last removal before the trimming thread trims,
 * in milliseconds: whatever the removals freed late is freed by then. */
#define TRIM_QUIET_MS 250

struct trim;

/* The trimmer and its thread; NULL without memory or a thread (removals
 * then only trim every TRIM_EVERY). */
struct trim *trim_start(void);
void trim_stop(struct trim *t);
/* A group was removed (after the reply: it may trim the heap). */
void trim_removed(struct trim *t);
/* Trims done so far, and removals since the last one (memcgctl status;
 * 0 pending: the last removal's memory has been trimmed). */
unsigned long trim_count(const struct trim *t);
unsigned long trim_pending(struct trim *t);

#endif
