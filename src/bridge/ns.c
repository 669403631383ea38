/* ns.c: building the mount namespace memcgfs-run's command runs in.
 * Owns the namespace's mounts only: never mounts, unmounts or writes
 * anything in the caller's namespace, and never writes to memcgfs. The
 * companion hierarchies are read-only tmpfs stand-ins holding the values
 * of an unconstrained group; they constrain nothing. */
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
#include <unistd.h>

#include "bridge/ns.h"

#define NS_SOURCE "memcgfs-run"  /* the stand-ins' source, seen from outside */

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

/* The first line of a sysfs list such as "0-1", or FALLBACK. */
static void ns_read_list(const char *path, char *out, size_t size, const char *fallback)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(out, size, "%s\n", fallback);
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	strcat(out, "\n");
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

static int ns_mount_id(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx))
		return -errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
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

/* One stand-in hierarchy: a small tmpfs with FILES (name, content pairs,
 * NULL-terminated), then read-only. */
static int ns_standin(const char *dir, const char *const *files)
{
	const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
	char path[256];
	int rc;

	if (mount(NS_SOURCE, dir, "tmpfs", fl, "mode=755,size=16k"))
		return -errno;
	for (; files[0]; files += 2) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[0]);
		if ((rc = ns_write(path, files[1], true)))
			return rc;
	}
	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY | fl, NULL))
		return -errno;
	return 0;
}

static int ns_standins(void)
{
	char cpus[256], mems[256];
	int rc;

	ns_read_list("/sys/devices/system/cpu/online", cpus, sizeof(cpus), "0");
	ns_read_list("/sys/devices/system/node/online", mems, sizeof(mems), "0");
	{
		/* an unconstrained group's values: no quota, the default
		 * weight, never throttled */
		const char *const cpu[] = {
			"cpu.cfs_period_us", "100000\n", "cpu.cfs_quota_us", "-1\n",
			"cpu.shares", "1024\n",
			"cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n", NULL,
		};
		const char *const cpuacct[] = { NULL };
		const char *const cpuset[] = {
			"cpuset.cpus", cpus, "cpuset.effective_cpus", cpus,
			"cpuset.mems", mems, "cpuset.effective_mems", mems, NULL,
		};

		if ((rc = ns_standin(VIEW_CGROUP_TOP "/cpu", cpu)) ||
		    (rc = ns_standin(VIEW_CGROUP_TOP "/cpuacct", cpuacct)))
			return rc;
		return ns_standin(VIEW_CGROUP_TOP "/cpuset", cpuset);
	}
}

int ns_setup(const char *mnt, struct view_ns *ns, const char **what)
{
	const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
	char path[256], src[4096 + sizeof(ns->root)];
	int rc;

	uid_t uid = geteuid();
	gid_t gid = getegid();

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
	for (int c = 0; c < VIEW_NCTL; c++) {
		snprintf(path, sizeof(path), VIEW_CGROUP_TOP "/%s", view_ctl_name[c]);
		*what = "mkdir in " VIEW_CGROUP_TOP;
		if (mkdir(path, 0755))
			return -errno;
	}
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
	*what = "the cpu, cpuacct and cpuset stand-ins";
	if ((rc = ns_standins()))
		return rc;
	*what = "remounting " VIEW_CGROUP_TOP " read-only";
	if (mount(NULL, VIEW_CGROUP_TOP, NULL, MS_REMOUNT | MS_RDONLY | fl, NULL))
		return -errno;
	*what = "statx (mount ids)";
	if ((rc = ns_mount_id(VIEW_CGROUP_TOP)) < 0)
		return rc;
	ns->top_id = rc;
	for (int c = 0; c < VIEW_NCTL; c++) {
		snprintf(path, sizeof(path), VIEW_CGROUP_TOP "/%s", view_ctl_name[c]);
		if ((rc = ns_mount_id(path)) < 0)
			return rc;
		ns->ctl_id[c] = rc;
	}
	return 0;
}
