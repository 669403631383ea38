/* pidwatch.h: the daemon's view of task lifetimes. One thread waits on the
 * pidfds of member threads (exit -> leave the group) and on the kernel's
 * process connector (fork -> the child joins its parent's group). Never
 * decides membership: it reports to its hooks (the file layer's tasks.c). */
#ifndef MEMCGFS_PIDWATCH_H
#define MEMCGFS_PIDWATCH_H

#include <sys/types.h>

struct pidwatch;

struct pidwatch_hooks {
	/* Thread tid, watched through pidfd fd, exited; the hook gives fd
	 * back with pidwatch_forget if its entry still holds it. fd -1: a
	 * thread without a pidfd (a non-leader before Linux 6.9), seen to
	 * exit by the process connector. */
	void (*exited)(void *arg, struct pidwatch *w, pid_t tid, int fd);
	/* Process or thread child (of thread group child_tgid) was created
	 * by thread parent (of process parent_tgid: for a process, its real
	 * parent). NULL: forks are not watched (no process connector). */
	void (*forked)(void *arg, pid_t parent, pid_t parent_tgid, pid_t child, pid_t child_tgid);
};

struct pidwatch *pidwatch_new(const struct pidwatch_hooks *h, void *arg);
void pidwatch_free(struct pidwatch *w);
/* Watch fd (a pidfd of thread tid); the watch owns fd from now on. */
void pidwatch_add(struct pidwatch *w, int fd, pid_t tid);
/* Apply the forks the kernel has reported so far (call before listing or
 * changing membership). Must not be called with a lock the hooks take. */
void pidwatch_sync(struct pidwatch *w);
/* Stop watching fd and close it. */
void pidwatch_forget(struct pidwatch *w, int fd);

#endif
