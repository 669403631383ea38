/* proc.h: what the daemon learns about real tasks from /proc: ids, uids,
 * flags, PID-namespace views and task lists. Owns parsing /proc only; never
 * changes membership and never signals anything. */
#ifndef MEMCGFS_PROC_H
#define MEMCGFS_PROC_H

#include <fcntl.h>
#include <stdbool.h>
#include <sys/types.h>

#define PROC_NS_MAX 32

struct proc_task {
	pid_t tid;
	pid_t tgid;
	pid_t ppid;
	uid_t ruid, euid, suid;
	unsigned long flags;          /* task flags, field 9 of stat */
	int ns_depth;                 /* entries in NSpid */
	pid_t nspid[PROC_NS_MAX];     /* outermost (ours) first */
	unsigned long long cap_eff;
	long vm_pte_kb;               /* VmPTE (page tables), -1 when absent */
	long threads;                 /* Threads, -1 when absent */
	/* the mm's counters (no page-table walk), -1 when absent: RssAnon,
	 * RssFile, RssShmem, VmLck */
	long rss_anon_kb, rss_file_kb, rss_shmem_kb, vm_lck_kb;
};

/* -ESRCH when the task does not exist (or is gone), -EIO on garbage. */
int proc_read_task(pid_t tid, struct proc_task *t);
/* What the kernel's OOM report says of its victim (status and oom_score_adj). */
struct proc_oom_info {
	char comm[64];                /* Name: */
	uid_t uid;                    /* the real uid */
	long total_vm_kb, anon_kb, file_kb, shmem_kb, pte_kb;   /* 0 when absent */
	int oom_score_adj;
};

/* -ESRCH when the process is gone. */
int proc_read_oom_info(pid_t pid, struct proc_oom_info *o);
/* What moves when a process's memory does, from /proc/PID/stat alone (one
 * small read): faults, threads, address-space size, resident pages. Equal
 * readings a while apart mean no page was faulted in, mapped or dropped;
 * a write to a page already mapped writable is not seen. */
struct proc_activity {
	unsigned long minflt, majflt, vsize;
	long threads, rss;
	/* where its program's code and stack start: an execve changes them
	 * (another program, or the same one placed anew); 0 when not shown */
	unsigned long start_code, start_stack;
	unsigned long long start_time;   /* field 22: with the pid, one process */
	int processor;                /* the CPU it last ran on, -1 when not shown */
};
/* An fd of /proc/PID/FILE to read again and again with pread (a read at
 * 0 regenerates it), or -errno. */
int proc_open(pid_t pid, const char *file);
/* ... of /proc/PID/stat; proc_read_activity reads it. */
int proc_open_stat(pid_t pid);
int proc_read_activity(int statfd, struct proc_activity *a);
/* The CPU task pid ran on last (field 39 of /proc/PID/stat), or -1. */
int proc_cpu_of(pid_t pid);
/* A task's start time (field 22 of /proc/TID/stat, clock ticks after
 * boot): with its id, it names one task across PID reuse. -ESRCH, -EIO. */
int proc_start_time(pid_t tid, unsigned long long *start);
/* Now, in the clock ticks after boot that start times count. */
unsigned long long proc_ticks_now(void);
/* Kernel threads, and tasks the kernel refuses to move (PF_NO_SETAFFINITY). */
bool proc_unmovable(const struct proc_task *t);

/* How one reader sees PIDs: its namespace and depth. */
struct proc_view {
	bool ours;                    /* same PID namespace as the daemon */
	int depth;
	dev_t ns_dev;
	ino_t ns_ino;
};

int proc_view_of(pid_t reader, struct proc_view *v);
/* The id of host task t as seen from v, or 0 when invisible there. */
pid_t proc_id_in_view(const struct proc_view *v, const struct proc_task *t);
/* The host tid of id vid in view v: -ESRCH when there is none. */
pid_t proc_host_id(const struct proc_view *v, pid_t vid);

/* Every live thread id (threads) or thread-group id, sorted. Returns the
 * count or a negative errno; *out is malloc'ed. */
long proc_list(bool threads, pid_t **out);
/* CAP_SYS_ADMIN in the daemon's (initial) user namespace (§3.19). */
bool proc_is_init_admin(pid_t pid);
/* Never to be signalled by the OOM killer: the daemon's own processes
 * (proc_is_daemon), the init of the daemon's PID namespace, oom_score_adj
 * -1000 (not a container's PID 1: the kernel exempts only the global
 * init). Gone tasks are not exempt. */
bool proc_oom_exempt(pid_t pid);
/* The daemon's helper process (its watchdog; 0: none) is exempt as the
 * daemon is: stopping it would stop the daemon's writes to it. */
void proc_exempt_helper(pid_t pid);
/* The same for a task already read (t), or NULL when it could not be. */
bool proc_oom_exempt_task(pid_t pid, const struct proc_task *t);
/* The worker's supervisor (its parent, which started it), told once. */
void proc_set_supervisor(pid_t pid);
/* One of the mount's own processes, which are to it what kernel threads
 * are to cgroupfs (never moved into a group, never signalled): this
 * process, its supervisor, the supervisor's other children running our
 * program (the unmount agent, a worker), and the helper. t: the task as
 * read, or NULL. */
bool proc_is_daemon(pid_t pid, const struct proc_task *t);
/* Both run the same executable (a fork that has not exec'd). */
bool proc_same_exe(pid_t a, pid_t b);
/* pidfd_open's flag for a thread's pidfd (Linux 6.9; glibc 2.36 lacks it). */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
/* The process behind pidfd has exited (the pidfd turns readable at exit,
 * before its PID can be reused); also true for a pidfd in error. */
bool proc_pidfd_exited(int pidfd);
/* Send sig through pidfd, the one way the daemon signals a process (a
 * pidfd names the process itself, never a reused PID); pid is the same
 * process's id, checked with proc_oom_exempt first. 0, -EPERM for an
 * exempt process, or -errno. */
int proc_pidfd_signal(int pidfd, pid_t pid, int sig);
/* qsort order of pid_t values. */
int proc_pid_cmp(const void *a, const void *b);
/* The thread ids of one thread group, sorted. */
long proc_threads_of(pid_t tgid, pid_t **out);

/* The object size of the kernel's slab cache name (/proc/slabinfo, root
 * only), or -errno. */
long proc_slab_size(const char *name);

#endif
