/* ops.h: the FUSE (low-level) operations of memcgfs. */
#ifndef MEMCGFS_OPS_H
#define MEMCGFS_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

struct cgfs;

extern const struct fuse_lowlevel_ops cgfs_ops;

/* Free the handles still open when the session ended (the kernel sends
 * no release for them once the connection is gone). */
void cgfs_ops_free_handles(struct cgfs *fs);

/* The session is attached to the connection (sup_worker_attach), before
 * it serves: find out whether the kernel can be told to drop every name
 * it keeps; where it cannot (before 6.16), the names a dead worker may
 * have left stale are those fs->dentries recorded (without them,
 * fs->cache_timeout becomes 0, and fs->dentries is unmapped where the
 * kernel can). On a restart tell it to drop every name and attribute the
 * dead worker gave it that may be stale; names of the recorded kind on a
 * thread of their own (cgfs_ops_detached waits for it). 0 or -ENOMEM. */
int cgfs_ops_attached(struct fuse_session *se, struct cgfs *fs);

/* The session's end: the thread cgfs_ops_attached started is done. */
void cgfs_ops_detached(struct cgfs *fs);

#endif
