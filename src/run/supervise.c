/* supervise.c: memcgfs-run's seccomp filter and the supervisor answering
 * it. Owns the reading of a caller's arguments (its memory, its cwd and
 * fds through /proc) and the answer: an injected fd of synthesized text
 * (SECCOMP_IOCTL_NOTIF_ADDFD with ADDFD_FLAG_SEND), a statfs written back
 * as cgroupfs's, or SECCOMP_USER_NOTIF_FLAG_CONTINUE for everything else.
 * Never fails a call that it does not answer (the kernel then runs it),
 * never blocks on a supervised process, and never writes to memcgfs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "run/group.h"
#include "run/supervise.h"

/* An open that can be answered reads: no write access, no O_PATH, no
 * directory (nor O_TMPFILE, which includes it), no creation. The filter
 * lets every other open through without a round trip. */
#define SUP_OPEN_SKIP ((unsigned long)(O_ACCMODE | O_PATH | O_DIRECTORY | O_CREAT))

int sup_install(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc, fd;

	if (!ctx)
		return -ENOMEM;
	/* no_new_privs would break setuid programs inside; without it the
	 * kernel asks for CAP_SYS_ADMIN, which root (or our user namespace)
	 * has. Other ABIs (i386, x32) are let through unwatched. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW)))
		goto out;
	/* open(2) does not exist on every architecture: not an error */
	(void)seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), 1,
			       SCMP_A1(SCMP_CMP_MASKED_EQ, SUP_OPEN_SKIP, 0));
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), 1,
				   SCMP_A2(SCMP_CMP_MASKED_EQ, SUP_OPEN_SKIP, 0))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat2), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(statfs), 0)) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fstatfs), 0)))
		goto out;
	if ((rc = seccomp_load(ctx)))
		goto out;
	fd = seccomp_notify_fd(ctx);
	rc = fd >= 0 ? fd : -EOPNOTSUPP;
out:
	seccomp_release(ctx);
	return rc;
}

int sup_init(struct sup *s, int lfd, const char *mnt, const struct view_ns *ns)
{
	memset(s, 0, sizeof(*s));
	s->lfd = lfd;
	s->mnt = mnt;
	s->ns = *ns;
	if (seccomp_notify_alloc(&s->req, &s->resp))
		return -ENOMEM;
	return 0;
}

void sup_fini(struct sup *s)
{
	if (s->req)
		seccomp_notify_free(s->req, s->resp);
	s->req = NULL;
	s->resp = NULL;
}

/* ---- the caller's memory and /proc ---- */

/* A NUL-terminated string at ADDR in task TID's memory, read a page at a
 * time (the string may end just before an unmapped page). */
static int sup_read_str(pid_t tid, unsigned long addr, char *out, size_t size)
{
	size_t got = 0;

	while (got < size) {
		size_t page = 4096 - ((addr + got) & 4095), n = page < size - got ? page : size - got;
		struct iovec local = { out + got, n };
		struct iovec remote = { (void *)(addr + got), n };
		ssize_t r = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		char *nul;

		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		if ((nul = memchr(out + got, '\0', (size_t)r)))
			return 0;
		got += (size_t)r;
	}
	return -ENAMETOOLONG;
}

static int sup_read_mem(pid_t tid, unsigned long addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static int sup_write_mem(pid_t tid, unsigned long addr, const void *in, size_t n)
{
	struct iovec local = { (void *)in, n }, remote = { (void *)addr, n };

	return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* A whole /proc file (or any small file) into B. */
static int sup_slurp(const char *path, struct view_buf *b)
{
	char chunk[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if ((rc = view_buf_add(b, "", 0)) == 0)
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			if ((rc = view_buf_add(b, chunk, (size_t)n)))
				break;
	if (!rc && n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static pid_t sup_tgid(pid_t tid)
{
	char path[64];
	struct view_buf b = { 0 };
	const char *t;
	pid_t tgid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!sup_slurp(path, &b) && (t = strstr(b.p, "\nTgid:")))
		tgid = (pid_t)strtol(t + 6, NULL, 10);
	view_buf_free(&b);
	return tgid;
}

/* The directory a relative path of TID starts from: its cwd, or DIRFD. */
static int sup_base(pid_t tid, int dirfd, char *out, size_t size)
{
	char link[64];
	ssize_t n;

	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
	if ((n = readlink(link, out, size - 1)) < 0)
		return -errno;
	out[n] = '\0';
	return out[0] == '/' ? 0 : -ENOTDIR;
}

/* ---- answers ---- */

/* The raw ioctls, not libseccomp's wrappers, which fold every errno
 * into -ECANCELED: ENOENT (the caller is gone) must stay apart from a
 * broken listener. */
static int sup_ioctl(struct sup *s, unsigned long op, void *arg)
{
	return ioctl(s->lfd, op, arg) < 0 ? -errno : 0;
}

static int sup_respond(struct sup *s, __s64 val, __u32 flags)
{
	s->resp->id = s->req->id;
	s->resp->val = val;
	s->resp->error = 0;
	s->resp->flags = flags;
	return sup_ioctl(s, SECCOMP_IOCTL_NOTIF_SEND, s->resp);
}

static int sup_continue(struct sup *s)
{
	return sup_respond(s, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

static bool sup_still_valid(struct sup *s)
{
	__u64 id = s->req->id;

	return sup_ioctl(s, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* The text of one answered file for REQ (whose process is resolved). */
static int sup_text(struct sup *s, const struct view_req *req, pid_t pid, struct view_buf *out)
{
	static const char *const file[] = {
		[VIEW_MOUNTS] = "mounts", [VIEW_MOUNTINFO] = "mountinfo", [VIEW_CGROUP] = "cgroup",
	};
	struct view_buf real = { 0 }, info = { 0 };
	char path[64], group[4096];
	int rc;

	if (req->kind == VIEW_CGROUPS) {
		long n = group_count(s->mnt);

		if (!(rc = sup_slurp("/proc/cgroups", &real)))
			rc = view_proc_cgroups(&s->ns, real.p, n > 0 ? n : 1, out);
		view_buf_free(&real);
		return rc;
	}
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file[req->kind]);
	switch (req->kind) {
	case VIEW_MOUNTINFO:
		if (!(rc = sup_slurp(path, &real)))
			rc = view_mountinfo(&s->ns, real.p, out);
		break;
	case VIEW_MOUNTS:
		/* mounts has no mount ids: read it with mountinfo, line by line
		 * the same mounts, again if a mount came or went between */
		for (int tries = 0; tries < 8; tries++) {
			char ipath[64];

			snprintf(ipath, sizeof(ipath), "/proc/%d/mountinfo", (int)pid);
			real.len = info.len = out->len = 0;
			if ((rc = sup_slurp(path, &real)) || (rc = sup_slurp(ipath, &info)))
				break;
			if ((rc = view_mounts(&s->ns, real.p, info.p, out)) != -EAGAIN)
				break;
		}
		break;
	case VIEW_CGROUP:
		if (!(rc = sup_slurp(path, &real)) && !(rc = group_of(s->mnt, pid, group, sizeof(group))))
			rc = view_cgroup(&s->ns, real.p, group, out);
		break;
	default:
		rc = -EINVAL;
	}
	view_buf_free(&real);
	view_buf_free(&info);
	return rc;
}

/* A read-only fd holding TEXT (a sealed memfd reopened O_RDONLY). */
static int sup_memfd(const char *name, const struct view_buf *text)
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
static int sup_inject(struct sup *s, int fd, unsigned long flags)
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

static int sup_open(struct sup *s, int dirfd, unsigned long path_addr, unsigned long flags)
{
	pid_t tid = (pid_t)s->req->pid, pid;
	char path[PATH_MAX], base[PATH_MAX], abs[PATH_MAX], name[96];
	struct view_buf text = { 0 };
	struct view_req req;
	int fd, rc;

	if (s->no_addfd || (flags & SUP_OPEN_SKIP) ||
	    sup_read_str(tid, path_addr, path, sizeof(path)) || !view_maybe(path))
		return sup_continue(s);
	if (path[0] != '/' && sup_base(tid, dirfd, base, sizeof(base)))
		return sup_continue(s);
	if (view_join(path[0] == '/' ? "/" : base, path, abs, sizeof(abs)))
		return sup_continue(s);
	req = view_classify(abs);
	if (req.kind == VIEW_MTAB) {
		/* answered only while it links to the mounts of the caller */
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/root/etc/mtab", (int)tid);
		if ((n = readlink(link, base, sizeof(base) - 1)) < 0)
			return sup_continue(s);
		base[n] = '\0';
		if (view_join("/etc", base, abs, sizeof(abs)))
			return sup_continue(s);
		req = view_classify(abs);
		if (req.kind != VIEW_MOUNTS)
			return sup_continue(s);
	}
	if (req.kind == VIEW_NONE)
		return sup_continue(s);
	/* the path came from memory a reused pid could own: still ours? */
	if (!sup_still_valid(s))
		return -ENOENT;
	switch (req.who) {
	case VIEW_WHO_SELF: pid = sup_tgid(tid); break;
	case VIEW_WHO_THREAD_SELF: pid = tid; break;
	default: pid = req.pid; break;
	}
	if (pid <= 0 || sup_text(s, &req, pid, &text)) {
		view_buf_free(&text);
		return sup_continue(s);  /* the kernel's own answer (ENOENT...) */
	}
	/* the name /proc/PID/fd shows: "/memfd:memcgfs-run:mountinfo" */
	snprintf(name, sizeof(name), "memcgfs-run:%s", strrchr(abs, '/') + 1);
	fd = sup_memfd(name, &text);
	view_buf_free(&text);
	if (fd < 0)
		return sup_continue(s);
	rc = sup_inject(s, fd, flags);
	close(fd);
	if (rc == 0) {
		s->counts.answered++;
		return 0;
	}
	return rc == -ENOENT ? rc : sup_continue(s);
}

/* statfs(PATH) / fstatfs(FD): on one of our hierarchies, cgroupfs's
 * answer, written into the caller's buffer. The file is reached through
 * the caller's own root, cwd or fd under /proc/TID, so its mounts are
 * the ones looked at. */
static int sup_statfs(struct sup *s, int fd, unsigned long path_addr, unsigned long buf)
{
	pid_t tid = (pid_t)s->req->pid;
	char path[PATH_MAX], abs[PATH_MAX], via[PATH_MAX + 64];
	struct statfs st;
	struct statx sx;

	if (fd >= 0) {
		snprintf(via, sizeof(via), "/proc/%d/fd/%d", (int)tid, fd);
	} else {
		if (sup_read_str(tid, path_addr, path, sizeof(path)))
			return sup_continue(s);
		if (path[0] == '/') {
			if (view_join("/", path, abs, sizeof(abs)))
				return sup_continue(s);
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
	if (statx(AT_FDCWD, via, AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) ||
	    !(sx.stx_mask & STATX_MNT_ID) || view_ctl_of(&s->ns, (int)sx.stx_mnt_id) < 0 ||
	    statfs(via, &st))
		return sup_continue(s);
	if (!sup_still_valid(s))
		return -ENOENT;
	/* what cgroupfs's superblock says: no blocks, no inode counts */
	st.f_type = VIEW_CGROUP_MAGIC;
	st.f_bsize = st.f_frsize = 4096;
	st.f_blocks = st.f_bfree = st.f_bavail = st.f_files = st.f_ffree = 0;
	st.f_namelen = 255;
	if (sup_write_mem(tid, buf, &st, sizeof(st)))
		return sup_continue(s);  /* a bad buffer: the kernel's EFAULT */
	s->counts.statfs++;
	return sup_respond(s, 0, 0);
}

int sup_serve_one(struct sup *s)
{
	const __u64 *a;
	struct open_how how;
	int nr, rc;

	memset(s->req, 0, sizeof(*s->req));
	if ((rc = sup_ioctl(s, SECCOMP_IOCTL_NOTIF_RECV, s->req)))
		return rc == -EINTR ? -ENOENT : rc;
	s->counts.seen++;
	a = s->req->data.args;
	nr = s->req->data.nr;
	if (nr == __NR_openat)
		rc = sup_open(s, (int)a[0], a[1], a[2]);
#ifdef __NR_open
	else if (nr == __NR_open)
		rc = sup_open(s, AT_FDCWD, a[0], a[1]);
#endif
	else if (nr == __NR_openat2 && a[3] >= sizeof(how.flags) &&
		 !sup_read_mem((pid_t)s->req->pid, a[2], &how.flags, sizeof(how.flags)))
		rc = sup_open(s, (int)a[0], a[1], (unsigned long)how.flags);
	else if (nr == __NR_statfs)
		rc = sup_statfs(s, -1, a[0], a[1]);
	else if (nr == __NR_fstatfs && (int)a[0] >= 0)
		rc = sup_statfs(s, (int)a[0], 0, a[1]);
	else
		rc = sup_continue(s);
	/* ENOENT: the caller was killed or its call interrupted meanwhile */
	return rc;
}
