/* tasks.c: reading and writing tasks / cgroup.procs. Validates ids with
 * /proc in the writer's PID namespace, applies the uid rule of §6.1 and
 * hands membership to the engine. Never signals a task and never keeps
 * per-task state of its own (the engine and pidwatch do). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fs/registry.h"
#include "fs/tasks.h"
#include "os/pidwatch.h"
#include "os/proc.h"


/* The root lists every live task (or process) with a thread outside the
 * child groups. */
static long tasks_root_ids(struct cgfs *fs, bool procs, pid_t **out)
{
	pid_t *all, *v;
	long n = proc_list(!procs, &all), k = 0;

	if (n < 0)
		return n;
	if (!(v = malloc(((size_t)n + 1) * sizeof(*v)))) {
		free(all);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		bool in_root = !task_in_child(fs->eng, all[i]);

		if (procs && !in_root) {
			pid_t *th;
			long nth = proc_threads_of(all[i], &th);

			for (long j = 0; j < nth && !in_root; j++)
				in_root = !task_in_child(fs->eng, th[j]);
			if (nth >= 0)
				free(th);
		}
		if (in_root)
			v[k++] = all[i];
	}
	free(all);
	*out = v;
	return k;
}

static bool tasks_gone(pid_t tid)
{
	return syscall(SYS_tkill, tid, 0) < 0 && errno == ESRCH;
}

int cgfs_tasks_read(struct cgfs_req *r, int procs, struct cgfs_out *o)
{
	struct proc_view view;
	pid_t *ids;
	long n, k = 0;
	int err;

	if ((err = proc_view_of(r->pid, &view)))
		return err;
	pidwatch_sync(r->fs->watch);
	cgfs_sources_place(r->fs);    /* (CLONE_PARENT: runc's init reads
				       * its group as soon as it runs) */
	n = mcg_is_root(r->g) ? tasks_root_ids(r->fs, procs, &ids)
			      : task_list(r->fs->eng, r->g, procs, &ids);
	if (n < 0)
		return (int)n;
	/* Translate into the reader's namespace, dropping invisible ones. */
	for (long i = 0; i < n; i++) {
		struct proc_task t;

		/* Exits reach the engine through pidfds a moment later; a
		 * thread that is already gone is not listed meanwhile. */
		if (!mcg_is_root(r->g) && tasks_gone(ids[i]))
			continue;
		if (view.ours) {
			ids[k++] = ids[i];
			continue;
		}
		if (proc_read_task(ids[i], &t) == 0 && (t.tid = proc_id_in_view(&view, &t)) > 0)
			ids[k++] = t.tid;
	}
	if (!view.ours)
		qsort(ids, (size_t)k, sizeof(*ids), proc_pid_cmp);
	for (long i = 0; i < k; i++)
		cgfs_printf(o, "%d\n", (int)ids[i]);
	free(ids);
	return 0;
}

bool cgfs_tasks_may_move(const struct prof *p, uid_t opener_uid, uid_t writer_uid,
			 uid_t target_ruid, uid_t target_suid)
{
	uid_t uid = prof_has(p, PF_OPEN_CREDS) ? opener_uid : writer_uid;

	return uid == 0 || uid == target_ruid || uid == target_suid;
}

int cgfs_tasks_attach_thread(struct cgfs *fs, pid_t tid, pid_t tgid, struct mcg_group *g)
{
	struct mcg_group *old;
	int fd = -1, drop, err;

	if (!mcg_is_root(g)) {
		fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
		if (fd < 0 && errno == ESRCH)
			return 0;          /* exiting: skipped, as the kernel does */
		if (fd < 0 && errno == EINVAL && tid == tgid)
			fd = (int)syscall(SYS_pidfd_open, tid, 0);
		/* Without a pidfd (a thread that is not its process's leader,
		 * before Linux 6.9) the thread is attached if it is still
		 * there, and the process connector tells its exit (pidwatch) */
		else if (fd < 0 && errno == EINVAL && syscall(SYS_tgkill, tgid, tid, 0) && errno == ESRCH)
			return 0;
	}
	/* the group it leaves records it no more: its records change too */
	old = fs->journal.changed ? task_group(fs->eng, tid) : NULL;
	err = task_attach(fs->eng, tid, tgid, g, fd, &drop);
	if (old) {
		if (!err && old != g && !mcg_is_root(old))
			fs->journal.changed(fs->journal.arg, old);
		mcg_put(old);
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!mcg_is_root(g))
		cgfs_sources_attached(fs, tgid);
	if (drop >= 0)
		pidwatch_forget(fs->watch, drop);
	if (fd >= 0 && drop != fd)
		pidwatch_add(fs->watch, fd, tid);
	return 0;
}

int cgfs_tasks_write(struct cgfs_req *r, int procs, const struct gram_value *v)
{
	struct cgfs *fs = r->fs;
	struct proc_view view;
	struct proc_task t;
	pid_t host, *threads = NULL;
	unsigned mask;                /* move_charge_at_immigrate, read once */
	long n = 1;
	int err;

	/* (1) removed group and (2) parse errors were handled by the caller. */
	if ((err = proc_view_of(r->pid, &view)))
		return err;
	if (v->pid == 0)
		host = r->pid;                                 /* the writer itself */
	else if ((host = proc_host_id(&view, v->pid)) < 0)
		return -ESRCH;                                 /* (3) */
	if ((err = proc_read_task(host, &t)))
		return err;
	if (procs && t.tgid != t.tid && (err = proc_read_task(t.tgid, &t)))
		return err;                                    /* (4) the leader */
	/* (5) kernel threads, and the mount's own processes, which are to
	 * it what kernel threads are to cgroupfs */
	if (proc_unmovable(&t) || proc_is_daemon(t.tgid, &t))
		return -EINVAL;
	if (!cgfs_tasks_may_move(fs->prof, r->fh->uid, r->uid, t.ruid, t.suid))
		return -EACCES;                                /* (6) */
	if (procs && (n = proc_threads_of(t.tgid, &threads)) < 0)
		return n == -ENOENT ? 0 : (int)n;
	/* what it has stays where it was faulted (§11.9): the sources
	 * account it there first */
	cgfs_sources_settle(fs, t.tgid, r->g);
	/* [<=6.12] move_charge_at_immigrate of the destination: only moving a
	 * thread-group leader moves charges; a failed move fails the attach
	 * (ENOMEM) with nothing moved (§5.11) */
	mask = mcg_move_charge(r->g);
	if (!prof_has(fs->prof, PF_NO_MOVE_CHARGE) && mask && (procs || host == t.tgid) &&
	    (err = cgfs_sources_move(fs, t.tgid, r->g, mask))) {
		free(threads);
		return err;
	}
	pidwatch_sync(fs->watch);
	pthread_mutex_lock(&fs->attach_lock);
	for (long i = 0; i < n && !err; i++)
		err = cgfs_tasks_attach_thread(fs, procs ? threads[i] : host, t.tgid, r->g);
	pthread_mutex_unlock(&fs->attach_lock);
	free(threads);
	return err;
}

/* ---- task lifetimes, as pidwatch reports them ---- */

/* Under attach_lock: TID's group G (a reference taken here) kept a while
 * after TID went. */
static void tasks_gone_note(struct cgfs *fs, pid_t tid, struct mcg_group *g)
{
	struct cgfs_gone *e = &fs->gone[fs->gone_next++ % CGFS_GONE];

	e->tid = tid;
	e->id = mcg_id(g);
	e->gen = mcg_gen(g);
}

/* Under attach_lock: TID's group now, or, gone, the one it left last; a
 * reference. */
static struct mcg_group *tasks_group_or_gone(struct cgfs *fs, pid_t tid)
{
	struct mcg_group *g = task_group(fs->eng, tid);
	struct proc_task t;

	/* (a living process at the root is there: an old record of its id
	 * is another's; a zombie, with no memory left, is gone) */
	if (!mcg_is_root(g) || (!proc_read_task(tid, &t) && t.rss_anon_kb >= 0))
		return g;
	for (unsigned k = 1; k <= CGFS_GONE; k++) {
		struct cgfs_gone *e = &fs->gone[(fs->gone_next - k) % CGFS_GONE];
		struct mcg_group *left;

		if (!e->id || e->tid != tid)
			continue;
		/* (the group it left, if it is still there: a removed one
		 * takes no one, and is not kept alive for this) */
		if ((left = mcg_by_id(fs->eng, e->id)) && mcg_gen(left) == e->gen &&
		    !mcg_removed(left)) {
			mcg_put(g);
			return left;
		}
		if (left)
			mcg_put(left);
		break;
	}
	return g;
}

static void tasks_exited(void *arg, struct pidwatch *w, pid_t tid, int fd)
{
	struct cgfs *fs = arg;
	struct mcg_group *g;
	bool leader;

	pthread_mutex_lock(&fs->attach_lock);
	g = task_group(fs->eng, tid);
	leader = task_tgid(fs->eng, tid) == tid;
	/* Only the entry that still holds this pidfd is removed; if an attach
	 * already dropped it, that attach closed (or will close) the fd. */
	if (task_exit(fs->eng, tid, fd) == 0) {
		pidwatch_forget(w, fd);
		if (leader && !mcg_is_root(g))
			tasks_gone_note(fs, tid, g);   /* (makers are processes) */
	}
	mcg_put(g);
	pthread_mutex_unlock(&fs->attach_lock);
}

int cgfs_tasks_clone_parent(struct cgfs *fs, pid_t caller, uid_t caller_uid, pid_t vtid)
{
	struct proc_view view;
	struct proc_task t;
	struct cgfs_maker *e = NULL;
	struct mcg_group *g;
	unsigned long long now = proc_ticks_now();
	pid_t host;
	int err;

	if ((err = proc_view_of(caller, &view)))
		return err;
	if (vtid <= 0 || (host = proc_host_id(&view, vtid)) < 0)
		return -ESRCH;
	if ((err = proc_read_task(host, &t)))
		return err;
	if (caller_uid != 0 && caller_uid != t.ruid && caller_uid != t.suid)
		return -EACCES;
	pidwatch_sync(fs->watch);
	pthread_mutex_lock(&fs->attach_lock);
	g = task_group(fs->eng, host);     /* (the thread's: a clone's child
					    * starts where its maker thread is) */
	/* its own earlier one, else a free or stale one, else the oldest */
	for (int i = 0; i < CGFS_MAKERS; i++) {
		struct cgfs_maker *m = &fs->makers[i];

		if (m->maker == host) {
			e = m;
			break;
		}
		if (!e || (e->id && (!m->id || now > m->since + CGFS_MAKER_TICKS || m->since < e->since)))
			e = m;
	}
	*e = (struct cgfs_maker){ .real = t.ppid, .maker = host, .ruid = t.ruid, .since = now,
				  .id = mcg_id(g), .gen = mcg_gen(g) };
	pthread_mutex_unlock(&fs->attach_lock);
	mcg_put(g);
	return 0;
}

/* Under attach_lock: was process CHILD of REAL made by a CLONE_PARENT told
 * before (cgfs_tasks_clone_parent)? Then true, with its maker's group in
 * *g (a reference; the root where that group is gone), the telling used
 * up. */
static bool tasks_take_maker(struct cgfs *fs, pid_t real, pid_t child, struct mcg_group **g)
{
	unsigned long long start, now = 0;
	struct cgfs_maker *best = NULL;
	struct proc_task t;
	bool read = false;

	for (int i = 0; i < CGFS_MAKERS; i++) {
		struct cgfs_maker *m = &fs->makers[i];

		if (!m->id || m->real != real)
			continue;
		if (!read) {
			if (proc_start_time(child, &start) || proc_read_task(child, &t))
				return false;
			now = proc_ticks_now();
			read = true;
		}
		if (now > m->since + CGFS_MAKER_TICKS) {
			m->id = 0;                 /* (stale: its clone made nothing) */
			continue;
		}
		if (m->since <= start && t.ruid == m->ruid && (!best || m->since > best->since))
			best = m;
	}
	if (!best)
		return false;
	*g = mcg_by_id(fs->eng, best->id);
	if (*g && (mcg_gen(*g) != best->gen || mcg_removed(*g))) {
		mcg_put(*g);
		*g = NULL;
	}
	if (!*g) {                               /* (gone: the root) */
		mcg_get(fs->eng->root);
		*g = fs->eng->root;
	}
	best->id = 0;
	return true;
}

/* A new task starts in the group of the thread that created it. */
static void tasks_forked(void *arg, pid_t parent, pid_t parent_tgid, pid_t child, pid_t child_tgid)
{
	struct cgfs *fs = arg;
	struct mcg_group *g;

	/* a process made with CLONE_PARENT, told before: where its maker is */
	if (child == child_tgid) {
		pthread_mutex_lock(&fs->attach_lock);
		if (tasks_take_maker(fs, parent_tgid, child, &g)) {
			if (!mcg_is_root(g) && cgfs_tasks_attach_thread(fs, child, child_tgid, g) == 0 &&
			    fs->journal.note)
				fs->journal.note(fs->journal.arg, g);
			pthread_mutex_unlock(&fs->attach_lock);
			mcg_put(g);
			return;
		}
		pthread_mutex_unlock(&fs->attach_lock);
	}
	if (!task_in_child(fs->eng, parent))
		return;
	pthread_mutex_lock(&fs->attach_lock);
	g = task_group(fs->eng, parent);
	if (!mcg_is_root(g) && cgfs_tasks_attach_thread(fs, child, child_tgid, g) == 0 &&
	    fs->journal.note)
		fs->journal.note(fs->journal.arg, g);  /* no reply waits: the saver writes it */
	pthread_mutex_unlock(&fs->attach_lock);
	mcg_put(g);
}

/* Under attach_lock: process CHILD, every thread it has by now, into G. */
static int tasks_made_attach(struct cgfs *fs, pid_t child, struct mcg_group *g)
{
	pid_t *threads = NULL;
	long n = proc_threads_of(child, &threads);
	int err = 0;

	if (n <= 0)   /* gone: skipped, as the kernel would */
		return cgfs_tasks_attach_thread(fs, child, child, g);
	for (long i = 0; i < n && !err; i++)
		err = cgfs_tasks_attach_thread(fs, threads[i], child, g);
	free(threads);
	return err;
}

void cgfs_tasks_made_by(struct cgfs *fs, pid_t child, pid_t maker, pid_t real)
{
	struct mcg_group *mg, *cg, *rg;

	/* the fork's process event first: the child is where it put it */
	pidwatch_sync(fs->watch);
	pthread_mutex_lock(&fs->attach_lock);
	/* (a maker that went meanwhile is where it was: runc's makers go
	 * as soon as they have made the next) */
	mg = tasks_group_or_gone(fs, maker);
	cg = task_group(fs->eng, child);
	rg = task_group(fs->eng, real);
	/* only where the event's placement stands (a write into tasks since
	 * has the last word) */
	if (cg == rg && mg != cg && tasks_made_attach(fs, child, mg) == 0) {
		struct mcg_group *now = task_group(fs->eng, child);

		if (now != mg && !mcg_is_root(mg))
			tasks_gone_note(fs, child, mg);   /* gone before it was placed */
		else if (fs->journal.note)
			fs->journal.note(fs->journal.arg, mg);
		mcg_put(now);
	}
	pthread_mutex_unlock(&fs->attach_lock);
	mcg_put(mg);
	mcg_put(cg);
	mcg_put(rg);
}

static const struct pidwatch_hooks tasks_hooks = {
	.exited = tasks_exited,
	.forked = tasks_forked,
};

void cgfs_tasks_watch_end(struct cgfs *fs)
{
	pidwatch_free(fs->watch);
	fs->watch = NULL;
	/* no exit nor CLONE_PARENT is told from here on */
	pthread_mutex_lock(&fs->attach_lock);
	for (int i = 0; i < CGFS_GONE; i++)
		fs->gone[i].id = 0;
	pthread_mutex_unlock(&fs->attach_lock);
}

struct pidwatch *cgfs_tasks_watch(struct cgfs *fs)
{
	return pidwatch_new(&tasks_hooks, fs);
}
