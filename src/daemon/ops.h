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

#endif
