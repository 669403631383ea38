/* view.h: what memcgfs-run shows a program in place of the kernel's
 * /proc files: which paths are answered, and their text, made from the
 * real text and what the wrapper set up. Pure functions on strings (no
 * I/O), so the unit suite checks every rule. */
#ifndef MEMCGFS_BRIDGE_VIEW_H
#define MEMCGFS_BRIDGE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The hierarchies shown as cgroup v1, laid out as a systemd host lays
 * them out: memcgfs's memory, and the others as memcgfs-run's writable
 * stand-ins (hier.h). */
enum view_ctl {
	VIEW_CPUSET, VIEW_CPU /* cpu,cpuacct */, VIEW_MEMORY, VIEW_DEVICES, VIEW_FREEZER,
	VIEW_NET /* net_cls,net_prio */, VIEW_BLKIO, VIEW_PERF_EVENT, VIEW_HUGETLB, VIEW_PIDS,
	VIEW_RDMA, VIEW_SYSTEMD /* name=systemd */, VIEW_NCTL
};
/* the directory under /sys/fs/cgroup ("cpu,cpuacct", "systemd") */
extern const char *const view_ctl_name[VIEW_NCTL];
/* the field of /proc/PID/cgroup ("cpu,cpuacct", "name=systemd") */
extern const char *const view_ctl_field[VIEW_NCTL];
/* the mount's own options in mountinfo, after "rw," */
extern const char *const view_ctl_opts[VIEW_NCTL];
/* the links a systemd host has beside them: name, target */
extern const char *const view_links[][2];
#define VIEW_NLINKS 4

#define VIEW_CGROUP_TOP "/sys/fs/cgroup"
#define VIEW_MAX_HIDDEN 64
#define VIEW_MAX_BOUND 64
/* cgroupfs's statfs f_type (linux/magic.h CGROUP_SUPER_MAGIC) */
#define VIEW_CGROUP_MAGIC 0x27e0ebL

/* What the wrapper's mount namespace holds, by the kernel's mount ids
 * (the first field of mountinfo): the tmpfs at /sys/fs/cgroup, one mount
 * per hierarchy, and the mounts that were below /sys/fs/cgroup and could
 * not be unmounted (a user namespace cannot uncover locked mounts), which
 * the listings leave out. hier[] are the hierarchy ids shown for each;
 * a hierarchy whose controllers the kernel lacks is not mounted (ctl_id
 * 0) and not shown.
 * bound_id[] are the mounts the mount guard made for a program's own
 * cgroup mounts (a clone of hierarchy bound_ctl[]), shown as that
 * hierarchy too; past VIEW_MAX_BOUND the oldest is forgotten. */
struct view_ns {
	int top_id;
	int ctl_id[VIEW_NCTL];
	/* each hierarchy's superblock (makedev of mountinfo's third field):
	 * how a mount of it is known in another namespace (a container's),
	 * where mount ids are the copies' */
	unsigned long long dev[VIEW_NCTL];
	int hier[VIEW_NCTL];
	int nhidden;
	int hidden[VIEW_MAX_HIDDEN];
	unsigned nbound;
	int bound_id[VIEW_MAX_BOUND];
	int bound_ctl[VIEW_MAX_BOUND];
	/* --group-as-root: the memcgfs group (a path from the mount's root)
	 * shown as the memory hierarchy's root, as in a cgroup namespace made
	 * there; "" for the mount's own root */
	char root[1024];
};

/* A growing text; every adder returns 0 or -ENOMEM. */
struct view_buf {
	char *p;
	size_t len, cap;
};
int view_buf_add(struct view_buf *b, const char *s, size_t n);
int view_buf_printf(struct view_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void view_buf_free(struct view_buf *b);

/* Which file a path names. */
enum view_kind {
	VIEW_NONE = 0,
	VIEW_MOUNTS,     /* /proc/[PID|self|...]/mounts, /proc/mounts */
	VIEW_MOUNTINFO,  /* /proc/.../mountinfo */
	VIEW_CGROUP,     /* /proc/.../cgroup (a process's groups) */
	VIEW_CGROUPS,    /* /proc/cgroups (the controllers) */
	VIEW_MTAB,       /* /etc/mtab: answered if it links to mounts */
};
/* Whose file: the caller's process or thread, or a number's. */
enum view_who { VIEW_WHO_SELF = 1, VIEW_WHO_THREAD_SELF, VIEW_WHO_PID };
struct view_req {
	enum view_kind kind;
	enum view_who who;
	pid_t pid;       /* VIEW_WHO_PID: /proc/PID or /proc/X/task/PID */
};

/* True if the last component of PATH is a name view_classify can answer
 * (the cheap test made before resolving anything). */
bool view_maybe(const char *path);
/* Joins BASE (absolute) and PATH (relative, or absolute: BASE ignored),
 * resolving ".", ".." and repeated slashes lexically, into OUT. 0, or
 * -ENAMETOOLONG. */
int view_join(const char *base, const char *path, char *out, size_t size);
/* Classifies an absolute, normalized path; VIEW_NONE for any other. */
struct view_req view_classify(const char *abs);

/* The hierarchy ids to show: past the largest in the real /proc/cgroups
 * and in a process's real cgroup list (which alone names the named
 * hierarchies), so no real hierarchy shares one. */
void view_pick_hier(struct view_ns *ns, const char *proc_cgroups, const char *self_cgroup);

/* Returns the hierarchy a mount id is, or -1. */
int view_ctl_of(const struct view_ns *ns, int mount_id);
/* Returns the hierarchy whose superblock is DEV (makedev), or -1. */
int view_ctl_of_dev(const struct view_ns *ns, unsigned long long dev);
/* Records a mount the guard bound, a clone of hierarchy CTL. */
void view_add_bound(struct view_ns *ns, int mount_id, int ctl);

/* The synthesized texts, appended to OUT: 0 or -ENOMEM (-EAGAIN from
 * view_mounts when the two real texts do not list the same mounts, as
 * when a mount came or went between the reads: read both again). In a
 * listing of another namespace (no line is top_id: a container's), a
 * mount at or below /sys/fs/cgroup of one of the hierarchies'
 * superblocks is shown as that hierarchy, and the rest comes back
 * unchanged. In mountinfo, a hierarchy's root is shown from ROOTS[c] (a
 * cgroup namespace's root; ROOTS NULL: memory's from ns->root). */
int view_mountinfo(const struct view_ns *ns, const char *real, const char *const roots[VIEW_NCTL],
		   struct view_buf *out);
int view_mounts(const struct view_ns *ns, const char *real_mounts, const char *real_mountinfo,
		struct view_buf *out);
/* PATH (a group, from the mount's root) as seen from the group ROOT, as
 * the kernel shows a group from a cgroup namespace: "/" for ROOT itself,
 * "/sub" below it, "/../x" beside it. 0, or -ENAMETOOLONG. */
int view_relative(const char *root, const char *path, char *out, size_t size);
/* /proc/PID/cgroup: the real lines of the view's controllers (and of
 * name=systemd) are replaced by the wrapper's, GROUPS[c] being the
 * process's group in hierarchy c (NULL: "/"), seen from ROOTS[c] (a
 * cgroup namespace's root; ROOTS NULL: none, but memory's seen from
 * ns->root); the v2 line and other named hierarchies pass. */
int view_cgroup(const struct view_ns *ns, const char *real, const char *const groups[VIEW_NCTL],
		const char *const roots[VIEW_NCTL], struct view_buf *out);
/* /proc/cgroups: a row per controller of a hierarchy the view has, with
 * its id and NGROUPS[c] groups; the rows of others are left out (no
 * hierarchy of theirs is mounted). */
int view_proc_cgroups(const struct view_ns *ns, const char *real, const long ngroups[VIEW_NCTL],
		      struct view_buf *out);

#endif
