/* notify.c: memcgfs-run's seccomp filter and the supervisor answering
 * it. Owns the reading of a caller's arguments (its memory, its cwd and
 * fds through /proc) and the answer: an injected fd of synthesized text
 * (SECCOMP_IOCTL_NOTIF_ADDFD with ADDFD_FLAG_SEND), a statfs written back
 * as cgroupfs's, or SECCOMP_USER_NOTIF_FLAG_CONTINUE for everything else.
 * The mount family goes to the guard (guard.c), whose answer it sends;
 * sendfile and splice to copy.c, which sends its own.
 * Never fails a call that it does not answer (the kernel then runs it),
 * never blocks on a supervised process, and never writes to memcgfs (it
 * tells it of CLONE_PARENT clones with a getxattr of the mount's root). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bridge/caller.h"
#include "bridge/copy.h"
#include "bridge/group.h"
#include "bridge/notify.h"
#include "bridge/standin.h"

/* An open that can be answered reads: no write access, no O_PATH, no
 * directory (nor O_TMPFILE, which includes it), no creation. The filter
 * lets every other open through without a round trip. */
#define NOTIFY_OPEN_SKIP ((unsigned long)(O_ACCMODE | O_PATH | O_DIRECTORY | O_CREAT))

/* The audit arch of the ABI this supervisor reads (seccomp_data.arch). */
#if defined(__x86_64__)
#define SCMP_ARCH_NATIVE_AUDIT AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SCMP_ARCH_NATIVE_AUDIT AUDIT_ARCH_AARCH64
#else
#error "memcgfs-run reads the native ABI of x86_64 or aarch64 only"
#endif

/* The mount family of the other ABIs of this machine, refused in the
 * filter (the supervisor reads native arguments only): a filter of those
 * ABIs alone, merged into CTX. */
static int notify_compat_rules(scmp_filter_ctx ctx)
{
	static const char *const calls[] = {
		"mount", "umount", "umount2", "fsopen", "fspick", "open_tree", "move_mount",
	};
	static const uint32_t arches[] = {
#if defined(__x86_64__)
		SCMP_ARCH_X86, SCMP_ARCH_X32,
#elif defined(__aarch64__)
		SCMP_ARCH_ARM,
#endif
		0,
	};
	scmp_filter_ctx c;
	int rc;

	if (!arches[0])
		return 0;
	if (!(c = seccomp_init(SCMP_ACT_ALLOW)))
		return -ENOMEM;
	if ((rc = seccomp_attr_set(c, SCMP_FLTATR_CTL_NNP, 0)) ||
	    (rc = seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW)) ||
	    (rc = seccomp_arch_remove(c, SCMP_ARCH_NATIVE)))
		goto out;
	for (size_t i = 0; arches[i]; i++)
		if ((rc = seccomp_arch_add(c, arches[i])))
			goto out;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(calls[i]);

		if (nr != __NR_SCMP_ERROR &&
		    (rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr, 0)))
			goto out;
	}
	/* the merge takes C over */
	if ((rc = seccomp_merge(ctx, c)) == 0)
		return 0;
out:
	seccomp_release(c);
	return rc;
}

/* The mount family, native ABI: every call that may create, bind, clone,
 * move, reconfigure or unmount a mount; a mount(2) that only changes
 * propagation, and an open_tree that clones nothing, pass in the kernel. */
static int notify_mount_rules(scmp_filter_ctx ctx)
{
	const scmp_datum_t prop = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;
	int rc;

	(void)seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(umount), 0);
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mount), 1,
				   SCMP_A3(SCMP_CMP_MASKED_EQ, prop, 0))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mount), 1,
				   SCMP_A3(SCMP_CMP_MASKED_EQ, MS_REMOUNT, MS_REMOUNT))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mount), 1,
				   SCMP_A3(SCMP_CMP_MASKED_EQ, MS_BIND, MS_BIND))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mount), 1,
				   SCMP_A3(SCMP_CMP_MASKED_EQ, MS_MOVE, MS_MOVE))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(umount2), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fsopen), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fspick), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(move_mount), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open_tree), 1,
				   SCMP_A2(SCMP_CMP_MASKED_EQ, OPEN_TREE_CLONE, OPEN_TREE_CLONE))))
		return rc;
	return 0;
}

int notify_install(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc, fd;

	if (!ctx)
		return -ENOMEM;
	/* no_new_privs would break setuid programs inside; without it the
	 * kernel asks for CAP_SYS_ADMIN, which root (or our user namespace)
	 * has. Other ABIs (i386, x32) are let through unwatched but for the
	 * mount family. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW)))
		goto out;
	/* open(2) does not exist on every architecture: not an error */
	(void)seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), 1,
			       SCMP_A1(SCMP_CMP_MASKED_EQ, NOTIFY_OPEN_SKIP, 0));
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), 1,
				   SCMP_A2(SCMP_CMP_MASKED_EQ, NOTIFY_OPEN_SKIP, 0))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat2), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(statfs), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fstatfs), 0)) ||
	    (rc = notify_mount_rules(ctx)) || (rc = notify_compat_rules(ctx)))
		goto out;
	/* sendfile(2) and splice(2): from one of the view's files, its text
	 * (copy.c) */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendfile), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(splice), 0)))
		goto out;
	/* clone(2) with CLONE_PARENT (runc's nsexec): the stand-ins place
	 * the new process where its maker is, as the kernel does */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
				   SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_PARENT, CLONE_PARENT))))
		goto out;
	if ((rc = seccomp_load(ctx)))
		goto out;
	fd = seccomp_notify_fd(ctx);
	rc = fd >= 0 ? fd : -EOPNOTSUPP;
out:
	seccomp_release(ctx);
	return rc;
}

int notify_init(struct notify *s, int lfd, const char *mnt, struct guard *guard, int qfd)
{
	memset(s, 0, sizeof(*s));
	s->lfd = lfd;
	s->qfd = qfd;
	{
		struct stat st;

		if (guard->mntns_fd >= 0 && !fstat(guard->mntns_fd, &st)) {
			s->mntns_ino = st.st_ino;
			s->mntns_dev = st.st_dev;
		}
	}
	s->mnt = mnt;
	s->ns = &guard->ns;
	s->guard = guard;
	if (seccomp_notify_alloc(&s->req, &s->resp))
		return -ENOMEM;
	return 0;
}

void notify_fini(struct notify *s)
{
	if (s->req)
		seccomp_notify_free(s->req, s->resp);
	s->req = NULL;
	s->resp = NULL;
}

/* ---- answers ---- */

/* The raw ioctls, not libseccomp's wrappers, which fold every errno
 * into -ECANCELED: ENOENT (the caller is gone) must stay apart from a
 * broken listener. */
static int notify_ioctl(struct notify *s, unsigned long op, void *arg)
{
	return ioctl(s->lfd, op, arg) < 0 ? -errno : 0;
}

/* The call's answer: VAL, or the negative errno ERR it fails with, or
 * (FLAGS) "continue". */
static int notify_respond(struct notify *s, __s64 val, int err, __u32 flags)
{
	s->resp->id = s->req->id;
	s->resp->val = val;
	s->resp->error = err;
	s->resp->flags = flags;
	return notify_ioctl(s, SECCOMP_IOCTL_NOTIF_SEND, s->resp);
}

static int notify_continue(struct notify *s)
{
	return notify_respond(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

static bool notify_still_valid(struct notify *s)
{
	__u64 id = s->req->id;

	return notify_ioctl(s, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* (the guard's form of it) */
static bool notify_valid_cb(void *s)
{
	return notify_still_valid(s);
}

/* The mount family: the guard's answer. */
static int notify_mount_family(struct notify *s)
{
	int rc;

	s->counts.mounts++;
	rc = guard_call(s->guard, (pid_t)s->req->pid, s->req->data.nr, s->req->data.args,
			notify_valid_cb, s);
	if (rc == GUARD_CONTINUE)
		return notify_continue(s);
	if (rc == -ENOENT && !notify_still_valid(s))
		return -ENOENT;
	return notify_respond(s, 0, rc, 0);
}

/* PID's cgroup namespace's roots as the view takes them: into *R (each
 * in *BUF, malloc'd, to be freed), or *R NULL where it shares the
 * wrapper's (or they are unknown). PID is the reader: the kernel shows
 * groups and cgroup mounts' roots relative to the reading task's cgroup
 * namespace (proc_cgroup_show, cgroup_show_path), whoever is read. */
static void notify_roots(struct notify *s, pid_t pid, char (**buf)[4096],
			 const char *r[VIEW_NCTL], const char *const **out)
{
	*buf = malloc(VIEW_NCTL * sizeof(**buf));
	*out = NULL;
	if (!*buf || guard_cgns_roots(s->guard, pid, *buf) <= 0)
		return;
	for (int c = 0; c < VIEW_NCTL; c++)
		r[c] = (*buf)[c];
	*out = r;
}

/* mountinfo, its hierarchies' roots seen from the reader's cgroup
 * namespace's */
static int notify_mountinfo(struct notify *s, const char *real, struct view_buf *out)
{
	char (*roots)[4096];
	const char *r[VIEW_NCTL], *const *rp;
	int rc;

	notify_roots(s, (pid_t)s->req->pid, &roots, r, &rp);
	rc = view_mountinfo(s->ns, real, rp, out);
	free(roots);
	return rc;
}

/* /proc/cgroups and /proc/PID/cgroup: memory's groups from memcgfs's
 * files, the stand-ins' from their server. */
static int notify_groups(struct notify *s, const struct view_req *req, pid_t pid,
			 struct view_buf *out)
{
	char (*groups)[4096] = calloc(VIEW_NCTL, 4096), path[64];
	const char *g[VIEW_NCTL] = { NULL };
	long counts[VIEW_NCTL] = { 0 };
	struct view_buf real = { 0 };
	int rc;

	if (!groups)
		return -ENOMEM;
	/* (a server that does not answer leaves its hierarchies at their
	 * roots, as memcgfs-run showed them before it had one) */
	if (s->qfd >= 0 && standin_ask(s->qfd, req->kind == VIEW_CGROUP ? pid : 0, groups, counts))
		memset(groups, 0, VIEW_NCTL * 4096);
	for (int c = 0; c < VIEW_NCTL; c++)
		g[c] = groups[c][0] ? groups[c] : NULL;
	if (req->kind == VIEW_CGROUPS) {
		counts[VIEW_MEMORY] = group_count(s->mnt);
		if (!(rc = caller_slurp("/proc/cgroups", &real)))
			rc = view_proc_cgroups(s->ns, real.p, counts, out);
	} else {
		char (*roots)[4096];
		const char *r[VIEW_NCTL], *const *rp;

		/* (PID's groups, relative to the reader's namespace) */
		notify_roots(s, (pid_t)s->req->pid, &roots, r, &rp);
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
		if (!(rc = caller_slurp(path, &real)) &&
		    !(rc = group_of(s->mnt, pid, groups[VIEW_MEMORY], 4096))) {
			g[VIEW_MEMORY] = groups[VIEW_MEMORY];
			rc = view_cgroup(s->ns, real.p, g, rp, out);
		}
		free(roots);
	}
	view_buf_free(&real);
	free(groups);
	return rc;
}

/* The text of one answered file for REQ (whose process is resolved). */
static int notify_text(struct notify *s, const struct view_req *req, pid_t pid, struct view_buf *out)
{
	static const char *const file[] = {
		[VIEW_MOUNTS] = "mounts", [VIEW_MOUNTINFO] = "mountinfo", [VIEW_CGROUP] = "cgroup",
	};
	struct view_buf real = { 0 }, info = { 0 };
	char path[64];
	int rc;

	if (req->kind == VIEW_CGROUPS || req->kind == VIEW_CGROUP)
		return notify_groups(s, req, pid, out);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file[req->kind]);
	switch (req->kind) {
	case VIEW_MOUNTINFO:
		if (!(rc = caller_slurp(path, &real)))
			rc = notify_mountinfo(s, real.p, out);
		break;
	case VIEW_MOUNTS:
		/* mounts has no mount ids: read it with mountinfo, line by line
		 * the same mounts, again if a mount came or went between */
		for (int tries = 0; tries < 8; tries++) {
			char ipath[64];

			snprintf(ipath, sizeof(ipath), "/proc/%d/mountinfo", (int)pid);
			real.len = info.len = out->len = 0;
			if ((rc = caller_slurp(path, &real)) || (rc = caller_slurp(ipath, &info)))
				break;
			if ((rc = view_mounts(s->ns, real.p, info.p, out)) != -EAGAIN)
				break;
		}
		break;
	default:
		rc = -EINVAL;
	}
	view_buf_free(&real);
	view_buf_free(&info);
	return rc;
}

/* A read-only fd holding TEXT (a sealed memfd reopened O_RDONLY). */
static int notify_memfd(const char *name, const struct view_buf *text)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), ro;
	char path[64];
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < text->len) {
		ssize_t n = write(fd, text->p + off, text->len - off);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		off += (size_t)n;
	}
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	close(fd);
	return ro < 0 ? -errno : ro;
}

/* Installs FD in the caller and makes it the call's result, atomically. */
static int notify_inject(struct notify *s, int fd, unsigned long flags)
{
	struct seccomp_notif_addfd add = {
		.id = s->req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (unsigned)fd,
		.newfd_flags = (unsigned)(flags & O_CLOEXEC),
	};

	if (ioctl(s->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0)
		return 0;
	if (errno == EINVAL && !s->no_addfd) {
		/* before 5.14: no ADDFD_FLAG_SEND; the real files are seen */
		fprintf(stderr, "memcgfs-run: this kernel cannot answer with an fd "
				"(SECCOMP_ADDFD_FLAG_SEND, 5.14); the real /proc files show\n");
		s->no_addfd = true;
	}
	return -errno;
}

static int notify_open(struct notify *s, int dirfd, unsigned long path_addr, unsigned long flags)
{
	pid_t tid = (pid_t)s->req->pid, pid;
	char path[PATH_MAX], base[PATH_MAX], abs[PATH_MAX], name[96];
	struct view_buf text = { 0 };
	struct view_req req;
	int fd, rc;

	if (s->no_addfd || (flags & NOTIFY_OPEN_SKIP) ||
	    caller_read_str(tid, path_addr, path, sizeof(path)) || !view_maybe(path))
		return notify_continue(s);
	if (path[0] != '/' && caller_base(tid, dirfd, base, sizeof(base)))
		return notify_continue(s);
	if (view_join(path[0] == '/' ? "/" : base, path, abs, sizeof(abs)))
		return notify_continue(s);
	req = view_classify(abs);
	if (req.kind == VIEW_MTAB) {
		/* answered only while it links to the mounts of the caller */
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/root/etc/mtab", (int)tid);
		if ((n = readlink(link, base, sizeof(base) - 1)) < 0)
			return notify_continue(s);
		base[n] = '\0';
		if (view_join("/etc", base, abs, sizeof(abs)))
			return notify_continue(s);
		req = view_classify(abs);
		if (req.kind != VIEW_MOUNTS)
			return notify_continue(s);
	}
	if (req.kind == VIEW_NONE)
		return notify_continue(s);
	/* the path came from memory a reused pid could own: still ours? */
	if (!notify_still_valid(s))
		return -ENOENT;
	switch (req.who) {
	case VIEW_WHO_SELF: pid = caller_tgid(tid); break;
	case VIEW_WHO_THREAD_SELF: pid = tid; break;
	default: pid = req.pid; break;
	}
	if (pid <= 0 || notify_text(s, &req, pid, &text)) {
		view_buf_free(&text);
		return notify_continue(s);  /* the kernel's own answer (ENOENT...) */
	}
	/* the name /proc/PID/fd shows: "/memfd:memcgfs-run:mountinfo" */
	snprintf(name, sizeof(name), "memcgfs-run:%s", strrchr(abs, '/') + 1);
	fd = notify_memfd(name, &text);
	view_buf_free(&text);
	if (fd < 0)
		return notify_continue(s);
	rc = notify_inject(s, fd, flags);
	close(fd);
	if (rc == 0) {
		s->counts.answered++;
		return 0;
	}
	return rc == -ENOENT ? rc : notify_continue(s);
}

/* Is the file SX one of the view's hierarchies: its mount by id in the
 * wrapper's namespace, its superblock in another (a container's, whose
 * mounts are copies with ids of their own)? */
static bool notify_ours(struct notify *s, pid_t tid, const struct statx *sx)
{
	char path[64];
	struct stat mine;

	if (view_ctl_of(s->ns, (int)sx->stx_mnt_id) >= 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)tid);
	if (stat(path, &mine) || (mine.st_ino == s->mntns_ino && mine.st_dev == s->mntns_dev))
		return false;
	return view_ctl_of_dev(s->ns, makedev(sx->stx_dev_major, sx->stx_dev_minor)) >= 0;
}

/* (copy.c's form of it) */
static bool notify_ours_cb(void *s, pid_t tid, const struct statx *sx)
{
	return notify_ours(s, tid, sx);
}

/* statfs(PATH) / fstatfs(FD): on one of our hierarchies, cgroupfs's
 * answer, written into the caller's buffer. The file is reached through
 * the caller's own root, cwd or fd under /proc/TID, so its mounts are
 * the ones looked at. */
static int notify_statfs(struct notify *s, int fd, unsigned long path_addr, unsigned long buf)
{
	pid_t tid = (pid_t)s->req->pid;
	char path[PATH_MAX], abs[PATH_MAX], via[PATH_MAX + 64];
	struct statfs st;
	struct statx sx;

	if (fd >= 0) {
		snprintf(via, sizeof(via), "/proc/%d/fd/%d", (int)tid, fd);
	} else {
		if (caller_read_str(tid, path_addr, path, sizeof(path)))
			return notify_continue(s);
		if (path[0] == '/') {
			if (view_join("/", path, abs, sizeof(abs)))
				return notify_continue(s);
			/* the caller's /proc/self is not ours */
			if (!strncmp(abs, "/proc/self/", 11) || !strcmp(abs, "/proc/self"))
				snprintf(via, sizeof(via), "/proc/%d%s", (int)tid, abs + 10);
			else if (!strncmp(abs, "/proc/thread-self", 17))
				snprintf(via, sizeof(via), "/proc/%d%s", (int)tid, abs + 17);
			else
				snprintf(via, sizeof(via), "/proc/%d/root%s", (int)tid, abs);
		} else {
			snprintf(via, sizeof(via), "/proc/%d/cwd/%s", (int)tid, path);
		}
	}
	/* (asking for nothing: the mount id and the device come all the same,
	 * and a user's stand-in hierarchy, mounted in the wrapper's user
	 * namespace, refuses the supervisor anything more: EACCES) */
	if (statx(AT_FDCWD, via, AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, 0, &sx) ||
	    !(sx.stx_mask & STATX_MNT_ID) || !notify_ours(s, tid, &sx) || statfs(via, &st))
		return notify_continue(s);
	if (!notify_still_valid(s))
		return -ENOENT;
	/* what cgroupfs's superblock says: no blocks, no inode counts */
	st.f_type = VIEW_CGROUP_MAGIC;
	st.f_bsize = st.f_frsize = 4096;
	st.f_blocks = st.f_bfree = st.f_bavail = st.f_files = st.f_ffree = 0;
	st.f_namelen = 255;
	if (caller_write_mem(tid, buf, &st, sizeof(st)))
		return notify_continue(s);  /* a bad buffer: the kernel's EFAULT */
	s->counts.statfs++;
	return notify_respond(s, 0, 0, 0);
}

/* A clone(2) with CLONE_PARENT about to run: memcgfs is told before it
 * runs who makes the child (the root's user.memcgfs.clone_parent.TID,
 * TID in this process's PID namespace, docs/files.md), so that the
 * child starts in its maker's group, not its real parent's, without the
 * daemon's eBPF fork events. A mount that does not answer it (or is
 * gone) changes nothing: the clone runs either way. */
#define NOTIFY_CLONE_PARENT_XATTR "user.memcgfs.clone_parent."
static void notify_tell_clone_parent(struct notify *s)
{
	char name[64], value[1];

	snprintf(name, sizeof(name), NOTIFY_CLONE_PARENT_XATTR "%u", (unsigned)s->req->pid);
	(void)getxattr(s->mnt, name, value, sizeof(value));
}

int notify_serve_one(struct notify *s)
{
	const __u64 *a;
	struct open_how how;
	int nr, rc;

	memset(s->req, 0, sizeof(*s->req));
	if ((rc = notify_ioctl(s, SECCOMP_IOCTL_NOTIF_RECV, s->req)))
		return rc == -EINTR ? -ENOENT : rc;
	s->counts.seen++;
	a = s->req->data.args;
	nr = s->req->data.nr;
	if (s->req->data.arch != SCMP_ARCH_NATIVE_AUDIT)
		rc = notify_continue(s);  /* not ours to read (the filter holds none) */
	else if (nr == __NR_mount || nr == __NR_umount2 || nr == __NR_fsopen || nr == __NR_fspick ||
		 nr == __NR_open_tree || nr == __NR_move_mount)
		rc = notify_mount_family(s);
	else if (nr == __NR_openat)
		rc = notify_open(s, (int)a[0], a[1], a[2]);
#ifdef __NR_open
	else if (nr == __NR_open)
		rc = notify_open(s, AT_FDCWD, a[0], a[1]);
#endif
	else if (nr == __NR_openat2 && a[3] >= sizeof(how.flags) &&
		 !caller_read_mem((pid_t)s->req->pid, a[2], &how.flags, sizeof(how.flags)))
		rc = notify_open(s, (int)a[0], a[1], (unsigned long)how.flags);
	else if (nr == __NR_clone) {
		notify_tell_clone_parent(s);
		if (s->qfd >= 0)
			(void)standin_tell_maker(s->qfd, (pid_t)s->req->pid);
		rc = notify_continue(s);
	} else if (nr == __NR_sendfile || nr == __NR_splice) {
		rc = copy_call(s->lfd, s->req, notify_ours_cb, s);
		if (rc == COPY_CONTINUE)
			rc = notify_continue(s);
		else if (rc == 0)
			s->counts.copied++;
	} else if (nr == __NR_statfs)
		rc = notify_statfs(s, -1, a[0], a[1]);
	else if (nr == __NR_fstatfs && (int)a[0] >= 0)
		rc = notify_statfs(s, (int)a[0], 0, a[1]);
	else
		rc = notify_continue(s);
	/* ENOENT: the caller was killed or its call interrupted meanwhile */
	return rc;
}
