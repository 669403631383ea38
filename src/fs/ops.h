/* ops.h: the FUSE (low-level) operations of memcgfs. */
#ifndef MEMCGFS_OPS_H
#define MEMCGFS_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops cgfs_ops;

#endif
