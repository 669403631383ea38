/* event.c: cgroup.event_control. A registration names two fds of the
 * writer; we duplicate them with pidfd_getfd, validate them in the kernel's
 * order of checks and keep the eventfd. As the kernel unregisters when the
 * eventfd's last reference goes, a reaper thread looks every
 * EVENT_REAP_MS for the processes that still hold it (by its eventfd-id
 * in /proc/PID/fdinfo) and drops the registration when none does. Bounds
 * registrations per user, counted per uid as they come and go. Never blocks
 * on an eventfd (writes of 1 cannot block short of 2^64-1 pending) and never
 * reads one. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/cgfiles.h"
#include "fs/event.h"
#include "fs/node.h"
#include "os/proc.h"


enum { PRESS_LOW, PRESS_MEDIUM, PRESS_CRITICAL };
enum { PRESS_DEFAULT, PRESS_HIERARCHY, PRESS_LOCAL };

#define EVENT_HOLDERS 8

/* A process known to have held the eventfd, and where. */
struct event_holder {
	int pidfd;
	pid_t pid;
	int fd;                       /* its fd number last seen holding it */
};

struct event_reg {
	struct mcg_group *g;          /* referenced */
	int efd;                      /* our duplicate of the writer's eventfd */
	uid_t uid;                    /* the registering user */
	struct event_user *user;      /* uid's count, while linked */
	unsigned long long efd_id;    /* eventfd-id, 0 when the kernel has none */
	struct event_holder holders[EVENT_HOLDERS];   /* the reaper's alone */
	int nholders;
	atomic_int refs;              /* the list's, and the reaper's in a pass */
	bool linked;                  /* in the list (under er->lock) */
	bool dropping;                /* the reaper unlinks it (under er->lock) */
	bool keep;                    /* still held: the reaper's alone */
	enum cgfs_event kind;
	long threshold;               /* pages */
	bool above;                   /* threshold <= usage at the last check */
	int level, mode;
	struct event_reg *next;
};

/* vmpressure's window of one group: reclaim aimed at it since the last
 * report. */
struct event_window {
	unsigned id, gen;
	long scanned, reclaimed;
};

/* How many linked registrations one uid has: what admission checks, in a
 * short bucket instead of a walk of every registration. An entry lives
 * while its count is above 0. */
struct event_user {
	uid_t uid;
	int nregs;
	struct event_user *next;
};

/* 1024 buckets: 16 entries a bucket when EVENT_MAX_REGS registrations
 * belong to as many uids, a handful in any real use. */
#define EVENT_USER_BITS    10
#define EVENT_USER_BUCKETS (1u << EVENT_USER_BITS)

#define EVENT_WINDOWS   64
#define EVENT_WIN_PAGES 512           /* SWAP_CLUSTER_MAX * 16 */
#define EVENT_CRIT_PRIO 3             /* reclaim this deep is critical */

struct event_registry {
	pthread_mutex_t lock;
	struct event_reg *head;
	int nregs;
	struct event_user *users[EVENT_USER_BUCKETS];
	pthread_t reaper;
	bool reaping, stop;
	pthread_cond_t wake;          /* the reaper's sleep, cut short at stop */
	atomic_int nthresh, npress;   /* registrations of each kind */
	struct event_window win[EVENT_WINDOWS];
	unsigned next_win;
};

struct event_registry *event_new(void)
{
	struct event_registry *er = calloc(1, sizeof(*er));

	if (er) {
		pthread_mutex_init(&er->lock, NULL);
		pthread_cond_init(&er->wake, NULL);
	}
	return er;
}

static void event_count(struct event_registry *er, const struct event_reg *ev, int d)
{
	if (ev->kind == CGFS_EV_THRESHOLD || ev->kind == CGFS_EV_MEMSW_THRESHOLD)
		atomic_fetch_add(&er->nthresh, d);
	else if (ev->kind == CGFS_EV_PRESSURE)
		atomic_fetch_add(&er->npress, d);
}

/* The link that holds uid's entry, or the NULL one ending its bucket.
 * Caller holds er->lock. */
static struct event_user **event_user_slot(struct event_registry *er, uid_t uid)
{
	/* Fibonacci hashing: consecutive uids land in different buckets */
	uint32_t h = (uint32_t)uid * 2654435761u;
	struct event_user **pu = &er->users[h >> (32 - EVENT_USER_BITS)];

	while (*pu && (*pu)->uid != uid)
		pu = &(*pu)->next;
	return pu;
}

/* ev enters the list, counted for its user (made by event_admit_locked).
 * Caller holds er->lock. */
static void event_link_locked(struct event_registry *er, struct event_reg *ev,
			      struct event_user *u)
{
	ev->linked = true;
	ev->user = u;
	u->nregs++;
	ev->next = er->head;
	er->head = ev;
	er->nregs++;
	event_count(er, ev, 1);
}

/* ev, already out of the list, is no longer counted; its user's entry goes
 * with its last registration. Caller holds er->lock. */
static void event_unlinked_locked(struct event_registry *er, struct event_reg *ev)
{
	ev->linked = false;
	er->nregs--;
	event_count(er, ev, -1);
	if (--ev->user->nregs == 0) {
		struct event_user **pu = event_user_slot(er, ev->user->uid);

		*pu = ev->user->next;
		free(ev->user);
	}
	ev->user = NULL;
}

static void event_drop(struct event_reg *ev)
{
	for (int i = 0; i < ev->nholders; i++)
		close(ev->holders[i].pidfd);
	close(ev->efd);
	mcg_put(ev->g);
	free(ev);
}

static void event_put(struct event_reg *ev)
{
	if (atomic_fetch_sub(&ev->refs, 1) == 1)
		event_drop(ev);
}

void event_free(struct event_registry *er)
{
	if (!er)
		return;
	pthread_mutex_lock(&er->lock);
	er->stop = true;
	pthread_cond_signal(&er->wake);
	pthread_mutex_unlock(&er->lock);
	if (er->reaping)
		pthread_join(er->reaper, NULL);
	pthread_cond_destroy(&er->wake);
	while (er->head) {
		struct event_reg *ev = er->head;

		er->head = ev->next;
		event_put(ev);
	}
	for (unsigned i = 0; i < EVENT_USER_BUCKETS; i++)
		while (er->users[i]) {
			struct event_user *u = er->users[i];

			er->users[i] = u->next;
			free(u);
		}
	pthread_mutex_destroy(&er->lock);
	free(er);
}

/* A duplicate of fd number n of the writer thread, or -EBADF. */
static int event_steal_fd(pid_t writer, unsigned long n)
{
	int pidfd = (int)syscall(SYS_pidfd_open, writer, PIDFD_THREAD), fd;
	struct proc_task t;

	/* Before 6.9 a pidfd names a process, not a thread: the writer's
	 * process, whose descriptor table its threads share. */
	if (pidfd < 0 && errno == EINVAL && proc_read_task(writer, &t) == 0)
		pidfd = (int)syscall(SYS_pidfd_open, t.tgid, 0);
	if (pidfd < 0)
		return -errno;
	fd = n > INT32_MAX ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, (int)n, 0);
	close(pidfd);
	if (fd < 0)
		return -EBADF;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

static int event_fd_target(int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((n = readlink(path, buf, size - 1)) < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int event_parse_pressure(const char *args, int *level, int *mode)
{
	static const char *const levels[] = { "low", "medium", "critical" };
	static const char *const modes[] = { "default", "hierarchy", "local" };
	char buf[20], *comma, *second;
	int i;

	/* The kernel looks at no more than the first 19 bytes. */
	snprintf(buf, sizeof(buf), "%s", args);
	if ((comma = strchr(buf, ',')))
		*comma = '\0';
	for (i = 0; i < 3 && strcmp(buf, levels[i]); i++)
		;
	if (i == 3)
		return -EINVAL;
	*level = i;
	*mode = PRESS_DEFAULT;
	if (!comma)
		return 0;
	second = comma + 1;
	if ((comma = strchr(second, ',')))
		*comma = '\0';         /* anything after a second comma is ignored */
	for (i = 0; i < 3 && strcmp(second, modes[i]); i++)
		;
	if (i == 3)
		return -EINVAL;
	*mode = i;
	return 0;
}

/* The control file must be one of ours, in the same group. Fills kind.
 * A file of ours is known by what it is, the mount's device and its inode
 * number, not by a path: one opened through a bind in another mount
 * namespace (memcgfs-run's view, a container's) has a path of that
 * namespace's, and is ours all the same. */
static int event_check_control(struct cgfs_req *r, int cfd, enum cgfs_event *kind)
{
	struct mcg_group *g;
	int row, err;

	if (node_of_fd(r->fs, cfd, &g, &row))
		return -EINVAL;        /* not a file of this cgroup filesystem */
	if (row < 0) {
		mcg_put(g);
		return -EINVAL;
	}
	if (!node_may_read(r->fs, g, row, r->uid, r->gid)) {
		mcg_put(g);
		return -EACCES;
	}
	/* the table's rows say which files take registrations */
	*kind = cgfs_files[row].event;
	err = *kind == CGFS_EV_NONE ? -EINVAL : 0;
	if (!err && (g != r->g || mcg_removed(g)))
		err = -EINVAL;
	mcg_put(g);
	return err;
}

static void event_signal(int efd)
{
	eventfd_write(efd, 1);
}

/* The usage a threshold of kind on g compares with, in pages: the root's
 * is the global approximation of its usage file. */
static long event_usage_of(struct mcg_group *g, enum cgfs_event kind)
{
	return mcg_usage(g, kind == CGFS_EV_THRESHOLD ? MCG_MEM : MCG_MEMSW);
}

/* Signal every threshold on g or its ancestors that usage crossed, either
 * way, since its last check. Caller holds er->lock. */
static void event_thresholds_locked(struct event_registry *er, struct mcg_group *g)
{
	for (struct event_reg *ev = er->head; ev; ev = ev->next) {
		bool above;

		if ((ev->kind != CGFS_EV_THRESHOLD && ev->kind != CGFS_EV_MEMSW_THRESHOLD) ||
		    !mcg_in_subtree(g, ev->g))
			continue;
		above = ev->threshold <= event_usage_of(ev->g, ev->kind);
		if (above != ev->above) {
			ev->above = above;
			event_signal(ev->efd);
		}
	}
}

void event_usage(struct mcg_group *g, void *arg)
{
	struct event_registry *er = ((struct cgfs *)arg)->events;

	if (!er || atomic_load(&er->nthresh) == 0)
		return;
	pthread_mutex_lock(&er->lock);
	event_thresholds_locked(er, g);
	pthread_mutex_unlock(&er->lock);
}

/* Deliver a pressure level computed for origin (§5.14): walking up, local
 * registrations fire only at the origin, default ones only until some
 * registration below fired, hierarchy ones always. Caller holds er->lock. */
static void event_pressure_deliver(struct event_registry *er, struct mcg_group *origin, int level)
{
	bool signalled = false;

	for (struct mcg_group *g = origin; g; g = mcg_parent(g)) {
		bool fired = false;

		for (struct event_reg *ev = er->head; ev; ev = ev->next) {
			if (ev->kind != CGFS_EV_PRESSURE || ev->g != g || level < ev->level)
				continue;
			if ((g != origin && ev->mode == PRESS_LOCAL) ||
			    (signalled && ev->mode == PRESS_DEFAULT))
				continue;
			event_signal(ev->efd);
			fired = true;
		}
		signalled |= fired;
	}
}

void event_pressure(struct mcg_group *g, long scanned, long reclaimed, int prio, void *arg)
{
	struct event_registry *er = ((struct cgfs *)arg)->events;
	struct event_window *w = NULL;
	long pct;

	if (!er || atomic_load(&er->npress) == 0)
		return;
	pthread_mutex_lock(&er->lock);
	if (prio <= EVENT_CRIT_PRIO) {
		/* reclaim had to dig this deep: critical, whatever it got */
		event_pressure_deliver(er, g, PRESS_CRITICAL);
		pthread_mutex_unlock(&er->lock);
		return;
	}
	for (unsigned i = 0; i < EVENT_WINDOWS && !w; i++)
		if (er->win[i].id == mcg_id(g) && er->win[i].gen == mcg_gen(g))
			w = &er->win[i];
	if (!w) {
		w = &er->win[er->next_win++ % EVENT_WINDOWS];
		*w = (struct event_window){ mcg_id(g), mcg_gen(g), 0, 0 };
	}
	w->scanned += scanned;
	w->reclaimed += reclaimed;
	if (w->scanned >= EVENT_WIN_PAGES) {
		pct = w->reclaimed >= w->scanned ? 0 : 100 - w->reclaimed * 100 / w->scanned;
		w->scanned = w->reclaimed = 0;
		event_pressure_deliver(er, g, pct >= 95 ? PRESS_CRITICAL :
					      pct >= 60 ? PRESS_MEDIUM : PRESS_LOW);
	}
	pthread_mutex_unlock(&er->lock);
}

/* An fd number as the kernel reads it (simple_strtoul into an unsigned
 * int): digits only, no sign or space, wrapping, then truncated to 32
 * bits; no digits reads 0 with *end at the first byte. */
static unsigned long event_parse_fd(const char *s, char **end)
{
	unsigned long long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned)(*s++ - '0');
	*end = (char *)s;
	return (uint32_t)v;
}

/* eventfd-id of fd n of process pid, from its fdinfo; 0 when none. */
static unsigned long long event_fd_id(pid_t pid, int n)
{
	char path[64], buf[512], *p;
	unsigned long long id = 0;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, n);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	if ((p = strstr(buf, "eventfd-id:")))
		id = strtoull(p + 11, NULL, 10);
	return id;
}

static void *event_reaper_main(void *arg);

/* Room for one more registration of uid: EVENT_MAX_REGS in all and
 * EVENT_USER_REGS for each uid but root's, else -ENOSPC. Starts the reaper
 * with the first. *user: uid's entry, to count the registration on when it
 * is linked (made here with a count of 0 when uid has none; the link
 * follows under the same lock). Caller holds er->lock. */
static int event_admit_locked(struct event_registry *er, uid_t uid, struct event_user **user)
{
	struct event_user **pu = event_user_slot(er, uid);

	if (er->nregs >= EVENT_MAX_REGS)
		return -ENOSPC;
	if (uid != 0 && *pu && (*pu)->nregs >= EVENT_USER_REGS)
		return -ENOSPC;
	if (!er->reaping) {
		if (pthread_create(&er->reaper, NULL, event_reaper_main, er))
			return -EAGAIN;
		er->reaping = true;
	}
	if (!*pu) {
		if (!(*pu = calloc(1, sizeof(**pu))))
			return -ENOMEM;
		(*pu)->uid = uid;
	}
	*user = *pu;
	return 0;
}

int event_control_write(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	const char *s = v->str, *args;
	char *end, target[64];
	unsigned long efd_no, cfd_no;
	struct event_reg *ev;
	struct event_user *user;
	struct proc_task writer;
	int efd, cfd, err;

	efd_no = event_parse_fd(s, &end);
	if (*end != ' ')
		return -EINVAL;
	cfd_no = event_parse_fd(end + 1, &end);
	if (*end != '\0' && *end != ' ')
		return -EINVAL;
	args = *end ? end + 1 : end;

	if ((efd = event_steal_fd(r->pid, efd_no)) < 0)
		return efd == -ESRCH ? -EBADF : efd;
	if (event_fd_target(efd, target, sizeof(target)) || strcmp(target, "anon_inode:[eventfd]")) {
		close(efd);
		return -EINVAL;
	}
	if ((cfd = event_steal_fd(r->pid, cfd_no)) < 0) {
		close(efd);
		return cfd == -ESRCH ? -EBADF : cfd;
	}
	if (!(ev = calloc(1, sizeof(*ev)))) {
		err = -ENOMEM;
	} else if (!(err = event_check_control(r, cfd, &ev->kind))) {
		switch (ev->kind) {
		case CGFS_EV_THRESHOLD:
		case CGFS_EV_MEMSW_THRESHOLD:
			/* parsed from its first byte, as memparse does */
			err = isspace((unsigned char)*args) ? -EINVAL :
			      gram_bytes(args, strlen(args), &ev->threshold, NULL);
			break;
		case CGFS_EV_PRESSURE:
			err = event_parse_pressure(args, &ev->level, &ev->mode);
			break;
		case CGFS_EV_OOM:
		case CGFS_EV_NONE:       /* (event_check_control refused it) */
			break;
		}
	}
	close(cfd);
	if (err) {
		free(ev);
		close(efd);
		return err;
	}
	ev->efd = efd;
	ev->uid = r->uid;
	ev->efd_id = event_fd_id(getpid(), efd);
	/* the writer thread's process: pidfds and fd tables are per process */
	ev->holders[0].pid = proc_read_task(r->pid, &writer) == 0 ? writer.tgid : r->pid;
	ev->holders[0].pidfd = (int)syscall(SYS_pidfd_open, ev->holders[0].pid, 0);
	ev->holders[0].fd = (int)efd_no;
	ev->nholders = ev->holders[0].pidfd >= 0;
	ev->g = r->g;
	mcg_get(ev->g);
	pthread_mutex_lock(&r->fs->events->lock);
	if ((err = event_admit_locked(r->fs->events, ev->uid, &user))) {
		pthread_mutex_unlock(&r->fs->events->lock);
		event_drop(ev);
		return err;
	}
	if (ev->kind == CGFS_EV_THRESHOLD || ev->kind == CGFS_EV_MEMSW_THRESHOLD) {
		/* the others are checked first; the new one takes its side
		 * without a signal */
		event_thresholds_locked(r->fs->events, ev->g);
		ev->above = ev->threshold <= event_usage_of(ev->g, ev->kind);
	}
	atomic_init(&ev->refs, 1);
	event_link_locked(r->fs->events, ev, user);
	/* An OOM registration on a group already under OOM fires at once. */
	if (ev->kind == CGFS_EV_OOM && mcg_under_oom(ev->g))
		event_signal(efd);
	pthread_mutex_unlock(&r->fs->events->lock);
	return 0;
}

void event_group_removed(struct cgfs *fs, struct mcg_group *g)
{
	struct event_reg **pp, *dead = NULL;

	pthread_mutex_lock(&fs->events->lock);
	for (pp = &fs->events->head; *pp;) {
		struct event_reg *ev = *pp;

		if (ev->g == g) {
			*pp = ev->next;
			event_unlinked_locked(fs->events, ev);
			ev->next = dead;
			dead = ev;
		} else {
			pp = &ev->next;
		}
	}
	pthread_mutex_unlock(&fs->events->lock);
	while (dead) {
		struct event_reg *ev = dead;

		dead = ev->next;
		event_signal(ev->efd);
		event_put(ev);
	}
}

void event_oom(struct mcg_group *over, void *arg)
{
	struct cgfs *fs = arg;

	pthread_mutex_lock(&fs->events->lock);
	for (struct event_reg *ev = fs->events->head; ev; ev = ev->next) {
		if (ev->kind == CGFS_EV_OOM && mcg_in_subtree(ev->g, over))
			event_signal(ev->efd);
	}
	pthread_mutex_unlock(&fs->events->lock);
}

/* ---- the reaper ---- */

/* Does holder h still hold an eventfd with that id? Its last fd number is
 * tried first, then its whole table. */
static bool event_holder_has(struct event_holder *h, unsigned long long id)
{
	char path[64];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	if (proc_pidfd_exited(h->pidfd))
		return false;             /* it exited */
	if (!id)
		return true;              /* no eventfd-id: its life is the bound */
	if (h->fd >= 0 && event_fd_id(h->pid, h->fd) == id)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)h->pid);
	if (!(dir = opendir(path)))
		return false;
	while (!found && (d = readdir(dir)))
		if (d->d_name[0] != '.' && event_fd_id(h->pid, atoi(d->d_name)) == id) {
			h->fd = atoi(d->d_name);
			found = true;
		}
	closedir(dir);
	return found;
}

/* Forget the holders of ev that let go; true if one still holds it. */
static bool event_known_held(struct event_reg *ev)
{
	bool held = false;

	for (int i = 0; i < ev->nholders;) {
		if (event_holder_has(&ev->holders[i], ev->efd_id)) {
			held = true;
			i++;
		} else {
			close(ev->holders[i].pidfd);
			ev->holders[i] = ev->holders[--ev->nholders];
		}
	}
	return held;
}

static int event_by_id(const void *a, const void *b)
{
	unsigned long long x = (*(struct event_reg *const *)a)->efd_id;
	unsigned long long y = (*(struct event_reg *const *)b)->efd_id;

	return x < y ? -1 : x > y;
}

/* Is fd n of pid an eventfd? (a readlink, cheaper than its fdinfo) */
static bool event_fd_is_eventfd(pid_t pid, const char *n)
{
	char path[300], target[32];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, n);
	len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0)
		return false;
	target[len] = '\0';
	return !strcmp(target, "anon_inode:[eventfd]");
}

/* The registrations in v[0..n) lost every holder they knew of: they may
 * live on in a fork or a passed fd. One walk over every process but ours
 * and its eventfds serves them all (a walk per registration would cost
 * the registrations times the processes' fds), each keeping what it finds
 * in the free room of its holders. v is sorted by eventfd-id here. Without
 * /proc every registration is kept (cannot tell). */
static void event_find_holders(struct event_reg **v, int n)
{
	DIR *proc;
	struct dirent *d;
	pid_t self = getpid();

	if (n == 0)
		return;
	if (!(proc = opendir("/proc"))) {
		for (int i = 0; i < n; i++)
			v[i]->keep = true;
		return;
	}
	qsort(v, (size_t)n, sizeof(*v), event_by_id);
	while ((d = readdir(proc))) {
		char path[64];
		struct dirent *f;
		DIR *fds;
		pid_t pid = (pid_t)atoi(d->d_name);
		int pidfd;

		if (!pid || pid == self)
			continue;
		if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
		if ((fds = opendir(path))) {
			while ((f = readdir(fds))) {
				struct event_reg key = { .efd_id = 0 }, *kp = &key, **hit;

				if (f->d_name[0] == '.' || !event_fd_is_eventfd(pid, f->d_name))
					continue;
				if (!(key.efd_id = event_fd_id(pid, atoi(f->d_name))))
					continue;
				hit = bsearch(&kp, v, (size_t)n, sizeof(*v), event_by_id);
				if (!hit)
					continue;
				/* every registration of that eventfd (a lower bound
				 * of the equal run first) */
				while (hit > v && hit[-1]->efd_id == key.efd_id)
					hit--;
				for (; hit < v + n && (*hit)->efd_id == key.efd_id; hit++) {
					struct event_reg *ev = *hit;
					int dup;

					ev->keep = true;
					if (ev->nholders == EVENT_HOLDERS ||
					    (dup = fcntl(pidfd, F_DUPFD_CLOEXEC, 0)) < 0)
						continue;
					ev->holders[ev->nholders++] = (struct event_holder){
						.pidfd = dup, .pid = pid, .fd = atoi(f->d_name) };
				}
			}
			closedir(fds);
		}
		close(pidfd);
	}
	closedir(proc);
}

static void *event_reaper_main(void *arg)
{
	struct event_registry *er = arg;

	pthread_mutex_lock(&er->lock);
	while (!er->stop) {
		struct timespec ts;
		struct event_reg **v, **search, *ev;
		int n = 0, nsearch = 0;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += EVENT_REAP_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&er->wake, &er->lock, &ts);
		if (er->stop || !(v = malloc(((size_t)er->nregs + 1) * 2 * sizeof(*v))))
			continue;
		search = v + er->nregs + 1;
		for (ev = er->head; ev; ev = ev->next) {
			atomic_fetch_add(&ev->refs, 1);
			v[n++] = ev;
		}
		/* the /proc reads run without the lock: charges signal
		 * thresholds under it. First each registration's known
		 * holders; those that lost them all share one search. */
		pthread_mutex_unlock(&er->lock);
		for (int i = 0; i < n; i++) {
			v[i]->keep = event_known_held(v[i]);
			if (!v[i]->keep && v[i]->efd_id)
				search[nsearch++] = v[i];
		}
		event_find_holders(search, nsearch);
		for (int i = 0; i < n; i++)
			if (v[i]->keep) {
				event_put(v[i]);
				v[i] = NULL;
			}
		/* the rest is held by nobody but the daemon: one pass over the
		 * list unlinks them all (not removed meanwhile by an rmdir) */
		pthread_mutex_lock(&er->lock);
		for (int i = 0; i < n; i++)
			if (v[i])
				v[i]->dropping = true;
		for (struct event_reg **pp = &er->head; *pp;) {
			ev = *pp;
			if (ev->dropping) {
				*pp = ev->next;
				ev->linked = false;
				event_unlinked_locked(er, ev);
				atomic_fetch_sub(&ev->refs, 1);   /* the list's */
			} else {
				pp = &ev->next;
			}
		}
		pthread_mutex_unlock(&er->lock);
		/* closed by its owner: dropped without a signal */
		for (int i = 0; i < n; i++)
			if (v[i])
				event_put(v[i]);
		free(v);
		pthread_mutex_lock(&er->lock);
	}
	pthread_mutex_unlock(&er->lock);
	return NULL;
}
