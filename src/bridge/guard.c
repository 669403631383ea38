/* guard.c: the mount guard (guard.h). Owns the decision on every
 * intercepted call of the mount family and the helper process that acts
 * for the caller: it enters the caller's namespaces, root and cwd, looks
 * at what a path names there, and binds a clone of a view tree where the
 * caller asked for a cgroup v1 mount. Never mounts anything but a view
 * tree, never lets a call through that it has seen create, bind, clone,
 * move or reconfigure a cgroup filesystem, and never runs the caller's
 * call itself: what it does not refuse or answer, the kernel runs as the
 * caller asked. Not a security boundary against the caller's own
 * threads (they may change a path between our read and the kernel's). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bridge/caller.h"
#include "bridge/group.h"
#include "bridge/guard.h"
#include "bridge/standin.h"

#define GUARD_HELPER_MS 10000  /* a helper stuck on a path is killed */
#define GUARD_EXIT_CONTINUE 255

/* ---- pure decisions ---- */

enum guard_mount_kind guard_mount_kind(unsigned long flags)
{
	/* the old magic number in the high half means nothing */
	if ((flags & MS_MGC_MSK) == MS_MGC_VAL)
		flags &= ~(unsigned long)MS_MGC_MSK;
	if ((flags & (MS_REMOUNT | MS_BIND)) == (MS_REMOUNT | MS_BIND))
		return GUARD_MNT_RECONFIGURE;
	if (flags & MS_REMOUNT)
		return GUARD_MNT_REMOUNT;
	if (flags & MS_BIND)
		return GUARD_MNT_BIND;
	if (flags & (MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE))
		return GUARD_MNT_PROPAGATION;
	if (flags & MS_MOVE)
		return GUARD_MNT_MOVE;
	return GUARD_MNT_NEW;
}

bool guard_cgroup_type(const char *fstype)
{
	return !strcmp(fstype, "cgroup") || !strcmp(fstype, "cgroup2");
}

/* The kernel's v1 controllers. */
static const char *const guard_v1_names[] = {
	"cpuset", "cpu", "cpuacct", "memory", "blkio", "devices", "freezer", "net_cls",
	"net_prio", "perf_event", "hugetlb", "pids", "rdma", "misc", "debug",
};
#define GUARD_NV1 (sizeof(guard_v1_names) / sizeof(guard_v1_names[0]))

/* Options of a cgroup v1 mount that name no controller: the kernel's own
 * (cgroup1_parse_param) and the VFS's that mount(8) may leave in. */
static bool guard_v1_plain_option(const char *o)
{
	static const char *const plain[] = {
		"noprefix", "clone_children", "xattr", "cpuset_v2_mode", "favordynmods",
		"nofavordynmods", "rw", "ro", "sync", "async", "dirsync", "lazytime",
		"nolazytime", "mand", "nomand", "silent", "nosuid", "suid", "nodev", "dev",
		"noexec", "exec", "relatime", "norelatime", "noatime", "atime", "strictatime",
		"nodiratime", "diratime", "defaults",
	};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(o, plain[i]))
			return true;
	return !strncmp(o, "source=", 7);
}

/* The reason in WHY; returns -err. */
static int guard_why(int err, char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int guard_why(int err, char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -err;
}

/* The controllers (bits of guard_v1_names) and name of hierarchy C. */
static unsigned long guard_view_set(int c, const char **name)
{
	const char *f = view_ctl_field[c];
	unsigned long set = 0;

	*name = NULL;
	while (*f) {
		size_t n = strcspn(f, ",");

		if (!strncmp(f, "name=", 5))
			*name = f + 5;
		for (size_t i = 0; i < GUARD_NV1; i++)
			if (strlen(guard_v1_names[i]) == n && !strncmp(f, guard_v1_names[i], n))
				set |= 1UL << i;
		f += n + (f[n] == ',');
	}
	return set;
}

/* Is CN, a view hierarchy's name (NULL: none), NAME? */
static bool guard_name_is(const char *cn, const char *name)
{
	size_t n = strlen(name);

	return cn && !strncmp(cn, name, n) && (cn[n] == '\0' || cn[n] == ',');
}

/* The hierarchy of the view to use for controllers WANT (NONE: "none" was
 * given) and name NAME (NULL: none), in the order of the kernel's
 * cgroup1_root_to_use: a root whose name is asked for must have the set
 * asked for (EBUSY), a root is reused only for the same set; else the
 * kernel would make a new hierarchy (GUARD_V1_NEW: in a cgroup namespace
 * the kernel says EPERM first), whose controllers, each bound to a
 * hierarchy of the view, cannot move (EBUSY), or, with no controller of
 * the view asked for, that memcgfs-run cannot make (EPERM). */
static int guard_v1_match(unsigned long want, bool none, const char *name,
			  enum guard_v1_stage *stage, char *why, size_t size)
{
	*stage = GUARD_V1_ROOT;
	for (int c = 0; c < VIEW_NCTL; c++) {
		const char *cn;
		unsigned long set = guard_view_set(c, &cn);

		if (name && !guard_name_is(cn, name))
			continue;
		if ((want || none) && want != set) {
			if (name)
				return guard_why(EBUSY, why, size,
						 "name=%.64s: the view's hierarchy of that name has other controllers",
						 name);
			continue;
		}
		return c;
	}
	if (!want && !none)
		return guard_why(EINVAL, why, size,
				 "name=%.64s alone names no hierarchy of the view (no controller or none given)",
				 name ? name : "");
	*stage = GUARD_V1_NEW;
	for (int c = 0; c < VIEW_NCTL; c++) {
		const char *cn;

		if (guard_view_set(c, &cn) & want)
			return guard_why(EBUSY, why, size, "%s: the view mounts %s",
					 (want & (want - 1)) ? "these controllers together"
							     : "this controller alone",
					 view_ctl_name[c]);
	}
	if (name)
		return guard_why(EPERM, why, size, "a new named hierarchy (name=%.64s): the view has %s",
				 name, want ? "it without controllers" : "only name=systemd");
	return guard_why(EPERM, why, size, "the view has no such hierarchy");
}

/* A hierarchy name as the kernel takes it: 1 to 63 of [A-Za-z0-9._-]. */
static int guard_v1_name(const char *v, char *why, size_t size)
{
	size_t n = strlen(v);

	if (!n)
		return guard_why(EINVAL, why, size, "an empty hierarchy name");
	if (n > GUARD_NAME_MAX)
		return guard_why(EINVAL, why, size, "a hierarchy name over %d bytes", GUARD_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '.' && v[i] != '-' && v[i] != '_')
			return guard_why(EINVAL, why, size, "a hierarchy name of other than [A-Za-z0-9._-]");
	return 0;
}

unsigned long guard_v1_have(void)
{
	FILE *f = fopen("/proc/cgroups", "re");
	unsigned long have = 1UL << 3;   /* memory: memcgfs's own, whatever the kernel has */
	char line[256], name[64];
	int hier, num, enabled;

	if (!f)
		return ~0UL;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d %d %d", name, &hier, &num, &enabled) == 4 && enabled)
			for (size_t i = 0; i < GUARD_NV1; i++)
				if (!strcmp(name, guard_v1_names[i]))
					have |= 1UL << i;
	fclose(f);
	return have;
}

int guard_v1_ctl(const char *opts, unsigned long have, enum guard_v1_stage *stage, char *why,
		 size_t size)
{
	char buf[4096], *save = NULL, *o, name[GUARD_NAME_MAX + 1] = "";
	unsigned long want = 0;
	bool none = false, all = false, noprefix = false;
	int err;

	*stage = GUARD_V1_PARSE;
	if (snprintf(buf, sizeof(buf), "%s", opts ? opts : "") >= (int)sizeof(buf))
		return guard_why(EINVAL, why, size, "an option string over %zu bytes", sizeof(buf) - 1);
	for (o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		size_t i;

		if (!strncmp(o, "name=", 5)) {
			if ((err = guard_v1_name(o + 5, why, size)))
				return err;
			if (name[0])
				return guard_why(EINVAL, why, size, "name= given twice");
			snprintf(name, sizeof(name), "%s", o + 5);
			continue;
		}
		if (!strncmp(o, "release_agent=", 14))
			return guard_why(EPERM, why, size, "a release agent set by a mount option");
		if (!strcmp(o, "none")) {
			none = true;
			continue;
		}
		if (!strcmp(o, "all")) {
			all = true;
			continue;
		}
		if (!strcmp(o, "noprefix"))
			noprefix = true;
		if (guard_v1_plain_option(o))
			continue;
		for (i = 0; i < GUARD_NV1 && strcmp(o, guard_v1_names[i]); i++)
			;
		if (i == GUARD_NV1 || !(have & (1UL << i)))
			return guard_why(EINVAL, why, size, "no controller named %.64s%s", o,
					 i == GUARD_NV1 ? "" : " in this kernel");
		want |= 1UL << i;
	}
	/* the kernel's check_cgroupfs_options, in its order */
	*stage = GUARD_V1_OPTIONS;
	if (!want && !none && !name[0])
		all = true;
	if (all && want)
		return guard_why(EINVAL, why, size, "all with a controller named");
	if (all)
		want = have;
	if (!want && !name[0])
		return guard_why(EINVAL, why, size, "a hierarchy without controllers (none) needs a name");
	if (noprefix && (want & ~1UL))     /* (cpuset is bit 0) */
		return guard_why(EINVAL, why, size, "noprefix with a controller other than cpuset");
	if (none && want)
		return guard_why(EINVAL, why, size, "none with controllers");
	err = guard_v1_match(want, none, name[0] ? name : NULL, stage, why, size);
	if (all && err == -EBUSY && *stage == GUARD_V1_NEW)
		guard_why(EBUSY, why, size,
			  "every controller at once: the view mounts each in a hierarchy of its own");
	return err;
}

/* ---- what the guard holds ---- */

static int guard_openf(int flags, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int guard_openf(int flags, const char *fmt, ...)
{
	char path[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return open(path, flags | O_CLOEXEC);
}

int guard_open(struct guard *g, pid_t child, const char *mnt, const struct view_ns *ns,
	       bool own_userns)
{
	struct stat st;

	memset(g, 0, sizeof(*g));
	g->qfd = -1;
	g->mnt = mnt;
	g->ns = *ns;
	g->userns_fd = g->mntns_fd = -1;
	for (int c = 0; c < VIEW_NCTL; c++)
		g->view_fd[c] = -1;
	/* through the child's root, the walk crosses its namespace's mounts */
	for (int c = 0; c < VIEW_NCTL; c++)
		if (ns->ctl_id[c] > 0 && (g->view_fd[c] = guard_openf(O_PATH | O_DIRECTORY, "/proc/%d/root" VIEW_CGROUP_TOP "/%s",
						 (int)child, view_ctl_name[c])) < 0)
			goto fail;
	if ((g->mntns_fd = guard_openf(O_RDONLY, "/proc/%d/ns/mnt", (int)child)) < 0)
		goto fail;
	if (own_userns && (g->userns_fd = guard_openf(O_RDONLY, "/proc/%d/ns/user", (int)child)) < 0)
		goto fail;
	if (stat("/proc/self/ns/cgroup", &st))
		goto fail;
	g->cgns_ino = st.st_ino;
	g->have = guard_v1_have();
	return 0;
fail:
	{
		int rc = -errno;

		guard_close(g);
		return rc;
	}
}

/* The process of cgroup namespace INO that started first (the one that
 * made it, most likely, whose groups then were its roots), or FALLBACK
 * when none is found before it. */
static pid_t guard_cgns_eldest(ino_t ino, pid_t fallback)
{
	DIR *d = opendir("/proc");
	uint64_t best = UINT64_MAX;
	pid_t found = fallback;
	struct dirent *de;

	if (!d)
		return fallback;
	while ((de = readdir(d))) {
		struct hier_task_info ti;
		char path[300];
		struct stat st;
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/cgroup", de->d_name);
		pid = (pid_t)atoi(de->d_name);
		if (stat(path, &st) || st.st_ino != ino || standin_os.task(NULL, pid, &ti))
			continue;
		if (ti.start < best) {
			best = ti.start;
			found = pid;
		}
	}
	closedir(d);
	return found;
}

/* PID's groups (the stand-ins' and memcgfs's) into ROOTS: 0 or -errno. */
static int guard_groups_of(struct guard *g, pid_t pid, char roots[VIEW_NCTL][4096])
{
	long counts[VIEW_NCTL];

	memset(roots, 0, VIEW_NCTL * sizeof(roots[0]));
	if (g->qfd >= 0 && standin_ask(g->qfd, pid, roots, counts))
		memset(roots, 0, VIEW_NCTL * sizeof(roots[0]));
	return group_of(g->mnt, pid, roots[VIEW_MEMORY], sizeof(roots[0]));
}

int guard_cgns_roots(struct guard *g, pid_t tgid, char roots[VIEW_NCTL][4096])
{
	char path[64];
	struct stat st;
	struct guard_cgns *e = NULL;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", (int)tgid);
	if (stat(path, &st))
		return -errno;
	if (st.st_ino == g->cgns_ino)
		return 0;
	for (unsigned i = 0; i < g->ncgns && i < GUARD_CGNS; i++)
		if (g->cgns[i].ino == st.st_ino)
			e = &g->cgns[i];
	if (!e) {
		/* first seen: the groups of its eldest process now are its
		 * roots (a reader that joined it later, nsenter -C, may be
		 * anywhere) */
		pid_t first = guard_cgns_eldest(st.st_ino, tgid);

		/* (the eldest gone meanwhile: the one asking) */
		if ((rc = guard_groups_of(g, first, roots)) && first != tgid)
			rc = guard_groups_of(g, tgid, roots);
		if (rc)
			return rc;
		e = &g->cgns[g->ncgns++ % GUARD_CGNS];
		for (int c = 0; c < VIEW_NCTL; c++) {
			free(e->root[c]);
			e->root[c] = roots[c][0] ? strdup(roots[c]) : NULL;
		}
		e->ino = st.st_ino;
	}
	for (int c = 0; c < VIEW_NCTL; c++)
		snprintf(roots[c], sizeof(roots[c]), "%s", e->root[c] ? e->root[c] : "/");
	return 1;
}

void guard_close(struct guard *g)
{
	for (int c = 0; c < VIEW_NCTL; c++)
		if (g->view_fd[c] >= 0)
			close(g->view_fd[c]);
	if (g->mntns_fd >= 0)
		close(g->mntns_fd);
	if (g->userns_fd >= 0)
		close(g->userns_fd);
	for (int c = 0; c < VIEW_NCTL; c++)
		g->view_fd[c] = -1;
	g->mntns_fd = g->userns_fd = -1;
	for (unsigned i = 0; i < GUARD_CGNS; i++)
		for (int c = 0; c < VIEW_NCTL; c++) {
			free(g->cgns[i].root[c]);
			g->cgns[i].root[c] = NULL;
		}
}

/* ---- the helper: the caller's namespaces, root and cwd ---- */

enum guard_op {
	GUARD_OP_BIND,       /* bind a clone of a view tree at path */
	GUARD_OP_SOURCE,     /* path is bound or cloned: not from a cgroupfs */
	GUARD_OP_MOVE,       /* path's mount is moved: not a view mount nor a cgroupfs */
	GUARD_OP_SUPER,      /* path's superblock is reconfigured: not a cgroupfs */
	GUARD_OP_UMOUNT,     /* path's mount is unmounted: not a view mount */
};

struct guard_job {
	enum guard_op op;
	const char *call;    /* the call, for messages: "mount", "open_tree", ... */
	int dirfd;           /* the caller's, or AT_FDCWD */
	char path[4096];
	bool follow;         /* a last symbolic link is followed */
	bool empty_path;     /* "" names dirfd itself */
	bool recursive;      /* with its submounts */
	int ctl;             /* GUARD_OP_BIND: the hierarchy */
	char sub[4096];      /* GUARD_OP_BIND: below its root, "" for the root */
	bool rdonly;         /* GUARD_OP_BIND: MS_RDONLY */
	int report_fd;       /* GUARD_OP_BIND: the new mount's id is written here */
};

static void guard_say(pid_t tid, const struct guard_job *j, const char *why)
{
	fprintf(stderr, "memcgfs-run: refused %s of %s by %d: %s\n", j->call,
		j->path[0] ? j->path : "(an fd)", (int)tid, why);
}

static bool guard_same(int fd, const struct stat *cur)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_ino == cur->st_ino && st.st_dev == cur->st_dev;
}

static int guard_setns(int fd, int type, struct stat *cur)
{
	if (guard_same(fd, cur))
		return 0;
	if (setns(fd, type))
		return -errno;
	return fstat(fd, cur) ? -errno : 0;
}

/* Whether the caller could make a mount in its own mount namespace: the
 * capability, in the namespace's owner or an ancestor of it. */
static bool guard_may_mount(pid_t tid, int usr, int mns)
{
	unsigned long long eff = caller_status(tid, "CapEff", 16);
	struct stat mine;
	int owner, up;
	bool ok = false;

	if (!(eff & (1ULL << 21)) || fstat(usr, &mine))  /* CAP_SYS_ADMIN */
		return false;
	for (owner = ioctl(mns, NS_GET_USERNS); owner >= 0 && !ok; owner = up) {
		ok = guard_same(owner, &mine);
		up = ok ? -1 : ioctl(owner, NS_GET_PARENT);
		close(owner);
	}
	return ok;
}

/* guard_may_mount from outside the helper, through /proc/TID/ns: the
 * capability over the owner of the caller's namespace of type NS. */
static bool guard_caller_may_ns(pid_t tid, const char *ns)
{
	int usr = guard_openf(O_RDONLY, "/proc/%d/ns/user", (int)tid);
	int nsf = guard_openf(O_RDONLY, "/proc/%d/ns/%s", (int)tid, ns);
	bool ok = usr >= 0 && nsf >= 0 && guard_may_mount(tid, usr, nsf);

	if (usr >= 0)
		close(usr);
	if (nsf >= 0)
		close(nsf);
	return ok;
}

static bool guard_caller_may_mount(pid_t tid)
{
	return guard_caller_may_ns(tid, "mnt");
}

/* Is the caller in a cgroup namespace other than the wrapper's? */
static bool guard_cgns_own(const struct guard *g, pid_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", (int)tid);
	return !stat(path, &st) && st.st_ino != g->cgns_ino;
}

/* Is mount MNT_ID one of the caller's own namespace (mountinfo INFO)? */
static bool guard_in_mountinfo(int info, int mnt_id)
{
	FILE *f = fdopen(dup(info), "re");
	char line[8192];
	bool found = false;
	int id;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%d", &id) == 1 && id == mnt_id;
	fclose(f);
	return found;
}

static bool guard_is_cgroupfs(const struct statfs *sf)
{
	return sf->f_type == CGROUP_SUPER_MAGIC || sf->f_type == CGROUP2_SUPER_MAGIC;
}

/* One of the mounts the view was built with (not those bound for a
 * program since, which it may unmount as it made them). */
static bool guard_is_view(const struct guard *g, int mnt_id)
{
	if (mnt_id <= 0)
		return false;
	for (int c = 0; c < VIEW_NCTL; c++)
		if (g->ns.ctl_id[c] == mnt_id)
			return true;
	return mnt_id == g->ns.top_id;
}

/* What the job's path names, as the caller would resolve it. */
static int guard_resolve(const struct guard_job *j, int dfd, struct statfs *sf, int *mnt_id,
			 bool *mount_root)
{
	int at = dfd >= 0 ? dfd : AT_FDCWD, fd;
	struct statx sx;

	if (j->empty_path && !j->path[0])
		fd = dfd >= 0 ? dup(dfd) : open(".", O_PATH | O_CLOEXEC);
	else
		fd = openat(at, j->path, O_PATH | O_CLOEXEC | (j->follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, sf) ||
	    statx(fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx)) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	close(fd);
	*mnt_id = (sx.stx_mask & STATX_MNT_ID) ? (int)sx.stx_mnt_id : -1;
	*mount_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
		      (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return 0;
}

/* The check of a job on a path; an exit code of the helper. */
static int guard_check(const struct guard *g, pid_t tid, const struct guard_job *j, int dfd,
		       int info)
{
	struct statfs sf;
	int id = -1, rc;
	bool root = false;

	/* what the kernel would not find, it fails on by itself */
	if ((rc = guard_resolve(j, dfd, &sf, &id, &root)))
		return GUARD_EXIT_CONTINUE;
	if (j->op != GUARD_OP_UMOUNT && guard_is_cgroupfs(&sf)) {
		guard_say(tid, j, "it is a cgroup filesystem (outside memcgfs's view)");
		return EPERM;
	}
	if ((j->op == GUARD_OP_MOVE || j->op == GUARD_OP_UMOUNT) && root && guard_is_view(g, id)) {
		guard_say(tid, j, "it is one of the view's own mounts");
		return EPERM;
	}
	if (j->op == GUARD_OP_SOURCE && j->recursive && !guard_in_mountinfo(info, id)) {
		guard_say(tid, j, "a recursive bind from another mount namespace");
		return EPERM;
	}
	return GUARD_EXIT_CONTINUE;
}

/* What follows "/proc/self/" or "/proc/thread-self/" in PATH (what
 * runtimes hand mount(2): "/proc/self/fd/N"), else NULL: the caller's own
 * entries, which the helper's /proc/self would not name. */
static const char *guard_self_rest(const char *path)
{
	if (!strncmp(path, "/proc/self/", 11))
		return path + 11;
	if (!strncmp(path, "/proc/thread-self/", 18))
		return path + 18;
	return NULL;
}

/* In the helper: 0 done, GUARD_EXIT_CONTINUE, or an errno. */
static int guard_act(const struct guard *g, pid_t tid, const struct guard_job *job)
{
	int root, cwd, usr, mns, info, dfd = -1, tree = -1;
	const char *rest = guard_self_rest(job->path);
	struct stat cur_user, cur_mnt;
	struct guard_job copy, *j = &copy;

	/* a path through the caller's own /proc entries (its descriptors,
	 * root, cwd) is opened through /proc/TID here, before any namespace
	 * is entered, and looked at as that file; one that cannot be is the
	 * kernel's ENOENT, never a call let through */
	copy = *job;
	if (rest) {
		/* (mount(2) follows its target, as a bind of the view is) */
		bool follow = job->follow || job->op == GUARD_OP_BIND;

		if ((dfd = guard_openf(O_PATH | (follow ? 0 : O_NOFOLLOW), "/proc/%d/%s", (int)tid,
				       rest)) < 0)
			return ENOENT;
		copy.dirfd = AT_FDCWD;
		copy.path[0] = '\0';
		copy.empty_path = true;
	}

	root = guard_openf(O_PATH | O_DIRECTORY, "/proc/%d/root", (int)tid);
	cwd = guard_openf(O_PATH | O_DIRECTORY, "/proc/%d/cwd", (int)tid);
	usr = guard_openf(O_RDONLY, "/proc/%d/ns/user", (int)tid);
	mns = guard_openf(O_RDONLY, "/proc/%d/ns/mnt", (int)tid);
	info = guard_openf(O_RDONLY, "/proc/%d/mountinfo", (int)tid);
	if (!rest && j->dirfd != AT_FDCWD &&
	    (dfd = guard_openf(O_PATH, "/proc/%d/fd/%d", (int)tid, j->dirfd)) < 0)
		return j->op == GUARD_OP_BIND ? EBADF : GUARD_EXIT_CONTINUE;  /* the kernel's EBADF */
	if (root < 0 || cwd < 0 || usr < 0 || mns < 0 || info < 0 ||
	    stat("/proc/self/ns/user", &cur_user) || stat("/proc/self/ns/mnt", &cur_mnt))
		return ESRCH;
	/* without a user namespace of our own, nothing can be entered:
	 * first the wrapper's (we own it), then the caller's mounts */
	if (g->userns_fd >= 0 && guard_setns(g->userns_fd, CLONE_NEWUSER, &cur_user))
		return EPERM;
	if (j->op == GUARD_OP_BIND) {
		struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };

		if (!guard_may_mount(tid, usr, mns))
			return EPERM;  /* the kernel's answer to the caller */
		if (guard_setns(g->mntns_fd, CLONE_NEWNS, &cur_mnt))
			return EPERM;
		tree = (int)syscall(SYS_open_tree, g->view_fd[j->ctl], j->sub[0] ? j->sub : "",
				    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (j->sub[0] ? 0 : AT_EMPTY_PATH));
		if (tree < 0)
			return errno == ENOENT ? ENOENT : EPERM;
		if (j->rdonly && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &ro, sizeof(ro)))
			return errno;
	}
	if (guard_setns(mns, CLONE_NEWNS, &cur_mnt) || guard_setns(usr, CLONE_NEWUSER, &cur_user) ||
	    fchdir(root) || chroot(".") || fchdir(cwd))
		return EPERM;
	if (j->op != GUARD_OP_BIND)
		return guard_check(g, tid, j, dfd, info);
	if (rest ? syscall(SYS_move_mount, tree, "", dfd, "",
				MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
		      : syscall(SYS_move_mount, tree, "", AT_FDCWD, j->path, MOVE_MOUNT_F_EMPTY_PATH))
		return errno;
	{
		/* the view shows it as the hierarchy it is */
		struct statx sx;
		int id;

		if (!statx(tree, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) && (sx.stx_mask & STATX_MNT_ID)) {
			id = (int)sx.stx_mnt_id;
			if (write(j->report_fd, &id, sizeof(id)) != sizeof(id))
				return 0;
		}
	}
	return 0;
}

/* Runs JOB in a helper and waits for it (bounded): its exit code; a
 * mount it made is recorded in the view. */
static int guard_helper(struct guard *g, pid_t tid, struct guard_job *j)
{
	pid_t h;
	int pfd, status = 0, report[2], id;
	struct pollfd p;

	if (pipe2(report, O_CLOEXEC | O_NONBLOCK))
		return EAGAIN;
	j->report_fd = report[1];
	fflush(stderr);
	if ((h = fork()) < 0) {
		close(report[0]);
		close(report[1]);
		return EAGAIN;
	}
	if (h == 0)
		_exit(guard_act(g, tid, j));
	close(report[1]);
	if ((pfd = pidfd_open(h, 0)) >= 0) {
		p = (struct pollfd){ .fd = pfd, .events = POLLIN };
		while (poll(&p, 1, GUARD_HELPER_MS) < 0 && errno == EINTR)
			;
		if (!(p.revents & POLLIN)) {
			fprintf(stderr, "memcgfs-run: a %s of %s by %d took over %d s: refused\n", j->call,
				j->path, (int)tid, GUARD_HELPER_MS / 1000);
			kill(h, SIGKILL);
		}
		close(pfd);
	}
	if (waitpid(h, &status, 0) != h || !WIFEXITED(status)) {
		close(report[0]);
		return EPERM;
	}
	/* the report is read once the helper is gone (it wrote before exiting) */
	if (WEXITSTATUS(status) == 0 && read(report[0], &id, sizeof(id)) == sizeof(id))
		view_add_bound(&g->ns, id, j->ctl);
	close(report[0]);
	return WEXITSTATUS(status);
}

static int guard_run(struct guard *g, pid_t tid, struct guard_job *j, bool (*valid)(void *),
		     void *arg)
{
	int code;

	if (!valid(arg))
		return -ENOENT;
	code = guard_helper(g, tid, j);
	if (code == GUARD_EXIT_CONTINUE)
		return GUARD_CONTINUE;
	if (code == EPERM)
		g->refused++;
	if (code == 0 && j->op == GUARD_OP_BIND)
		g->bound++;
	return -code;
}

/* ---- the calls ---- */

static int guard_refuse_err(struct guard *g, pid_t tid, const char *call, const char *what,
			    const char *why, int err)
{
	fprintf(stderr, "memcgfs-run: refused %s of %s by %d: %s\n", call, what, (int)tid, why);
	g->refused++;
	return err;
}

static int guard_refuse(struct guard *g, pid_t tid, const char *call, const char *what,
			const char *why)
{
	return guard_refuse_err(g, tid, call, what, why, -EPERM);
}

/* A path argument into the job; false when unreadable (the kernel then
 * answers EFAULT or ENAMETOOLONG itself). */
static bool guard_path(pid_t tid, __u64 addr, struct guard_job *j)
{
	j->path[0] = '\0';
	return addr && !caller_read_str(tid, (unsigned long)addr, j->path, sizeof(j->path));
}

/* A new cgroup mount: the view's tree for a v1 hierarchy it has. */
static int guard_new_cgroup(struct guard *g, pid_t tid, const __u64 *a, const char *fstype,
			    bool (*valid)(void *), void *arg)
{
	struct guard_job j = { .op = GUARD_OP_BIND, .call = "mount", .dirfd = AT_FDCWD };
	char opts[4096] = "", why[160];
	enum guard_v1_stage stage;
	int ctl;

	if (!guard_path(tid, a[1], &j))
		return GUARD_CONTINUE;
	if (!strcmp(fstype, "cgroup2"))
		return guard_refuse(g, tid, "a cgroup2 mount", j.path, "the view is cgroup v1 only");
	if (a[4] && caller_read_str(tid, (unsigned long)a[4], opts, sizeof(opts)))
		return guard_refuse(g, tid, "a cgroup mount", j.path, "unreadable options");
	ctl = guard_v1_ctl(opts, g->have, &stage, why, sizeof(why));
	/* the kernel's order: mount(2) asks for the capability over the
	 * caller's mounts before it parses the options, cgroup1_get_tree
	 * for the capability over its cgroup namespace after; a new
	 * hierarchy is made only in the initial cgroup namespace */
	if (ctl < 0 && ctl != -EPERM && !guard_caller_may_mount(tid))
		return guard_refuse(g, tid, "a cgroup mount", j.path, "no CAP_SYS_ADMIN over its mounts");
	if (ctl < 0 && stage == GUARD_V1_PARSE)
		return guard_refuse_err(g, tid, "a cgroup mount", j.path, why, ctl);
	/* (a bind's capability over the caller's mounts is the helper's
	 * check, guard_act: asked here only to name the refusal) */
	if (!guard_caller_may_ns(tid, "cgroup"))
		return guard_refuse(g, tid, "a cgroup mount", j.path,
				    ctl >= 0 && !guard_caller_may_mount(tid)
					    ? "no CAP_SYS_ADMIN over its mounts"
					    : "no CAP_SYS_ADMIN over its cgroup namespace's owner");
	if (ctl < 0) {
		if (ctl == -EBUSY && stage == GUARD_V1_NEW && guard_cgns_own(g, tid))
			ctl = -EPERM;
		return guard_refuse_err(g, tid, "a cgroup mount", j.path, why, ctl);
	}
	if (g->view_fd[ctl] < 0)
		return guard_refuse_err(g, tid, "a cgroup mount", j.path,
					"this kernel has no such controller: the view leaves it out", -EINVAL);
	j.ctl = ctl;
	j.rdonly = (a[3] & MS_RDONLY) != 0;
	/* in a cgroup namespace of its own, the caller's root of the
	 * hierarchy is the mount's root, as a cgroup namespace's mount is
	 * rooted at its group */
	{
		pid_t tgid = caller_tgid(tid);
		char (*roots)[4096] = malloc(VIEW_NCTL * sizeof(*roots));
		int own = roots && tgid > 0 ? guard_cgns_roots(g, tgid, roots) : -ESRCH;

		if (own < 0) {
			free(roots);
			return guard_refuse(g, tid, "a cgroup mount", j.path,
					    "its cgroup namespace's groups are unknown");
		}
		if (own)
			snprintf(j.sub, sizeof(j.sub), "%s", roots[ctl] + (roots[ctl][0] == '/'));
		free(roots);
	}
	return guard_run(g, tid, &j, valid, arg);
}

static int guard_mount(struct guard *g, pid_t tid, const __u64 *a, bool (*valid)(void *), void *arg)
{
	struct guard_job j = { .call = "mount", .dirfd = AT_FDCWD, .follow = true };
	char fstype[64];

	switch (guard_mount_kind((unsigned long)a[3])) {
	case GUARD_MNT_RECONFIGURE:
	case GUARD_MNT_PROPAGATION:
		return GUARD_CONTINUE;
	case GUARD_MNT_REMOUNT:
		j.op = GUARD_OP_SUPER;
		j.call = "a remount";
		if (!guard_path(tid, a[1], &j))
			return GUARD_CONTINUE;
		break;
	case GUARD_MNT_BIND:
		j.op = GUARD_OP_SOURCE;
		j.call = "a bind mount";
		j.recursive = (a[3] & MS_REC) != 0;
		if (!guard_path(tid, a[0], &j))
			return GUARD_CONTINUE;
		break;
	case GUARD_MNT_MOVE:
		j.op = GUARD_OP_MOVE;
		j.call = "a move (MS_MOVE)";
		if (!guard_path(tid, a[0], &j))
			return GUARD_CONTINUE;
		break;
	case GUARD_MNT_NEW:
		if (!a[2] || caller_read_str(tid, (unsigned long)a[2], fstype, sizeof(fstype)) ||
		    !guard_cgroup_type(fstype))
			return GUARD_CONTINUE;
		return guard_new_cgroup(g, tid, a, fstype, valid, arg);
	}
	return guard_run(g, tid, &j, valid, arg);
}

int guard_call(struct guard *g, pid_t tid, int nr, const __u64 args[6], bool (*valid)(void *),
	       void *arg)
{
	struct guard_job j = { .dirfd = AT_FDCWD, .follow = true };
	char name[64];

	switch (nr) {
	case __NR_mount:
		return guard_mount(g, tid, args, valid, arg);
	case __NR_umount2:
		j.op = GUARD_OP_UMOUNT;
		j.call = "umount";
		j.follow = !(args[1] & UMOUNT_NOFOLLOW);
		if (!guard_path(tid, args[0], &j))
			return GUARD_CONTINUE;
		break;
	case __NR_fsopen:
		/* fsopen(NULL), the probe LXC (and others) make of the new
		 * mount API: ENOSYS (the kernel's EFAULT), so that they mount
		 * with mount(2), whose cgroup mounts bind the view's trees;
		 * a cgroup fsopen itself has no such answer */
		if (!args[0])
			return -ENOSYS;
		if (caller_read_str(tid, (unsigned long)args[0], name, sizeof(name)) ||
		    !guard_cgroup_type(name))
			return GUARD_CONTINUE;
		return guard_refuse(g, tid, "fsopen", name,
				    "a cgroup filesystem is mounted through mount(2) here");
	case __NR_fspick:
		j.op = GUARD_OP_SUPER;
		j.call = "fspick";
		j.dirfd = (int)args[0];
		j.follow = !(args[2] & FSPICK_SYMLINK_NOFOLLOW);
		j.empty_path = (args[2] & FSPICK_EMPTY_PATH) != 0;
		if (!guard_path(tid, args[1], &j))
			return GUARD_CONTINUE;
		break;
	case __NR_open_tree:
		if (!(args[2] & OPEN_TREE_CLONE))
			return GUARD_CONTINUE;
		j.op = GUARD_OP_SOURCE;
		j.call = "open_tree (a clone)";
		j.dirfd = (int)args[0];
		j.follow = !(args[2] & AT_SYMLINK_NOFOLLOW);
		j.empty_path = (args[2] & AT_EMPTY_PATH) != 0;
		j.recursive = (args[2] & AT_RECURSIVE) != 0;
		if (!guard_path(tid, args[1], &j))
			return GUARD_CONTINUE;
		break;
	case __NR_move_mount:
		j.op = GUARD_OP_MOVE;
		j.call = "move_mount";
		j.dirfd = (int)args[0];
		j.follow = (args[4] & MOVE_MOUNT_F_SYMLINKS) != 0;
		j.empty_path = (args[4] & MOVE_MOUNT_F_EMPTY_PATH) != 0;
		if (!guard_path(tid, args[1], &j))
			return GUARD_CONTINUE;
		break;
	default:
		return GUARD_CONTINUE;
	}
	return guard_run(g, tid, &j, valid, arg);
}
