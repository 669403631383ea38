/* sim.c: the simulated-task socket. One thread accepts; one thread per
 * connection reads workload lines, runs them on that task's virtual memory
 * (charging the group its pid is in at the time) and answers "ok", "err
 * MESSAGE" or "killed". Closing the connection ends the task: its anon and
 * shmem go, file pages stay in the shared page cache. Never signals the
 * daemon, any PID 1, or a process with oom_score_adj -1000. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/move.h"
#include "engine/task.h"
#include "engine/vm.h"
#include "engine/workload.h"
#include "fs/cgfs.h"
#include "fs/proc.h"
#include "fs/sim.h"

#define SIM_DIR       "/run/memcgfs"
#define SIM_MAX_FILES 256
#define SIM_LINE      1024

struct sim_file {
	char name[WL_NAME];
	struct vm_object *obj;
	struct vm_region *r;
};

struct sim_conn {
	struct sim_server *s;
	int fd;
	pid_t pid;
	struct vm_object *obj;        /* the task's memory, once it has any */
	struct sim_conn *next;
};

struct sim_server {
	struct cgfs *fs;
	int fd;
	char path[108];
	pthread_t thread;
	pthread_mutex_t lock;         /* files, connections */
	pthread_cond_t idle;          /* the last connection ended */
	struct sim_file files[SIM_MAX_FILES];
	int nfiles;
	struct sim_conn *conns;
	bool stopping;
};

int sim_socket_path(const char *mountpoint, char *buf, size_t size)
{
	uint64_t h = 1469598103934665603ull;      /* FNV-1a */

	for (const char *p = mountpoint; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return snprintf(buf, size, SIM_DIR "/%016llx.sock", (unsigned long long)h) < (int)size ?
		0 : -ENAMETOOLONG;
}

/* A named file of the page cache shared by all simulated tasks; created
 * with size pages the first time. */
static struct vm_region *sim_file_get(struct sim_server *s, const char *name, long pages)
{
	struct vm_region *r = NULL;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nfiles && !r; i++)
		if (!strcmp(s->files[i].name, name))
			r = s->files[i].r;
	if (!r && pages > 0 && s->nfiles < SIM_MAX_FILES) {
		struct sim_file *f = &s->files[s->nfiles];

		/* page cache belongs to no task: its charges go to whoever
		 * touches a page first */
		if ((f->obj = vm_object_new(s->fs->eng, s->fs->eng->root, false, 0)) &&
		    vm_region_new(f->obj, PK_FILE, (uint32_t)pages, &f->r) == 0) {
			snprintf(f->name, WL_NAME, "%s", name);
			r = f->r;
			s->nfiles++;
		} else if (f->obj) {
			vm_object_free(f->obj);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

static struct vm_region *sim_file_lookup(void *arg, const char *name)
{
	return sim_file_get(arg, name, 0);
}

static bool sim_connected(struct sim_server *s, pid_t pid)
{
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (struct sim_conn *c = s->conns; c && !found; c = c->next)
		found = c->pid == pid;
	pthread_mutex_unlock(&s->lock);
	return found;
}

bool sim_owns(struct sim_server *s, pid_t tgid, pid_t ppid)
{
	if (!s)
		return false;
	if (sim_connected(s, tgid))
		return true;
	/* a simulated task's fork, before it connects on its own */
	return ppid > 0 && sim_connected(s, ppid) && proc_same_exe(tgid, ppid);
}

int sim_move(struct sim_server *s, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	struct vm_object *o = NULL;
	struct move_stats st;
	int err;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	for (struct sim_conn *c = s->conns; c && !o; c = c->next)
		if (c->pid == tgid && c->obj) {
			o = c->obj;
			vm_object_pin(o);     /* the connection may end meanwhile */
		}
	pthread_mutex_unlock(&s->lock);
	if (!o)
		return 0;
	err = atomic_load(&o->dead) ? 0 : move_charges(o, dst, mask, &st);
	vm_object_unpin(o);
	return err;
}

void sim_kill(uint32_t pid, void *arg)
{
	int pidfd;

	if (proc_oom_exempt((pid_t)pid))
		return;
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0) {
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		close(pidfd);
	}
}

static void sim_reply(int fd, const char *fmt, const char *arg)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), fmt, arg);

	if (n > 0 && write(fd, buf, (size_t)n) < 0)
		return;                   /* the peer went away: EOF comes next */
}

/* Run one line for the task; its group is looked up afresh each time, so
 * a move through tasks/cgroup.procs redirects new charges. */
static void sim_line(struct sim_conn *c, struct wl_task *t, char *line)
{
	struct cgfs *fs = c->s->fs;
	char *argv[16], *save = NULL, *w, msg[128];
	int argc = 0, ret;
	struct wl_op op;
	struct wl_costs costs = { 0 };
	uint64_t cost = 0;
	struct mcg_group *g;

	for (w = strtok_r(line, " \t\r", &save); w && argc < 16; w = strtok_r(NULL, " \t\r", &save))
		argv[argc++] = w;
	if (argc == 0)
		return sim_reply(c->fd, "err empty line\n", NULL);
	if (!strcmp(argv[0], "hello") && argc == 1)
		return sim_reply(c->fd, "ok\n", NULL);    /* the peer knows it is known */
	if (!strcmp(argv[0], "file") && argc == 3) {
		long pages = wl_pages(argv[2]);

		return sim_reply(c->fd, pages > 0 && sim_file_get(c->s, argv[1], pages) ?
				 "ok\n" : "err cannot make file %s\n", argv[1]);
	}
	if (wl_parse(argv, argc, &op, msg, sizeof(msg)))
		return sim_reply(c->fd, "err %s\n", msg);
	g = task_group(fs->eng, c->pid);
	if (!t->obj) {
		t->obj = vm_object_new(fs->eng, g, true, (uint32_t)c->pid);
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
	if (ret < 0)
		sim_reply(c->fd, "err %s\n", msg);
	else if (ret == WL_KILLED)
		sim_reply(c->fd, "killed\n", NULL);
	else if (ret == WL_STALL)
		sim_reply(c->fd, "err out of memory\n", NULL);
	else
		sim_reply(c->fd, "ok\n", NULL);
}

static void *sim_conn_main(void *arg)
{
	struct sim_conn *c = arg;
	uint64_t rng = (uint64_t)c->pid * 2 + 1;
	struct wl_task t = { .cpu = (unsigned)c->pid, .rng = &rng, .file = sim_file_lookup,
			     .file_arg = c->s };
	char buf[SIM_LINE];
	size_t len = 0;
	ssize_t n;

	while ((n = read(c->fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		char *nl;

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
	pthread_mutex_lock(&c->s->lock);
	c->obj = NULL;                    /* sim_move holds a pin if it has it */
	pthread_mutex_unlock(&c->s->lock);
	if (t.obj) {
		wl_release(&t);
		vm_object_free(t.obj);
	}
	pthread_mutex_lock(&c->s->lock);
	for (struct sim_conn **pp = &c->s->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (!c->s->conns)
		pthread_cond_broadcast(&c->s->idle);
	pthread_mutex_unlock(&c->s->lock);
	close(c->fd);
	free(c);
	return NULL;
}

static void *sim_accept_main(void *arg)
{
	struct sim_server *s = arg;

	for (;;) {
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		struct sim_conn *c;
		pthread_t th;
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;          /* the socket was shut down */
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.pid <= 0 ||
		    !(c = malloc(sizeof(*c)))) {
			close(fd);
			continue;
		}
		*c = (struct sim_conn){ s, fd, cred.pid, NULL, NULL };
		pthread_mutex_lock(&s->lock);
		if (s->stopping || pthread_create(&th, NULL, sim_conn_main, c)) {
			pthread_mutex_unlock(&s->lock);
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		s->conns = c;
		pthread_mutex_unlock(&s->lock);
		pthread_detach(th);
	}
}

struct sim_server *sim_start(struct cgfs *fs)
{
	struct sim_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!s)
		return NULL;
	s->fs = fs;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	if (sim_socket_path(fs->mountpoint, s->path, sizeof(s->path)))
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
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->fd);
	unlink(s->path);
	/* end every connection and wait for its thread: they use the engine */
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (struct sim_conn *c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (s->conns)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	/* the shared files are the engine's objects and go with it */
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
