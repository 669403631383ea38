/* ops.c: the thin FUSE glue. Each operation resolves the path to a group and
 * a file row, calls the node, file-table or engine function, and returns
 * 0 or -errno. The only file of src/fs that includes FUSE; it holds no
 * accounting logic and special-cases no control file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/cgfiles.h"
#include "fs/event.h"
#include "fs/node.h"
#include "fs/ops.h"
#include "fs/proc.h"

static struct cgfs *cgfs_self(void)
{
	return fuse_get_context()->private_data;
}

static bool cgfs_interrupted(void *unused)
{
	(void)unused;
	return fuse_interrupted() != 0;
}

static void cgfs_req_init(struct cgfs_req *r, struct mcg_group *g, const struct cgfs_fh *fh)
{
	struct fuse_context *ctx = fuse_get_context();

	*r = (struct cgfs_req){
		.fs = ctx->private_data, .g = g, .fh = fh,
		.pid = ctx->pid, .uid = ctx->uid, .gid = ctx->gid,
		.interrupted = cgfs_interrupted,
	};
}

static void *cgfs_op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* st_size is 0, so only direct I/O shows content; no caching of
	 * attributes or names, since groups come and go under other users. */
	cfg->direct_io = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	if (conn->capable & FUSE_CAP_POSIX_ACL)
		conn->want |= FUSE_CAP_POSIX_ACL;
	if (conn->capable & FUSE_CAP_DONT_MASK)
		conn->want |= FUSE_CAP_DONT_MASK;
	return fuse_get_context()->private_data;
}

static int cgfs_op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = fi ? (struct cgfs_fh *)(uintptr_t)fi->fh : NULL;
	struct mcg_group *g;
	int row, err;

	if (fh)
		return node_getattr(cgfs_self(), fh->g, fh->row, st);
	if ((err = node_resolve(cgfs_self(), path, &g, &row)))
		return err;
	err = node_getattr(cgfs_self(), g, row, st);
	mcg_put(g);
	return err;
}

struct cgfs_readdir_ctx {
	void *buf;
	fuse_fill_dir_t fill;
};

static void cgfs_readdir_child(struct mcg_group *child, void *arg)
{
	struct cgfs_readdir_ctx *c = arg;

	c->fill(c->buf, child->name, NULL, 0, 0);
}

static int cgfs_op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			   struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct cgfs *fs = cgfs_self();
	struct cgfs_readdir_ctx c = { buf, fill };
	struct mcg_group *g;
	int row, err;

	if ((err = node_resolve(fs, path, &g, &row)))
		return err;
	if (row >= 0) {
		mcg_put(g);
		return -ENOTDIR;
	}
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (size_t i = 0; i < cgfs_nfiles; i++)
		if (cgfs_file_present(fs, &cgfs_files[i], mcg_is_root(g)))
			fill(buf, cgfs_files[i].name, NULL, 0, 0);
	mcg_for_each_child(fs->eng, g, cgfs_readdir_child, &c);
	mcg_put(g);
	return 0;
}

struct cgfs_mkdir_arg {
	struct cgfs *fs;
	uid_t uid;
	gid_t gid;
	mode_t mode, umask;
};

static int cgfs_mkdir_init(struct mcg_group *g, void *arg)
{
	struct cgfs_mkdir_arg *a = arg;

	return node_init_child(a->fs, g, a->uid, a->gid, a->mode, a->umask);
}

static int cgfs_op_mkdir(const char *path, mode_t mode)
{
	struct fuse_context *ctx = fuse_get_context();
	struct cgfs *fs = cgfs_self();
	struct cgfs_mkdir_arg a = { fs, ctx->uid, ctx->gid, mode, ctx->umask };
	struct mcg_group *parent;
	const char *name;
	int err;

	if ((err = node_resolve_parent(fs, path, &parent, &name)))
		return err;
	if (cgfs_file_lookup(fs, name, mcg_is_root(parent)) >= 0)
		err = -EEXIST;         /* names of control files are taken */
	else
		err = mcg_create(fs->eng, parent, name, cgfs_mkdir_init, &a, NULL);
	mcg_put(parent);
	return err;
}

static int cgfs_op_rmdir(const char *path)
{
	struct cgfs *fs = cgfs_self();
	struct mcg_group *g;
	int row, err;

	if ((err = node_resolve(fs, path, &g, &row)))
		return err;
	if (row >= 0)
		err = -ENOTDIR;
	else if (!(err = mcg_remove(fs->eng, g)))
		event_group_removed(fs, g);
	mcg_put(g);
	return err;
}

static int cgfs_op_rename(const char *from, const char *to, unsigned int flags)
{
	struct cgfs *fs = cgfs_self();
	struct mcg_group *g, *tparent;
	const char *name;
	int row, err;

	if (flags)
		return -EINVAL;
	if ((err = node_resolve(fs, from, &g, &row)))
		return err;
	if (row >= 0 || mcg_is_root(g)) {
		mcg_put(g);
		return row >= 0 ? -ENOTDIR : -EBUSY;
	}
	if ((err = node_resolve_parent(fs, to, &tparent, &name))) {
		mcg_put(g);
		return err;
	}
	if (tparent != g->parent)
		err = -EIO;
	else if (cgfs_file_lookup(fs, name, mcg_is_root(tparent)) >= 0)
		err = -ENOTDIR;
	else
		err = mcg_rename(fs->eng, g, name);
	mcg_put(tparent);
	mcg_put(g);
	return err;
}

static int cgfs_op_open(const char *path, struct fuse_file_info *fi)
{
	struct fuse_context *ctx = fuse_get_context();
	struct cgfs_fh *fh;
	struct mcg_group *g;
	int row, err;

	if ((err = node_resolve(cgfs_self(), path, &g, &row)))
		return err;
	if (row < 0) {
		mcg_put(g);
		return -EISDIR;
	}
	if (!(fh = calloc(1, sizeof(*fh)))) {
		mcg_put(g);
		return -ENOMEM;
	}
	fh->g = g;
	fh->row = row;
	fh->uid = ctx->uid;
	fh->gid = ctx->gid;
	fh->pid = ctx->pid;
	if (cgfs_files[row].capture_caps)
		fh->agent_cap = proc_is_init_admin(ctx->pid);
	pthread_mutex_init(&fh->lock, NULL);
	fi->fh = (uintptr_t)fh;
	fi->direct_io = 1;
	return 0;
}

static int cgfs_op_release(const char *path, struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = (struct cgfs_fh *)(uintptr_t)fi->fh;

	pthread_mutex_destroy(&fh->lock);
	free(fh->snap);
	mcg_put(fh->g);
	free(fh);
	return 0;
}

static int cgfs_op_read(const char *path, char *buf, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = (struct cgfs_fh *)(uintptr_t)fi->fh;
	struct cgfs_req r;
	int ret = 0;

	cgfs_req_init(&r, fh->g, fh);
	pthread_mutex_lock(&fh->lock);
	/* Offset 0 renders afresh (seq_file); later offsets continue it. */
	if (off == 0 || !fh->snap) {
		struct cgfs_out o = { 0 };

		ret = cgfs_file_read(&r, &cgfs_files[fh->row], &o);
		free(fh->snap);
		fh->snap = ret ? NULL : o.buf;
		fh->snap_len = ret ? 0 : o.len;
		if (ret)
			cgfs_out_free(&o);
	} else if (fh->g->removed) {
		ret = -ENODEV;
	}
	if (!ret && (size_t)off < fh->snap_len) {
		ret = (int)(fh->snap_len - (size_t)off < size ? fh->snap_len - (size_t)off : size);
		memcpy(buf, fh->snap + off, (size_t)ret);
	}
	pthread_mutex_unlock(&fh->lock);
	return ret;
}

static int cgfs_op_write(const char *path, const char *buf, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = (struct cgfs_fh *)(uintptr_t)fi->fh;
	struct cgfs_req r;
	int err;

	cgfs_req_init(&r, fh->g, fh);
	err = cgfs_file_write(&r, &cgfs_files[fh->row], buf, size);
	return err ? err : (int)size;
}

static int cgfs_op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct mcg_group *g;
	int row, err;

	/* O_TRUNC on a control file is accepted and does nothing. */
	if (fi)
		return 0;
	if ((err = node_resolve(cgfs_self(), path, &g, &row)))
		return err;
	mcg_put(g);
	return row < 0 ? -EISDIR : 0;
}

/* Metadata operations share one shape: resolve, act on the node, release. */
#define CGFS_ON_NODE(path, fi, call)                                        \
	do {                                                                \
		struct cgfs_fh *fh_ = (fi) ? (struct cgfs_fh *)(uintptr_t)(fi)->fh : NULL; \
		struct mcg_group *g;                                        \
		int row, err_;                                              \
		if (fh_) {                                                  \
			g = fh_->g;                                         \
			row = fh_->row;                                     \
			return (call);                                      \
		}                                                           \
		if ((err_ = node_resolve(cgfs_self(), (path), &g, &row)))   \
			return err_;                                        \
		err_ = (call);                                              \
		mcg_put(g);                                                 \
		return err_;                                                \
	} while (0)

static int cgfs_op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	CGFS_ON_NODE(path, fi, node_chmod(cgfs_self(), g, row, mode));
}

static int cgfs_op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	CGFS_ON_NODE(path, fi, node_chown(cgfs_self(), g, row, uid, gid));
}

static int cgfs_op_utimens(const char *path, const struct timespec tv[2],
			   struct fuse_file_info *fi)
{
	CGFS_ON_NODE(path, fi, 0);
}

static int cgfs_op_setxattr(const char *path, const char *name, const char *value,
			    size_t size, int flags)
{
	CGFS_ON_NODE(path, (struct fuse_file_info *)NULL,
		     node_setxattr(cgfs_self(), g, row, name, value, size, flags));
}

static int cgfs_op_getxattr(const char *path, const char *name, char *value, size_t size)
{
	CGFS_ON_NODE(path, (struct fuse_file_info *)NULL,
		     node_getxattr(cgfs_self(), g, row, name, value, size));
}

static int cgfs_op_listxattr(const char *path, char *list, size_t size)
{
	CGFS_ON_NODE(path, (struct fuse_file_info *)NULL,
		     node_listxattr(cgfs_self(), g, row, list, size));
}

static int cgfs_op_removexattr(const char *path, const char *name)
{
	CGFS_ON_NODE(path, (struct fuse_file_info *)NULL,
		     node_removexattr(cgfs_self(), g, row, name));
}

/* New regular files cannot be created; links and device nodes neither. */
static int cgfs_op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return -EACCES;
}

static int cgfs_op_eperm_path(const char *path)
{
	return -EPERM;
}

static int cgfs_op_eperm_2paths(const char *a, const char *b)
{
	return -EPERM;
}

static int cgfs_op_mknod(const char *path, mode_t mode, dev_t dev)
{
	return -EPERM;
}

static int cgfs_op_statfs(const char *path, struct statvfs *st)
{
	memset(st, 0, sizeof(*st));
	st->f_bsize = 4096;
	st->f_namemax = 255;
	return 0;
}

const struct fuse_operations cgfs_ops = {
	.init        = cgfs_op_init,
	.getattr     = cgfs_op_getattr,
	.readdir     = cgfs_op_readdir,
	.mkdir       = cgfs_op_mkdir,
	.rmdir       = cgfs_op_rmdir,
	.rename      = cgfs_op_rename,
	.open        = cgfs_op_open,
	.release     = cgfs_op_release,
	.read        = cgfs_op_read,
	.write       = cgfs_op_write,
	.truncate    = cgfs_op_truncate,
	.chmod       = cgfs_op_chmod,
	.chown       = cgfs_op_chown,
	.utimens     = cgfs_op_utimens,
	.setxattr    = cgfs_op_setxattr,
	.getxattr    = cgfs_op_getxattr,
	.listxattr   = cgfs_op_listxattr,
	.removexattr = cgfs_op_removexattr,
	.create      = cgfs_op_create,
	.mknod       = cgfs_op_mknod,
	.unlink      = cgfs_op_eperm_path,
	.symlink     = cgfs_op_eperm_2paths,
	.link        = cgfs_op_eperm_2paths,
	.statfs      = cgfs_op_statfs,
};
