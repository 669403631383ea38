/* copy.h: sendfile(2) and splice(2) from a file of the view, answered by
 * memcgfs-run's supervisor. memcgfs's files (and the stand-ins') are read
 * with direct I/O and have size 0, so the kernel's splice, which reads
 * through the page cache up to the size, finds nothing; cgroupfs gives
 * their text. Into a pipe (what busybox cat's output mostly is), the
 * supervisor reads the text through a duplicate of the caller's
 * descriptor (the same open file, the same offset) and writes it to the
 * caller's pipe as the call would have; into anything else, or for a
 * caller in another pid namespace, the call fails with EINVAL, the
 * kernel's answer for a source it cannot splice from, and callers read
 * instead. Every other sendfile or splice goes on in the kernel. */
#ifndef MEMCGFS_BRIDGE_COPY_H
#define MEMCGFS_BRIDGE_COPY_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/stat.h>

#define COPY_CONTINUE 1

/* Is the open file SX (a duplicate of TID's descriptor) one of the view's? */
typedef bool (*copy_ours_fn)(void *arg, pid_t tid, const struct statx *sx);

/* REQ (sendfile or splice, native ABI) from listener LFD: COPY_CONTINUE
 * when the kernel should run it (the source is not ours, or it cannot be
 * read here); else the call is answered, now, or by a thread of this
 * module once the pipe takes the text (a blocking pipe that is full),
 * and 0 or -ENOENT (the caller went away) is returned. Never blocks on
 * the caller's output. */
int copy_call(int lfd, const struct seccomp_notif *req, copy_ours_fn ours, void *arg);
/* Every waiter done: those still waiting give the text back and answer
 * EINVAL (within 100 ms). Before the supervisor forks (its copy must not
 * inherit calls it cannot answer, nor their descriptors). */
void copy_drain(void);

#endif
