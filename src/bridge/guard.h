/* guard.h: memcgfs-run's mount guard. Inside the wrapper no call of the
 * mount family reaches a cgroup filesystem of the host: a new cgroup v1
 * mount of a hierarchy the view has (memory, cpu, cpuacct, cpuset) binds
 * the view's own tree instead, every other cgroup or cgroup2 mount fails
 * with EPERM, binds, clones, moves and reconfigurations of a cgroup
 * filesystem fail with EPERM, and the view's own mounts cannot be
 * unmounted or moved. Everything else goes on to the kernel untouched.
 * The decisions on strings are pure functions (unit-tested); those on
 * paths are made by a short-lived helper that enters the caller's
 * namespaces, root and cwd, so a path means what it means to the caller. */
#ifndef MEMCGFS_BRIDGE_GUARD_H
#define MEMCGFS_BRIDGE_GUARD_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bridge/view.h"

/* guard_call's answer "let the kernel run the call as it is" */
#define GUARD_CONTINUE 1

/* What mount(2) does with FLAGS, in the kernel's order of tests
 * (path_mount): the first that applies. */
enum guard_mount_kind {
	GUARD_MNT_RECONFIGURE,  /* MS_REMOUNT|MS_BIND: a mount's own flags */
	GUARD_MNT_REMOUNT,      /* MS_REMOUNT: the superblock's options */
	GUARD_MNT_BIND,         /* MS_BIND (MS_REC: with its submounts) */
	GUARD_MNT_PROPAGATION,  /* MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE */
	GUARD_MNT_MOVE,         /* MS_MOVE */
	GUARD_MNT_NEW,          /* a new mount of a filesystem type */
};
enum guard_mount_kind guard_mount_kind(unsigned long flags);

/* "cgroup" or "cgroup2": the types the guard answers. */
bool guard_cgroup_type(const char *fstype);

/* The kernel's longest hierarchy name (MAX_CGROUP_ROOT_NAMELEN - 1). */
#define GUARD_NAME_MAX 63

/* Where the kernel refuses a cgroup v1 mount, in its order: parsing the
 * options (cgroup1_parse_param); then, after cgroup1_get_tree's check of
 * CAP_SYS_ADMIN over the caller's cgroup namespace, the options together
 * (check_cgroupfs_options), the roots (cgroup1_root_to_use), and a new
 * hierarchy (EPERM outside the initial cgroup namespace, then the
 * controllers' rebind). */
enum guard_v1_stage { GUARD_V1_PARSE, GUARD_V1_OPTIONS, GUARD_V1_ROOT, GUARD_V1_NEW };

/* The controllers (bits in guard_v1_names' order, cpuset first) this
 * kernel has enabled, from /proc/cgroups (every one if unreadable), and
 * memory always: memcgfs serves it whatever the kernel has. */
unsigned long guard_v1_have(void);

/* The view hierarchy a cgroup v1 mount with option string OPTS (mount(2)'s
 * data, NULL for none) asks for, HAVE being the kernel's controllers: a
 * VIEW_* index when its controllers are exactly one hierarchy of the view
 * (or its name alone names one), else a negative errno as the kernel's
 * would be on a host mounted as the view, with the reason in WHY and the
 * stage in *STAGE: EINVAL for what the kernel's parser refuses (a
 * controller it lacks, none with controllers or without a name, all with
 * a controller, noprefix beside a controller other than cpuset, a bad or
 * repeated name=, a name alone that names nothing); EBUSY for a set that
 * would take controllers from the view's hierarchies (all of them, one
 * co-mounted apart, a name whose hierarchy has other controllers); EPERM
 * for what memcgfs-run will not do (a new hierarchy of none or of
 * controllers the view does not mount, a release agent). */
int guard_v1_ctl(const char *opts, unsigned long have, enum guard_v1_stage *stage, char *why,
		 size_t size);

#define GUARD_CGNS 32

struct guard {
	const char *mnt;           /* the memcgfs mount, as the supervisor sees it */
	struct view_ns ns;         /* the view's mount ids */
	int view_fd[VIEW_NCTL];    /* O_PATH roots of the view's hierarchies (wrapper's namespace) */
	int mntns_fd;              /* the wrapper's mount namespace */
	int userns_fd;             /* its user namespace, -1 when it has none of its own (root) */
	ino_t cgns_ino;            /* the wrapper's cgroup namespace */
	unsigned long have;        /* the kernel's v1 controllers (guard_v1_have) */
	unsigned long bound;       /* cgroup mounts answered with a view tree */
	unsigned long refused;     /* calls refused (EPERM, or a cgroup mount's
				    * EINVAL or EBUSY) */
	int qfd;                   /* the stand-ins' server's questions (-1: none) */
	/* cgroup namespaces other than the wrapper's, with the groups their
	 * first process seen was in: their roots (the kernel's are where the
	 * namespace was made, which nothing here sees) */
	struct guard_cgns {
		ino_t ino;
		char *root[VIEW_NCTL];   /* malloc'd; NULL: "/" */
	} cgns[GUARD_CGNS];
	unsigned ncgns;
};

/* Opens what the guard acts with, from the wrapper's first process CHILD
 * (still in its namespaces, before its command): 0 or a negative errno. */
int guard_open(struct guard *g, pid_t child, const char *mnt, const struct view_ns *ns,
	       bool own_userns);
void guard_close(struct guard *g);

/* The roots of process TGID's cgroup namespace, one per hierarchy
 * (memory's a memcgfs group, the stand-ins' from their server), into
 * ROOTS: 1 when it has one of its own, 0 when it shares the wrapper's
 * (ROOTS untouched), a negative errno. The first process seen in a
 * namespace fixes its roots: its groups then. */
int guard_cgns_roots(struct guard *g, pid_t tgid, char roots[VIEW_NCTL][4096]);

/* One stopped mount-family call (mount, umount2, fsopen, fspick,
 * open_tree, move_mount; the native ABI) of thread TID with arguments
 * ARGS. VALID(ARG) is asked before anything is done on its behalf (the
 * TID may have been reused meanwhile). Returns GUARD_CONTINUE, 0 (done:
 * the call returns 0), or the negative errno the call fails with. */
int guard_call(struct guard *g, pid_t tid, int nr, const __u64 args[6],
	       bool (*valid)(void *), void *arg);

#endif
