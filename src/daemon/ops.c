/* ops.c: the thin FUSE glue of the worker (low-level API). Each operation
 * turns an inode number into a group and a file row (node.c), calls the
 * node, file-table or engine function, and replies with the result or
 * -errno. With the daemon's main and its supervisor, the only file that
 * includes FUSE; it holds no accounting logic and special-cases no control
 * file: what differs between files (poll on a list that empties) is a
 * column of the table (cgfiles.h). */
#include <errno.h>
#include <stdint.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/dentries.h"
#include "daemon/ops.h"
#include "daemon/trim.h"
#include "engine/engine.h"
#include "fs/cgfiles.h"
#include "fs/event.h"
#include "fs/node.h"
#include "fs/registry.h"
#include "fs/tasks.h"
#include "journal/state.h"
#include "os/proc.h"
#include "util/log.h"

/* What orders a handle's ops after its open is the kernel (the open's
 * reply comes first): told to the thread sanitizer, nothing otherwise. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define CGFS_TSAN_RELEASE(p) __tsan_release(p)
#define CGFS_TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define CGFS_TSAN_RELEASE(p) ((void)(p))
#define CGFS_TSAN_ACQUIRE(p) ((void)(p))
#endif

static struct cgfs *cgfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* The handle behind fi, or NULL for one this worker did not make (a dead
 * worker's, still open in a client across a restart: EBADF). */
static struct cgfs_fh *cgfs_fh_of(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cgfs *fs = cgfs_of(req);

	struct cgfs_fh *fh;

	if (!fi || (fi->fh & CGFS_FH_TAG_MASK) != fs->fh_tag)
		return NULL;
	/* An op on a handle comes after its open's reply, through the kernel,
	 * on any thread: that order is real, but the thread sanitizer cannot
	 * see it; it is told (cgfs_fh_new released the handle), and no lock
	 * is taken on every op for its sake. */
	fh = (struct cgfs_fh *)(uintptr_t)(fi->fh & ~CGFS_FH_TAG_MASK);
	CGFS_TSAN_ACQUIRE(fh);
	return fh;
}

/* One more request of kind k (memcgctl status). */
static void cgfs_count(fuse_req_t req, enum cgfs_rq k)
{
	atomic_fetch_add_explicit(&cgfs_of(req)->requests[k], 1, memory_order_relaxed);
}

static bool cgfs_interrupted(void *req)
{
	return fuse_req_interrupted(req) != 0;
}

static void cgfs_req_init(struct cgfs_req *r, fuse_req_t req, struct mcg_group *g,
			  const struct cgfs_fh *fh)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	*r = (struct cgfs_req){
		.fs = cgfs_of(req), .g = g, .fh = fh,
		.pid = ctx->pid, .uid = ctx->uid, .gid = ctx->gid,
		.interrupted = cgfs_interrupted, .interrupted_arg = req,
	};
}

static void cgfs_reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, -err);
}

/* A change the state file records is on disk before its reply
 * (fs/state.h): every one passes here with the group it changed (noted
 * even when the call failed: a part of it may have been done). */
static int cgfs_kept(fuse_req_t req, struct mcg_group *g, int err)
{
	struct state *st = cgfs_of(req)->state;

	state_changed(st, g);
	return err ? err : state_commit(st);
}

static void cgfs_op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* The kernel checks modes and ACLs (default_permissions); with POSIX
	 * ACLs it leaves the umask to us, so that a default ACL can replace it. */
	if (conn->capable & FUSE_CAP_POSIX_ACL)
		conn->want |= FUSE_CAP_POSIX_ACL;
	if (conn->capable & FUSE_CAP_DONT_MASK)
		conn->want |= FUSE_CAP_DONT_MASK;
}

/* The kernel keeps a name and its attributes for fs->cache_timeout: every
 * change comes through it (it drops what a mkdir, rmdir, rename, setattr
 * or setxattr changed), except a worker's restart, which tells it to drop
 * all (cgfs_ops_attached). Negative answers are errors it does not keep. */
static void cgfs_entry(struct cgfs *fs, struct mcg_group *g, int row, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = node_ino(g, row);
	e->generation = mcg_gen(g);
	e->entry_timeout = e->attr_timeout = fs->cache_timeout;
	node_getattr(fs, g, row, &e->attr);
	e->attr.st_ino = e->ino;
}

static void cgfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cgfs *fs = cgfs_of(req);
	struct fuse_entry_param e;
	struct mcg_group *p, *c;
	int row, err;

	cgfs_count(req, CGFS_RQ_LOOKUP);
	if ((err = node_from_ino(fs, parent, &p, &row)))
		return cgfs_reply_err(req, err);
	if (row >= 0 || mcg_removed(p)) {
		mcg_put(p);
		return cgfs_reply_err(req, row >= 0 ? -ENOTDIR : -ENOENT);
	}
	if ((c = mcg_lookup(fs->eng, p, name))) {
		cgfs_entry(fs, c, -1, &e);
		dentries_note(fs->dentries, mcg_id(c), mcg_gen(c), parent, name);
		mcg_put(c);
	} else if ((row = cgfs_file_lookup(fs, name, mcg_is_root(p))) >= 0) {
		cgfs_entry(fs, p, row, &e);
	} else {
		mcg_put(p);
		return cgfs_reply_err(req, -ENOENT);
	}
	mcg_put(p);
	fuse_reply_entry(req, &e);
}

static void cgfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set)
{
	struct cgfs *fs = cgfs_of(req);
	struct mcg_group *g;
	struct stat st;
	int row, err;

	if ((err = node_from_ino(fs, ino, &g, &row)))
		return cgfs_reply_err(req, err);
	/* O_TRUNC and truncate(2) on a control file are accepted no-ops. */
	if ((to_set & FUSE_SET_ATTR_SIZE) && row < 0)
		err = -EISDIR;
	if (!err && (to_set & FUSE_SET_ATTR_MODE))
		err = node_chmod(fs, g, row, attr->st_mode);
	if (!err && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		err = node_chown(fs, g, row,
				 to_set & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1,
				 to_set & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1);
	/* chmod, chown and utimensat move ctime; a truncation (O_TRUNC of a
	 * control file before its write) moves no time */
	if (!err && !(to_set & FUSE_SET_ATTR_SIZE) &&
	    (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
		       FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		err = node_set_times(fs, g, row,
				     !(to_set & FUSE_SET_ATTR_ATIME) ? NULL :
				     to_set & FUSE_SET_ATTR_ATIME_NOW ? &now : &attr->st_atim,
				     !(to_set & FUSE_SET_ATTR_MTIME) ? NULL :
				     to_set & FUSE_SET_ATTR_MTIME_NOW ? &now : &attr->st_mtim);
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		err = cgfs_kept(req, g, err);
	if (!err) {
		node_getattr(fs, g, row, &st);
		st.st_ino = ino;
	}
	mcg_put(g);
	if (err)
		return cgfs_reply_err(req, err);
	fuse_reply_attr(req, &st, fs->cache_timeout);
}

static void cgfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			    struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_SETATTR);
	cgfs_setattr(req, ino, attr, to_set);
}

/* getattr is setattr with nothing to set. */
static void cgfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_GETATTR);
	cgfs_setattr(req, ino, NULL, 0);
}

/* The group directory named by (parent, name), referenced. */
static int cgfs_child(struct cgfs *fs, fuse_ino_t parent, const char *name,
		      struct mcg_group **out, struct mcg_group **parent_out)
{
	struct mcg_group *p;
	int row, err;

	if ((err = node_from_ino(fs, parent, &p, &row)))
		return err;
	if (row >= 0) {
		mcg_put(p);
		return -ENOTDIR;
	}
	*out = mcg_lookup(fs->eng, p, name);
	if (!*out) {
		err = cgfs_file_lookup(fs, name, mcg_is_root(p)) >= 0 ? -ENOTDIR : -ENOENT;
		mcg_put(p);
		return err;
	}
	if (parent_out)
		*parent_out = p;
	else
		mcg_put(p);
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

static void cgfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct cgfs *fs = cgfs_of(req);
	struct cgfs_mkdir_arg a = { fs, ctx->uid, ctx->gid, mode, ctx->umask };
	struct fuse_entry_param e;
	struct mcg_group *p, *g = NULL;
	int row, err;

	cgfs_count(req, CGFS_RQ_MKDIR);
	if ((err = node_from_ino(fs, parent, &p, &row)))
		return cgfs_reply_err(req, err);
	if (row >= 0)
		err = -ENOTDIR;
	else if (cgfs_file_lookup(fs, name, mcg_is_root(p)) >= 0)
		err = -EEXIST;         /* names of control files are taken */
	else
		/* charged through the stock of the CPU the caller runs on
		 * (§11.5), as the kernel's allocation is */
		err = mcg_create_on(fs->eng, p, name, proc_cpu_of(ctx->pid), cgfs_mkdir_init, &a, &g);
	if (!err)
		node_touch_dir(fs, p);
	mcg_put(p);
	if (err || (err = cgfs_kept(req, g, 0))) {
		if (g)
			mcg_put(g);
		return cgfs_reply_err(req, err);
	}
	cgfs_entry(fs, g, -1, &e);
	dentries_note(fs->dentries, mcg_id(g), mcg_gen(g), parent, name);
	mcg_put(g);
	fuse_reply_entry(req, &e);
}

static void cgfs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cgfs *fs = cgfs_of(req);
	struct mcg_group *g, *p;
	int err;

	cgfs_count(req, CGFS_RQ_RMDIR);
	if ((err = cgfs_child(fs, parent, name, &g, &p)))
		return cgfs_reply_err(req, err);
	if (!(err = mcg_remove(fs->eng, g))) {
		event_group_removed(fs, g);
		node_touch_dir(fs, p);
	}
	err = cgfs_kept(req, g, err);
	cgfs_reply_err(req, err);
	/* (the kernel has dropped the name: answered) */
	if (!err)
		dentries_drop(fs->dentries, mcg_id(g), mcg_gen(g), parent, name);
	/* a tree taken down gives its memory back to the system (fs/trim.h) */
	if (!err)
		trim_removed(fs->trim);
	mcg_put(g);
	mcg_put(p);
}

static void cgfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			   fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct cgfs *fs = cgfs_of(req);
	struct mcg_group *g, *p, *np;
	int row, err;

	cgfs_count(req, CGFS_RQ_RENAME);
	if (flags)
		return cgfs_reply_err(req, -EINVAL);
	if ((err = cgfs_child(fs, parent, name, &g, &p)))
		return cgfs_reply_err(req, err);
	if ((err = node_from_ino(fs, newparent, &np, &row)) == 0) {
		if (np != p)
			err = -EIO;        /* only within the same parent */
		else if (cgfs_file_lookup(fs, newname, mcg_is_root(np)) >= 0)
			err = -ENOTDIR;
		else if (!(err = mcg_rename(fs->eng, g, newname)))
			state_renamed(fs->state);
		mcg_put(np);
	}
	mcg_put(p);
	err = cgfs_kept(req, g, err);
	cgfs_reply_err(req, err);
	/* (the kernel moved its name once answered: till then it may keep
	 * the old one, which stays recorded) */
	if (!err)
		dentries_note(fs->dentries, mcg_id(g), mcg_gen(g), parent, newname);
	mcg_put(g);
}

static struct cgfs_fh *cgfs_fh_new(fuse_req_t req, struct mcg_group *g, int row)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct cgfs_fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->g = g;
	fh->row = row;
	fh->uid = ctx->uid;
	fh->gid = ctx->gid;
	fh->pid = ctx->pid;
	if (row >= 0 && cgfs_files[row].capture_caps)
		fh->agent_cap = proc_is_init_admin(ctx->pid);
	pthread_mutex_init(&fh->lock, NULL);
	pthread_mutex_lock(&cgfs_of(req)->fh_lock);
	fh->next = cgfs_of(req)->fh_head;
	if (fh->next)
		fh->next->prev = fh;
	cgfs_of(req)->fh_head = fh;
	pthread_mutex_unlock(&cgfs_of(req)->fh_lock);
	CGFS_TSAN_RELEASE(fh);              /* (cgfs_fh_of) */
	return fh;
}

static void cgfs_fh_free(struct cgfs *fs, struct cgfs_fh *fh)
{
	pthread_mutex_lock(&fs->fh_lock);
	if (fh->prev)
		fh->prev->next = fh->next;
	else
		fs->fh_head = fh->next;
	if (fh->next)
		fh->next->prev = fh->prev;
	pthread_mutex_unlock(&fs->fh_lock);
	/* Every op on the handle ran before the kernel could send its release,
	 * each under fh->lock up to its reply: taking the lock once makes that
	 * order one the thread sanitizer sees too. */
	pthread_mutex_lock(&fh->lock);
	pthread_mutex_unlock(&fh->lock);
	pthread_mutex_destroy(&fh->lock);
	free(fh->snap);
	mcg_put(fh->g);
	free(fh);
}

void cgfs_ops_free_handles(struct cgfs *fs)
{
	while (fs->fh_head)
		cgfs_fh_free(fs, fs->fh_head);
}

/* Open a file (want_dir false) or a directory; the handle keeps the group. */
static void cgfs_open_node(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, bool want_dir)
{
	struct mcg_group *g;
	struct cgfs_fh *fh;
	int row, err;

	if ((err = node_from_ino(cgfs_of(req), ino, &g, &row)))
		return cgfs_reply_err(req, err);
	if ((row < 0) != want_dir) {
		mcg_put(g);
		return cgfs_reply_err(req, want_dir ? -ENOTDIR : -EISDIR);
	}
	if (!(fh = cgfs_fh_new(req, g, row))) {
		mcg_put(g);
		return cgfs_reply_err(req, -ENOMEM);
	}
	if ((uintptr_t)fh & CGFS_FH_TAG_MASK) {       /* no room for the tag */
		cgfs_fh_free(cgfs_of(req), fh);
		return cgfs_reply_err(req, -ENOMEM);
	}
	fi->fh = (uintptr_t)fh | cgfs_of(req)->fh_tag;
	fi->direct_io = !want_dir;      /* st_size is 0: only direct I/O shows content */
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the opener was interrupted: nobody will release this */
		cgfs_fh_free(cgfs_of(req), fh);
	}
}

static void cgfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_OPEN);
	cgfs_open_node(req, ino, fi, false);
}

static void cgfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_OPENDIR);
	cgfs_open_node(req, ino, fi, true);
}

static void cgfs_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = cgfs_fh_of(req, fi);

	if (fh)                         /* a dead worker's: nothing to free */
		cgfs_fh_free(cgfs_of(req), fh);
	fuse_reply_err(req, 0);
}

static void cgfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_RELEASE);
	cgfs_release(req, fi);
}

static void cgfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_RELEASEDIR);
	cgfs_release(req, fi);
}

/* No control file needs a close(2) to do anything: the kernel, told so
 * once, sends no more FLUSH on this connection (fc->no_flush). */
static void cgfs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_FLUSH);
	cgfs_reply_err(req, -ENOSYS);
}

/* The kernel dropped names it had looked up: nothing is kept per lookup
 * (an inode number is the group's id and the file's row), only counted. */
static void cgfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	cgfs_count(req, CGFS_RQ_FORGET);
	fuse_reply_none(req);
}

static void cgfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	cgfs_count(req, CGFS_RQ_FORGET);
	fuse_reply_none(req);
}

/* Fill fh->snap with a fresh rendering of the file (files) or the packed
 * directory listing (directories). */
static int cgfs_snapshot(fuse_req_t req, struct cgfs_fh *fh)
{
	/* rendered into the last one's buffer: no allocation once it fits */
	struct cgfs_out o = { .buf = fh->snap, .cap = fh->snap_cap };
	struct cgfs_req r;
	int err;

	cgfs_req_init(&r, req, fh->g, fh);
	err = cgfs_file_read(&r, &cgfs_files[fh->row], &o);
	fh->snap = o.buf;
	fh->snap_cap = o.cap;
	fh->snap_len = err ? 0 : o.len;
	fh->snapped = !err;
	return err;
}

static void cgfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = cgfs_fh_of(req, fi);
	char small[4096], *out = small;
	size_t len = 0;
	int err = 0;

	cgfs_count(req, CGFS_RQ_READ);
	if (!fh)
		return cgfs_reply_err(req, -EBADF);
	pthread_mutex_lock(&fh->lock);
	/* As seq_file does (§11.8): a read where the last one ended continues
	 * the text generated then, even after rmdir; a read at any other
	 * offset (or the first) generates it afresh and serves that offset
	 * from the new text. Text a removed group would have to generate, the
	 * end of the old text included, is ENODEV. */
	if (!fh->snapped || off != fh->pos)
		err = mcg_removed(fh->g) ? -ENODEV : cgfs_snapshot(req, fh);
	else if ((size_t)off >= fh->snap_len && mcg_removed(fh->g))
		err = -ENODEV;
	if (!err && (size_t)off < fh->snap_len) {
		len = fh->snap_len - (size_t)off < size ? fh->snap_len - (size_t)off : size;
		/* (a copy: the reply must not touch fh, see below) */
		if (len > sizeof(small) && !(out = malloc(len)))
			err = -ENOMEM;
		else
			memcpy(out, fh->snap + off, len);
	}
	if (!err) {
		fh->pos = off + (off_t)len;
		fh->read = true;
	}
	pthread_mutex_unlock(&fh->lock);
	/* The reply lets the reader close the file, and release may then free
	 * fh at once: nothing of fh is touched from here on. */
	if (err)
		cgfs_reply_err(req, err);
	else
		fuse_reply_buf(req, out, len);
	if (out != small)
		free(out);
}

/* §11.7: POLLIN|POLLOUT|POLLPRI|POLLERR on a fresh handle until its first
 * read (kernfs reports its open as an event not yet seen), POLLIN|POLLOUT
 * after; tasks and cgroup.procs of a group with no task keep all four. A
 * file that can never be read (cgroup.event_control, memory.force_empty,
 * memory.pressure_level) answers POLLIN|POLLOUT from its open on, as the
 * live 6.18 kernel was measured to (issue 25). No
 * later event is ever reported, so nothing is kept to notify. */
static void cgfs_op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			 struct fuse_pollhandle *ph)
{
	struct cgfs_fh *fh = cgfs_fh_of(req, fi);
	unsigned mask = POLLIN | POLLOUT;
	bool fresh;

	cgfs_count(req, CGFS_RQ_POLL);
	if (!fh)
		return cgfs_reply_err(req, -EBADF);
	if (ph)
		fuse_pollhandle_destroy(ph);
	pthread_mutex_lock(&fh->lock);
	fresh = !fh->read && (fh->row < 0 || cgfs_file_readable(&cgfs_files[fh->row]));
	if (fresh) {
		mask |= POLLPRI | POLLERR;
	} else if (fh->row >= 0 && cgfs_files[fh->row].poll_empty) {
		pid_t *v = NULL;
		long n = task_list(cgfs_of(req)->eng, fh->g, false, &v);

		free(v);
		if (n == 0)
			mask |= POLLPRI | POLLERR;
	}
	pthread_mutex_unlock(&fh->lock);
	fuse_reply_poll(req, mask);
}

static void cgfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
			  off_t off, struct fuse_file_info *fi)
{
	struct cgfs_fh *fh = cgfs_fh_of(req, fi);
	struct cgfs_req r;
	int err;

	cgfs_count(req, CGFS_RQ_WRITE);
	if (!fh)
		return cgfs_reply_err(req, -EBADF);
	pthread_mutex_lock(&fh->lock);       /* up to the reply (cgfs_fh_free) */
	cgfs_req_init(&r, req, fh->g, fh);
	err = cgfs_file_write(&r, &cgfs_files[fh->row], buf, size);
	/* Kernel-internal errnos (512 and up, e.g. ENOTSUPP 524 of old kmem
	 * limits) cannot cross FUSE: the kernel drops such replies. */
	if (err <= -512)
		err = -EOPNOTSUPP;
	if (cgfs_files[fh->row].keep)
		err = cgfs_kept(req, fh->g, err);
	pthread_mutex_unlock(&fh->lock);
	if (err)
		return cgfs_reply_err(req, err);
	fuse_reply_write(req, size);
}

struct cgfs_dirbuf {
	fuse_req_t req;
	char *buf;
	size_t size, len;
	off_t skip, idx;
	bool full;
};

/* Add one entry unless it is before the requested offset or the reply is
 * full; offsets are entry indexes. */
static void cgfs_dir_add(struct cgfs_dirbuf *d, const char *name, fuse_ino_t ino, mode_t type)
{
	struct stat st = { .st_ino = ino, .st_mode = type };
	size_t need;

	d->idx++;
	if (d->full || d->idx <= d->skip)
		return;
	need = fuse_add_direntry(d->req, d->buf + d->len, d->size - d->len, name, &st, d->idx);
	if (need > d->size - d->len)
		d->full = true;
	else
		d->len += need;
}

static void cgfs_dir_add_child(struct mcg_group *c, void *arg)
{
	cgfs_dir_add(arg, mcg_name(c), node_ino(c, -1), S_IFDIR);
}

static void cgfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	struct cgfs *fs = cgfs_of(req);
	struct cgfs_fh *fh = cgfs_fh_of(req, fi);
	struct cgfs_dirbuf d = { .req = req, .size = size, .skip = off };
	struct mcg_group *g;

	cgfs_count(req, CGFS_RQ_READDIR);
	if (!fh)
		return cgfs_reply_err(req, -EBADF);
	pthread_mutex_lock(&fh->lock);       /* up to the reply (cgfs_fh_free) */
	g = fh->g;
	if (mcg_removed(g) || !(d.buf = malloc(size))) {
		pthread_mutex_unlock(&fh->lock);
		return cgfs_reply_err(req, mcg_removed(g) ? -ENODEV : -ENOMEM);
	}
	cgfs_dir_add(&d, ".", ino, S_IFDIR);
	cgfs_dir_add(&d, "..", mcg_parent(g) ? node_ino(mcg_parent(g), -1) : ino, S_IFDIR);
	for (size_t i = 0; i < cgfs_nfiles; i++)
		if (cgfs_file_present(fs, &cgfs_files[i], mcg_is_root(g)))
			cgfs_dir_add(&d, cgfs_files[i].name, node_ino(g, (int)i), S_IFREG);
	mcg_for_each_child(fs->eng, g, cgfs_dir_add_child, &d);
	pthread_mutex_unlock(&fh->lock);
	fuse_reply_buf(req, d.buf, d.len);
	free(d.buf);
}

static void cgfs_reply_xattr(fuse_req_t req, int ret, char *buf, size_t size)
{
	if (ret < 0)
		cgfs_reply_err(req, ret);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)ret);
	else
		fuse_reply_buf(req, buf, (size_t)ret);
}

/* user.memcgfs.status of the root (an extension, docs/files.md): who
 * serves this mount, one "key value" a line, for memcgctl status. */
static int cgfs_status(struct cgfs *fs, char *buf, size_t size)
{
	/* (lower case, as libfuse's debug output names them) */
	static const char *const rq_names[CGFS_RQ_N] = {
		[CGFS_RQ_LOOKUP] = "lookup", [CGFS_RQ_FORGET] = "forget",
		[CGFS_RQ_GETATTR] = "getattr", [CGFS_RQ_SETATTR] = "setattr",
		[CGFS_RQ_MKDIR] = "mkdir", [CGFS_RQ_RMDIR] = "rmdir",
		[CGFS_RQ_RENAME] = "rename", [CGFS_RQ_OPEN] = "open", [CGFS_RQ_READ] = "read",
		[CGFS_RQ_WRITE] = "write", [CGFS_RQ_FLUSH] = "flush",
		[CGFS_RQ_RELEASE] = "release", [CGFS_RQ_POLL] = "poll",
		[CGFS_RQ_OPENDIR] = "opendir", [CGFS_RQ_READDIR] = "readdir",
		[CGFS_RQ_RELEASEDIR] = "releasedir", [CGFS_RQ_GETXATTR] = "getxattr",
		[CGFS_RQ_LISTXATTR] = "listxattr", [CGFS_RQ_SETXATTR] = "setxattr",
		[CGFS_RQ_REMOVEXATTR] = "removexattr", [CGFS_RQ_CREATE] = "create",
		[CGFS_RQ_MKNOD] = "mknod", [CGFS_RQ_UNLINK] = "unlink",
		[CGFS_RQ_SYMLINK] = "symlink", [CGFS_RQ_LINK] = "link",
		[CGFS_RQ_STATFS] = "statfs",
	};
	char text[4096];
	unsigned long total = 0;
	int n = snprintf(text, sizeof(text),
			 "supervisor_pid %d\nworker_pid %d\nworker_restarts %u\n"
			 "state_file %s\nprofile %u.%u\nsocket %s\nheap_trims %lu\n"
			 "heap_trim_pending %lu\n",
			 (int)fs->supervisor_pid, (int)getpid(), fs->restarts,
			 fs->state_file ? fs->state_file : "none",
			 fs->prof->version / 1000, fs->prof->version % 1000,
			 fs->sim_socket ? fs->sim_socket : "none", trim_count(fs->trim),
			 trim_pending(fs->trim));

	/* (the sources' lines: what charges real processes, and how) */
	if (n > 0 && (size_t)n < sizeof(text))
		n += (int)cgfs_sources_describe(fs, text + n, sizeof(text) - (size_t)n);
	/* the kernel's caches, and the requests this worker received, this
	 * one included: by kind, then all of them */
	if (n > 0 && (size_t)n < sizeof(text))
		n += snprintf(text + n, sizeof(text) - (size_t)n, "cache_timeout %g\n",
			      fs->cache_timeout);
	for (int k = 0; k < CGFS_RQ_N && n > 0 && (size_t)n < sizeof(text); k++) {
		unsigned long c = atomic_load_explicit(&fs->requests[k], memory_order_relaxed);

		total += c;
		n += snprintf(text + n, sizeof(text) - (size_t)n, "requests_%s %lu\n", rq_names[k], c);
	}
	if (n > 0 && (size_t)n < sizeof(text))
		n += snprintf(text + n, sizeof(text) - (size_t)n, "requests_total %lu\n"
			      "state_compactions %lu\ncache_restart %s\n", total,
			      state_compactions(fs->state),
			      fs->cache_timeout == 0 ? "none" : fs->dentries ? "names" : "epoch");
	if (n < 0 || (size_t)n >= sizeof(text))
		return -EOVERFLOW;      /* (never: the text is far below its bound) */
	if (size && (size_t)n > size)
		return -ERANGE;
	if (size)
		memcpy(buf, text, (size_t)n);
	return n;
}

static void cgfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	struct mcg_group *g;
	int row, ret;

	cgfs_count(req, CGFS_RQ_GETXATTR);
	if (size && !buf)
		return cgfs_reply_err(req, -ENOMEM);
	if (ino == FUSE_ROOT_ID && !strcmp(name, CGFS_STATUS_XATTR)) {
		cgfs_reply_xattr(req, cgfs_status(cgfs_of(req), buf, size), buf, size);
		free(buf);
		return;
	}
	/* user.memcgfs.clone_parent.TID of the root (an extension,
	 * docs/files.md): TID, in the caller's PID namespace, is about to
	 * clone with CLONE_PARENT (memcgfs-run's supervisor says so); an empty
	 * value */
	if (ino == FUSE_ROOT_ID && !strncmp(name, CGFS_CLONE_PARENT_XATTR, strlen(CGFS_CLONE_PARENT_XATTR))) {
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		const char *id = name + strlen(CGFS_CLONE_PARENT_XATTR);
		char *end;
		long tid = strtol(id, &end, 10);

		ret = *id < '0' || *id > '9' || *end || tid <= 0 || tid > INT32_MAX ? -ENODATA
			: cgfs_tasks_clone_parent(cgfs_of(req), ctx->pid, ctx->uid, (pid_t)tid);
		cgfs_reply_xattr(req, ret, buf, size);
		free(buf);
		return;
	}
	if (!(ret = node_from_ino(cgfs_of(req), ino, &g, &row))) {
		ret = node_getxattr(cgfs_of(req), g, row, name, buf, size);
		mcg_put(g);
	}
	cgfs_reply_xattr(req, ret, buf, size);
	free(buf);
}

static void cgfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	struct mcg_group *g;
	int row, ret;

	cgfs_count(req, CGFS_RQ_LISTXATTR);
	if (size && !buf)
		return cgfs_reply_err(req, -ENOMEM);
	if (!(ret = node_from_ino(cgfs_of(req), ino, &g, &row))) {
		ret = node_listxattr(cgfs_of(req), g, row, buf, size);
		mcg_put(g);
	}
	cgfs_reply_xattr(req, ret, buf, size);
	free(buf);
}

static void cgfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			     const char *value, size_t size, int flags)
{
	struct mcg_group *g;
	int row, ret;

	cgfs_count(req, CGFS_RQ_SETXATTR);
	if (!(ret = node_from_ino(cgfs_of(req), ino, &g, &row))) {
		ret = cgfs_kept(req, g, node_setxattr(cgfs_of(req), g, row, name, value, size, flags));
		mcg_put(g);
	}
	cgfs_reply_err(req, ret);
}

static void cgfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct mcg_group *g;
	int row, ret;

	cgfs_count(req, CGFS_RQ_REMOVEXATTR);
	if (!(ret = node_from_ino(cgfs_of(req), ino, &g, &row))) {
		ret = cgfs_kept(req, g, node_removexattr(cgfs_of(req), g, row, name));
		mcg_put(g);
	}
	cgfs_reply_err(req, ret);
}

/* New regular files cannot be created; links and device nodes neither. */
static void cgfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			   struct fuse_file_info *fi)
{
	cgfs_count(req, CGFS_RQ_CREATE);
	cgfs_reply_err(req, -EACCES);
}

static void cgfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			  dev_t rdev)
{
	cgfs_count(req, CGFS_RQ_MKNOD);
	cgfs_reply_err(req, -EPERM);
}

static void cgfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	cgfs_count(req, CGFS_RQ_UNLINK);
	cgfs_reply_err(req, -EPERM);
}

static void cgfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	cgfs_count(req, CGFS_RQ_SYMLINK);
	cgfs_reply_err(req, -EPERM);
}

static void cgfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	cgfs_count(req, CGFS_RQ_LINK);
	cgfs_reply_err(req, -EPERM);
}

static void cgfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st = { .f_bsize = 4096, .f_namemax = 255 };

	cgfs_count(req, CGFS_RQ_STATFS);
	fuse_reply_statfs(req, &st);
}

/* FUSE_NOTIFY_INC_EPOCH (protocol 7.44, Linux 6.16): the kernel looks
 * every name it keeps up again before it uses it. libfuse 3.14 has no
 * call for it; it carries no body. */
#define CGFS_NOTIFY_INC_EPOCH 8

struct cgfs_groups {
	struct mcg_group **g;
	size_t n, cap;
	bool nomem;
};

static void cgfs_collect(struct mcg_group *g, unsigned depth, void *arg)
{
	struct cgfs_groups *a = arg;

	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;
		struct mcg_group **n = realloc(a->g, cap * sizeof(*n));

		if (!n) {
			a->nomem = true;
			return;
		}
		a->g = n;
		a->cap = cap;
	}
	mcg_get(g);
	a->g[a->n++] = g;
}

/* May the kernel be told to drop every name it keeps (FUSE_NOTIFY_INC_EPOCH)?
 * Told so if it may. (MEMCGFS_TEST_NO_EPOCH: the tests take the way of a
 * kernel before 6.16 on any kernel.) 0, or the -errno of the refusal. */
static int cgfs_epoch(struct fuse_session *se)
{
	struct fuse_out_header h = { .len = sizeof(h), .error = CGFS_NOTIFY_INC_EPOCH };
	const char *no = getenv("MEMCGFS_TEST_NO_EPOCH");
	ssize_t w;

	if (no && *no)
		return -EINVAL;
	while ((w = write(fuse_session_fd(se), &h, sizeof(h))) < 0 && errno == EINTR)
		;
	return w == (ssize_t)sizeof(h) ? 0 : w < 0 ? -errno : -EIO;
}

/* Names a dead worker may have left the kernel that are not right now,
 * dropped on a thread of the new worker's (cgfs_inval_main). */
struct cgfs_stale {
	uint64_t parent;
	char name[DENTRIES_NAME_MAX + 1];
};

static struct cgfs_inval {
	struct fuse_session *se;
	struct cgfs_stale *v;
	size_t n, cap;
	bool nomem, running;
	pthread_t thread;
} cgfs_inval;

/* (dentries_take's fn) A recorded name: kept where it is still the
 * group's own (true), else listed to be dropped. */
static bool cgfs_stale_cb(void *arg, unsigned id, unsigned gen, uint64_t parent, const char *name)
{
	struct cgfs *fs = arg;
	struct cgfs_inval *iv = &cgfs_inval;
	struct mcg_group *g = mcg_by_id(fs->eng, id);
	bool right = g && mcg_gen(g) == gen && !mcg_removed(g) && mcg_parent(g) &&
		     node_ino(mcg_parent(g), -1) == parent && !strcmp(mcg_name(g), name);

	if (g)
		mcg_put(g);
	if (right)
		return true;
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? 2 * iv->cap : 64;
		struct cgfs_stale *v = realloc(iv->v, cap * sizeof(*v));

		if (!v) {
			iv->nomem = true;
			return false;
		}
		iv->v = v;
		iv->cap = cap;
	}
	iv->v[iv->n].parent = parent;
	snprintf(iv->v[iv->n++].name, sizeof(iv->v[0].name), "%s", name);
	return false;
}

/* The stale names dropped: each INVAL_ENTRY takes its directory's lock,
 * which a request queued for this worker may hold until it is served, so
 * this runs beside the serving threads (the kernel then drops the name
 * and every name below it; one it no longer has is ENOENT). */
static void *cgfs_inval_main(void *arg)
{
	struct cgfs_inval *iv = arg;
	size_t dropped = 0;

	for (size_t i = 0; i < iv->n; i++)
		if (fuse_lowlevel_notify_inval_entry(iv->se, iv->v[i].parent, iv->v[i].name,
						     strlen(iv->v[i].name)) == 0)
			dropped++;
	mcg_log(MCG_LOG_NOTICE, "the kernel dropped %zu of %zu names the dead worker may have "
		"left it stale", dropped, iv->n);
	return NULL;
}

void cgfs_ops_detached(struct cgfs *fs)
{
	struct cgfs_inval *iv = &cgfs_inval;

	(void)fs;
	if (iv->running)
		pthread_join(iv->thread, NULL);
	iv->running = false;
	free(iv->v);
	*iv = (struct cgfs_inval){ 0 };
}

int cgfs_ops_attached(struct fuse_session *se, struct cgfs *fs)
{
	struct cgfs_groups a = { 0 };
	int err = cgfs_epoch(se);

	if (!err) {
		/* every name is looked up again after a restart: none recorded */
		dentries_unmap(fs->dentries);
		fs->dentries = NULL;
	} else if (!fs->dentries) {
		/* a kernel before 6.16, and no record of the names a dead
		 * worker gave it: it is told to keep nothing */
		if (fs->cache_timeout > 0)
			mcg_log(MCG_LOG_WARNING, "the kernel cannot be told to drop every name it "
				"keeps (FUSE_NOTIFY_INC_EPOCH: %s) and no names are recorded: it "
				"keeps none (cache_timeout=0)", strerror(-err));
		fs->cache_timeout = 0;
		return 0;
	} else if (!fs->restarts) {
		mcg_log(MCG_LOG_INFO, "the kernel cannot be told to drop every name it keeps "
			"(FUSE_NOTIFY_INC_EPOCH: %s): the names of groups it is given are "
			"recorded, for a restart to drop those left stale", strerror(-err));
	}
	/* the kernel has nothing of ours yet, or keeps nothing (every worker
	 * of a connection gives it the same timeout) */
	if (!fs->restarts || fs->cache_timeout == 0)
		return 0;
	/* Before 6.16: the names a dead worker gave that are not the groups'
	 * now (a removal or rename it made without its answer reaching the
	 * kernel, a state file restored meanwhile, -o nostate's empty start)
	 * are dropped once the worker serves; a request made before that may
	 * still find one (a few milliseconds after a restart). */
	if (fs->dentries) {
		dentries_take(fs->dentries, cgfs_stale_cb, fs);
		if (cgfs_inval.nomem)
			mcg_log(MCG_LOG_ERR, "out of memory listing the kernel's stale names");
		cgfs_inval.se = se;
		if (cgfs_inval.n &&
		    !(cgfs_inval.running = !pthread_create(&cgfs_inval.thread, NULL, cgfs_inval_main,
							   &cgfs_inval)))
			mcg_log(MCG_LOG_ERR, "cannot start the thread that drops stale names");
	}
	/* A dead worker may have changed a node without its reply reaching
	 * the kernel (a chmod, an ACL on disk, then the crash), and its times
	 * are not kept: no name is used before it is looked up again (the
	 * epoch, above, or the names dropped), and no inode's attributes or
	 * ACLs before they are fetched again, whichever path reaches it (an
	 * open descriptor too). This notice waits for no lock a queued
	 * request could hold. */
	mcg_walk(fs->eng, cgfs_collect, &a);
	for (size_t i = 0; i < a.n; i++) {
		bool root = mcg_is_root(a.g[i]);

		fuse_lowlevel_notify_inval_inode(se, node_ino(a.g[i], -1), -1, 0);
		for (size_t r = 0; r < cgfs_nfiles; r++)
			if (cgfs_file_present(fs, &cgfs_files[r], root))
				fuse_lowlevel_notify_inval_inode(se, node_ino(a.g[i], (int)r), -1, 0);
		mcg_put(a.g[i]);
	}
	free(a.g);
	if (a.nomem) {
		mcg_log(MCG_LOG_ERR, "out of memory invalidating the kernel's attributes");
		return -ENOMEM;
	}
	return 0;
}

const struct fuse_lowlevel_ops cgfs_ops = {
	.init        = cgfs_op_init,
	.lookup      = cgfs_op_lookup,
	.forget      = cgfs_op_forget,
	.forget_multi = cgfs_op_forget_multi,
	.getattr     = cgfs_op_getattr,
	.setattr     = cgfs_op_setattr,
	.mkdir       = cgfs_op_mkdir,
	.rmdir       = cgfs_op_rmdir,
	.rename      = cgfs_op_rename,
	.open        = cgfs_op_open,
	.read        = cgfs_op_read,
	.write       = cgfs_op_write,
	.flush       = cgfs_op_flush,
	.release     = cgfs_op_release,
	.poll        = cgfs_op_poll,
	.opendir     = cgfs_op_opendir,
	.readdir     = cgfs_op_readdir,
	.releasedir  = cgfs_op_releasedir,
	.getxattr    = cgfs_op_getxattr,
	.listxattr   = cgfs_op_listxattr,
	.setxattr    = cgfs_op_setxattr,
	.removexattr = cgfs_op_removexattr,
	.create      = cgfs_op_create,
	.mknod       = cgfs_op_mknod,
	.unlink      = cgfs_op_unlink,
	.symlink     = cgfs_op_symlink,
	.link        = cgfs_op_link,
	.statfs      = cgfs_op_statfs,
};
