/* proc.c: reading /proc for task ids, credentials, flags and PID-namespace
 * translation. Never writes anything under /proc, never keeps state between
 * calls (the namespace of the daemon is looked up once). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <pthread.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include "os/proc.h"

#define PF_KTHREAD_FLAG        0x00200000UL
#define PF_NO_SETAFFINITY_FLAG 0x04000000UL
#define PROC_CAP_SYS_ADMIN     21

static int proc_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EIO;
	buf[n] = '\0';
	return 0;
}

static const char *proc_field(const char *buf, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0)
			return p + klen;
	return NULL;
}

/* What follows the comm field of a /proc/PID/stat line (comm may hold
 * spaces and parentheses: after the last ')'), or NULL. */
static const char *proc_stat_rest(const char *buf)
{
	const char *p = strrchr(buf, ')');

	return p ? p + 1 : NULL;
}

int proc_read_task(pid_t tid, struct proc_task *t)
{
	char path[64], buf[4096];
	const char *p;
	char *end;
	int err;

	if (tid <= 0)
		return -ESRCH;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((err = proc_read_file(path, buf, sizeof(buf))))
		return err;
	if (!(p = proc_field(buf, "Tgid:")))
		return -EIO;
	t->tgid = (pid_t)strtol(p, NULL, 10);
	if ((p = proc_field(buf, "PPid:")))
		t->ppid = (pid_t)strtol(p, NULL, 10);
	if (!(p = proc_field(buf, "Uid:")) ||
	    sscanf(p, "%u %u %u", &t->ruid, &t->euid, &t->suid) != 3)
		return -EIO;
	if ((p = proc_field(buf, "CapEff:")))
		t->cap_eff = strtoull(p, NULL, 16);
	t->vm_pte_kb = (p = proc_field(buf, "VmPTE:")) ? strtol(p, NULL, 10) : -1;
	t->threads = (p = proc_field(buf, "Threads:")) ? strtol(p, NULL, 10) : -1;
	t->rss_anon_kb = (p = proc_field(buf, "RssAnon:")) ? strtol(p, NULL, 10) : -1;
	t->rss_file_kb = (p = proc_field(buf, "RssFile:")) ? strtol(p, NULL, 10) : -1;
	t->rss_shmem_kb = (p = proc_field(buf, "RssShmem:")) ? strtol(p, NULL, 10) : -1;
	t->vm_lck_kb = (p = proc_field(buf, "VmLck:")) ? strtol(p, NULL, 10) : -1;
	if ((p = proc_field(buf, "NSpid:"))) {
		while (t->ns_depth < PROC_NS_MAX) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			t->nspid[t->ns_depth++] = (pid_t)v;
			p = end;
		}
	}
	if (t->ns_depth == 0) {
		t->nspid[0] = tid;
		t->ns_depth = 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if ((err = proc_read_file(path, buf, sizeof(buf))))
		return err;
	/* fields after comm: state(3) ppid pgrp session tty_nr tpgid flags(9) */
	if (!(p = proc_stat_rest(buf)) || sscanf(p, " %*c %*d %*d %*d %*d %*d %lu", &t->flags) != 1)
		return -EIO;
	return 0;
}

static long proc_kb(const char *buf, const char *key)
{
	const char *p = proc_field(buf, key);

	return p ? strtol(p, NULL, 10) : 0;
}

int proc_read_oom_info(pid_t pid, struct proc_oom_info *o)
{
	char path[64], buf[4096];
	const char *p;
	int err;

	memset(o, 0, sizeof(*o));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((err = proc_read_file(path, buf, sizeof(buf))))
		return err;
	if ((p = proc_field(buf, "Name:"))) {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, "\n");
		snprintf(o->comm, sizeof(o->comm), "%.*s", (int)n, p);
	}
	if ((p = proc_field(buf, "Uid:")))
		o->uid = (uid_t)strtoul(p, NULL, 10);
	o->total_vm_kb = proc_kb(buf, "VmSize:");
	o->anon_kb = proc_kb(buf, "RssAnon:");
	o->file_kb = proc_kb(buf, "RssFile:");
	o->shmem_kb = proc_kb(buf, "RssShmem:");
	o->pte_kb = proc_kb(buf, "VmPTE:");
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	if (proc_read_file(path, buf, sizeof(buf)) == 0)
		o->oom_score_adj = atoi(buf);
	return 0;
}

int proc_open(pid_t pid, const char *file)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ? -errno : fd;
}

int proc_open_stat(pid_t pid)
{
	return proc_open(pid, "stat");
}

int proc_read_activity(int statfd, struct proc_activity *a)
{
	char buf[1024];
	const char *p;
	ssize_t n = pread(statfd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return n < 0 ? -errno : -ESRCH;
	buf[n] = '\0';
	if (!(p = proc_stat_rest(buf)))
		return -EIO;
	/* after comm: state(3) ppid pgrp session tty_nr tpgid flags minflt(10)
	 * cminflt majflt(12) cmajflt utime stime cutime cstime priority nice
	 * num_threads(20) itrealvalue starttime vsize(23) rss(24) rsslim
	 * startcode(26) endcode startstack(28) */
	a->start_code = a->start_stack = 0;
	a->processor = -1;
	/* ... kstkesp(29) kstkeip signal blocked sigignore sigcatch wchan
	 * nswap cnswap exit_signal(38) processor(39) */
	if (sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %lu %*u %lu %*u %*u %*u %*d %*d %*d %*d %ld %*d %llu %lu %ld"
		   " %*u %lu %*u %lu %*u %*u %*u %*u %*u %*u %*u %*u %*u %*d %d",
		   &a->minflt, &a->majflt, &a->threads, &a->start_time, &a->vsize, &a->rss,
		   &a->start_code, &a->start_stack, &a->processor) < 6)
		return -EIO;
	return 0;
}

unsigned long long proc_ticks_now(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	if (hz <= 0)
		hz = 100;
	return ((unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec) /
	       (1000000000ULL / (unsigned long long)hz);
}

int proc_start_time(pid_t tid, unsigned long long *start)
{
	char path[64], buf[1024];
	const char *p;
	int err;

	if (tid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if ((err = proc_read_file(path, buf, sizeof(buf))))
		return err;
	/* after comm: state(3) .. itrealvalue(21) starttime(22) */
	if (!(p = proc_stat_rest(buf)) ||
	    sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   start) != 1)
		return -EIO;
	return 0;
}

bool proc_unmovable(const struct proc_task *t)
{
	return (t->flags & (PF_KTHREAD_FLAG | PF_NO_SETAFFINITY_FLAG)) != 0;
}

static int proc_ns_stat(pid_t pid, struct stat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, st) ? -errno : 0;
}

static struct stat proc_self_ns;
static int proc_self_err;
static pthread_once_t proc_self_once = PTHREAD_ONCE_INIT;

static void proc_self_init(void)
{
	if (stat("/proc/self/ns/pid", &proc_self_ns))
		proc_self_err = -errno;
}

static int proc_ours(struct stat *st)
{
	pthread_once(&proc_self_once, proc_self_init);
	*st = proc_self_ns;
	return proc_self_err;
}

int proc_view_of(pid_t reader, struct proc_view *v)
{
	struct proc_task t;
	struct stat st, self;
	int err;

	memset(v, 0, sizeof(*v));
	v->ours = true;
	v->depth = 1;
	if (reader <= 0)
		return 0;       /* the kernel itself or an invisible caller: our view */
	if ((err = proc_read_task(reader, &t)) || (err = proc_ns_stat(reader, &st)) ||
	    (err = proc_ours(&self)))
		return err;
	v->depth = t.ns_depth;
	v->ns_dev = st.st_dev;
	v->ns_ino = st.st_ino;
	v->ours = st.st_dev == self.st_dev && st.st_ino == self.st_ino;
	return 0;
}

/* Is the namespace of task tid the namespace of v or one nested in it? */
static bool proc_ns_within(const struct proc_view *v, pid_t tid, int levels_up)
{
	char path[64];
	struct stat st;
	int fd;
	bool hit = false;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	for (int i = 0; i < levels_up; i++) {
		int parent = ioctl(fd, NS_GET_PARENT);

		close(fd);
		if (parent < 0)
			return false;
		fd = parent;
	}
	if (fstat(fd, &st) == 0)
		hit = st.st_dev == v->ns_dev && st.st_ino == v->ns_ino;
	close(fd);
	return hit;
}

pid_t proc_id_in_view(const struct proc_view *v, const struct proc_task *t)
{
	if (v->ours)
		return t->tid;
	if (t->ns_depth < v->depth)
		return 0;
	if (!proc_ns_within(v, t->tid, t->ns_depth - v->depth))
		return 0;
	return t->nspid[v->depth - 1];
}

pid_t proc_host_id(const struct proc_view *v, pid_t vid)
{
	pid_t *all, found = -ESRCH;
	long n;

	if (v->ours) {
		struct proc_task t;

		return proc_read_task(vid, &t) == 0 && t.tid == vid ? vid : -ESRCH;
	}
	/* Rare (a writer inside a container): scan every thread for the one
	 * whose id at the writer's depth is vid and that the writer can see. */
	if ((n = proc_list(true, &all)) < 0)
		return (pid_t)n;
	for (long i = 0; i < n && found < 0; i++) {
		struct proc_task t;

		if (proc_read_task(all[i], &t) == 0 && t.ns_depth >= v->depth &&
		    t.nspid[v->depth - 1] == vid && proc_id_in_view(v, &t) == vid)
			found = t.tid;
	}
	free(all);
	return found;
}

int proc_pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Append every numeric entry of dir to the vector. A task directory of a
 * process in the middle of exiting fails with ESRCH (or ENOENT once it is
 * gone): that process has no threads left to list. */
static int proc_scan_dir(const char *dir, pid_t **v, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int err;

	if (!d)
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	for (errno = 0; (de = readdir(d)); errno = 0) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			pid_t *nv = realloc(*v, nc * sizeof(**v));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = (pid_t)atoi(de->d_name);
	}
	err = errno == ENOENT || errno == ESRCH ? 0 : -errno;
	closedir(d);
	return err;
}

long proc_list(bool threads, pid_t **out)
{
	pid_t *tgids = NULL, *v = NULL;
	size_t ntg = 0, captg = 0, n = 0, cap = 0;
	int err = proc_scan_dir("/proc", &tgids, &ntg, &captg);

	if (err || !threads) {
		if (err) {
			free(tgids);
			return err;
		}
		if (ntg)                       /* (qsort takes no NULL) */
			qsort(tgids, ntg, sizeof(*tgids), proc_pid_cmp);
		*out = tgids;
		return (long)ntg;
	}
	for (size_t i = 0; i < ntg && !err; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task", (int)tgids[i]);
		err = proc_scan_dir(path, &v, &n, &cap);
	}
	free(tgids);
	if (err) {
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), proc_pid_cmp);
	*out = v;
	return (long)n;
}

long proc_threads_of(pid_t tgid, pid_t **out)
{
	char path[64];
	pid_t *v = NULL;
	size_t n = 0, cap = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	if ((err = proc_scan_dir(path, &v, &n, &cap))) {
		free(v);
		return err;
	}
	if (n)                          /* none left (exiting): v is NULL */
		qsort(v, n, sizeof(*v), proc_pid_cmp);
	*out = v;
	return (long)n;
}

bool proc_is_init_admin(pid_t pid)
{
	struct proc_task t;
	char path[64];
	struct stat a, b;

	if (proc_read_task(pid, &t) || !(t.cap_eff & (1ull << PROC_CAP_SYS_ADMIN)))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	return stat(path, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* The daemon's own helper process (its watchdog), 0 for none. */
static _Atomic pid_t proc_helper;

void proc_exempt_helper(pid_t pid)
{
	atomic_store(&proc_helper, pid);
}

static _Atomic pid_t proc_supervisor;

void proc_set_supervisor(pid_t pid)
{
	atomic_store(&proc_supervisor, pid);
}

bool proc_is_daemon(pid_t pid, const struct proc_task *t)
{
	pid_t sup = atomic_load(&proc_supervisor);

	if (pid == getpid() || pid == atomic_load(&proc_helper) || (sup > 1 && pid == sup))
		return true;
	return sup > 1 && t && t->ppid == sup && proc_same_exe(pid, getpid());
}

bool proc_oom_exempt_task(pid_t pid, const struct proc_task *t)
{
	char path[64], buf[32];

	/* the init of the daemon's PID namespace (the host's, as the kernel
	 * exempts only the global init: a container's PID 1 is killed like
	 * any process, and its container with it) */
	if (pid <= 1 || proc_is_daemon(pid, t))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	return proc_read_file(path, buf, sizeof(buf)) == 0 && atoi(buf) == -1000;
}

bool proc_oom_exempt(pid_t pid)
{
	struct proc_task t;

	if (pid <= 1 || pid == getpid())
		return true;
	return proc_oom_exempt_task(pid, proc_read_task(pid, &t) == 0 ? &t : NULL);
}

bool proc_same_exe(pid_t a, pid_t b)
{
	char pa[64], pb[64], ea[4096], eb[4096];
	ssize_t na, nb;

	snprintf(pa, sizeof(pa), "/proc/%d/exe", (int)a);
	snprintf(pb, sizeof(pb), "/proc/%d/exe", (int)b);
	na = readlink(pa, ea, sizeof(ea));
	nb = readlink(pb, eb, sizeof(eb));
	return na > 0 && na == nb && memcmp(ea, eb, (size_t)na) == 0;
}

int proc_pidfd_signal(int pidfd, pid_t pid, int sig)
{
	if (proc_oom_exempt(pid))
		return -EPERM;
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) ? -errno : 0;
}

bool proc_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

long proc_slab_size(const char *name)
{
	FILE *f = fopen("/proc/slabinfo", "re");
	char line[512], cache[128];
	long objsize, found = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %*d %*d %ld", cache, &objsize) == 2 && !strcmp(cache, name)) {
			found = objsize > 0 ? objsize : -EINVAL;
			break;
		}
	fclose(f);
	return found;
}

int proc_cpu_of(pid_t pid)
{
	struct proc_activity a;
	int fd = pid > 0 ? proc_open_stat(pid) : -1;
	int cpu = -1;

	if (fd < 0)
		return -1;
	if (proc_read_activity(fd, &a) == 0)
		cpu = a.processor;
	close(fd);
	return cpu;
}
