/* ops.h: the FUSE operations table of memcgfs. */
#ifndef MEMCGFS_OPS_H
#define MEMCGFS_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse.h>

extern const struct fuse_operations cgfs_ops;

#endif
