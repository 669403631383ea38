/* pidwatch.c: one thread, one epoll set: member pidfds (EPOLLONESHOT, so an
 * exit is handled once), the process connector for forks (and the exits
 * of threads that have no pidfd), and an eventfd to
 * stop. Reports exits and forks to its hooks (the file layer's tasks.c
 * decides what they mean). Never polls /proc in a loop; never holds a lock
 * while waiting. Lock order: cn_lock, then whatever the hooks take
 * (docs/design.md). */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "os/pidwatch.h"

#define PIDWATCH_STOP UINT64_MAX
#define PIDWATCH_CN   (UINT64_MAX - 1)

struct pidwatch {
	const struct pidwatch_hooks *h;
	void *arg;
	int epfd;
	int stopfd;
	int cnfd;                 /* process connector socket, -1 if unavailable */
	pthread_mutex_t cn_lock;  /* one reader of the connector at a time */
	pthread_t thread;
};

static uint64_t pidwatch_key(int fd, pid_t tid)
{
	return ((uint64_t)(uint32_t)tid << 32) | (uint32_t)fd;
}

void pidwatch_add(struct pidwatch *w, int fd, pid_t tid)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = pidwatch_key(fd, tid) };

	epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void pidwatch_forget(struct pidwatch *w, int fd)
{
	if (fd < 0)
		return;           /* (a thread the connector saw go: no pidfd) */
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);   /* ENOENT for unwatched: fine */
	close(fd);
}

static void pidwatch_exited(struct pidwatch *w, uint64_t key)
{
	int fd = (int)(uint32_t)key;
	pid_t tid = (pid_t)(key >> 32);

	w->h->exited(w->arg, w, tid, fd);
}

static int pidwatch_cn_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0 };
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_len = sizeof(msg);
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = (__u32)getpid();
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof(enum proc_cn_mcast_op);
	msg.op = PROC_CN_MCAST_LISTEN;
	if (send(fd, &msg, sizeof(msg), 0) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/* For a new thread the connector names the process's parent, not the
 * creating thread, so the thread-group leader stands in for the creator. */
static void pidwatch_fork(struct pidwatch *w, pid_t parent, pid_t parent_tgid, pid_t child,
			  pid_t child_tgid)
{
	if (child != child_tgid)
		parent = parent_tgid = child_tgid;
	w->h->forked(w->arg, parent, parent_tgid, child, child_tgid);
}

static void pidwatch_cn_read(struct pidwatch *w)
{
	char buf[8192] __attribute__((aligned(8)));
	ssize_t len;

	pthread_mutex_lock(&w->cn_lock);
	while ((len = recv(w->cnfd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)len);
		     nh = NLMSG_NEXT(nh, len)) {
			struct cn_msg cn;
			struct proc_event ev;
			const char *data = NLMSG_DATA(nh);

			if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(cn)))
				continue;
			/* The event sits unaligned after the connector header. */
			memcpy(&cn, data, sizeof(cn));
			if (cn.len < sizeof(ev) ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(cn) + sizeof(ev)))
				continue;
			memcpy(&ev, data + sizeof(cn), sizeof(ev));
			if (ev.what == PROC_EVENT_FORK)
				pidwatch_fork(w, ev.event_data.fork.parent_pid,
					      ev.event_data.fork.parent_tgid,
					      ev.event_data.fork.child_pid,
					      ev.event_data.fork.child_tgid);
			/* A thread that is not its process's leader has no
			 * pidfd of its own before Linux 6.9 (PIDFD_THREAD):
			 * the connector tells its exit, to the entry that
			 * holds no pidfd (-1); one with a pidfd hears of it
			 * there. In order with the forks, so a thread id
			 * reused after this exit is attached after it. */
			else if (ev.what == PROC_EVENT_EXIT &&
				 ev.event_data.exit.process_pid != ev.event_data.exit.process_tgid)
				w->h->exited(w->arg, w, ev.event_data.exit.process_pid, -1);
		}
	}
	pthread_mutex_unlock(&w->cn_lock);
}

void pidwatch_sync(struct pidwatch *w)
{
	/* A fork's event is queued before fork() returns, so whoever reads
	 * or changes membership after a fork sees the child in place. */
	if (w && w->cnfd >= 0)
		pidwatch_cn_read(w);
}

static void *pidwatch_main(void *arg)
{
	struct pidwatch *w = arg;
	struct epoll_event evs[64];

	for (;;) {
		int n = epoll_wait(w->epfd, evs, 64, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == PIDWATCH_STOP)
				return NULL;
			if (evs[i].data.u64 == PIDWATCH_CN)
				pidwatch_cn_read(w);
			else
				pidwatch_exited(w, evs[i].data.u64);
		}
	}
	return NULL;
}

struct pidwatch *pidwatch_new(const struct pidwatch_hooks *h, void *arg)
{
	struct pidwatch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!w)
		return NULL;
	w->h = h;
	w->arg = arg;
	pthread_mutex_init(&w->cn_lock, NULL);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->stopfd = eventfd(0, EFD_CLOEXEC);
	w->cnfd = h->forked ? pidwatch_cn_open() : -1;
	if (w->epfd < 0 || w->stopfd < 0)
		goto fail;
	ev.data.u64 = PIDWATCH_STOP;
	epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->stopfd, &ev);
	if (w->cnfd >= 0) {
		ev.data.u64 = PIDWATCH_CN;
		epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->cnfd, &ev);
	}
	if (pthread_create(&w->thread, NULL, pidwatch_main, w))
		goto fail;
	return w;
fail:
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->stopfd >= 0)
		close(w->stopfd);
	if (w->cnfd >= 0)
		close(w->cnfd);
	free(w);
	return NULL;
}

void pidwatch_free(struct pidwatch *w)
{
	if (!w)
		return;
	eventfd_write(w->stopfd, 1);
	pthread_join(w->thread, NULL);
	close(w->epfd);
	close(w->stopfd);
	if (w->cnfd >= 0)
		close(w->cnfd);
	pthread_mutex_destroy(&w->cn_lock);
	free(w);
}
