/* standin_os.c: the system as the stand-in hierarchies see it (the
 * struct hier_os of standin.h): tasks from /proc, signals with kill(2).
 * Owns nothing; never writes a file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge/standin.h"

static ssize_t standin_os_slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Whether process TID has a thread besides its leader. */
static bool standin_os_has_threads(pid_t tid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tid);
	if (!(d = opendir(path)))
		return false;
	while (n < 2 && (e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n > 1;
}

static int standin_os_task(void *arg, pid_t tid, struct hier_task_info *out)
{
	char path[64], buf[4096], state = 0;
	const char *p;
	unsigned long long start = 0;
	int ppid = 0, tgid = 0;
	unsigned ruid = 0, euid = 0, suid = 0;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if (standin_os_slurp(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -ESRCH;
	/* after the name: state, ppid, then 17 fields to starttime */
	if (sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &state, &ppid, &start) != 3)
		return -ESRCH;
	/* an exited task left its groups (cgroup_exit), reaped or not; a
	 * leader that exited before its threads is still their process */
	if ((state == 'Z' || state == 'X') && !standin_os_has_threads(tid))
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (standin_os_slurp(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nTgid:")) ||
	    sscanf(p + 6, "%d", &tgid) != 1 || !(p = strstr(buf, "\nUid:")) ||
	    sscanf(p + 5, "%u %u %u", &ruid, &euid, &suid) != 3)
		return -ESRCH;
	out->uid = ruid;
	out->suid = suid;
	out->tgid = tgid;
	out->ppid = ppid;
	out->start = start;
	out->stopped = state == 'T';
	return 0;
}

static long standin_os_dir(const char *path, pid_t *out, size_t max, size_t n)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d)) && n < max) {
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (*end || v <= 0)
			continue;
		out[n++] = (pid_t)v;
	}
	closedir(d);
	return (long)n;
}

static long standin_os_threads(void *arg, pid_t tgid, pid_t *out, size_t max)
{
	char path[64];

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	return standin_os_dir(path, out, max, 0);
}

static long standin_os_tasks(void *arg, pid_t *out, size_t max)
{
	pid_t *procs = malloc(max * sizeof(*procs));
	long np = procs ? standin_os_dir("/proc", procs, max, 0) : -ENOMEM;
	size_t n = 0;

	for (long i = 0; i < np && n < max; i++) {
		long k = standin_os_threads(arg, procs[i], out + n, max - n);

		if (k > 0)
			n += (size_t)k;
	}
	free(procs);
	return np < 0 ? np : (long)n;
}

/* memcgfs-run's own processes (the supervisor, this server) are to the
 * stand-ins what kernel threads are to cgroupfs: never moved, never
 * frozen. */
static bool standin_os_unmovable(void *arg, pid_t tid)
{
	static char self[4096];
	char path[64], exe[4096];
	ssize_t n;

	(void)arg;
	if (!self[0] && (n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0)
		self[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)tid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		return false;
	exe[n] = '\0';
	return self[0] && !strcmp(exe, self);
}

static int standin_os_signal(void *arg, pid_t tid, int sig)
{
	(void)arg;
	return kill(tid, sig) ? -errno : 0;
}

const struct hier_os standin_os = {
	.task = standin_os_task,
	.tasks = standin_os_tasks,
	.threads = standin_os_threads,
	.signal = standin_os_signal,
	.unmovable = standin_os_unmovable,
};

bool standin_os_sys_admin(pid_t pid)
{
	char path[64], buf[4096];
	const char *p;
	unsigned long long eff = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (standin_os_slurp(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nCapEff:")))
		return false;
	return sscanf(p + 8, "%llx", &eff) == 1 && (eff & (1ULL << 21));
}

struct hier_set *standin_os_hier(const struct hier_os *os, uid_t owner, gid_t group)
{
	char cpus[HIER_LIST_MAX], mems[HIER_LIST_MAX];
	unsigned huge[3];
	int nhuge = standin_os_huge(huge, 3);

	if (standin_os_online("/sys/devices/system/cpu/online", cpus, sizeof(cpus)))
		snprintf(cpus, sizeof(cpus), "0");
	if (standin_os_online("/sys/devices/system/node/online", mems, sizeof(mems)))
		snprintf(mems, sizeof(mems), "0");
	return hier_new(os, cpus, mems, huge, nhuge, owner, group);
}

int standin_os_online(const char *path, char *out, size_t size)
{
	ssize_t n = standin_os_slurp(path, out, size);

	if (n <= 0)
		return n ? (int)n : -EINVAL;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

int standin_os_huge(unsigned *kb, int max)
{
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max)
		if (sscanf(e->d_name, "hugepages-%ukB", &kb[n]) == 1)
			n++;
	closedir(d);
	/* the kernel's files come smallest first */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && kb[j] < kb[j - 1]; j--) {
			unsigned t = kb[j];

			kb[j] = kb[j - 1];
			kb[j - 1] = t;
		}
	return n;
}
