/* hier.h: the companion hierarchies of memcgfs-run's view (cpuset,
 * cpu,cpuacct, devices, freezer, pids, blkio, net_cls,net_prio,
 * perf_event, hugetlb, rdma, name=systemd) as writable stand-ins: groups
 * made and removed, control files with the kernel's names, modes,
 * defaults and grammars whose values are kept, membership of real tasks
 * per hierarchy, the devices controller's rules as the kernel keeps them,
 * cpuset's inheritance, freezer's stop and continue. What touches the
 * system (a task's parent, start time, state; a signal) goes through
 * struct hier_os, so the unit suite drives it with a fake. */
#ifndef MEMCGFS_BRIDGE_HIER_H
#define MEMCGFS_BRIDGE_HIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bridge/view.h"

/* A task as the system describes it. */
struct hier_task_info {
	pid_t tgid, ppid;
	uint64_t start;   /* start time (clock ticks after boot): tells a reused id */
	bool stopped;     /* in the stopped state (T) */
	uid_t uid, suid;  /* its real and saved user ids */
};

struct hier_os {
	/* TID's description; -ESRCH once it is gone */
	int (*task)(void *arg, pid_t tid, struct hier_task_info *out);
	/* every task id (threads included), into OUT (up to MAX): the count */
	long (*tasks)(void *arg, pid_t *out, size_t max);
	/* the thread ids of process TGID: the count, or a negative errno */
	long (*threads)(void *arg, pid_t tgid, pid_t *out, size_t max);
	int (*signal)(void *arg, pid_t tid, int sig);
	/* a task that may not be moved (NULL: none): EINVAL, as a kernel
	 * thread is to cgroupfs */
	bool (*unmovable)(void *arg, pid_t tid);
	void *arg;
};

/* Who asks (a FUSE request's caller): writes to devices.* need the
 * capability, as the kernel's capable(CAP_SYS_ADMIN); 0 written to tasks
 * is the writer, who may move only a task of its own user unless it is
 * root (cgroup v1's rule). */
struct hier_caller {
	pid_t pid;       /* "0" written to tasks names it */
	uid_t uid;       /* a new group's owner (its fsuid, fsgid) */
	gid_t gid;
	bool sys_admin;
};

/* A directory's or file's owner and mode (chown and chmod keep them). */
struct hier_attr {
	unsigned mode;
	uid_t uid;
	gid_t gid;
};

#define HIER_MAX_FILES 40
#define HIER_LIST_MAX 4096     /* a CPU or node list's text */
#define HIER_NAME_MAX 255
#define HIER_MAX_TASKS 65536  /* tasks one listing looks at */

struct hier_group;
struct hier_set;

/* The set of every stand-in hierarchy; ONLINE_CPUS and ONLINE_MEMS are
 * the system's lists (cpuset's root), HUGE_KB the huge page sizes. NULL
 * on ENOMEM. The roots belong to OWNER and GROUP. */
struct hier_set *hier_new(const struct hier_os *os, const char *online_cpus,
			  const char *online_mems, const unsigned *huge_kb, int nhuge,
			  uid_t owner, gid_t group);
void hier_free(struct hier_set *s);

/* Whether hierarchy H (an enum view_ctl) is a stand-in. */
bool hier_is_standin(int h);

/* ---- the tree ---- */
/* Group ids are small numbers, 0 the root, stable while the group lives. */
struct hier_group *hier_group(struct hier_set *s, int h, unsigned id);
struct hier_group *hier_child(struct hier_set *s, int h, const struct hier_group *g,
			      const char *name);
unsigned hier_id(const struct hier_group *g);
const char *hier_name(const struct hier_group *g);
/* the I-th child (NULL past the last) */
struct hier_group *hier_nth_child(const struct hier_group *g, size_t i);
/* The group's path from the root ("/" for the root) into OUT. */
int hier_path(const struct hier_group *g, char *out, size_t size);
long hier_count(const struct hier_set *s, int h);
/* A new group, its directory and files owned by WHO (as the kernel's
 * cgroup_kn_set_ugid does). */
int hier_mkdir(struct hier_set *s, int h, struct hier_group *parent, const char *name,
	       const struct hier_caller *who, struct hier_group **out);
int hier_rmdir(struct hier_set *s, int h, struct hier_group *parent, const char *name);

/* The attributes of G's file FILE, or of its directory (FILE -1). */
struct hier_attr *hier_attr(struct hier_group *g, int file);

/* ---- files ---- */
/* The I-th file of group G (-ENOENT past the last): name and mode. */
int hier_file(const struct hier_set *s, int h, const struct hier_group *g, int i,
	      const char **name, unsigned *mode);
int hier_file_index(const struct hier_set *s, int h, const struct hier_group *g, const char *name);
/* Whether file FILE (an index hier_file returned) is one of G's. */
bool hier_file_here_at(const struct hier_set *s, int h, const struct hier_group *g, int file);
/* File FILE's mode as the kernel made it (chmod aside). */
unsigned hier_file_mode(const struct hier_set *s, int h, int file);
/* The file's text, malloc'd, into *OUT. */
int hier_read(struct hier_set *s, int h, struct hier_group *g, int file, char **out, size_t *len);
/* One write(2) of BUF to the file: 0 or the kernel's errno. */
int hier_write(struct hier_set *s, int h, struct hier_group *g, int file, const char *buf,
	       size_t len, const struct hier_caller *who);

/* ---- membership ---- */
/* TID's group in hierarchy H (the root when it is not known). */
struct hier_group *hier_group_of(struct hier_set *s, int h, pid_t tid);
/* Process MAKER is about to make a process with CLONE_PARENT (its real
 * parent will be MAKER's parent): the next new process of that parent
 * started at or after NOW (clock ticks after boot, as start times are)
 * starts in MAKER's groups, not its parent's, as the kernel places a
 * child where the task that made it is. Forgotten after 10 s. 0 or a
 * negative errno. */
int hier_maker(struct hier_set *s, pid_t maker, uint64_t now);

#endif
