/* supervisor.c: the supervisor of a mount. It opens /dev/fuse and mounts
 * (libfuse), keeps that master fd for the life of the mount, reads from it
 * only the kernel's one FUSE_INIT, and runs workers (memcgfs --worker),
 * each on a clone of the device (FUSE_DEV_IOC_CLONE), restarting one that
 * dies with back-off. Also the unmount agent, which lazily unmounts when
 * the supervisor dies, and a worker's one call that attaches its session.
 * Single-threaded; never serves a request and does no accounting. */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/dentries.h"
#include "daemon/supervisor.h"
#include "util/log.h"

#define SUP_AGENT_FD    3             /* where the unmount agent finds its socket */
#define SUP_BACKOFF_MS  100           /* the second restart in a row waits this, */
#define SUP_BACKOFF_MAX 5000          /* doubling up to this; the first waits 0 */
#define SUP_STABLE_MS   10000         /* a worker that lived this long resets it */
#define SUP_STOP_MS     10000         /* a stopping worker gets this, then SIGKILL */
/* A request can be as large as a write of max_write (1 MiB at most): the
 * kernel refuses a read into a smaller buffer, INIT's included. */
#define SUP_READ_BUF    (1024 * 1024 + 4096)

struct sup {
	const struct sup_params *p;
	int master;                   /* the connection: held until the end */
	int sfd;                      /* signalfd: SIGCHLD, SIGTERM, SIGINT, SIGHUP */
	sigset_t oldmask;             /* what a worker starts with */
	char *init;                   /* the kernel's INIT request, as read */
	size_t init_len;
	bool initialized;             /* a worker's INIT reply went to the kernel */
	pid_t worker;                 /* 0: none running */
	int chan;                     /* our end of its socket until its INIT reply */
	long started;                 /* when it started (ms) */
	unsigned restarts;
	long delay;                   /* the next restart's back-off (ms) */
	long next_start;              /* when the next worker starts (ms) */
	bool stopping;                /* a stop signal came, or the end */
	bool failed;                  /* the end is a failure (exit 1) */
	long stop_deadline;
	pid_t agent;
	int agent_fd;
	int ready_fd;                 /* background: tells the starting shell's
				       * process the mount answers (then -1) */
	int names;                    /* the workers' shared names (dentries.h), or -1 */
};

static long sup_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

bool sup_mounted_at(const char *path, char *dev, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[8192], mp[4096], type[256], mdev[64];
	bool ours = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		size_t j = 0;

		if (!dash || sscanf(line, "%*s %*s %63s %*s %4095s", mdev, mp) != 2 ||
		    sscanf(dash + 3, "%255s", type) != 1)
			continue;
		/* mountinfo escapes space, tab, newline and backslash as \ooo */
		for (size_t i = 0; mp[i]; i++, j++) {
			if (mp[i] == '\\' && mp[i + 1] >= '0' && mp[i + 1] <= '3' && mp[i + 2] && mp[i + 3]) {
				mp[j] = (char)((mp[i + 1] - '0') * 64 + (mp[i + 2] - '0') * 8 + (mp[i + 3] - '0'));
				i += 3;
			} else {
				mp[j] = mp[i];
			}
		}
		mp[j] = '\0';
		if (!strcmp(mp, path)) {
			ours = !strcmp(type, "fuse.memcgfs");   /* the last line is the top */
			if (dev)
				snprintf(dev, size, "%s", mdev);
		}
	}
	fclose(f);
	return ours;
}

/* umount -l: ourselves as root, else through fusermount3. */
static int sup_umount_lazy(const char *path)
{
	pid_t pid;
	int st;

	if (geteuid() == 0)
		return umount2(path, MNT_DETACH) ? -errno : 0;
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-u", "-z", "--", path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -ECHILD;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

int sup_recover_stale(const char *path)
{
	char dir[4096], abs[8200], *slash;
	struct statfs st;
	int err;

	/* statfs, not stat: the kernel answers a stat from the attributes it
	 * keeps, a dead daemon's too; a statfs always asks the daemon */
	if (statfs(path, &st) == 0 || errno != ENOTCONN)
		return 0;
	/* the mountpoint itself cannot be resolved: its parent can */
	snprintf(dir, sizeof(dir), "%s", path);
	while ((slash = strrchr(dir, '/')) && slash != dir && !slash[1])
		*slash = '\0';
	slash = strrchr(dir, '/');
	if (slash == dir) {
		snprintf(abs, sizeof(abs), "%s", dir);
	} else {
		char parent[4096];

		if (slash)
			*slash = '\0';
		if (!realpath(slash ? dir : ".", parent)) {
			mcg_log(MCG_LOG_ERR, "%s: %s", path, strerror(errno));
			return -1;
		}
		snprintf(abs, sizeof(abs), "%s/%s", strcmp(parent, "/") ? parent : "",
			 slash ? slash + 1 : dir);
	}
	if (!sup_mounted_at(abs, NULL, 0)) {
		mcg_log(MCG_LOG_ERR, "%s: %s, and not a memcgfs mount: unmount it first",
			path, strerror(ENOTCONN));
		return -1;
	}
	mcg_log(MCG_LOG_WARNING, "%s: a stale memcgfs mount (its daemon is gone): "
		"unmounting it and mounting again", path);
	if ((err = sup_umount_lazy(abs))) {
		mcg_log(MCG_LOG_ERR, "%s: cannot unmount the stale mount: %s", path, strerror(-err));
		return -1;
	}
	return 0;
}

int sup_agent_main(int argc, char **argv)
{
	char buf[64], dev[64];
	bool ended = false;
	ssize_t r;

	if (argc != 4)
		return 2;
	/* only the supervisor's end going away ends it */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	while ((r = read(SUP_AGENT_FD, buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		ended |= r > 0;
	/* a supervisor that ended its mount says so before it goes: the
	 * mountpoint may already hold a newer mount, and the kernel hands a
	 * freed device number to the next mount at once, so the number alone
	 * could not tell ours from it. Only a supervisor that went without a
	 * word (killed) leaves a mount to end: the one on our device. */
	if (!ended && sup_mounted_at(argv[2], dev, sizeof(dev)) && !strcmp(dev, argv[3]))
		sup_umount_lazy(argv[2]);
	return 0;
}

/* Fork and exec the unmount agent, holding nothing of ours but its socket
 * (above all not the master fd, or the mount would outlive us). */
static void sup_agent_start(struct sup *s)
{
	char dev[64];
	int sv[2];

	if (!sup_mounted_at(s->p->mountpoint, dev, sizeof(dev)) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		mcg_log(MCG_LOG_ERR, "no unmount agent: a killed supervisor leaves a stale mount");
		return;
	}
	s->agent = fork();
	if (s->agent == 0) {
		char *argv[] = { "memcgfs", "--unmount-agent", (char *)s->p->mountpoint, dev, NULL };

		int null = open("/dev/null", O_RDWR);

		/* nothing of the terminal either: a shell reading our output
		 * waits for its last holder */
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
		    dup2(sv[1], SUP_AGENT_FD) < 0)
			_exit(1);
		syscall(SYS_close_range, SUP_AGENT_FD + 1, ~0u, 0);
		execv("/proc/self/exe", argv);
		_exit(sup_agent_main(4, argv));
	}
	close(sv[1]);
	if (s->agent < 0) {
		close(sv[0]);
		s->agent = 0;
		mcg_log(MCG_LOG_ERR, "no unmount agent: a killed supervisor leaves a stale mount");
		return;
	}
	s->agent_fd = sv[0];
}

/* The worker's malloc, set before it starts (glibc reads its tunables
 * once, at exec): one arena, no per-thread cache, and a fixed threshold
 * for mapping large blocks apart. A tree taken down frees its groups on
 * whichever FUSE threads removed them; with an arena per thread and each
 * thread's cache holding freed chunks that pin their pages, malloc_trim
 * (fs/trim.c) could not give back a fifth of what the tree had cost; and
 * once a large block had been freed, glibc's moving threshold put the
 * next FUSE thread's request buffer (1 MiB) in the heap, where it pinned
 * what lay around it (docs/benchmarks.md, "Scale"). The user's own
 * tunables come after ours and win. The supervisor is single-threaded:
 * setenv between fork and exec is safe here. */
static void sup_worker_malloc(void)
{
	static const char ours[] = "glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0:"
				   "glibc.malloc.mmap_threshold=131072";
	const char *theirs = getenv("GLIBC_TUNABLES");
	char *both;

	if (!theirs || !*theirs) {
		setenv("GLIBC_TUNABLES", ours, 1);
	} else if (asprintf(&both, "%s:%s", ours, theirs) >= 0) {
		setenv("GLIBC_TUNABLES", both, 1);
		free(both);
	}
}

/* The child's side of a worker start: never returns. */
static void sup_worker_exec(struct sup *s, int chan, int clone, pid_t parent)
{
	const struct sup_params *p = s->p;
	char **argv = calloc((size_t)p->argc + 4, sizeof(*argv));
	char restarts[16];
	int n = 0, a, c, nm;

	/* the worker dies with us, also if we died before this line */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent || !argv)
		_exit(1);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	/* dup2 onto a number the fd already has would keep FD_CLOEXEC */
	a = fcntl(chan, F_DUPFD_CLOEXEC, 10);
	c = fcntl(clone, F_DUPFD_CLOEXEC, 10);
	nm = s->names >= 0 ? fcntl(s->names, F_DUPFD_CLOEXEC, 10) : -1;
	if (a < 0 || c < 0 || dup2(a, SUP_CHAN_FD) < 0 || dup2(c, SUP_CLONE_FD) < 0 ||
	    (nm >= 0 ? dup2(nm, SUP_NAMES_FD) : (close(SUP_NAMES_FD), 0)) < 0)
		_exit(1);
	snprintf(restarts, sizeof(restarts), "%u", s->restarts);
	sup_worker_malloc();
	argv[n++] = p->argv[0];
	argv[n++] = "--worker";
	argv[n++] = restarts;
	argv[n++] = (char *)p->mountpoint;
	for (int i = 1; i < p->argc; i++)
		if (i != p->mnt_index)
			argv[n++] = p->argv[i];
	execv("/proc/self/exe", argv);
	_exit(127);
}

/* A new worker on a new clone, with the INIT request waiting on its socket. */
static int sup_worker_start(struct sup *s)
{
	uint32_t master = (uint32_t)s->master;
	int sv[2], clone;
	pid_t self = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	clone = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (clone < 0 || ioctl(clone, FUSE_DEV_IOC_CLONE, &master) ||
	    send(sv[0], s->init, s->init_len, MSG_NOSIGNAL) != (ssize_t)s->init_len) {
		int err = -errno;

		if (clone >= 0)
			close(clone);
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	s->worker = fork();
	if (s->worker == 0)
		sup_worker_exec(s, sv[1], clone, self);
	close(sv[1]);
	close(clone);
	if (s->worker < 0) {
		s->worker = 0;
		close(sv[0]);
		return -EAGAIN;
	}
	s->chan = sv[0];
	s->started = sup_now_ms();
	return 0;
}

void sup_detach_stdio(void)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0)
		return;
	for (int fd = 0; fd < 3; fd++)
		if (fd != null)
			dup2(null, fd);
	if (null > 2)
		close(null);
}

/* Background: the mount answers. The process the shell started exits 0;
 * our stdio (and every later worker's) is /dev/null from now on. */
static void sup_ready(struct sup *s)
{
	(void)!write(s->ready_fd, "", 1);
	close(s->ready_fd);
	s->ready_fd = -1;
	sup_detach_stdio();
	if (s->p->detached)
		s->p->detached();
}

/* Unless foreground, what fuse_daemonize does, except that the process the
 * shell started waits until a worker has answered INIT (sup_ready): so
 * that it exits 0 once the mount answers, and 1 when the first worker
 * fails (its message still on the terminal). */
static int sup_daemonize(struct sup *s)
{
	int w[2];
	pid_t pid;
	char c;

	if (s->p->foreground)
		return 0;
	if (pipe2(w, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(w[1]);
		_exit(read(w[0], &c, 1) == 1 ? 0 : 1);   /* EOF: it ended first */
	}
	close(w[0]);
	s->ready_fd = w[1];
	setsid();
	if (chdir("/"))
		return -1;
	return 0;
}

/* The worker's INIT reply: the first goes to the kernel, on the fd the
 * request was read from; later ones answer an INIT the kernel never sent
 * again and go nowhere. */
static void sup_chan_ready(struct sup *s)
{
	char buf[4096];
	ssize_t r = recv(s->chan, buf, sizeof(buf), 0);

	if (r < 0 && errno == EINTR)
		return;
	if (r > 0 && !s->initialized) {
		if (write(s->master, buf, (size_t)r) == r) {
			s->initialized = true;
			if (s->p->notify) {
				char ready[64];

				snprintf(ready, sizeof(ready), "READY=1\nMAINPID=%d", (int)getpid());
				s->p->notify(ready);
			}
		} else
			mcg_log(MCG_LOG_ERR, "INIT reply: %s", strerror(errno));
	}
	if (s->initialized && s->ready_fd >= 0)
		sup_ready(s);
	close(s->chan);
	s->chan = -1;
}

static void sup_reap(struct sup *s)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		long lived;

		if (pid == s->agent) {
			s->agent = 0;
			mcg_log(MCG_LOG_ERR, "the unmount agent died: a killed supervisor "
				"will leave a stale mount");
			continue;
		}
		if (pid != s->worker)
			continue;
		s->worker = 0;
		if (s->chan >= 0) {
			close(s->chan);
			s->chan = -1;
		}
		if (s->stopping || (WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			s->stopping = true;           /* the connection ended, or we asked */
			continue;
		}
		if (!s->initialized) {
			/* it failed before the mount ever answered: so would the
			 * next (bad options the checks let through, a state file
			 * it cannot load) */
			mcg_log(MCG_LOG_ERR, "the worker failed before the mount was ready; "
				"unmounting");
			s->stopping = s->failed = true;
			continue;
		}
		if (!sup_mounted_at(s->p->mountpoint, NULL, 0)) {
			/* unmounted, and the worker failed on its way out (a
			 * sanitizer's leak report, say): nothing to serve */
			mcg_log(MCG_LOG_WARNING, "worker %d ended with status %d after the unmount; "
				"not restarted", pid, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
			s->stopping = true;
			continue;
		}
		lived = sup_now_ms() - s->started;
		if (lived >= SUP_STABLE_MS)
			s->delay = 0;
		s->next_start = sup_now_ms() + s->delay;
		s->restarts++;
		if (WIFSIGNALED(st))
			mcg_log(MCG_LOG_WARNING, "worker %d killed by signal %d after %ld ms; "
				"restart %u in %ld ms", pid, WTERMSIG(st), lived, s->restarts, s->delay);
		else
			mcg_log(MCG_LOG_WARNING, "worker %d exited with status %d after %ld ms; "
				"restart %u in %ld ms", pid, WEXITSTATUS(st), lived, s->restarts, s->delay);
		s->delay = s->delay ? (2 * s->delay > SUP_BACKOFF_MAX ? SUP_BACKOFF_MAX : 2 * s->delay) :
			   SUP_BACKOFF_MS;
	}
}

static void sup_signal(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!s->stopping) {
			s->stopping = true;
			if (s->p->notify)
				s->p->notify("STOPPING=1");
			s->stop_deadline = sup_now_ms() + SUP_STOP_MS;
			if (s->worker)
				kill(s->worker, SIGTERM);
		}
	}
	sup_reap(s);
}

/* Until the mount ends or a stop signal came and the worker is gone. */
static void sup_loop(struct sup *s)
{
	while (!s->stopping || s->worker) {
		struct pollfd pfd[2] = { { .fd = s->sfd, .events = POLLIN }, { .events = POLLIN } };
		long now = sup_now_ms();
		int timeout = -1, err;

		if (s->stopping && now >= s->stop_deadline) {
			kill(s->worker, SIGKILL);
			s->stop_deadline = now + SUP_STOP_MS;
		}
		if (!s->stopping && !s->worker && now >= s->next_start &&
		    (err = sup_worker_start(s))) {
			mcg_log(MCG_LOG_ERR, "cannot start a worker: %s", strerror(-err));
			s->next_start = now + SUP_BACKOFF_MAX;
		}
		pfd[1].fd = s->chan;
		if (s->stopping)
			timeout = (int)(s->stop_deadline - now);
		else if (!s->worker)
			timeout = (int)(s->next_start - now);
		if (poll(pfd, 2, timeout < 0 ? -1 : timeout) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			sup_chan_ready(s);
		if (pfd[0].revents)
			sup_signal(s);
	}
}

int sup_run(const struct sup_params *p)
{
	static const struct fuse_lowlevel_ops none;   /* this session serves nothing */
	struct sup s = { .p = p, .chan = -1, .agent_fd = -1, .sfd = -1, .ready_fd = -1, .names = -1 };
	struct fuse_session *se = fuse_session_new(p->args, &none, sizeof(none), NULL);
	sigset_t set;
	char *buf = NULL;
	ssize_t r;
	int ret = 1;

	if (!se)
		return 1;
	if (fuse_session_mount(se, p->mountpoint))
		goto out_session;
	s.master = fuse_session_fd(se);
	fcntl(s.master, F_SETFD, FD_CLOEXEC);
	if (sup_daemonize(&s))
		goto out_unmount;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &s.oldmask) ||
	    (s.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		goto out_unmount;
	sup_agent_start(&s);
	/* the kernel queued INIT at mount time; nothing else comes before
	 * its reply */
	if (!(buf = malloc(SUP_READ_BUF)))
		goto out_unmount;
	while ((r = read(s.master, buf, SUP_READ_BUF)) < 0 && errno == EINTR)
		;
	if (r <= 0) {
		mcg_log(MCG_LOG_ERR, "reading INIT: %s", r < 0 ? strerror(errno) : "EOF");
		goto out_unmount;
	}
	s.init = buf;
	s.init_len = (size_t)r;
	/* the names the kernel may keep, written by the workers, read by the
	 * next after a restart (without it, a kernel before 6.16 is told to
	 * keep nothing: ops.c) */
	if ((s.names = memfd_create("memcgfs-names", MFD_CLOEXEC)) >= 0 &&
	    ftruncate(s.names, (off_t)dentries_bytes())) {
		close(s.names);
		s.names = -1;
	}
	if (s.names < 0)
		mcg_log(MCG_LOG_WARNING, "no memory for the names the kernel keeps: %s", strerror(errno));
	sup_loop(&s);
	if (s.names >= 0)
		close(s.names);
	ret = s.failed ? 1 : 0;
out_unmount:
	fuse_session_unmount(se);
out_session:
	fuse_session_destroy(se);
	if (s.agent_fd >= 0) {
		/* the mount is ended: the agent must leave the mountpoint alone */
		(void)!send(s.agent_fd, "ended", 5, MSG_NOSIGNAL);
		close(s.agent_fd);
	}
	if (s.agent > 0)
		while (waitpid(s.agent, NULL, 0) < 0 && errno == EINTR)
			;
	if (s.sfd >= 0)
		close(s.sfd);
	if (s.ready_fd >= 0)
		close(s.ready_fd);            /* never ready: the shell's process exits 1 */
	free(buf);
	return ret;
}

int sup_worker_names_fd(void)
{
	if (fcntl(SUP_NAMES_FD, F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return SUP_NAMES_FD;
}

int sup_worker_attach(struct fuse_session *se)
{
	struct fuse_buf fb = { .size = 0 };
	char path[32];
	ssize_t r;

	snprintf(path, sizeof(path), "/dev/fd/%d", SUP_CHAN_FD);
	/* libfuse adopts the fd number and mounts nothing */
	if (fuse_session_mount(se, path))
		return -1;
	if (!(fb.mem = malloc(SUP_READ_BUF)))
		return -1;
	while ((r = recv(SUP_CHAN_FD, fb.mem, SUP_READ_BUF, 0)) < 0 && errno == EINTR)
		;
	if (r <= 0) {
		mcg_log(MCG_LOG_ERR, "worker: no INIT from the supervisor");
		free(fb.mem);
		return -1;
	}
	fb.size = (size_t)r;
	/* the reply goes to SUP_CHAN_FD: the supervisor forwards the first */
	fuse_session_process_buf(se, &fb);
	free(fb.mem);
	if (fuse_session_exited(se))
		return -1;
	/* the session's fd number now names the clone; close-on-exec, so
	 * that no program we run (a release agent) keeps requests of ours */
	if (dup3(SUP_CLONE_FD, SUP_CHAN_FD, O_CLOEXEC) < 0)
		return -1;
	close(SUP_CLONE_FD);
	return 0;
}
