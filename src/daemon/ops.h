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
 * it keeps (fs->cache_timeout becomes 0 where it cannot), and on a
 * restart tell it to drop every name and attribute the dead worker gave
 * it. 0 or -ENOMEM. */
int cgfs_ops_attached(struct fuse_session *se, struct cgfs *fs);

#endif
