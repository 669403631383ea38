/* copy.c: sendfile(2) and splice(2) whose source is a file of the view,
 * answered with the file's text (copy.h). Owns the duplicates of the
 * caller's two descriptors for the call's length and the waiter threads
 * (COPY_WAITERS at most) that finish a copy whose output cannot take it
 * at once. Never writes to the source, never blocks the supervisor's
 * thread on an output, and never takes more of the source than the
 * output took: what was read and not written is given back (the file's
 * offset moved back), as the kernel's splice never consumes more than it
 * passes on. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <termios.h>
#include <unistd.h>

#include "bridge/caller.h"
#include "bridge/copy.h"

#define COPY_MAX     (64 * 1024)   /* text per call at most: a short count
				    * is what sendfile and splice may return */
#define COPY_WAITERS 8
#define COPY_POLL_MS 200           /* a waiter's look at whether its caller
				    * is still there */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL        /* (6.9's, in linux/pidfd.h) */
#endif

/* One call's copy, from its read to its answer. */
struct copy_job {
	int lfd;
	__u64 id;
	pid_t tid;
	int in, out;                  /* duplicates of the caller's */
	char *buf;
	size_t len;                   /* what was read */
	bool at;                      /* read at the caller's offset ... */
	loff_t off;
	unsigned long off_addr;       /* ... kept there, not the file's */
	bool nowait;                  /* the output takes RWF_NOWAIT */
};

static atomic_uint copy_waiters;

static int copy_send(int lfd, __u64 id, __s64 val, int err)
{
	struct seccomp_notif_resp r = { .id = id, .val = val, .error = err };

	return ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 ? -errno : 0;
}

static bool copy_valid(int lfd, __u64 id)
{
	return ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void copy_job_free(struct copy_job *j)
{
	if (j->in >= 0)
		close(j->in);
	if (j->out >= 0)
		close(j->out);
	free(j->buf);
	free(j);
}

/* N bytes read and not passed on go back to the source. */
static void copy_unread(struct copy_job *j, size_t n)
{
	if (n > 0 && !j->at)
		(void)lseek(j->in, -(off_t)n, SEEK_CUR);
}

/* The call's answer once W bytes (or -1 with ERR) went out. */
static int copy_finish(struct copy_job *j, ssize_t w, int err)
{
	if (w < 0) {
		copy_unread(j, j->len);
		/* (the kernel's EPIPE comes with SIGPIPE to the caller) */
		if (err == EPIPE) {
			pid_t tgid = caller_tgid(j->tid);

			if (tgid > 0)
				(void)syscall(SYS_tgkill, tgid, j->tid, SIGPIPE);
		}
		return copy_send(j->lfd, j->id, 0, -err);
	}
	copy_unread(j, j->len - (size_t)w);
	if (j->at) {
		j->off += w;
		if (caller_write_mem(j->tid, j->off_addr, &j->off, sizeof(j->off)))
			return copy_send(j->lfd, j->id, 0, -EFAULT);
	}
	return copy_send(j->lfd, j->id, w, 0);
}

static ssize_t copy_write_nowait(int fd, const void *buf, size_t n)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = n };

	return pwritev2(fd, &v, 1, -1, RWF_NOWAIT);
}

/* A waiter: the output takes the text when it can (a full pipe, a
 * terminal); the caller's going first gives it all back. */
static void *copy_wait(void *arg)
{
	struct copy_job *j = arg;
	ssize_t w = -1;

	for (;;) {
		struct pollfd p = { .fd = j->out, .events = POLLOUT };

		if (!copy_valid(j->lfd, j->id)) {
			copy_unread(j, j->len);
			goto out;
		}
		if (!j->nowait) {
			w = write(j->out, j->buf, j->len);   /* (may block: here only) */
			break;
		}
		if (poll(&p, 1, COPY_POLL_MS) <= 0)
			continue;
		w = copy_write_nowait(j->out, j->buf, j->len);
		if (w >= 0 || errno != EAGAIN)
			break;
	}
	(void)copy_finish(j, w, w < 0 ? errno : 0);
out:
	copy_job_free(j);
	atomic_fetch_sub(&copy_waiters, 1);
	return NULL;
}

/* The output could not take the text now: a waiter finishes the call, or,
 * with none free, the text goes back and the call fails with EINVAL (the
 * caller reads instead, as from a file the kernel cannot splice from). */
static int copy_defer(struct copy_job *j)
{
	pthread_attr_t at;
	pthread_t t;
	int rc;

	if (atomic_fetch_add(&copy_waiters, 1) < COPY_WAITERS && !pthread_attr_init(&at)) {
		(void)pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &at, copy_wait, j);
		pthread_attr_destroy(&at);
		if (rc == 0)
			return 0;
	}
	atomic_fetch_sub(&copy_waiters, 1);
	copy_unread(j, j->len);
	rc = copy_send(j->lfd, j->id, 0, -EINVAL);
	copy_job_free(j);
	return rc;
}

/* The caller's descriptors IN and OUT, duplicated into J: 0, or -1 when
 * they cannot be had (the kernel then answers). */
static int copy_dup(struct copy_job *j, int in, int out)
{
	int pfd = pidfd_open(j->tid, PIDFD_THREAD);

	if (pfd < 0 && errno == EINVAL) {
		pid_t tgid = caller_tgid(j->tid);

		pfd = tgid > 0 ? pidfd_open(tgid, 0) : -1;
	}
	if (pfd < 0)
		return -1;
	j->in = pidfd_getfd(pfd, in, 0);
	j->out = j->in >= 0 ? pidfd_getfd(pfd, out, 0) : -1;
	close(pfd);
	return j->out >= 0 ? 0 : -1;
}

/* An output the supervisor may write in the caller's place: one whose
 * writes look at nobody's credentials, so that writing with the
 * supervisor's changes nothing. A pipe; /dev/null; a terminal; a regular
 * file of a disk or memory filesystem without set-id bits (a write by the
 * caller would clear them, CAP_FSETID keeps them). Never a file of /proc,
 * sysfs or any other kernel filesystem (a sysctl checks capable() as it is
 * written), of FUSE (its server is told the writer's uid: memcgfs's tasks
 * files before 5.16 check it), a socket (SCM_CREDENTIALS would name the
 * supervisor) or a block device. */
static bool copy_output_safe(int out, bool splice)
{
	static const unsigned long disk[] = {
		0xEF53,       /* ext2/3/4 */   0x58465342, /* xfs */
		0x9123683E,   /* btrfs */      0x01021994, /* tmpfs */
		0x794c7630,   /* overlayfs */  0xF2F52010, /* f2fs */
	};
	struct termios t;
	struct statfs sf;
	struct stat st;

	if (fstat(out, &st))
		return false;
	if (S_ISFIFO(st.st_mode))
		return true;
	if (splice)
		return false;             /* (the kernel's EINVAL) */
	if (S_ISCHR(st.st_mode))
		return st.st_rdev == makedev(1, 3) || tcgetattr(out, &t) == 0;
	if (!S_ISREG(st.st_mode) || (st.st_mode & (S_ISUID | S_ISGID)) || fstatfs(out, &sf))
		return false;
	for (size_t i = 0; i < sizeof(disk) / sizeof(disk[0]); i++)
		if ((unsigned long)sf.f_type == disk[i])
			return true;
	return false;
}

/* May this call be answered here: the source ours and readable, the
 * output writable (not O_APPEND for sendfile) and safe to write for the
 * caller? 0 if so; COPY_CONTINUE for the kernel to answer (not ours, or
 * its own errors); -EINVAL for a source of ours and an output this may
 * not write: the kernel's answer for a source it cannot splice from, on
 * which callers (busybox) read instead, where the kernel's splice would
 * pass nothing. */
static int copy_answerable(struct copy_job *j, bool splice, copy_ours_fn ours, void *arg)
{
	int inf = fcntl(j->in, F_GETFL), outf = fcntl(j->out, F_GETFL);
	struct statx sx;

	if (inf < 0 || outf < 0 || (inf & O_ACCMODE) == O_WRONLY || (outf & O_ACCMODE) == O_RDONLY)
		return COPY_CONTINUE;
	if (statx(j->in, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) || !(sx.stx_mask & STATX_MNT_ID) ||
	    !S_ISREG(sx.stx_mode) || !ours(arg, j->tid, &sx))
		return COPY_CONTINUE;
	if (!splice && (outf & O_APPEND))
		return COPY_CONTINUE;     /* (the kernel's EINVAL) */
	return copy_output_safe(j->out, splice) ? 0 : -EINVAL;
}

int copy_call(int lfd, const struct seccomp_notif *req, copy_ours_fn ours, void *arg)
{
	const __u64 *a = req->data.args;
	bool splice = req->data.nr == __NR_splice;
	int in = (int)(splice ? a[0] : a[1]), out = (int)(splice ? a[2] : a[0]);
	unsigned long off_addr = splice ? a[1] : a[2];
	size_t count = splice ? a[4] : a[3];
	bool nonblock = splice && (a[5] & SPLICE_F_NONBLOCK);
	struct copy_job *j;
	ssize_t r, w;
	int outf, rc;

	/* (bad descriptors, nothing asked, an output offset on a pipe: the
	 * kernel's answers) */
	if (in < 0 || out < 0 || count == 0 || (splice && a[3]))
		return COPY_CONTINUE;
	if (!(j = calloc(1, sizeof(*j))))
		return COPY_CONTINUE;
	*j = (struct copy_job){ .lfd = lfd, .id = req->id, .tid = (pid_t)req->pid, .in = -1,
				.out = -1, .at = off_addr != 0, .off_addr = off_addr };
	if (copy_dup(j, in, out) || (rc = copy_answerable(j, splice, ours, arg)) == COPY_CONTINUE ||
	    (rc == 0 && !(j->buf = malloc(count < COPY_MAX ? count : COPY_MAX)))) {
		copy_job_free(j);
		return COPY_CONTINUE;
	}
	if (rc < 0) {
		copy_job_free(j);
		return copy_send(lfd, req->id, 0, rc);
	}
	if (j->at && caller_read_mem(j->tid, off_addr, &j->off, sizeof(j->off))) {
		copy_job_free(j);
		return copy_send(lfd, req->id, 0, -EFAULT);
	}
	r = j->at ? (j->off < 0 ? (errno = EINVAL, -1) :
				  pread(j->in, j->buf, count < COPY_MAX ? count : COPY_MAX, j->off)) :
		    read(j->in, j->buf, count < COPY_MAX ? count : COPY_MAX);
	if (r <= 0) {
		rc = copy_send(lfd, req->id, 0, r < 0 ? -errno : 0);
		copy_job_free(j);
		return rc;
	}
	j->len = (size_t)r;
	outf = fcntl(j->out, F_GETFL);
	nonblock = nonblock || (outf >= 0 && (outf & O_NONBLOCK));
	w = copy_write_nowait(j->out, j->buf, j->len);
	if (w < 0 && errno == EOPNOTSUPP) {
		/* (an output without RWF_NOWAIT, a terminal: written as it
		 * is, here only if that cannot block) */
		j->nowait = false;
		if (!nonblock)
			return copy_defer(j);
		w = write(j->out, j->buf, j->len);
	} else if (w < 0 && errno == EAGAIN && !nonblock) {
		j->nowait = true;
		return copy_defer(j);   /* (a blocking output, full for now) */
	}
	rc = copy_finish(j, w, w < 0 ? errno : 0);
	copy_job_free(j);
	return rc;
}
