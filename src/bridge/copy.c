/* copy.c: sendfile(2) and splice(2) whose source is a file of the view,
 * answered with the file's text (copy.h). Owns the duplicates of the
 * caller's two descriptors and a pidfd of the caller for the call's
 * length, and the waiter threads (COPY_WAITERS at most) that finish a copy
 * whose pipe is full. Never writes to the source, never blocks the
 * supervisor's thread on an output, writes only to a pipe (or /dev/null),
 * and never takes more of the source than the output took: what was read
 * and not written is given back (the file's offset moved back), as the
 * kernel's splice never consumes more than it passes on. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bridge/caller.h"
#include "bridge/copy.h"

#define COPY_MAX     (64 * 1024)   /* text per call at most: a short count
				    * is what sendfile and splice may return */
#define COPY_WAITERS 8
#define COPY_POLL_MS 100           /* a waiter's look at whether its caller
				    * is still there, or the supervisor
				    * stopping */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL        /* (6.9's, in linux/pidfd.h) */
#endif

/* One call's copy, from its read to its answer. */
struct copy_job {
	int lfd;
	__u64 id;
	pid_t tid;
	int pidfd;                    /* the caller's thread (or process) */
	int in, out;                  /* duplicates of the caller's */
	char *buf;
	size_t len;                   /* what was read */
	bool at;                      /* read at the caller's offset ... */
	loff_t off;
	unsigned long off_addr;       /* ... kept there, not the file's */
	bool nonblock;                /* the output is O_NONBLOCK */
};

static atomic_uint copy_waiters;
static atomic_bool copy_stopping;

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
	int fds[] = { j->pidfd, j->in, j->out };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
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
	int rc;

	if (w < 0) {
		copy_unread(j, j->len);
		rc = copy_send(j->lfd, j->id, 0, -err);
		/* (the kernel's EPIPE comes with SIGPIPE to the caller: after
		 * the answer, which the signal would otherwise interrupt, and
		 * through the pidfd, never to a reused id) */
		if (err == EPIPE && rc == 0)
			(void)pidfd_send_signal(j->pidfd, SIGPIPE, NULL, 0);
		return rc;
	}
	copy_unread(j, j->len - (size_t)w);
	if (j->at) {
		j->off += w;
		/* (the caller still waits in its call: its memory is its own) */
		if (!copy_valid(j->lfd, j->id))
			return -ENOENT;
		if (caller_write_mem(j->tid, j->off_addr, &j->off, sizeof(j->off)))
			return copy_send(j->lfd, j->id, 0, -EFAULT);
	}
	return copy_send(j->lfd, j->id, w, 0);
}

/* A write that does not wait for room. RWF_NOWAIT first; a pipe takes it
 * only from Linux 6.6 (EOPNOTSUPP before), and then the write goes through
 * a description of our own on the same pipe, non-blocking: the caller's
 * O_NONBLOCK, shared with our duplicate, is not ours to change. A pipe
 * without a reader refuses that open (ENXIO): EPIPE, as the write would;
 * any other refusal leaves EOPNOTSUPP, for copy_out's answer to a write
 * that cannot be made without waiting. */
static ssize_t copy_write_nowait(int fd, const void *buf, size_t n)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = n };
	ssize_t w = pwritev2(fd, &v, 1, -1, RWF_NOWAIT);
	char path[64];
	int nb, err;

	if (w >= 0 || errno != EOPNOTSUPP)
		return w;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((nb = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		errno = errno == ENXIO ? EPIPE : EOPNOTSUPP;
		return -1;
	}
	w = write(nb, buf, n);
	err = errno;
	close(nb);
	errno = err;
	return w;
}

/* A waiter: the pipe takes the text when its reader has made room. The
 * caller's going first, or the supervisor's stopping (copy_drain), gives
 * it all back; the latter answers EINVAL (the caller reads instead). */
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
		if (atomic_load(&copy_stopping)) {
			w = -1;
			errno = EINVAL;
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

/* The pipe is full and blocking: a waiter finishes the call, or, with
 * none free, the text goes back and the call fails with EINVAL (the
 * caller reads instead, as from a file the kernel cannot splice from). */
static int copy_defer(struct copy_job *j)
{
	pthread_attr_t at;
	pthread_t t;
	int rc;

	if (atomic_fetch_add(&copy_waiters, 1) < COPY_WAITERS && !atomic_load(&copy_stopping) &&
	    !pthread_attr_init(&at)) {
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

void copy_drain(void)
{
	atomic_store(&copy_stopping, true);
	while (atomic_load(&copy_waiters) > 0)
		(void)poll(NULL, 0, 10);
	atomic_store(&copy_stopping, false);
}

/* A pidfd of the caller and its descriptors IN and OUT, duplicated into
 * J: 0, or -1 when they cannot be had (the kernel then answers). The
 * notification is still pending once the pidfd is open: it names the
 * caller, not a process that took its id since. */
static int copy_dup(struct copy_job *j, int in, int out)
{
	j->pidfd = pidfd_open(j->tid, PIDFD_THREAD);
	if (j->pidfd < 0 && errno == EINVAL) {
		pid_t tgid = caller_tgid(j->tid);

		j->pidfd = tgid > 0 ? pidfd_open(tgid, 0) : -1;
	}
	if (j->pidfd < 0 || !copy_valid(j->lfd, j->id))
		return -1;
	j->in = pidfd_getfd(j->pidfd, in, 0);
	j->out = j->in >= 0 ? pidfd_getfd(j->pidfd, out, 0) : -1;
	return j->out >= 0 ? 0 : -1;
}

/* Does TID see the pids the supervisor sees? A tasks file's text is the
 * reader's: memcgfs gives each reader its own pid namespace's numbers. */
static bool copy_same_pidns(pid_t tid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)tid);
	return !stat(path, &a) && !stat("/proc/self/ns/pid", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* May this call be answered here? 0 if so; COPY_CONTINUE for the kernel
 * to answer (not our file, or its own errors: a source not open for
 * reading, an output not open for writing, O_APPEND); -EINVAL for our file
 * and a call this does not answer: the kernel's answer for a source it
 * cannot splice from, on which callers (busybox) read instead, where the
 * kernel's splice would pass nothing. Answered: an output that is a pipe
 * or /dev/null, whose writes look at nobody's credentials (a sysctl,
 * FUSE, a socket's SCM_CREDENTIALS, a file's limits, quotas and set-id
 * bits would take the supervisor's), from a caller that sees the pids the
 * supervisor sees. The attributes come without a round trip to any
 * filesystem's server (AT_STATX_DONT_SYNC). A stand-in hierarchy that a
 * user's wrapper mounted in its user namespace refuses the attributes
 * (EACCES) to the supervisor, which is outside that namespace, and still
 * serves it reads: the source is then known by what statx asked for
 * nothing still gives, its mount and device, and its type is the read's
 * to tell (copy_call: a directory's EISDIR is the kernel's EINVAL). */
static int copy_answerable(struct copy_job *j, bool splice, copy_ours_fn ours, void *arg)
{
	int inf = fcntl(j->in, F_GETFL), outf = fcntl(j->out, F_GETFL);
	const int how = AT_EMPTY_PATH | AT_STATX_DONT_SYNC;
	struct statx sx, so;

	if (inf < 0 || outf < 0 || (inf & O_ACCMODE) == O_WRONLY || (outf & O_ACCMODE) == O_RDONLY)
		return COPY_CONTINUE;
	if (statx(j->in, "", how, STATX_TYPE | STATX_MNT_ID, &sx) &&
	    (errno != EACCES || statx(j->in, "", how, 0, &sx)))
		return COPY_CONTINUE;
	if (!(sx.stx_mask & STATX_MNT_ID) || ((sx.stx_mask & STATX_TYPE) && !S_ISREG(sx.stx_mode)) ||
	    !ours(arg, j->tid, &sx))
		return COPY_CONTINUE;
	if (!splice && (outf & O_APPEND))
		return COPY_CONTINUE;
	j->nonblock = (outf & O_NONBLOCK) != 0;
	if (statx(j->out, "", how, STATX_TYPE, &so) || !copy_same_pidns(j->tid))
		return -EINVAL;
	if (S_ISFIFO(so.stx_mode))
		return 0;
	return !splice && S_ISCHR(so.stx_mode) && so.stx_rdev_major == 1 && so.stx_rdev_minor == 3 ?
		       0 : -EINVAL;
}

/* The text read into J goes to its output: at once, or by a waiter. */
static int copy_out(struct copy_job *j, bool nonblock)
{
	ssize_t w = copy_write_nowait(j->out, j->buf, j->len);
	int rc;

	if (w < 0 && errno == EAGAIN && !nonblock && !j->nonblock)
		return copy_defer(j);     /* (a blocking pipe, full for now) */
	if (w < 0 && errno == EOPNOTSUPP) {
		/* (no write here that does not wait: not waited for in this
		 * thread; the caller reads instead) */
		copy_unread(j, j->len);
		rc = copy_send(j->lfd, j->id, 0, -EINVAL);
	} else {
		rc = copy_finish(j, w, w < 0 ? errno : 0);
	}
	copy_job_free(j);
	return rc;
}

int copy_call(int lfd, const struct seccomp_notif *req, copy_ours_fn ours, void *arg)
{
	const __u64 *a = req->data.args;
	bool splice = req->data.nr == __NR_splice;
	int in = (int)(splice ? a[0] : a[1]), out = (int)(splice ? a[2] : a[0]);
	unsigned long off_addr = splice ? a[1] : a[2];
	size_t count = splice ? a[4] : a[3];
	size_t want = count < COPY_MAX ? count : COPY_MAX;
	struct copy_job *j;
	ssize_t r;
	int rc;

	/* (bad descriptors, nothing asked, an output offset on a pipe: the
	 * kernel's answers) */
	if (in < 0 || out < 0 || count == 0 || (splice && a[3]))
		return COPY_CONTINUE;
	if (!(j = calloc(1, sizeof(*j))))
		return COPY_CONTINUE;
	*j = (struct copy_job){ .lfd = lfd, .id = req->id, .tid = (pid_t)req->pid, .pidfd = -1,
				.in = -1, .out = -1, .at = off_addr != 0, .off_addr = off_addr };
	rc = copy_dup(j, in, out) ? COPY_CONTINUE : copy_answerable(j, splice, ours, arg);
	if (rc == 0 && !(j->buf = malloc(want)))
		rc = COPY_CONTINUE;
	if (rc == 0 && j->at && caller_read_mem(j->tid, off_addr, &j->off, sizeof(j->off)))
		rc = -EFAULT;
	if (rc) {
		copy_job_free(j);
		return rc == COPY_CONTINUE ? rc : copy_send(lfd, req->id, 0, rc);
	}
	r = !j->at ? read(j->in, j->buf, want) :
	    j->off < 0 ? (errno = EINVAL, -1) : pread(j->in, j->buf, want, j->off);
	if (r < 0 && errno == EISDIR)
		errno = EINVAL;       /* (the kernel's: a directory has no splice_read) */
	if (r <= 0) {
		rc = copy_send(lfd, req->id, 0, r < 0 ? -errno : 0);
		copy_job_free(j);
		return rc;
	}
	j->len = (size_t)r;
	return copy_out(j, splice && (a[5] & SPLICE_F_NONBLOCK));
}
