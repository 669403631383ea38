/* source.h: what a charge source is, to the file layer and the daemon. A
 * source owns the memory of some tasks (mirrored real processes, simulated
 * tasks) and charges it to the engine; it registers one source_ops with
 * the file layer, which reaches sources through these only, never by
 * name. Owns no state; includes nothing of the file layer. */
#ifndef MEMCGFS_SOURCE_H
#define MEMCGFS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mcg_engine;
struct mcg_group;
struct mirror;
struct sim_server;
struct watchdog;

struct source_ops {
	const char *name;
	/* A write into tasks or cgroup.procs is about to move process tgid to
	 * dst (before any move of charges): what the source holds of it is
	 * brought up to date where it is now, for pages belong to the group
	 * they were faulted in (§11.9). */
	void (*settle)(void *self, pid_t tgid, struct mcg_group *dst);
	/* move_charge_at_immigrate: the charges of process tgid selected by
	 * mask move to dst. 0 (also when tgid is not this source's), or
	 * -ENOMEM / -ENODEV with nothing moved. */
	int (*move)(void *self, pid_t tgid, struct mcg_group *dst, unsigned mask);
	/* A thread of process tgid entered a child group. */
	void (*attached)(void *self, pid_t tgid);
	/* A usage or statistics file of g is about to be read: bring g's
	 * subtree up to date. */
	void (*refresh)(void *self, struct mcg_group *g);
	/* A tasks or cgroup.procs file is about to be read: every task the
	 * source saw made somewhere else than its fork's process event put
	 * it (made_by) is placed first, so that a new child reading where
	 * it is finds its maker's group. NULL: none. */
	void (*place)(void *self);
	/* The OOM killer chose the task with that id: if it is this source's,
	 * signal it through the pidfd the source holds and return true. */
	bool (*kill)(void *self, pid_t pid);
	/* What the source sees and how, one "key value" line or more for
	 * memcgctl status, into buf (snprintf's contract). NULL: nothing. */
	int (*describe)(void *self, char *buf, size_t size);
};

/* What the sources of one mount share, owned by the daemon: the engine,
 * the mount point (it names the socket), the watchdog, and the two
 * questions the sources ask each other, which the daemon wires (NULL: no
 * such source), so that neither source names the other. */
struct source_env {
	struct mcg_engine *eng;
	const char *mountpoint;
	struct watchdog *watchdog;
	/* The simulated-task server's (sim): is process tgid, child of ppid,
	 * a simulated task's fork, which connects on its own in a moment? */
	bool (*fork_of_simulated)(void *sim, pid_t tgid, pid_t ppid);
	void *sim;
	/* The mirror's: process tgid (its pidfd) becomes a simulated task. 0,
	 * -EBUSY when its memory is accounted from /proc already, -ENOMEM. */
	int (*declare_simulated)(void *mirror, pid_t tgid, int pidfd);
	void *mirror;
	/* The file surface's (fs): new process child was made by process
	 * maker, not its real parent real (clone with CLONE_PARENT), which
	 * the mirror's tracer saw: it starts in maker's group, as the
	 * kernel's cgroup_post_fork puts it, not where its fork's process
	 * event placed it. */
	void (*made_by)(void *fs, pid_t child, pid_t maker, pid_t real);
	void *fs;
};

extern const struct source_ops sim_source_ops;
extern const struct source_ops mirror_source_ops;

#endif
