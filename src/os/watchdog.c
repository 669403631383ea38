/* watchdog.c: the daemon's side and the process of the stop watchdog
 * (watchdog.h). Messages are one record each on a SOCK_SEQPACKET pair:
 * 'S' + key with the pidfd attached (SCM_RIGHTS), or 'C' + key. At EOF the
 * watchdog sends SIGCONT through every pidfd still held and exits. Never
 * signals anything but SIGCONT, and only through the pidfds it was given. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/proc.h"
#include "os/watchdog.h"

#define WATCHDOG_FD 3                 /* where the watchdog finds its socket */

struct watchdog {
	int fd;
	pid_t pid;
	pthread_mutex_t lock;         /* one record at a time */
};

struct watchdog_msg {
	char op;                      /* 'S' or 'C' */
	uint64_t key;
};

struct watchdog *watchdog_start(const char *self)
{
	struct watchdog *w = calloc(1, sizeof(*w));
	int sv[2];

	if (!w)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		free(w);
		return NULL;
	}
	w->pid = fork();
	if (w->pid == 0) {
		char *argv[] = { "memcgfs", "--watchdog", NULL };

		if (dup2(sv[1], WATCHDOG_FD) < 0)
			_exit(1);
		/* nothing of the daemon's: the FUSE device above all, or the
		 * mount would outlive the daemon */
		syscall(SYS_close_range, WATCHDOG_FD + 1, ~0u, 0);
		execv(self, argv);
		_exit(watchdog_main(WATCHDOG_FD));
	}
	close(sv[1]);
	if (w->pid < 0) {
		close(sv[0]);
		free(w);
		return NULL;
	}
	w->fd = sv[0];
	pthread_mutex_init(&w->lock, NULL);
	proc_exempt_helper(w->pid);
	return w;
}

void watchdog_stop(struct watchdog *w)
{
	if (!w)
		return;
	proc_exempt_helper(0);
	close(w->fd);                     /* EOF: it continues what is left */
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static int watchdog_send(struct watchdog *w, char op, uint64_t key, int pidfd)
{
	struct watchdog_msg m = { .op = op, .key = key };
	struct iovec iov = { &m, sizeof(m) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (pidfd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pidfd, sizeof(int));
	}
	pthread_mutex_lock(&w->lock);
	n = sendmsg(w->fd, &mh, MSG_NOSIGNAL);
	pthread_mutex_unlock(&w->lock);
	return n == (ssize_t)sizeof(m) ? 0 : -EPIPE;
}

int watchdog_stopped(struct watchdog *w, int pidfd, uint64_t key)
{
	return w ? watchdog_send(w, 'S', key, pidfd) : -ENOSYS;
}

void watchdog_continued(struct watchdog *w, uint64_t key)
{
	if (w)
		watchdog_send(w, 'C', key, -1);
}

struct watchdog_entry {
	uint64_t key;
	int pidfd;
};

int watchdog_main(int fd)
{
	struct watchdog_entry *v = NULL;
	size_t n = 0, cap = 0;

	/* only the daemon's end going away ends it */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		struct watchdog_msg m;
		struct iovec iov = { &m, sizeof(m) };
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *c;
		int pidfd = -1;
		ssize_t r = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(&pidfd, CMSG_DATA(c), sizeof(int));
		if (r != (ssize_t)sizeof(m)) {
			if (pidfd >= 0)
				close(pidfd);
			continue;
		}
		if (m.op == 'S' && pidfd >= 0) {
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 16;
				struct watchdog_entry *nv = realloc(v, nc * sizeof(*nv));

				if (!nv) {
					/* cannot keep it: continue it now rather
					 * than risk leaving it stopped */
					syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
					close(pidfd);
					continue;
				}
				v = nv;
				cap = nc;
			}
			v[n++] = (struct watchdog_entry){ m.key, pidfd };
		} else if (m.op == 'C') {
			for (size_t i = 0; i < n; i++)
				if (v[i].key == m.key) {
					close(v[i].pidfd);
					v[i] = v[--n];
					break;
				}
			if (pidfd >= 0)
				close(pidfd);
		} else if (pidfd >= 0) {
			close(pidfd);
		}
	}
	for (size_t i = 0; i < n; i++) {
		syscall(SYS_pidfd_send_signal, v[i].pidfd, SIGCONT, NULL, 0);
		close(v[i].pidfd);
	}
	free(v);
	close(fd);
	return 0;
}
