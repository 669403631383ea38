/* mirror.h: real processes mirrored from /proc. A process whose thread-group
 * leader is in a child group has its anon, shmem and file memory sampled
 * from /proc/PID/smaps and turned into stand-in pages of the engine, so the
 * group's counters, LRUs and memory.stat carry it and the engine's reclaim
 * and OOM act on it: clean file pages are paged out with process_madvise,
 * OOM victims get SIGKILL, oom_kill_disable stops the group's processes.
 * Owns the per-process ledgers and the file stand-ins; never decides a
 * victim (the engine does) and never mirrors simulated tasks or itself. */
#ifndef MEMCGFS_MIRROR_H
#define MEMCGFS_MIRROR_H

#include <stdbool.h>
#include <sys/types.h>

struct source_env;
struct mcg_group;
struct mirror;

/* Sampling periods (ns): every process at least this often, one in a
 * group within a tenth of its limit this often, and a read of a usage or
 * statistics file samples processes older than the last. */
#define MIRROR_PERIOD_NS      100000000ull
#define MIRROR_NEAR_PERIOD_NS  10000000ull
/* the least growth the tracer's alarm waits for (mirror_arm): 1 MiB, four
 * times what the mm's per-CPU counters may hold back on two CPUs (a batch
 * of 32 pages each), and at 1 GiB/s of faults one event a millisecond */
#define MIRROR_ALARM_MIN_PAGES 256
#define MIRROR_READ_AGE_NS     20000000ull
/* Between two reads of smaps a sample may take a process's anon growth
 * from its mm counters in /proc/PID/status (no page-table walk) while its
 * file, shmem and locked counters stay as that read left them; smaps is
 * read again at least this often. */
#define MIRROR_SMAPS_MAX_NS  4000000000ull
/* Real memory a simulated task may add uncharged (its own workings). */
#define MIRROR_SIM_SLACK (4l << 20)
/* Without the tracer (mirror_pcscan.c): the open files of a process that
 * read or wrote since its last look are looked at within
 * MIRROR_SCAN_PERIOD_NS (its read and write counts are read that often,
 * then, while they stay still, twice as long apart each time up to
 * MIRROR_SCAN_IDLE_NS), those of one that did not every
 * MIRROR_SCAN_IDLE_NS (what the host's reclaim or another process took);
 * a reader's or an exit's pass is skipped within MIRROR_SCAN_FRESH_NS of
 * the last; a pass asks cachestat(2) at most MIRROR_SCAN_QUERIES times
 * (a file left unfinished is looked at again next time) and a process's
 * walk stops at MIRROR_SCAN_FILES descriptors of any kind */
#define MIRROR_SCAN_PERIOD_NS  100000000ull
#define MIRROR_SCAN_IDLE_NS   4000000000ull
#define MIRROR_SCAN_FRESH_NS    10000000ull
#define MIRROR_SCAN_QUERIES   8192
#define MIRROR_SCAN_FILES     4096
/* ... and a file larger than this many pages (16 GiB) is not followed */
#define MIRROR_SCAN_MAX_PAGES (1ul << 22)
/* How long a simulated task's fork may stay unmirrored before it connects. */
#define MIRROR_FORK_GRACE_NS 1000000000ull
/* A process in which nothing moved (proc_read_activity) is looked at less
 * and less often, up to this, and never later than growth at
 * MIRROR_IDLE_RATE bytes per ns (about 1 GiB/s) could take to eat the
 * headroom of its group's limits. */
#define MIRROR_IDLE_MAX_NS    4000000000ull
#define MIRROR_IDLE_RATE      1
/* The longest the sampler sleeps with nothing due (it is woken sooner by
 * whatever comes due: a sample anywhere, a process tracked or made). */
#define MIRROR_ROUND_MAX_NS   1000000000ull
/* The grid idle processes with periods of twice this or more come due on. */
#define MIRROR_IDLE_GRID_NS   1000000000ull

/* Where the page cache real processes never map is charged from: the
 * kernel's events (eBPF), else the scan of open files; the scan; the scan
 * as on a kernel without cachestat(2); nothing. */
enum mirror_pc_source {
	MIRROR_PC_EVENTS,
	MIRROR_PC_SCAN,
	MIRROR_PC_MINCORE,            /* the scan, through mincore(2) only */
	MIRROR_PC_NONE,
};

/* enforce false (-o enforce=none): account only, never signal or page
 * out. Starts the sampling thread. */
struct mirror *mirror_start(struct source_env *env, bool enforce, enum mirror_pc_source pcs);
/* Stops sampling, continues every process it stopped, releases every
 * stand-in. */
void mirror_stop(struct mirror *m);

/* A write into tasks or cgroup.procs is about to move tgid to dst: sample
 * it now, so that what it has is charged where it was faulted (§11.9);
 * one not mirrored yet (and going to a child) is mirrored from here, with
 * what it has counted as the root's, never charged. */
void mirror_settle(struct mirror *m, pid_t tgid, struct mcg_group *dst);
/* tgid has a thread in a child group now: mirror it (soon). A process
 * not settled first (a fork born in the group) has everything charged
 * there. */
void mirror_track(struct mirror *m, pid_t tgid);
/* A usage or statistics file of g is being read: sample g's processes
 * whose last sample is older than MIRROR_READ_AGE_NS. */
void mirror_refresh(struct mirror *m, struct mcg_group *g);
/* Move charge at immigrate for a mirrored process: its stand-ins
 * selected by mask move to dst with its ledger. 0 (also for processes not
 * mirrored), or -ENOMEM with nothing moved. */
int mirror_move(struct mirror *m, pid_t tgid, struct mcg_group *dst, unsigned mask);

/* tgid (pidfd: its pidfd, or -1) becomes a simulated task: what it has
 * mapped now is its own from before, and only its real growth past that
 * and past MIRROR_SIM_SLACK is charged from now on. -EBUSY when the mirror
 * has charged more than MIRROR_SIM_SLACK of anon, shmem and kernel memory
 * to it already: a mirrored process cannot opt out. */
int mirror_declare(struct mirror *m, pid_t tgid, int pidfd);
/* The OOM killer chose the mirrored process tgid: SIGKILL it through the
 * pidfd the mirror holds (never an exempt process, nothing with
 * enforce=none) and return true; false when tgid is not mirrored. */
bool mirror_kill(struct mirror *m, pid_t tgid);

/* One mapping of /proc/PID/smaps, in pages. */
struct mirror_vma {
	unsigned long start, end;     /* addresses */
	unsigned long off;            /* file offset, in pages */
	unsigned long dev, ino;
	bool shmem;                   /* tmpfs, memfd, SysV or shared anon */
	long rss, anon, dirty;        /* pages */
	long locked;                  /* pages: mlocked (Locked:) */
	long shared;                  /* pages others map too (Shared_*) */
};

/* Parse smaps text (for tests): calls fn for every mapping, with
 * is_tmpfs deciding whether a device holds shmem. Returns the count. */
long mirror_parse_smaps(const char *text, bool (*is_tmpfs)(unsigned long dev, void *arg),
			void *arg, void (*fn)(const struct mirror_vma *v, void *arg), void *fn_arg);

#endif
