/* sim.c: the simulated-task socket. One thread accepts; one thread per
 * connection reads workload lines, runs them on that task's virtual memory
 * (charging the group its pid is in at the time) and answers "ok", "err
 * MESSAGE" or "killed". A connection is bound to the connecting process by
 * a pidfd: its exit, or closing the connection, ends the task (anon and
 * shmem go, file pages stay in its user's page cache). Bounds what each
 * user may make it hold (docs/security.md). Signals only through pidfds
 * it holds; never the daemon, any PID 1, or oom_score_adj -1000. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/engine.h"
#include "os/proc.h"
#include "source/sim.h"
#include "source/source.h"
#include "source/workload.h"

#define SIM_DIR        "/run/memcgfs"
#define SIM_LINE       1024
#define SIM_STACK      (512 * 1024)   /* a connection thread's stack */

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77               /* Linux 6.5 */
#endif

/* A named file of the page cache, in its user's table. */
struct sim_file {
	char name[WL_NAME];
	struct vm_object *obj;
	struct vm_region *r;
};

/* What one user may make the daemon hold: connections (a thread each),
 * named files, declared memory. Kept while the daemon runs (the files'
 * page cache outlives the tasks, as the kernel's does). */
struct sim_user {
	uid_t uid;
	int conns;
	long pages;                   /* declared: task regions and files */
	struct sim_file files[SIM_USER_FILES];
	int nfiles;
	struct sim_user *next;
};

struct sim_conn {
	struct sim_server *s;
	int fd;
	int pidfd;                    /* the connecting process, for life */
	pid_t pid;
	struct sim_user *u;
	struct vm_object *obj;        /* the task's memory, once it has any */
	long pages;                   /* declared by this task's regions */
	struct charge_mode mode;      /* an oom_kill_disable wait ends when
				       * the process dies or the daemon stops */
	struct sim_conn *next;
};

struct sim_server {
	struct source_env *env;
	int fd;
	char path[108];
	long user_pages;              /* declared memory a user may hold */
	pthread_t thread;
	pthread_mutex_t lock;         /* users, connections */
	pthread_cond_t idle;          /* the last connection ended */
	struct sim_user *users;
	int nconns;
	struct sim_conn *conns;
	atomic_bool stopping;
};

int sim_socket_path(const char *mountpoint, char *buf, size_t size)
{
	uint64_t h = 1469598103934665603ull;      /* FNV-1a */
	struct stat ns;

	if (stat("/proc/self/ns/mnt", &ns))
		return -errno;
	for (const char *p = mountpoint; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return snprintf(buf, size, SIM_DIR "/%016llx.%llu.sock", (unsigned long long)h,
			(unsigned long long)ns.st_ino) < (int)size ? 0 : -ENAMETOOLONG;
}

const char *sim_path(const struct sim_server *s)
{
	return s->path;
}

/* The user's record, made on first use. Caller holds s->lock. */
static struct sim_user *sim_user_get(struct sim_server *s, uid_t uid)
{
	struct sim_user *u;

	for (u = s->users; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!(u = calloc(1, sizeof(*u))))
		return NULL;
	u->uid = uid;
	u->next = s->users;
	s->users = u;
	return u;
}

/* Declared memory of a user grows by pages, or -ENOSPC past its share.
 * Caller holds s->lock. */
static int sim_user_reserve(struct sim_server *s, struct sim_user *u, long pages)
{
	if (pages > 0 && u->pages + pages > s->user_pages)
		return -ENOSPC;
	u->pages += pages;
	return 0;
}

static struct vm_region *sim_file_find(struct sim_user *u, const char *name)
{
	for (int i = 0; i < u->nfiles; i++)
		if (!strcmp(u->files[i].name, name))
			return u->files[i].r;
	return NULL;
}

/* A named file of the connection's user, made with pages pages the first
 * time: 0, -ENOSPC (the user's table or share is full), -ENOMEM. */
static int sim_file_make(struct sim_conn *c, const char *name, long pages)
{
	struct sim_server *s = c->s;
	struct sim_user *u = c->u;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (sim_file_find(u, name)) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (u->nfiles == SIM_USER_FILES || (err = sim_user_reserve(s, u, pages))) {
		pthread_mutex_unlock(&s->lock);
		return -ENOSPC;
	}
	if (vm_file_new(s->env->eng, (uint32_t)pages, &u->files[u->nfiles].obj,
			&u->files[u->nfiles].r) == 0) {
		snprintf(u->files[u->nfiles].name, WL_NAME, "%s", name);
		u->nfiles++;
	} else {
		u->pages -= pages;
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Files are looked up in the task's own user's table only. */
static struct vm_region *sim_file_lookup(void *arg, const char *name)
{
	struct sim_conn *c = arg;
	struct vm_region *r;

	pthread_mutex_lock(&c->s->lock);
	r = sim_file_find(c->u, name);
	pthread_mutex_unlock(&c->s->lock);
	return r;
}

static struct sim_conn *sim_find_locked(struct sim_server *s, pid_t pid)
{
	for (struct sim_conn *c = s->conns; c; c = c->next)
		if (c->pid == pid)
			return c;
	return NULL;
}

bool sim_connected(struct sim_server *s, pid_t tgid)
{
	bool found;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	found = sim_find_locked(s, tgid) != NULL;
	pthread_mutex_unlock(&s->lock);
	return found;
}

bool sim_fork_of_task(struct sim_server *s, pid_t tgid, pid_t ppid)
{
	return ppid > 0 && sim_connected(s, ppid) && proc_same_exe(tgid, ppid);
}

int sim_move(struct sim_server *s, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	struct vm_object *o = NULL;
	struct sim_conn *c;
	struct move_stats st;
	int err;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	if ((c = sim_find_locked(s, tgid)) && c->obj) {
		o = c->obj;
		vm_object_pin(o);             /* the connection may end meanwhile */
	}
	pthread_mutex_unlock(&s->lock);
	if (!o)
		return 0;
	err = atomic_load(&o->dead) ? 0 : move_charges(o, dst, mask, &st);
	vm_object_unpin(o);
	return err;
}

bool sim_kill(struct sim_server *s, pid_t pid)
{
	struct sim_conn *c;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	/* the pidfd is closed only after the connection leaves the list */
	if ((c = sim_find_locked(s, pid)))
		proc_pidfd_signal(c->pidfd, pid, SIGKILL);
	pthread_mutex_unlock(&s->lock);
	return c != NULL;
}

static void sim_reply(int fd, const char *fmt, const char *arg)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), fmt, arg);

	/* never SIGPIPE: a peer that went away is seen as EOF next */
	if (n > 0)
		(void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL);
}

/* The process the connection is bound to still lives (its pidfd turns
 * readable at exit, before its PID can be reused). */
static bool sim_peer_alive(const struct sim_conn *c)
{
	return !proc_pidfd_exited(c->pidfd);
}

/* The OOM wait's cancel test: the task is gone, or the daemon stops. */
static bool sim_cancelled(void *arg)
{
	struct sim_conn *c = arg;

	return atomic_load(&c->s->stopping) || !sim_peer_alive(c);
}

/* Pages the task has declared in regions of its own (mappings of files
 * are counted with the files). */
static long sim_task_pages(const struct wl_task *t)
{
	long n = 0;

	for (int i = 0; i < t->nreg; i++)
		if (!t->reg[i].r->file)
			n += t->reg[i].r->npages;
	return n;
}

/* After an operation: the task's declared size as it now is. */
static void sim_account(struct sim_conn *c, const struct wl_task *t)
{
	long now = sim_task_pages(t);

	pthread_mutex_lock(&c->s->lock);
	c->u->pages += now - c->pages;
	c->pages = now;
	pthread_mutex_unlock(&c->s->lock);
}

/* Run one line for the task; its group is looked up afresh each time, so
 * a move through tasks/cgroup.procs redirects new charges. */
static void sim_line(struct sim_conn *c, struct wl_task *t, char *line)
{
	struct source_env *env = c->s->env;
	char *argv[16], msg[128];
	int argc = wl_split(line, argv, 16), ret;
	struct wl_op op;
	struct wl_costs costs = { 0 };
	uint64_t cost = 0;
	struct mcg_group *g;

	if (argc == 0)
		return sim_reply(c->fd, "err empty line\n", NULL);
	if (!strcmp(argv[0], "hello") && argc == 1)
		return sim_reply(c->fd, "ok\n", NULL);    /* the peer knows it is known */
	if (!strcmp(argv[0], "file") && argc == 3) {
		long pages = wl_pages(argv[2]);

		if (pages <= 0 || pages > (long)env->eng->m.mem_pages)
			return sim_reply(c->fd, "err bad file size %s\n", argv[2]);
		ret = sim_file_make(c, argv[1], pages);
		return sim_reply(c->fd, ret == -ENOSPC ?
				 "err no space: this user's files or declared memory are at their limit (%s)\n" :
				 ret ? "err cannot make file %s\n" : "ok\n", argv[1]);
	}
	if (wl_parse(argv, argc, &op, msg, sizeof(msg)))
		return sim_reply(c->fd, "err %s\n", msg);
	if (op.code == WL_ALLOC) {
		pthread_mutex_lock(&c->s->lock);
		ret = op.pages > (long)env->eng->m.mem_pages + (long)env->eng->m.swap_pages ?
		      -ENOSPC : sim_user_reserve(c->s, c->u, op.pages);
		if (!ret)
			c->pages += op.pages;     /* held until sim_account recounts */
		pthread_mutex_unlock(&c->s->lock);
		if (ret)
			return sim_reply(c->fd, "err no space: this user's declared memory is at its limit (%s)\n",
					 op.a);
	}
	if (!sim_peer_alive(c))
		return;                       /* nothing more for a dead task */
	g = task_group(env->eng, c->pid);
	if (!t->obj) {
		t->obj = vm_object_new(env->eng, g, true, (uint32_t)c->pid);
		if (t->obj)
			vm_object_set_mode(t->obj, &c->mode);
		pthread_mutex_lock(&c->s->lock);
		c->obj = t->obj;              /* now visible to sim_move */
		pthread_mutex_unlock(&c->s->lock);
	} else {
		vm_object_set_group(t->obj, g);
	}
	mcg_put(g);
	if (!t->obj)
		return sim_reply(c->fd, "err out of memory\n", NULL);
	ret = wl_exec(t, &op, (long)1 << 40, &costs, &cost, msg, sizeof(msg));
	sim_account(c, t);
	if (ret < 0)
		sim_reply(c->fd, "err %s\n", msg);
	else if (ret == WL_KILLED)
		sim_reply(c->fd, "killed\n", NULL);
	else if (ret == WL_STALL)
		sim_reply(c->fd, "err out of memory\n", NULL);
	else
		sim_reply(c->fd, "ok\n", NULL);
}

/* May this process be a simulated task? A process whose memory the mirror
 * accounts already cannot opt out of that; one that may becomes a
 * simulated task for the mirror too, which goes on charging its real
 * growth (past a small slack) to its group. NULL or the refusal. */
static const char *sim_admit(struct sim_conn *c)
{
	const struct source_env *env = c->s->env;
	int err = env->declare_simulated ? env->declare_simulated(env->mirror, c->pid, c->pidfd) : 0;

	if (err == -EBUSY)
		return "err refused: this process's memory is accounted from /proc (mirrored)\n";
	if (err)
		return "err refused: cannot follow this process\n";
	return sim_peer_alive(c) ? NULL : "err refused: the process is gone\n";
}

static void *sim_conn_main(void *arg)
{
	struct sim_conn *c = arg;
	struct sim_server *s = c->s;
	uint64_t rng = (uint64_t)c->pid * 2 + 1;
	struct wl_task t = { .cpu = (unsigned)c->pid, .rng = &rng, .file = sim_file_lookup,
			     .file_arg = c };
	char buf[SIM_LINE];
	const char *refused;
	size_t len = 0;

	c->mode = (struct charge_mode){ .cancelled = sim_cancelled, .cancel_arg = c };
	if ((refused = sim_admit(c)))
		sim_reply(c->fd, "%s", refused);
	while (!refused) {
		struct pollfd p[2] = { { .fd = c->fd, .events = POLLIN },
				       { .fd = c->pidfd, .events = POLLIN } };
		ssize_t n;
		char *nl;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;                /* the process exited: its socket is no one's */
		if ((n = read(c->fd, buf + len, sizeof(buf) - 1 - len)) <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			sim_line(c, &t, buf);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		if (len == sizeof(buf) - 1) {
			sim_reply(c->fd, "err line too long\n", NULL);
			break;
		}
	}
	/* the task is gone: its memory goes with it */
	pthread_mutex_lock(&s->lock);
	c->obj = NULL;                    /* sim_move holds a pin if it has it */
	pthread_mutex_unlock(&s->lock);
	if (t.obj) {
		wl_release(&t);
		vm_object_free(t.obj);
	}
	pthread_mutex_lock(&s->lock);
	for (struct sim_conn **pp = &s->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->u->pages -= c->pages;
	c->u->conns--;
	s->nconns--;
	if (!s->conns)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	close(c->fd);
	close(c->pidfd);
	free(c);
	return NULL;
}

/* The peer's pidfd, taken by the kernel at connect (no PID race), or
 * opened from its PID on kernels before 6.5. */
static int sim_peer_pidfd(int fd, pid_t pid)
{
	int pidfd = -1;
	socklen_t len = sizeof(pidfd);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0)
		return pidfd;
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void sim_refuse(int fd, const char *why)
{
	send(fd, why, strlen(why), MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void *sim_accept_main(void *arg)
{
	struct sim_server *s = arg;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SIM_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		struct sim_conn *c;
		struct sim_user *u;
		pthread_t th;
		bool dup;
		int pidfd, fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == ENOMEM) {
				if (errno != EINTR && errno != ECONNABORTED)
					usleep(10000);    /* out of fds: let some go */
				continue;
			}
			break;                    /* the socket was shut down */
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.pid <= 0) {
			close(fd);
			continue;
		}
		if ((pidfd = sim_peer_pidfd(fd, cred.pid)) < 0) {
			sim_refuse(fd, "err refused: the process is gone\n");
			continue;
		}
		pthread_mutex_lock(&s->lock);
		u = sim_user_get(s, cred.uid);
		dup = sim_find_locked(s, cred.pid) != NULL;
		if (atomic_load(&s->stopping) || !u || s->nconns >= SIM_MAX_CONNS ||
		    u->conns >= SIM_USER_CONNS || dup || !(c = malloc(sizeof(*c)))) {
			pthread_mutex_unlock(&s->lock);
			close(pidfd);
			sim_refuse(fd, dup ? "err refused: this process is connected already\n" :
				       "err too many connections (EMFILE)\n");
			continue;
		}
		*c = (struct sim_conn){ .s = s, .fd = fd, .pidfd = pidfd, .pid = cred.pid, .u = u };
		if (pthread_create(&th, &attr, sim_conn_main, c)) {
			pthread_mutex_unlock(&s->lock);
			free(c);
			close(pidfd);
			sim_refuse(fd, "err out of memory\n");
			continue;
		}
		c->next = s->conns;
		s->conns = c;
		s->nconns++;
		u->conns++;
		pthread_mutex_unlock(&s->lock);
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

struct sim_server *sim_start(struct source_env *env)
{
	struct sim_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!s)
		return NULL;
	s->env = env;
	/* half the machine: one user cannot declare what all the others need */
	s->user_pages = (long)(env->eng->m.mem_pages + env->eng->m.swap_pages) / 2;
	if (s->user_pages < 1)
		s->user_pages = 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	if (sim_socket_path(env->mountpoint, s->path, sizeof(s->path)))
		goto fail;
	mkdir(SIM_DIR, 0755);
	unlink(s->path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(s->path, 0666) || listen(s->fd, 64) ||
	    pthread_create(&s->thread, NULL, sim_accept_main, s)) {
		if (s->fd >= 0)
			close(s->fd);
		goto fail;
	}
	return s;
fail:
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

void sim_stop(struct sim_server *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, true);    /* ends OOM waits of its tasks */
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->fd);
	unlink(s->path);
	/* end every connection and wait for its thread: they use the engine */
	pthread_mutex_lock(&s->lock);
	for (struct sim_conn *c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (s->conns)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void sim_free(struct sim_server *s)
{
	if (!s)
		return;
	/* the files' objects are the engine's and go with it */
	while (s->users) {
		struct sim_user *u = s->users;

		s->users = u->next;
		free(u);
	}
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int sim_src_move(void *self, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	return sim_move(self, tgid, dst, mask);
}

static bool sim_src_kill(void *self, pid_t pid)
{
	return sim_kill(self, pid);
}

/* A simulated task's memory is what it declares: nothing to follow at an
 * attach, nothing to refresh before a read (the mirror does both for the
 * real process behind it). */
const struct source_ops sim_source_ops = {
	.name = "sim",
	.move = sim_src_move,
	.kill = sim_src_kill,
};
