/* node.h: paths, modes, owners and ACLs of the nodes of a mount: each group
 * directory and each control file in it. Owns path resolution and the
 * metadata rules (creator ownership, chmod/chown, ACL<->mode sync, default
 * ACL inheritance). Never renders file content and never includes FUSE. */
#ifndef MEMCGFS_NODE_H
#define MEMCGFS_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fs/acl.h"
#include "fs/cgfs.h"

struct node_meta {
	mode_t mode;          /* permission bits only */
	uid_t uid;
	gid_t gid;
	struct acl *acl;      /* access ACL, NULL when the mode says it all */
	struct acl *dacl;     /* default ACL (directories only) */
};

/* The node at path ("/", "/a/b", "/a/b/memory.stat"): a referenced group
 * and the file row, or -1 for the directory itself. -ENOENT, -ENOTDIR. */
int node_resolve(struct cgfs *fs, const char *path, struct mcg_group **g, int *row);
/* Inode numbers: the root directory is 1 (FUSE_ROOT_ID); any other node is
 * id * NODE_INO_STRIDE + 1 + row (row -1 for the directory), where id is
 * the engine's group id; the FUSE generation is the id's generation. */
#define NODE_INO_STRIDE 64
uint64_t node_ino(struct mcg_group *g, int row);
/* The node of an inode number: a referenced group and its row. -ESTALE
 * when the group is gone, -ENOENT for a row not shown in this directory. */
int node_from_ino(struct cgfs *fs, uint64_t ino, struct mcg_group **g, int *row);
/* The node an open descriptor of this mount is, in whatever mount
 * namespace or bind it was opened (fs->mount_dev and the inode number):
 * a referenced group and its row. -EXDEV for a descriptor of another
 * filesystem (or of another memcgfs mount), -ESTALE and -ENOENT as above.
 * Asks no filesystem's server (AT_STATX_DONT_SYNC). */
int node_of_fd(struct cgfs *fs, int fd, struct mcg_group **g, int *row);

/* Metadata of the root (mode 0555, owner uid:gid). */
int node_init_root(struct cgfs *fs, struct mcg_group *root, uid_t uid, gid_t gid);
/* Metadata of a new child: owned by uid:gid; mode is mkdir's mode before
 * the umask, which applies only when the parent has no default ACL. */
int node_init_child(struct cgfs *fs, struct mcg_group *g, uid_t uid, gid_t gid,
		    mode_t mode, mode_t umask);
/* -o acl_inherit=GLOB[:GLOB...]: a parent's default ACL reaches only the
 * control files of new children whose names match a glob (fnmatch(3));
 * the others keep their plain mode. Directories always inherit it (so
 * that it reaches grandchildren). -EINVAL when a glob names no file. */
int node_set_acl_inherit(struct cgfs *fs, const char *globs);
/* The engine's on_free hook: releases what node_init_* allocated. */
void node_free_group(struct mcg_group *g, void *arg);

int node_getattr(struct cgfs *fs, struct mcg_group *g, int row, struct stat *st);
/* A child group of g came or went: g's mtime and ctime are now. */
void node_touch_dir(struct cgfs *fs, struct mcg_group *g);
/* utimensat and the ctime of any setattr: atime and mtime as given (NULL:
 * unchanged), ctime now. -ENOMEM. */
int node_set_times(struct cgfs *fs, struct mcg_group *g, int row,
		   const struct timespec *atime, const struct timespec *mtime);
int node_chmod(struct cgfs *fs, struct mcg_group *g, int row, mode_t mode);
int node_chown(struct cgfs *fs, struct mcg_group *g, int row, uid_t uid, gid_t gid);
int node_getxattr(struct cgfs *fs, struct mcg_group *g, int row, const char *name,
		  char *buf, size_t size);
int node_setxattr(struct cgfs *fs, struct mcg_group *g, int row, const char *name,
		  const char *buf, size_t size, int flags);
int node_removexattr(struct cgfs *fs, struct mcg_group *g, int row, const char *name);
int node_listxattr(struct cgfs *fs, struct mcg_group *g, int row, char *buf, size_t size);
/* Read permission for uid:gid by mode, owner and ACL (POSIX rules). */
bool node_may_read(struct cgfs *fs, struct mcg_group *g, int row, uid_t uid, gid_t gid);

#endif
