/* standin.c: the stand-in hierarchies' FUSE server and its answers to
 * the supervisor (standin.h). Owns the FUSE sessions (one per mounted
 * hierarchy, each its own mount as a v1 root is), the open files' texts
 * and the query socket; one thread, so hier.c needs no lock. Never mounts
 * anything (the child did, inside the wrapper's namespace), never
 * touches memcgfs nor the host's cgroups. */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bridge/standin.h"

#define STANDIN_PER_GROUP 64   /* inode numbers per group: its directory and files */
#define STANDIN_TTL 1.0        /* every change goes through the kernel's own dcache */

struct standin_srv;

struct standin_mnt {
	struct standin_srv *srv;
	int h;
};

struct standin_srv {
	struct hier_set *hs;
	struct fuse_session *se[VIEW_NCTL];
	struct standin_mnt mnt[VIEW_NCTL];
	struct timespec born;
};

struct standin_fh {
	char *text;
	size_t len;
};

static fuse_ino_t standin_ino(const struct hier_group *g, int file)
{
	return 1 + (fuse_ino_t)hier_id(g) * STANDIN_PER_GROUP + (fuse_ino_t)(file + 1);
}

/* The group and file (-1: its directory) inode INO is; 0 or -ENOENT. */
static int standin_decode(struct standin_mnt *m, fuse_ino_t ino, struct hier_group **g, int *file)
{
	if (ino < 1)
		return -ENOENT;
	*g = hier_group(m->srv->hs, m->h, (unsigned)((ino - 1) / STANDIN_PER_GROUP));
	*file = (int)((ino - 1) % STANDIN_PER_GROUP) - 1;
	if (!*g)
		return -ENOENT;
	if (*file >= 0 && !hier_file_here_at(m->srv->hs, m->h, *g, *file))
		return -ENOENT;
	return 0;
}

enum { STANDIN_ANY = -1, STANDIN_FILE, STANDIN_DIR };

/* The node INO names, of kind WANT; else the error is replied (GONE when
 * it names nothing now) and false returned. */
static bool standin_node(fuse_req_t req, fuse_ino_t ino, int want, int gone, struct hier_group **g,
			 int *file)
{
	*file = -1;
	if (standin_decode(fuse_req_userdata(req), ino, g, file)) {
		fuse_reply_err(req, gone);
		return false;
	}
	if ((want == STANDIN_DIR && *file >= 0) || (want == STANDIN_FILE && *file < 0)) {
		fuse_reply_err(req, want == STANDIN_DIR ? ENOTDIR : EISDIR);
		return false;
	}
	return true;
}

static void standin_stat(struct standin_mnt *m, struct hier_group *g, int file, struct stat *st)
{
	const struct hier_attr *a = hier_attr(g, file);
	size_t kids = 0;

	while (file < 0 && hier_nth_child(g, kids))
		kids++;
	memset(st, 0, sizeof(*st));
	st->st_ino = standin_ino(g, file);
	st->st_mode = (file < 0 ? S_IFDIR : S_IFREG) | (a->mode & 07777);
	st->st_nlink = file < 0 ? 2 + kids : 1;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = m->srv->born;
}

static void standin_entry(fuse_req_t req, struct standin_mnt *m, struct hier_group *g, int file)
{
	struct fuse_entry_param e = { .attr_timeout = STANDIN_TTL, .entry_timeout = STANDIN_TTL };

	e.ino = standin_ino(g, file);
	standin_stat(m, g, file, &e.attr);
	fuse_reply_entry(req, &e);
}

static struct hier_caller standin_who(fuse_req_t req, bool caps)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	struct hier_caller who = { .pid = c->pid, .uid = c->uid, .gid = c->gid };

	who.sys_admin = caps && standin_os_sys_admin(c->pid);
	return who;
}

static void standin_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_group *g, *kid;
	int file;

	if (!standin_node(req, parent, STANDIN_DIR, ENOENT, &g, &file))
		return;
	if ((kid = hier_child(m->srv->hs, m->h, g, name)))
		standin_entry(req, m, kid, -1);
	else if ((file = hier_file_index(m->srv->hs, m->h, g, name)) >= 0)
		standin_entry(req, m, g, file);
	else
		fuse_reply_err(req, ENOENT);
}

static void standin_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_group *g;
	struct stat st;
	int file;

	(void)fi;
	if (!standin_node(req, ino, STANDIN_ANY, ENOENT, &g, &file))
		return;
	standin_stat(m, g, file, &st);
	fuse_reply_attr(req, &st, STANDIN_TTL);
}

static void standin_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			    struct fuse_file_info *fi)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_group *g;
	struct hier_attr *a;
	struct stat st;
	int file;

	(void)fi;
	if (!standin_node(req, ino, STANDIN_ANY, ENOENT, &g, &file))
		return;
	/* (the kernel checked who may: default_permissions) */
	a = hier_attr(g, file);
	if (to_set & FUSE_SET_ATTR_MODE)
		a->mode = attr->st_mode & 07777;
	if (to_set & FUSE_SET_ATTR_UID)
		a->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		a->gid = attr->st_gid;
	/* a size (O_TRUNC) or times change nothing, as on cgroupfs */
	standin_stat(m, g, file, &st);
	fuse_reply_attr(req, &st, STANDIN_TTL);
}

static void standin_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_caller who = standin_who(req, false);
	struct hier_group *g, *kid;
	int file, rc;

	(void)mode;
	if (!standin_node(req, parent, STANDIN_DIR, ENOENT, &g, &file))
		return;
	if ((rc = hier_mkdir(m->srv->hs, m->h, g, name, &who, &kid)))
		fuse_reply_err(req, -rc);
	else
		standin_entry(req, m, kid, -1);
}

static void standin_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_group *g;
	int file;

	if (!standin_node(req, parent, STANDIN_DIR, ENOENT, &g, &file))
		return;
	fuse_reply_err(req, -hier_rmdir(m->srv->hs, m->h, g, name));
}

static void standin_refuse(fuse_req_t req)
{
	fuse_reply_err(req, EPERM);
}

static void standin_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	standin_refuse(req);
}

static void standin_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			   fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	(void)parent;
	(void)name;
	(void)newparent;
	(void)newname;
	(void)flags;
	standin_refuse(req);   /* (the kernel renames a v1 group: not here) */
}

static void standin_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	standin_refuse(req);
}

static void standin_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	standin_refuse(req);
}

static void standin_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			   struct fuse_file_info *fi)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)fi;
	fuse_reply_err(req, EACCES);   /* cgroupfs has no create */
}

static void standin_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			  dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	fuse_reply_err(req, EACCES);
}

static void standin_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct standin_fh *fh;
	struct hier_group *g;
	unsigned tmode;
	int file, acc = fi->flags & O_ACCMODE;

	if (!standin_node(req, ino, STANDIN_FILE, ENOENT, &g, &file))
		return;
	/* as kernfs: a file without a reader (writer) cannot be opened to
	 * read (write), whoever asks */
	tmode = hier_file_mode(m->srv->hs, m->h, file);
	if ((acc != O_WRONLY && !(tmode & 0444)) || (acc != O_RDONLY && !(tmode & 0222))) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (!(fh = calloc(1, sizeof(*fh)))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void standin_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct standin_fh *fh = (struct standin_fh *)(uintptr_t)fi->fh;
	struct hier_group *g;
	int file, rc;

	if (!standin_node(req, ino, STANDIN_FILE, ENODEV, &g, &file))   /* (the group went) */
		return;
	/* the text is made at the first read, and again at offset 0 */
	if (!fh->text || off == 0) {
		free(fh->text);
		fh->text = NULL;
		if ((rc = hier_read(m->srv->hs, m->h, g, file, &fh->text, &fh->len))) {
			fuse_reply_err(req, -rc);
			return;
		}
	}
	if (off < 0 || (size_t)off >= fh->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, fh->text + off,
			       size < fh->len - (size_t)off ? size : fh->len - (size_t)off);
}

static void standin_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_caller who = standin_who(req, m->h == VIEW_DEVICES);
	struct hier_group *g;
	int file, rc;

	(void)off;
	(void)fi;
	if (!standin_node(req, ino, STANDIN_FILE, ENODEV, &g, &file))   /* (the group went) */
		return;
	/* each write(2) is one whole value, as on cgroupfs */
	if ((rc = hier_write(m->srv->hs, m->h, g, file, buf, size, &who)))
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

static void standin_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct standin_fh *fh = (struct standin_fh *)(uintptr_t)fi->fh;

	(void)ino;
	if (fh)
		free(fh->text);
	free(fh);
	fuse_reply_err(req, 0);
}

/* One directory entry at index I of G: ".", "..", the groups, the files. */
static bool standin_dirent(struct standin_mnt *m, struct hier_group *g, off_t i, const char **name,
			   struct stat *st)
{
	struct hier_group *kid;
	unsigned mode;
	int file;

	memset(st, 0, sizeof(*st));
	if (i < 2) {
		*name = i ? ".." : ".";
		st->st_mode = S_IFDIR;
		st->st_ino = standin_ino(g, -1);
		return true;
	}
	if ((kid = hier_nth_child(g, (size_t)(i - 2)))) {
		*name = hier_name(kid);
		st->st_mode = S_IFDIR;
		st->st_ino = standin_ino(kid, -1);
		return true;
	}
	for (size_t k = 0; hier_nth_child(g, k); k++)
		i--;
	if ((file = hier_file(m->srv->hs, m->h, g, (int)(i - 2), name, &mode)) < 0)
		return false;
	st->st_mode = S_IFREG;
	st->st_ino = standin_ino(g, file);
	return true;
}

static void standin_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	struct standin_mnt *m = fuse_req_userdata(req);
	struct hier_group *g;
	struct stat st;
	const char *name;
	char *buf;
	size_t pos = 0;
	int file;

	(void)fi;
	if (!standin_node(req, ino, STANDIN_DIR, ENOENT, &g, &file))
		return;
	if (!(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (off_t i = off; standin_dirent(m, g, i, &name, &st); i++) {
		size_t n = fuse_add_direntry(req, buf + pos, size - pos, name, &st, i + 1);

		if (n > size - pos)
			break;
		pos += n;
	}
	fuse_reply_buf(req, buf, pos);
	free(buf);
}

static void standin_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };

	(void)ino;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops standin_ops = {
	.lookup = standin_lookup,
	.getattr = standin_getattr,
	.setattr = standin_setattr,
	.mkdir = standin_mkdir,
	.rmdir = standin_rmdir,
	.unlink = standin_unlink,
	.rename = standin_rename,
	.symlink = standin_symlink,
	.link = standin_link,
	.create = standin_create,
	.mknod = standin_mknod,
	.open = standin_open,
	.read = standin_read,
	.write = standin_write,
	.release = standin_release,
	.readdir = standin_readdir,
	.statfs = standin_statfs,
};

/* ---- the supervisor's questions ---- */

struct standin_q {
	unsigned seq;   /* echoed first in the answer: a late one is told apart */
	pid_t tid;
	int maker;      /* 1: tid is about to clone with CLONE_PARENT */
};

/* Now in clock ticks after boot, as /proc/PID/stat's start times are. */
static uint64_t standin_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	if (hz <= 0)
		hz = 100;
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) / (1000000000ULL / (uint64_t)hz);
}

#define STANDIN_REPLY_MAX (VIEW_NCTL * 4200)

/* One question on QFD answered: 0, or -EPIPE when the supervisor hung up
 * (or the socket failed). */
static int standin_answer(struct standin_srv *srv, int qfd)
{
	struct standin_q q;
	ssize_t got = recv(qfd, &q, sizeof(q), MSG_DONTWAIT);
	char *out;
	size_t n;

	if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
		return -EPIPE;
	if (got != (ssize_t)sizeof(q) || !(out = malloc(STANDIN_REPLY_MAX)))
		return 0;
	n = (size_t)snprintf(out, STANDIN_REPLY_MAX, "%u\n", q.seq);
	if (q.maker) {
		n += (size_t)snprintf(out + n, STANDIN_REPLY_MAX - n, "%d\n",
				      hier_maker(srv->hs, q.tid, standin_ticks()));
	} else {
		for (int h = 0; h < VIEW_NCTL; h++) {
			char path[4096] = "";
			struct hier_group *g = hier_is_standin(h) ? hier_group_of(srv->hs, h, q.tid) : NULL;

			if (g && hier_path(g, path, sizeof(path)))
				path[0] = '\0';
			n += (size_t)snprintf(out + n, STANDIN_REPLY_MAX - n, "%ld %s\n",
					      hier_count(srv->hs, h), path);
		}
	}
	(void)send(qfd, out, n < STANDIN_REPLY_MAX ? n : STANDIN_REPLY_MAX - 1, MSG_NOSIGNAL);
	free(out);
	return 0;
}

/* Asks Q on QFD; the answer (after its sequence line) into IN (SIZE
 * bytes, terminated): its length, or a negative errno (-ETIMEDOUT after
 * a second). Answers to questions that timed out before are passed by. */
static ssize_t standin_roundtrip(int qfd, struct standin_q *q, char *in, size_t size)
{
	static unsigned seq;
	struct pollfd p = { .fd = qfd, .events = POLLIN };

	q->seq = ++seq;
	if (send(qfd, q, sizeof(*q), MSG_NOSIGNAL) != (ssize_t)sizeof(*q))
		return -errno;
	for (;;) {
		ssize_t n;
		char *end;

		if (poll(&p, 1, 1000) != 1)
			return -ETIMEDOUT;
		if ((n = recv(qfd, in, size - 1, 0)) <= 0)
			return n ? -errno : -EPIPE;
		in[n] = '\0';
		if (strtoul(in, &end, 10) != q->seq || *end != '\n')
			continue;   /* a late answer to an earlier question */
		end++;
		n -= end - in;
		memmove(in, end, (size_t)n + 1);
		return n;
	}
}

int standin_tell_maker(int qfd, pid_t tid)
{
	struct standin_q q = { .tid = tid, .maker = 1 };
	char in[64];
	ssize_t n = standin_roundtrip(qfd, &q, in, sizeof(in));

	return n < 0 ? (int)n : (int)strtol(in, NULL, 10);
}

int standin_ask(int qfd, pid_t tid, char groups[VIEW_NCTL][4096], long counts[VIEW_NCTL])
{
	struct standin_q q = { .tid = tid };
	char *in = malloc(STANDIN_REPLY_MAX + 1), *l;
	ssize_t n;
	int rc = 0;

	if (!in)
		return -ENOMEM;
	if ((n = standin_roundtrip(qfd, &q, in, STANDIN_REPLY_MAX + 1)) < 0) {
		rc = (int)n;
	} else {
		l = in;
		for (int h = 0; h < VIEW_NCTL; h++) {
			char *e = strchr(l, '\n'), *sp;

			if (!e || !(sp = strchr(l, ' ')) || sp > e) {
				rc = -EPROTO;
				break;
			}
			*e = '\0';
			counts[h] = strtol(l, NULL, 10);
			snprintf(groups[h], 4096, "%s", sp + 1);
			l = e + 1;
		}
	}
	free(in);
	return rc;
}

/* ---- the loop ---- */

static int standin_open_sessions(struct standin_srv *srv, const int fuse_fd[VIEW_NCTL])
{
	char *argv[] = { "memcgfs-run", NULL };
	int n = 0;

	for (int h = 0; h < VIEW_NCTL; h++) {
		struct fuse_args args = FUSE_ARGS_INIT(1, argv);
		char dev[32];

		if (fuse_fd[h] < 0)
			continue;
		srv->mnt[h] = (struct standin_mnt){ srv, h };
		srv->se[h] = fuse_session_new(&args, &standin_ops, sizeof(standin_ops), &srv->mnt[h]);
		fuse_opt_free_args(&args);
		snprintf(dev, sizeof(dev), "/dev/fd/%d", fuse_fd[h]);
		if (!srv->se[h] || fuse_session_mount(srv->se[h], dev)) {
			if (srv->se[h])
				fuse_session_destroy(srv->se[h]);
			srv->se[h] = NULL;
			close(fuse_fd[h]);
			continue;
		}
		n++;
	}
	return n;
}

static int standin_loop(struct standin_srv *srv, int qfd)
{
	struct fuse_buf buf = { 0 };
	struct pollfd p[VIEW_NCTL + 1];
	int live;

	do {
		int np = 0, who[VIEW_NCTL + 1];

		live = 0;
		/* the supervisor's first: a maker's word comes before the
		 * requests of what it makes */
		if (qfd >= 0) {
			p[np] = (struct pollfd){ .fd = qfd, .events = POLLIN };
			who[np++] = -1;
		}
		for (int h = 0; h < VIEW_NCTL; h++)
			if (srv->se[h]) {
				p[np] = (struct pollfd){ .fd = fuse_session_fd(srv->se[h]), .events = POLLIN };
				who[np++] = h;
				live++;
			}
		if (!live || poll(p, (nfds_t)np, -1) < 0) {
			if (live && errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < np; i++) {
			int h = who[i], rc;

			if (h < 0) {
				/* the supervisor gone: the mounts are served on */
				if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
				    standin_answer(srv, qfd))
					qfd = -1;
				continue;
			}
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			rc = fuse_session_receive_buf(srv->se[h], &buf);
			if (rc == -EINTR || rc == -EAGAIN || rc == -ENOENT)
				continue;
			if (rc <= 0 || fuse_session_exited(srv->se[h])) {
				/* unmounted: the namespace is gone */
				fuse_session_destroy(srv->se[h]);
				srv->se[h] = NULL;
				continue;
			}
			fuse_session_process_buf(srv->se[h], &buf);
		}
	} while (live);
	free(buf.mem);
	return 0;
}

int standin_serve(const int fuse_fd[VIEW_NCTL], int qfd, uid_t owner, gid_t group)
{
	struct standin_srv srv = { 0 };
	int rc;

	clock_gettime(CLOCK_REALTIME, &srv.born);
	if (!(srv.hs = standin_os_hier(&standin_os, owner, group)))
		return -ENOMEM;
	if (!standin_open_sessions(&srv, fuse_fd)) {
		hier_free(srv.hs);
		return -ENODEV;
	}
	rc = standin_loop(&srv, qfd);
	for (int h = 0; h < VIEW_NCTL; h++)
		if (srv.se[h])
			fuse_session_destroy(srv.se[h]);
	hier_free(srv.hs);
	return rc;
}
