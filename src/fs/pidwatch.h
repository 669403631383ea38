/* pidwatch.h: the daemon's view of task lifetimes. One thread waits on the
 * pidfds of member threads (exit -> leave the group) and on the kernel's
 * process connector (fork -> the child joins its parent's group). Never
 * decides membership rules; it reports to the engine through tasks.c. */
#ifndef MEMCGFS_PIDWATCH_H
#define MEMCGFS_PIDWATCH_H

#include <sys/types.h>

struct cgfs;
struct pidwatch;

struct pidwatch *pidwatch_new(struct cgfs *fs);
void pidwatch_free(struct pidwatch *w);
/* Watch fd (a pidfd of thread tid); the watch owns fd from now on. */
void pidwatch_add(struct pidwatch *w, int fd, pid_t tid);
/* Apply the forks the kernel has reported so far (call before listing or
 * changing membership). Must not be called with fs->attach_lock held. */
void pidwatch_sync(struct pidwatch *w);
/* Stop watching fd and close it. */
void pidwatch_forget(struct pidwatch *w, int fd);

#endif
