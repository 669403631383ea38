/* ns.c: building the mount namespace memcgfs-run's command runs in.
 * Owns the namespace's mounts only: never mounts, unmounts or writes
 * anything in the caller's namespace, and never writes to memcgfs. The
 * companion hierarchies are FUSE mounts the stand-in server (standin.c)
 * answers once the parent has their descriptors: nothing here looks
 * inside them. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bridge/ns.h"
#include "bridge/standin.h"

/* Writes TEXT to PATH in one write(2): a new file with CREATE, else an
 * existing one (a /proc file, which may not be truncated). */
static int ns_write(const char *path, const char *text, bool create)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0644), rc = 0;
	size_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		rc = errno ? -errno : -EIO;
	close(fd);
	return rc;
}

static int ns_maps(uid_t uid, gid_t gid)
{
	char line[64];
	int rc;

	/* a user namespace where we keep our own ids; setgroups must be
	 * denied before an unprivileged gid_map */
	if ((rc = ns_write("/proc/self/setgroups", "deny", false)) && rc != -ENOENT)
		return rc;
	snprintf(line, sizeof(line), "%u %u 1", (unsigned)uid, (unsigned)uid);
	if ((rc = ns_write("/proc/self/uid_map", line, false)))
		return rc;
	snprintf(line, sizeof(line), "%u %u 1", (unsigned)gid, (unsigned)gid);
	return ns_write("/proc/self/gid_map", line, false);
}

/* The mounts still at or below /sys/fs/cgroup (those a user namespace
 * may not uncover), which the synthesized listings leave out. */
static int ns_collect_hidden(struct view_ns *ns)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mp[4096];
	size_t top = strlen(VIEW_CGROUP_TOP);
	int id;

	if (!f)
		return -errno;
	ns->nhidden = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %*d %*s %*s %4095s", &id, mp) != 2)
			continue;
		if (strncmp(mp, VIEW_CGROUP_TOP, top) || (mp[top] && mp[top] != '/'))
			continue;
		if (ns->nhidden == VIEW_MAX_HIDDEN) {
			fclose(f);
			return -E2BIG;
		}
		ns->hidden[ns->nhidden++] = id;
	}
	fclose(f);
	return 0;
}

/* PATH's mount id, and its superblock's device into *DEV if asked. */
static int ns_mount_id(const char *path, unsigned long long *dev)
{
	struct statx sx;

	/* (without a sync: the stand-ins' server is not answering yet) */
	if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx))
		return -errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	if (dev)
		*dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	return (int)sx.stx_mnt_id;
}

/* The per-mount flags of PATH's mount as MS_ flags (a remount must keep
 * them: a user namespace may not clear a locked one). */
static unsigned long ns_mnt_flags(const char *path)
{
	static const struct { unsigned long st, ms; } map[] = {
		{ ST_RDONLY, MS_RDONLY }, { ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV },
		{ ST_NOEXEC, MS_NOEXEC }, { ST_NOATIME, MS_NOATIME },
		{ ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
	};
	struct statvfs sv;
	unsigned long ms = 0;

	if (statvfs(path, &sv))
		return 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (sv.f_flag & map[i].st)
			ms |= map[i].ms;
	return ms;
}

/* Whether the kernel has every controller of hierarchy C (as
 * /proc/cgroups lists them); name=systemd's has none. */
static bool ns_kernel_has(int c, const char *proc_cgroups)
{
	for (const char *f = view_ctl_field[c]; *f;) {
		size_t n = strcspn(f, ",");
		char row[40];

		if (strncmp(f, "name=", 5)) {
			snprintf(row, sizeof(row), "\n%.*s\t", (int)n, f);
			if (!strstr(proc_cgroups, row))
				return false;
		}
		f += n + (f[n] == ',');
	}
	return true;
}

static long ns_no_tasks(void *arg, pid_t *out, size_t max)
{
	(void)arg;
	(void)out;
	(void)max;
	return 0;
}

static int ns_no_task(void *arg, pid_t tid, struct hier_task_info *out)
{
	(void)arg;
	(void)tid;
	(void)out;
	return -ESRCH;
}

/* Where /dev/fuse may not be opened (a user, where it is 0600): hierarchy
 * C as a read-only tmpfs holding its root's files with their defaults,
 * as memcgfs-run had before the writable stand-ins. */
static int ns_standin_ro(struct hier_set *hs, int c, const char *dir)
{
	const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
	struct hier_group *root = hier_group(hs, c, 0);
	const char *name;
	unsigned mode;
	char path[512];
	int rc = 0;

	if (mount(STANDIN_SOURCE, dir, "tmpfs", fl, "mode=755,size=256k"))
		return -errno;
	for (int i = 0; !rc && hier_file(hs, c, root, i, &name, &mode) >= 0; i++) {
		int f = hier_file_index(hs, c, root, name), fd;
		char *text = NULL;
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777)) < 0)
			return -errno;
		if ((mode & 0444) && !hier_read(hs, c, root, f, &text, &len) &&
		    write(fd, text, len) != (ssize_t)len)
			rc = errno ? -errno : -EIO;
		free(text);
		if (fchmod(fd, mode & 0777))
			rc = -errno;
		close(fd);
	}
	if (!rc && mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY | fl, NULL))
		rc = -errno;
	return rc;
}

/* One stand-in hierarchy at DIR: a FUSE mount of its own (as a v1 root
 * is a mount of its own), its descriptor into *FD; or the read-only
 * fallback. */
static int ns_standin(struct hier_set **hs, int c, const char *dir, int *fd, const char **what)
{
	const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
	char opts[160];

	*what = "mounting a stand-in hierarchy (FUSE)";
	if ((*fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)) >= 0) {
		snprintf(opts, sizeof(opts),
			 "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other,default_permissions",
			 *fd, (unsigned)geteuid(), (unsigned)getegid());
		if (!mount(STANDIN_SOURCE, dir, STANDIN_FSTYPE, fl, opts))
			return 0;
		/* (a kernel or LSM that refuses FUSE here: the copies) */
		close(*fd);
		*fd = -1;
	} else if (errno != EACCES && errno != EPERM && errno != ENOENT && errno != ENXIO) {
		return -errno;
	}
	*what = "a read-only stand-in hierarchy (no /dev/fuse)";
	if (!*hs) {
		static const struct hier_os none = { .task = ns_no_task, .tasks = ns_no_tasks };

		if (!(*hs = standin_os_hier(&none, geteuid(), getegid())))
			return -ENOMEM;
	}
	return ns_standin_ro(*hs, c, dir);
}

/* The stand-in hierarchies the kernel has the controllers of (PRESENT),
 * systemd's links beside them. */
static int ns_standins(int fuse_fd[VIEW_NCTL], bool present[VIEW_NCTL], const char **what)
{
	char cg[8192] = "\n", path[256];
	struct hier_set *hs = NULL;
	int fd = open("/proc/cgroups", O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n = fd >= 0 ? read(fd, cg + 1, sizeof(cg) - 2) : -1;

	if (fd >= 0)
		close(fd);
	cg[n > 0 ? n + 1 : 1] = '\0';
	for (int c = 0; c < VIEW_NCTL && !rc; c++) {
		if (!hier_is_standin(c) || !ns_kernel_has(c, cg))
			continue;
		snprintf(path, sizeof(path), VIEW_CGROUP_TOP "/%s", view_ctl_name[c]);
		*what = "mkdir in " VIEW_CGROUP_TOP;
		if (mkdir(path, 0755))
			rc = -errno;
		else if (!(rc = ns_standin(&hs, c, path, &fuse_fd[c], what)))
			present[c] = true;
	}
	hier_free(hs);
	if (!rc)
		*what = "systemd's links in " VIEW_CGROUP_TOP;
	for (int i = 0; i < VIEW_NLINKS && !rc; i++) {
		snprintf(path, sizeof(path), VIEW_CGROUP_TOP "/%s", view_links[i][0]);
		if (symlink(view_links[i][1], path))
			rc = -errno;
	}
	return rc;
}

int ns_setup(const char *mnt, struct view_ns *ns, int fuse_fd[VIEW_NCTL], const char **what)
{
	const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
	char path[256], src[4096 + sizeof(ns->root)];
	bool present[VIEW_NCTL] = { [VIEW_MEMORY] = true };
	int rc;

	uid_t uid = geteuid();
	gid_t gid = getegid();

	for (int c = 0; c < VIEW_NCTL; c++)
		fuse_fd[c] = -1;
	*what = "unshare";
	if (uid != 0) {
		/* the ids must be read before: unmapped, they read 65534 */
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
			return -errno;
		*what = "user namespace id maps";
		if ((rc = ns_maps(uid, gid)))
			return rc;
	} else if (unshare(CLONE_NEWNS)) {
		return -errno;
	}
	*what = "making / private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	/* uncover /sys/fs/cgroup (detaches every mount below it too); what a
	 * user namespace may not uncover stays, hidden from the listings */
	while (umount2(VIEW_CGROUP_TOP, MNT_DETACH) == 0)
		;
	*what = "reading mountinfo";
	if ((rc = ns_collect_hidden(ns)))
		return rc;
	*what = "mounting a tmpfs on " VIEW_CGROUP_TOP;
	if (mount("tmpfs", VIEW_CGROUP_TOP, "tmpfs", fl, "mode=755,size=16k"))
		return -errno;
	*what = "mkdir in " VIEW_CGROUP_TOP;
	if (mkdir(VIEW_CGROUP_TOP "/memory", 0755))
		return -errno;
	*what = "binding the memcgfs mount";
	/* (with --group-as-root, the group's directory: its subtree is the
	 * hierarchy) */
	if (snprintf(src, sizeof(src), "%s%s", mnt, ns->root) >= (int)sizeof(src))
		return -ENAMETOOLONG;
	if (mount(src, VIEW_CGROUP_TOP "/memory", NULL, MS_BIND, NULL))
		return -errno;
	/* as a cgroup mount is: nosuid, nodev, noexec (best effort: the
	 * hierarchy works without them) */
	(void)mount(NULL, VIEW_CGROUP_TOP "/memory", NULL,
		    MS_REMOUNT | MS_BIND | ns_mnt_flags(mnt) | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if ((rc = ns_standins(fuse_fd, present, what)))
		return rc;
	*what = "remounting " VIEW_CGROUP_TOP " read-only";
	if (mount(NULL, VIEW_CGROUP_TOP, NULL, MS_REMOUNT | MS_RDONLY | fl, NULL))
		return -errno;
	*what = "statx (mount ids)";
	if ((rc = ns_mount_id(VIEW_CGROUP_TOP, NULL)) < 0)
		return rc;
	ns->top_id = rc;
	for (int c = 0; c < VIEW_NCTL; c++) {
		snprintf(path, sizeof(path), VIEW_CGROUP_TOP "/%s", view_ctl_name[c]);
		ns->ctl_id[c] = 0;
		if (!present[c])
			continue;   /* the kernel lacks a controller of it */
		if ((rc = ns_mount_id(path, &ns->dev[c])) < 0)
			return rc;
		ns->ctl_id[c] = rc;
	}
	return 0;
}
