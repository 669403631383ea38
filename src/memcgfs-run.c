/* memcgfs-run.c: run a command where memcgfs looks like the kernel's
 * cgroup v1 memory controller.
 *   memcgfs-run [--mount MNT] [--group /PATH [--group-as-root]] [--] COMMAND [ARG...]
 * Owns the options, the child that builds the namespace and joins the
 * group, the hand-over of the seccomp listener, and the supervisor's
 * loop until the last supervised process is gone. Never changes the
 * caller's mounts and never touches a group but --group's tasks; inside,
 * the mount guard keeps every cgroup filesystem of the host out of reach
 * of the mount calls. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bridge/copy.h"
#include "bridge/notify.h"
#include "bridge/ns.h"
#include "bridge/standin.h"
#include "bridge/view.h"

#define RUN_FAIL 125  /* memcgfs-run itself failed (as env(1) and nohup do) */

/* What the child tells the parent: its namespace, or why it failed. */
struct run_msg {
	int err;
	char what[160];
	struct view_ns ns;
	bool fuse[VIEW_NCTL];   /* a stand-in's descriptor follows the listener */
};

#define RUN_MAX_FDS (1 + VIEW_NCTL)

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: memcgfs-run [--mount MNT] [--group /PATH [--group-as-root]] [--] COMMAND [ARG...]\n"
		"Runs COMMAND in a private mount namespace where /sys/fs/cgroup/memory is the\n"
		"memcgfs mount MNT and looks like the kernel's cgroup v1 memory controller.\n"
		"  -m, --mount MNT    the memcgfs mount (default: the only one mounted)\n"
		"  -g, --group PATH   start COMMAND in this memcgfs group\n"
		"  -r, --group-as-root\n"
		"                     show that group as the hierarchy's root, as a cgroup\n"
		"                     namespace made there would (/proc/self/cgroup: memory:/)\n"
		"  -h, --help         this help\n"
		"  -V, --version      the version\n"
		"Exit status: COMMAND's, 128+N if a signal N ended it, %d if memcgfs-run\n"
		"failed, 126/127 if COMMAND could not be run.\n", RUN_FAIL);
}

/* Unescapes a mountinfo field (\040 and the like) in place. */
static void run_unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* Finds memcgfs mounts of the whole hierarchy (root "/") in our
 * mountinfo: with WANT, whether it is one; without, the only one. */
static int run_find_mount(const char *want, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], root[4096], mp[4096], type[256];
	int found = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*d %*d %*s %4095s %4095s", root, mp) != 2 ||
		    sscanf(sep + 3, "%255s", type) != 1 || strcmp(type, "fuse.memcgfs") ||
		    strcmp(root, "/"))
			continue;
		run_unescape(mp);
		if (want && strcmp(want, mp))
			continue;
		if (found++ == 0)
			snprintf(out, size, "%s", mp);
		else
			fprintf(stderr, "memcgfs-run: memcgfs is mounted on %s too\n", mp);
	}
	fclose(f);
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

/* A small file into B (left empty if unreadable). */
static void run_slurp(const char *path, struct view_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char chunk[4096];
	ssize_t n;

	while (fd >= 0 && (n = read(fd, chunk, sizeof(chunk))) > 0)
		if (view_buf_add(b, chunk, (size_t)n))
			break;
	if (fd >= 0)
		close(fd);
}

static int run_join(const char *mnt, const char *group)
{
	char path[PATH_MAX * 2], pid[32];
	int fd, n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid()), rc = 0;

	if (snprintf(path, sizeof(path), "%s%s/tasks", mnt, group) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, pid, (size_t)n) != n)
		rc = -errno;
	close(fd);
	return rc;
}

static int run_send(int sock, const struct run_msg *m, const int *fds, int nfds)
{
	char ctl[CMSG_SPACE(sizeof(int) * RUN_MAX_FDS)] = { 0 };
	struct iovec iov = { (void *)m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds > 0) {
		struct cmsghdr *c;

		mh.msg_control = ctl;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -EPIPE;
}

/* The child's message and its descriptors (FDS[0], the listener, -1 if
 * none came; then the stand-ins' in M's order): 0 or -EPIPE. */
static int run_recv(int sock, struct run_msg *m, int fds[RUN_MAX_FDS])
{
	char ctl[CMSG_SPACE(sizeof(int) * RUN_MAX_FDS)];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

	for (int i = 0; i < RUN_MAX_FDS; i++)
		fds[i] = -1;
	if (n != (ssize_t)sizeof(*m))
		return -EPIPE;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			memcpy(fds, CMSG_DATA(c), sizeof(int) * (k < RUN_MAX_FDS ? k : RUN_MAX_FDS));
		}
	return 0;
}

/* Closes every descriptor past 2 but KEEP, FUSE_FD[] and NULL_FD. */
static void run_keep_only(int keep, const int fuse_fd[VIEW_NCTL], int null_fd)
{
	bool k[1024] = { false };

	if (keep < 1024 && keep >= 0)
		k[keep] = true;
	if (null_fd >= 0 && null_fd < 1024)
		k[null_fd] = true;
	for (int c = 0; c < VIEW_NCTL; c++)
		if (fuse_fd[c] >= 0 && fuse_fd[c] < 1024)
			k[fuse_fd[c]] = true;
	for (int fd = 3; fd < 1024; fd++) {
		int end = fd;

		if (k[fd])
			continue;
		while (end + 1 < 1024 && !k[end + 1])
			end++;
		close_range((unsigned)fd, end == 1023 ? ~0U : (unsigned)end, 0);
		fd = end;
	}
}

/* The stand-ins' server: a process of its own, outside the namespaces,
 * serving the FUSE descriptors the child sent (FDS[1..] in M's order);
 * the query socket into *QFD. 0, or a negative errno. */
static int run_standins(const struct run_msg *m, const int fds[RUN_MAX_FDS], int *qfd)
{
	int fuse_fd[VIEW_NCTL], k = 1, sp[2];
	pid_t pid;

	for (int c = 0; c < VIEW_NCTL; c++)
		fuse_fd[c] = m->fuse[c] && k < RUN_MAX_FDS ? fds[k++] : -1;
	if (k == 1)
		return 0;   /* read-only stand-ins (no /dev/fuse): nothing to serve */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
		return -errno;
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* only its own descriptors: a copy of the child's socket or of
		 * the listener would outlive their users */
		run_keep_only(sp[1], fuse_fd, null);
		/* not the terminal's: it ends when the namespace's mounts go */
		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		_exit(standin_serve(fuse_fd, sp[1], geteuid(), getegid()) ? 1 : 0);
	}
	close(sp[1]);
	for (int i = 1; i < RUN_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	*qfd = sp[0];
	return 0;
}

/* --group-as-root: GROUP (given) becomes the view's memory root. 0, or
 * RUN_FAIL with the complaint printed. */
static int run_as_root(const char *group, struct view_ns *ns)
{
	bool plain = group[0] == '/';

	/* (every component a name: the view compares paths as written) */
	for (const char *c = group; plain && *c; c = strchrnul(c + 1, '/')) {
		size_t n = strcspn(c + 1, "/");

		plain = strcmp(group, "/") == 0 ||
			(n > 0 && !(n == 1 && c[1] == '.') && !(n == 2 && c[1] == '.' && c[2] == '.'));
	}
	if (!plain || strlen(group) >= sizeof(ns->root)) {
		fprintf(stderr, "memcgfs-run: --group-as-root needs --group (of at most %zu bytes, "
			"no empty, . or .. component)\n", sizeof(ns->root) - 1);
		return RUN_FAIL;
	}
	if (strcmp(group, "/"))
		snprintf(ns->root, sizeof(ns->root), "%s", group);
	return 0;
}

/* The child: namespace, group, filter, then COMMAND. */
static void run_child(int sock, const char *mnt, const char *group, struct view_ns ns,
		      char **argv)
{
	struct run_msg m = { 0 };
	const char *what = "";
	char go;
	int lfd = -1, fuse_fd[VIEW_NCTL], fds[RUN_MAX_FDS], nfds = 0;

	if ((m.err = ns_setup(mnt, &ns, fuse_fd, &what))) {
		snprintf(m.what, sizeof(m.what), "%s", what);
	} else if (group && (m.err = run_join(mnt, group))) {
		snprintf(m.what, sizeof(m.what), "joining %.140s", group);
	} else if ((lfd = notify_install()) < 0) {
		m.err = lfd;
		snprintf(m.what, sizeof(m.what), "loading the seccomp filter");
	}
	m.ns = ns;
	if (!m.err) {
		fds[nfds++] = lfd;
		for (int c = 0; c < VIEW_NCTL; c++)
			if ((m.fuse[c] = fuse_fd[c] >= 0))
				fds[nfds++] = fuse_fd[c];
	}
	/* nothing below opens a file before exec: the supervisor takes over
	 * only once it has the listener */
	if (run_send(sock, &m, fds, nfds) || m.err)
		_exit(RUN_FAIL);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (read(sock, &go, 1) != 1)
		_exit(RUN_FAIL);
	close(sock);
	execvp(argv[0], argv);
	fprintf(stderr, "memcgfs-run: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Serves until the listener hangs up (no supervised process is left). */
static void run_serve_rest(struct notify *s)
{
	struct pollfd p = { .fd = s->lfd, .events = POLLIN };

	while (poll(&p, 1, -1) >= 0 || errno == EINTR) {
		if (p.revents & POLLIN) {
			int rc = notify_serve_one(s);

			if (rc && rc != -ENOENT)
				break;
		} else if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) {
			break;
		}
	}
}

/* The parent: serves the tree; returns COMMAND's exit status once it has
 * ended. If processes it started outlive it, a detached copy of the
 * supervisor serves them until the last is gone. */
static int run_parent(pid_t child, struct notify *s)
{
	int pidfd = pidfd_open(child, 0), sfd, status = 0, rc;
	sigset_t set;
	struct pollfd p[3];
	bool ended = false;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (pidfd < 0 || sfd < 0) {
		perror("memcgfs-run: pidfd_open/signalfd");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return RUN_FAIL;
	}
	p[0] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	p[2] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	while (!ended) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((p[0].revents & POLLIN) && (rc = notify_serve_one(s)) && rc != -ENOENT) {
			fprintf(stderr, "memcgfs-run: the seccomp listener failed: %s\n", strerror(-rc));
			break;
		}
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;

			/* SIGINT and SIGQUIT come from the terminal to the whole
			 * foreground group, COMMAND included: not sent twice */
			if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
			    (si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP))
				pidfd_send_signal(pidfd, (int)si.ssi_signo, NULL, 0);
		}
		if (p[1].revents & POLLIN) {
			if (waitpid(child, &status, 0) == child)
				ended = true;
		}
	}
	close(pidfd);
	close(sfd);
	if (ended) {
		struct pollfd l = { .fd = s->lfd, .events = POLLIN };

		/* the reaped child no longer counts; others may */
		if (poll(&l, 1, 0) != 1 || !(l.revents & POLLHUP)) {
			pid_t d;

			copy_drain();    /* (no waiter's call left to the copy) */
			d = fork();

			if (d == 0) {
				int null = open("/dev/null", O_RDWR | O_CLOEXEC);

				/* no COMMAND to pass signals to, and its signalfd is
				 * closed: SIGTERM and SIGHUP end the copy again */
				sigprocmask(SIG_UNBLOCK, &set, NULL);
				setsid();
				if (null >= 0) {
					dup2(null, 0);
					dup2(null, 1);
					dup2(null, 2);
				}
				run_serve_rest(s);
				notify_fini(s);
				_exit(0);
			}
		}
	}
	if (!ended)
		return RUN_FAIL;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* The hierarchy ids: past the kernel's, fixed for the whole run. */
static void run_pick_hier(struct view_ns *ns)
{
	struct view_buf cg = { 0 }, self = { 0 };

	run_slurp("/proc/cgroups", &cg);
	run_slurp("/proc/self/cgroup", &self);
	view_pick_hier(ns, cg.p ? cg.p : "", self.p ? self.p : "");
	view_buf_free(&cg);
	view_buf_free(&self);
}

/* The memcgfs mount to use (WANT, or the only one) into MNT, and, with a
 * group, that the group exists there. 0, or RUN_FAIL with the complaint
 * printed. */
static int run_target(const char *want, const char *group, char *mnt, size_t size)
{
	char real[PATH_MAX];
	int rc;

	if (want && !realpath(want, real)) {
		fprintf(stderr, "memcgfs-run: %s: %s\n", want, strerror(errno));
		return RUN_FAIL;
	}
	if ((rc = run_find_mount(want ? real : NULL, mnt, size))) {
		if (want)
			fprintf(stderr, "memcgfs-run: %s is not a memcgfs mount\n", want);
		else if (rc == -ENOENT)
			fprintf(stderr, "memcgfs-run: no memcgfs mount (mount one, or say --mount)\n");
		else
			fprintf(stderr, "memcgfs-run: several memcgfs mounts: say which with --mount\n");
		return RUN_FAIL;
	}
	if (group[0]) {
		char tasks[PATH_MAX * 2];
		struct stat st;

		if (snprintf(tasks, sizeof(tasks), "%s%s/tasks", mnt, group) >= (int)sizeof(tasks) ||
		    strstr(group, "/../") || stat(tasks, &st)) {
			fprintf(stderr, "memcgfs-run: no group %s in %s\n", group, mnt);
			return RUN_FAIL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mount", required_argument, NULL, 'm' },
		{ "group", required_argument, NULL, 'g' },
		{ "group-as-root", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	char mnt[PATH_MAX], group[PATH_MAX] = "";
	const char *want = NULL;
	struct view_ns ns = { 0 };
	struct run_msg m;
	struct guard g;
	struct notify s;
	int c, sv[2], lfd, rc, fds[RUN_MAX_FDS], qfd = -1;
	bool as_root = false;
	pid_t child;

	while ((c = getopt_long(argc, argv, "+m:g:rhV", opts, NULL)) != -1) {
		switch (c) {
		case 'm': want = optarg; break;
		case 'g':
			snprintf(group, sizeof(group), "%s%s", optarg[0] == '/' ? "" : "/", optarg);
			while (strlen(group) > 1 && group[strlen(group) - 1] == '/')
				group[strlen(group) - 1] = '\0';
			break;
		case 'r': as_root = true; break;
		case 'h': run_usage(stdout); return 0;
		case 'V': printf("memcgfs-run %s\n", MEMCGFS_VERSION); return 0;
		default: run_usage(stderr); return RUN_FAIL;
		}
	}
	if (optind >= argc) {
		run_usage(stderr);
		return RUN_FAIL;
	}
	if ((as_root && (rc = run_as_root(group, &ns))) ||
	    (rc = run_target(want, group, mnt, sizeof(mnt))))
		return rc;
	run_pick_hier(&ns);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("memcgfs-run: socketpair");
		return RUN_FAIL;
	}
	fflush(NULL);
	if ((child = fork()) < 0) {
		perror("memcgfs-run: fork");
		return RUN_FAIL;
	}
	if (child == 0) {
		close(sv[0]);
		run_child(sv[1], mnt, group[0] ? group : NULL, ns, argv + optind);
	}
	close(sv[1]);
	/* the supervisor writes to the command's outputs (a sendfile's
	 * text, copy.c): a reader gone is EPIPE for it, not its end (set
	 * after the fork: the command keeps its own disposition) */
	signal(SIGPIPE, SIG_IGN);
	if (run_recv(sv[0], &m, fds) || m.err || (lfd = fds[0]) < 0) {
		if (m.err)
			fprintf(stderr, "memcgfs-run: %s: %s\n", m.what, strerror(-m.err));
		else
			fprintf(stderr, "memcgfs-run: the child failed before its command\n");
		close(sv[0]);
		waitpid(child, NULL, 0);
		return RUN_FAIL;
	}
	/* the child waits in its namespace: what the mount guard acts with */
	if ((rc = run_standins(&m, fds, &qfd)) ||
	    (rc = guard_open(&g, child, mnt, &m.ns, geteuid() != 0))) {
		fprintf(stderr, "memcgfs-run: %s: %s\n",
			qfd < 0 && m.fuse[VIEW_CPUSET] ? "the stand-ins' server" : "the mount guard",
			strerror(-rc));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return RUN_FAIL;
	}
	g.qfd = qfd;
	if (notify_init(&s, lfd, mnt, &g, qfd) || write(sv[0], "g", 1) != 1) {
		fprintf(stderr, "memcgfs-run: cannot start the supervisor\n");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return RUN_FAIL;
	}
	close(sv[0]);
	rc = run_parent(child, &s);
	/* for the benchmarks: how many round trips COMMAND's run made */
	if (getenv("MEMCGFS_RUN_COUNTS"))
		fprintf(stderr, "memcgfs-run: %lu notifications, %lu answered, %lu statfs, "
			"%lu copied, %lu mount calls (%lu bound, %lu refused)\n", s.counts.seen,
			s.counts.answered, s.counts.statfs, s.counts.copied, s.counts.mounts, g.bound,
			g.refused);
	notify_fini(&s);
	guard_close(&g);
	close(lfd);
	return rc;
}
