/* mirror_int.h: the mirror's own structures and the calls between its
 * files (mirror.c the sampler and the API, mirror_smaps.c, mirror_standin.c,
 * mirror_ledger.c, mirror_enforce.c). Included by those files only. */
#ifndef MEMCGFS_MIRROR_INT_H
#define MEMCGFS_MIRROR_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "engine/engine.h"
#include "os/pcache.h"
#include "os/proc.h"
#include "source/mirror.h"
#include "source/source.h"

struct proc_task;

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define MIRROR_FILE_BUCKETS 1024
#define MIRROR_MAX_FILES    65536
#define MIRROR_REGION_MIN   256          /* ledger regions grow 256 .. 65536 pages */
#define MIRROR_REGION_MAX   65536
#define MIRROR_IOV          64
/* Anon mappings with pages shared copy-on-write are walked in pagemap only
 * when at most this many times larger than what they have resident. */
#define MIRROR_COW_SPARSE   16

/* Pageout back-off (mirror_enforce.c): a pageout the next sample does
 * not confirm (no drop in the mapping's resident pages, or an error from
 * process_madvise) leaves the file's stand-ins charged and unevictable
 * for this long, doubling with each failure in a row up to the max. */
#define MIRROR_PIN_MIN_NS  1000000000ull
#define MIRROR_PIN_MAX_NS 32000000000ull

struct mirror_file {
	unsigned long dev, ino, off;
	uint32_t npages;
	struct vm_object *obj;
	struct vm_region *r;          /* page i: the file's page off + i */
	struct mirror_file *next;     /* (by device, inode, offset, size) */
	struct mirror_file *inext;    /* (by device and inode) */
	/* (shared by every process mapping it; racy between two samples of
	 * two of them, which at worst pin or unpin a page a period late) */
	atomic_bool pinned;           /* its stand-ins are unevictable ... */
	_Atomic uint64_t pin_until;   /* ... until then */
	atomic_uint fails;            /* unconfirmed pageouts in a row */
	unsigned maps;                /* processes' mappings of it (under the
				       * mirror's files_lock): its pages are
				       * mapped_file while there are any */
};

/* Page cache from the kernel's events (mirror_pcache.c): stand-ins by
 * device, inode and chunk of MIRROR_PC_CHUNK pages of the file. */
#define MIRROR_PC_CHUNK     1024
#define MIRROR_PC_DRAIN_MS  100        /* events left unread at most this long */
#define MIRROR_PC_HASH_BITS 12
/* The kernel memory page cache costs, as estimates (docs/files.md): a
 * page-cache tree node (radix_tree_node) per 64 pages a folio smaller than
 * 64 pages sits in, and the buffer heads of folios written through a block
 * filesystem; object sizes from /proc/slabinfo, else 6.18's. */
#define MIRROR_PC_BLOCK     64
#define MIRROR_PC_BLOCKS    (MIRROR_PC_CHUNK / MIRROR_PC_BLOCK)
#define MIRROR_PC_NODE_SIZE 584
#define MIRROR_PC_BH_SIZE   104

struct mirror_pc_chunk {
	unsigned long dev, ino;
	uint64_t no;                  /* file page index / MIRROR_PC_CHUNK */
	struct vm_object *obj;
	struct vm_region *r;
	struct mirror_pc_chunk *next;
	/* per block of 64 pages: the pages charged, whether its tree node
	 * is, the group its node and buffer heads are charged to (the first
	 * page's, referenced while any of them is), and the pages whose
	 * buffer heads are charged, and how many heads each */
	uint16_t pages[MIRROR_PC_BLOCKS];
	uint16_t node;                /* bit per block */
	struct mcg_group *kg[MIRROR_PC_BLOCKS];
	uint8_t page[MIRROR_PC_CHUNK];   /* MIRROR_PC_COUNTED | buffer heads */
	unsigned counted;             /* pages counted: the chunk goes at 0 */
	/* counted pages the kernel reported dirty and not yet written */
	uint64_t dirty[MIRROR_PC_CHUNK / 64];
	unsigned ndirty;
};
#define MIRROR_PC_COUNTED 0x80        /* added by a process of ours, not yet
				       * removed (charged, unless faulted; reclaim
				       * may have taken its stand-in) */
#define MIRROR_PC_FAULTED 0x40        /* ... by a page fault: not charged here,
				       * but the sampler's file stand-ins may
				       * charge it (mirror_pcache_faulted) */
#define MIRROR_PC_BH_MASK 0x3f

/* Kernel memory the events charged to one group, in bytes; the group is
 * charged the pages they round up to (as the kernel's object stock does). */
struct mirror_pc_kmem {
	struct mcg_group *g;          /* referenced */
	long bytes, pages;
};
#define MIRROR_PC_KMEM_GROUPS 256

/* What the events need of the rest of the mirror: mirror_proc_pin and
 * mirror_proc_unpin, mirror_alarmed, mirror_files_dropped. */
struct mirror_pc_hooks {
	struct mirror_proc *(*pin)(struct mirror *m, pid_t tgid, bool make);
	void (*unpin)(struct mirror_proc *p);
	void (*alarmed)(struct mirror *m, pid_t tgid);
	void (*dropped)(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t index,
			uint64_t n);
	/* (the scan's: mirror_files_resample) */
	void (*resample)(struct mirror *m, unsigned long dev, unsigned long ino);
};

#define MIRROR_PC_MAKERS 64

struct mirror_pcache {
	struct pcache *tracer;        /* NULL: events come from elsewhere (the
				       * unit tests, or the scan of open files) */
	bool scan;                    /* they come from the scan (mirror_pcscan.c):
				       * no event says which pages a fault added */
	pthread_t thread;             /* reads the events */
	int stopfd;
	/* the table: made and freed only by event handlers (one at a time,
	 * under the tracer's consume lock); read by mirror_pcache_held */
	pthread_mutex_t chunks_lock;
	struct mirror_pc_chunk *chunk[1u << MIRROR_PC_HASH_BITS];
	size_t nchunks;
	struct mirror_proc *last;     /* the last event's record, pinned */
	/* kernel memory by group (event handlers only); object sizes */
	struct mirror_pc_kmem kmem[MIRROR_PC_KMEM_GROUPS];
	unsigned nkmem;
	long node_size, bh_size;
	struct charge_mode kmode;     /* (nowait: a dirtying's heads) */
	_Atomic long kmem_bytes;
	_Atomic long kmem_pages;      /* ... and the pages charged for them (each
				       * group's bytes rounded up) */
	/* the mirror's records and file stand-ins, as mirror.c and
	 * mirror_standin.c keep them (handed down at the start, so that
	 * nothing here calls up into them) */
	struct mirror_pc_hooks hooks;
	_Atomic uint64_t added, faulted, removed, unattributed, failed, alarms;
	_Atomic uint64_t makers;      /* CLONE_PARENT forks told to the file surface */
	/* PCACHE_MAKER events read (queued by whoever consumes the ring,
	 * under pcache.lock), told to the file surface after pcache.lock is
	 * let go by the tracer's thread or a reader of a tasks file, under
	 * tell_lock alone (made_by takes pidwatch.cn_lock and
	 * cgfs.attach_lock) */
	pthread_mutex_t makers_lock;  /* a leaf */
	/* held by whoever tells makers, from taking the first off the queue
	 * to the last told: the tracer's thread, or a reader of a tasks file
	 * (mirror_pcache_place); so a grandchild is never placed before
	 * its maker is. Taken holding no lock; above cgfs.attach_lock */
	pthread_mutex_t tell_lock;
	unsigned tell_delay_ms;       /* the tracer's thread waits that long
				       * before it tells (tests only:
				       * MEMCGFS_TEST_TELL_DELAY_MS, so that a
				       * read must do it first) */
	struct { pid_t child, maker, real; } maker_q[MIRROR_PC_MAKERS];
	int nmakers;
};

/* Anon pages shared copy-on-write (mirror_shared.c): a process's claim
 * on the frames it counts, and the table of claimed frames. */
struct mirror_claimer {
	pid_t tgid;
	unsigned long long start;     /* its start time: the oldest counts */
	bool alive;                   /* (under the table's lock) */
	uint64_t *pfn;                /* the frames it counted last, sorted */
	size_t n;
};

struct mirror_claim {
	uint64_t pfn;
	const struct mirror_claimer *owner;   /* NULL: a free slot */
};

struct mirror_shared {
	pthread_mutex_t lock;         /* a leaf */
	struct mirror_claim *slot;
	size_t cap, n;
};

struct mirror_range {
	unsigned long start, end;
};

/* What an era holds: stand-in pages of a kind, or kernel memory (page
 * tables and stacks: a count charged with charge_kmem, no page of ours). */
enum mirror_kind {
	MK_ANON,
	MK_SHMEM,
	MK_LOCKED,                    /* mlocked anon: unevictable */
	MK_KMEM,
};

/* What a process had of one kind during one stay in a group, filled from
 * 0. Pages belong to the group they were faulted in (§11.9): an era of the
 * root only counts them (the root is never charged, and what a process
 * had before the mount saw it is not in the engine). */
struct mirror_era {
	enum mirror_kind kind;
	struct mcg_group *g;          /* referenced */
	long pages;
	long cap;                     /* sum of the regions' sizes */
	struct vm_region **reg;
	unsigned nreg;
};

struct mirror_map {
	unsigned long start;
	struct mirror_file *f;
	struct vm_region *map;        /* the process's mapping of f->r */
	unsigned seen;                /* f's evictions already paged out here */
	long base;                    /* resident pages not to charge: faulted in
				       * the root, or before it became a
				       * simulated task */
	long out_rss;                 /* paged out in this sample: its resident
				       * pages before; -1 when process_madvise
				       * failed */
	bool out;
	bool alive;
};

struct mirror_proc {
	/* what the sampler's round reads of every process (mirror_due), on
	 * the first line: a round over idle ones misses once each */
	struct mirror_proc *next;
	_Atomic uint64_t next_ns;     /* also set by mirror_track */
	atomic_bool gone;             /* set under lock; read without by the reaper */
	struct mirror *m;
	pid_t tgid;
	int pidfd;
	atomic_int watch_fd;          /* its duplicate the exit watch owns, or -1 */
	atomic_int refs;
	pthread_mutex_t lock;         /* everything below */
	struct vm_object *obj;
	struct mirror_era *era;       /* oldest first */
	unsigned nera;
	struct mirror_map *map;
	unsigned nmap, capmap;
	uint64_t born_ns;             /* when the mirror first saw it */
	uint64_t last_ns;
	long last_pages;
	struct mcg_group *stopped;    /* SIGSTOPped for this group's OOM */
	struct proc_activity act;     /* /proc/PID/stat at the last full sample */
	struct proc_activity act_new; /* ... at the one under way */
	bool act_valid;
	/* start_code and start_stack of the image it ran at the last reading
	 * that showed them (an execve changes them); 0: none seen */
	unsigned long image_code, image_stack;
	int stat_fd;                  /* its /proc/PID/stat, opened at the first look */
	uint64_t idle_ns;             /* the period while nothing moves */
	atomic_bool force;            /* a full sample next (it was attached) */
	bool forced;                  /* ... and this sample is that one */
	/* the last smaps read: when, its counts, and the mm counters of
	 * /proc/PID/status read with it (mirror_counted) */
	bool smaps_valid;
	bool smaps_exact;             /* the counters read as much after it: the
				       * process was still while smaps was read */
	long prev_anon_kb;            /* RssAnon at the sample before this one */
	bool last_counted;            /* the last sample took anon from RssAnon */
	_Atomic uint64_t smaps_ns;    /* (read by a child's sample: mirror_cow) */
	long smaps_anon, smaps_locked, smaps_shmem;
	long smaps_anon_kb, smaps_file_kb, smaps_shmem_kb, smaps_lck_kb;
	struct charge_mode mode;      /* its charges never wait (one thread
				       * serves every process); .over names
				       * the group of a failed one */
	bool sim;                     /* a simulated task: charged past its baseline */
	atomic_int held;              /* mirror_declare or mirror_settle have it,
				       * from the list's lock on (not to be
				       * released meanwhile) */
	struct mirror_claimer claimer; /* its copy-on-write frames */
	bool smaps_cow;               /* the last smaps read saw shared anon */
	long base_anon, base_shmem;   /* its memory when it connected */
	long base_locked;
	long base_kmem;               /* its page tables and stacks then */
	long sim_left;                /* slack the last sample left for kmem */
	bool scanned;                 /* in the scan's list (mirror_pcscan.c; its lock) */
	uint64_t alarm_at;            /* the tracer's alarm as armed (mirror_arm) */
	atomic_bool alarm_fired;      /* ... it fired: armed no more */
};

struct mirror {
	struct source_env *env;
	bool enforce;
	pthread_mutex_t lock;         /* procs, stop, wake_at */
	pthread_cond_t wake;
	/* when the sampler looks next (UINT64_MAX while a round runs): a
	 * process coming due earlier than that wakes it (mirror_poke), so
	 * that rounds need not look every MIRROR_PERIOD_NS for nothing */
	uint64_t wake_at;
	struct mirror_proc *procs;
	atomic_int nprocs;
	bool stop;
	pthread_t thread;
	pthread_mutex_t files_lock;   /* files, nfiles, tmpfs */
	struct mirror_file *files[MIRROR_FILE_BUCKETS];
	struct mirror_file *by_inode[MIRROR_FILE_BUCKETS];   /* (the same, by inode) */
	unsigned nfiles;
	/* exits: a duplicate of every record's pidfd watched by one thread
	 * (os/pidwatch.c), which releases what an exited process had at once;
	 * NULL without one (the next sample sees the exit) */
	struct pidwatch *exits;
	struct mirror_shared shared;  /* frames shared copy-on-write */
	bool frames;                  /* pagemap shows frame numbers (privilege) */
	/* page cache from the kernel's events, or from the scan of open
	 * files (scan); NULL with neither */
	struct mirror_pcache *pc;
	struct mirror_pcscan *scan;
	int pc_err;                   /* why there are no events */
	int scan_err;                 /* why there is no scan */
	unsigned long tmpfs[64];      /* devices of tmpfs-like mounts */
	unsigned ntmpfs;
	uint64_t tmpfs_loaded;
};

/* One sample of a process. */
struct mirror_sample {
	struct mirror *m;             /* (mirror_read's: what the events hold) */
	long anon, shmem;
	long locked;                  /* mlocked anon (not in anon) */
	struct mirror_range *cow;     /* anon mappings with pages shared */
	size_t ncow, capcow;
	struct mirror_vma *files;
	size_t n, cap;
};

/* mm is the mapping v of a sample describes. */
static inline bool mirror_map_is(const struct mirror_map *mm, const struct mirror_vma *v)
{
	return mm->start == v->start && mm->f->dev == v->dev && mm->f->ino == v->ino &&
	       mm->f->off == v->off && mm->f->npages == (v->end - v->start) / PC_PAGE_SIZE;
}

/* The engine's clock: the sampler's schedule and a record's age. */
static inline uint64_t mirror_now(const struct mirror *m)
{
	return mcg_now(m->env->eng);
}

/* mirror.c */
/* The live record of tgid, pinned; with make, made if there is none.
 * NULL when there is none (or it cannot be made). */
struct mirror_proc *mirror_proc_pin(struct mirror *m, pid_t tgid, bool make);
void mirror_proc_unpin(struct mirror_proc *p);

/* The tracer's alarm for tgid fired (mirror_arm armed it): it is sampled
 * now. Takes m->lock. */
void mirror_alarmed(struct mirror *m, pid_t tgid);

/* mirror_pcache.c */
/* Load the tracer and start reading its events, reaching the rest of the
 * mirror through hooks: 0, or why not (-ENOSYS, -EPERM, ...; the mirror
 * goes on without). */
int mirror_pcache_start(struct mirror *m, const struct mirror_pc_hooks *hooks);
/* The same state with no tracer (events fed by the caller): 0 or -ENOMEM. */
int mirror_pcache_open(struct mirror *m, const struct mirror_pc_hooks *hooks);
void mirror_pcache_stop(struct mirror *m);
/* Do the kernel's events (not the scan) say what the page cache holds? */
bool mirror_pcache_events(const struct mirror *m);
/* The kernel's object sizes for the estimates (and the nowait mode). */
void mirror_pcache_sizes(struct mirror_pcache *pc);
/* One of the tracer's events (m: the mirror), charged or uncharged. Called
 * one at a time (the tracer's consume lock), in the kernel's order, with
 * no lock of the mirror held. */
void mirror_pcache_event(void *m, const struct pcache_event *ev);
/* The tracer watches tgid (a process the mirror keeps a record of). */
void mirror_pcache_track(struct mirror *m, pid_t tgid);
/* Arm the tracer's alarm for tgid at pages resident (0: none): 0, or an
 * error (-ENOSYS without the tracer). */
int mirror_pcache_alarm(struct mirror *m, pid_t tgid, uint64_t pages);
/* Charge what the kernel has reported so far (a reader is about to look). */
void mirror_pcache_drain(struct mirror *m);
/* Every CLONE_PARENT fork the tracer has reported, told to the file
 * surface now, in the order made, before a tasks file is read: a child
 * reading its own group must find itself where its maker is. Holding no
 * lock. */
void mirror_pcache_place(struct mirror *m);
/* Of pages [off, off + n) of the file, how many the events charged. */
long mirror_pcache_held(struct mirror *m, unsigned long dev, unsigned long ino, unsigned long off,
			unsigned long n);
/* ... and how many a page fault of a process of ours brought into the
 * page cache and are still there (what a mapping of them may charge);
 * -1 without the events (then every page a mapping has may be). With
 * bits (n bits, zeroed by the caller), which: bit i for page off + i. */
long mirror_pcache_faulted(struct mirror *m, unsigned long dev, unsigned long ino,
			   unsigned long off, unsigned long n, uint64_t *bits);
int mirror_pcache_describe(struct mirror *m, char *buf, size_t size);
/* Of pages [off, off + n) of the file: how many are counted here, and how
 * many of those are dirty. */
void mirror_pcache_counts(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t off,
			  uint64_t n, long *counted, long *dirty);
/* Pages [off, off + n) of the file are clean. */
void mirror_pcache_clean(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t off,
			 uint64_t n);
/* Pages [off, off + n) of the file counted here are removed (uncharged),
 * looking only at the chunks of the range that exist. */
void mirror_pcache_remove(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t off,
			  uint64_t n);

/* mirror_pcscan.c: without the tracer, the page cache of the files
 * mirrored processes have open, from cachestat(2), as events. */
/* Start the scan (m->pc made with mirror_pcache_open), with its thread
 * of periodic passes unless !thread (passes only by mirror_pcscan_drain:
 * the unit tests), asking cachestat(2), or mincore(2) where the kernel
 * has no cachestat or mincore is set: 0, or -errno (cachestat's where
 * neither answers). */
int mirror_pcscan_start(struct mirror *m, bool thread, bool mincore);
/* "cachestat" or "mincore" (mincore set: the scan asks mincore(2) of
 * mappings, cachestat(2) being missing (*cachestat_err -ENOSYS) or not
 * asked for (0)); NULL without a scan. */
const char *mirror_pcscan_way(const struct mirror *m, int *cachestat_err);
/* Its thread stopped (nothing is looked at from here on)... */
void mirror_pcscan_halt(struct mirror *m);
/* ... then its files uncharged and its state freed (halting first if
 * need be). */
void mirror_pcscan_stop(struct mirror *m);
/* A pass now: processes gone let go of their files, and with walk (a
 * reader is about to look), unless a pass walked within
 * MIRROR_SCAN_FRESH_NS, the open files of those that read or wrote are
 * looked at. No record's lock held. */
void mirror_pcscan_drain(struct mirror *m, bool walk);
int mirror_pcscan_describe(struct mirror *m, char *buf, size_t size);

/* mirror_smaps.c */
void mirror_load_tmpfs(struct mirror *m);
/* -ESRCH when the process is gone (a zombie has no mappings). */
int mirror_read(struct mirror *m, pid_t tgid, struct mirror_sample *s);

/* mirror_standin.c */
/* Fault in stand-ins until the shared file holds as many pages as this
 * mapping has resident (stand-ins of a pinned file are pinned too); with
 * trim (a pageout of it was confirmed), drop those beyond. */
int mirror_fill(struct mirror *m, struct mirror_map *mm, long rss, long dirty, unsigned cpu,
		bool trim);
/* p's mapping of the file of v, made (with the file's stand-in) the first
 * time; NULL without memory. */
struct mirror_map *mirror_map_for(struct mirror *m, struct mirror_proc *p,
				  const struct mirror_vma *v);

/* Pages [index, index + n) of the file left the page cache, a fault of a
 * process of ours having brought them in: the stand-ins of every mapping
 * of them go at once (mapped by nobody now, or by a process not sampled
 * yet, they would otherwise stay charged, and a process faulting them in
 * again would find them and not pay). Takes the files lock. */
void mirror_files_dropped(struct mirror *m, unsigned long dev, unsigned long ino, uint64_t index,
			  uint64_t n);

/* Has a mapping of the file ever had a stand-in here (its pages are the
 * mappings' to charge)? Takes the files lock. */
bool mirror_files_known(struct mirror *m, unsigned long dev, unsigned long ino);

/* The scan of open files charged pages of the file while a mapping of it
 * got its stand-ins (it looked before there were any): every process
 * mapping it is sampled in full soon (a reader's refresh at once), and its
 * fill then gives way down to what the scan holds. Takes m->lock, then
 * each process's lock in turn; the caller holds the scan's lock only. */
void mirror_files_resample(struct mirror *m, unsigned long dev, unsigned long ino);

/* One mapping of mm->f fewer (its region is the caller's to free): the
 * file's stand-ins evictable again, and no longer mapped_file once no
 * process maps the file. */
void mirror_map_gone(struct mirror *m, struct mirror_map *mm);

/* mirror_shared.c */
/* c's anon pages shared with other processes are the n frames of pfn
 * (malloc'd; c's from now on): it claims those no older live process
 * has, and gives up its claims on frames it shares no more. With defer,
 * frames nobody has claimed are left to an older sharer that has not
 * looked yet (its parent). Returns how many c does not count. */
long mirror_shared_claim(struct mirror_shared *t, struct mirror_claimer *c, uint64_t *pfn,
			 size_t n, bool defer);
/* c's claims go (its process is released). */
void mirror_shared_forget(struct mirror_shared *t, struct mirror_claimer *c);
void mirror_shared_free(struct mirror_shared *t);
/* Does /proc/PID/pagemap show this daemon frame numbers (CAP_SYS_ADMIN)?
 * Without them shared pages are counted in every process mapping them. */
bool mirror_shared_visible(void);
/* The frames of the present anon pages in ranges r of process tgid that
 * another process maps too (pagemap: not exclusive), into *out (malloc'd);
 * their count, or -errno. Without the privilege to see frame numbers, 0. */
long mirror_shared_frames(pid_t tgid, const struct mirror_range *r, size_t nr, uint64_t **out);

/* mirror_ledger.c */
long mirror_ledger(const struct mirror_proc *p, enum mirror_kind kind);
/* Pages of every kind charged outside the root. */
long mirror_charged(const struct mirror_proc *p);
/* Bring the ledger of kind to want pages; g is the group p is in now:
 * growth is g's (an era of the root only counts it), shrinkage comes from
 * g's eras first, then the others, the most recent first. 0 or the
 * charge's error (kernel memory that cannot be charged is tried again at
 * the next sample: 0). */
int mirror_ledger_set(struct mirror_proc *p, enum mirror_kind kind, struct mcg_group *g,
		      long want, unsigned cpu);
/* The anon, mlocked and shmem pages of s into the ledger (shrinking kinds
 * first, so that a page going from one kind to another, an mlock, never
 * needs room for both). 0 or the first charge's error. */
int mirror_ledger_sample(struct mirror_proc *p, const struct mirror_sample *s,
			 struct mcg_group *g, unsigned cpu);
/* The anon, mlocked and shmem pages the ledger holds. */
long mirror_ledger_mem(const struct mirror_proc *p);
/* Every era goes, uncharged (the process's old image is gone: execve). */
void mirror_ledger_clear(struct mirror_proc *p);
/* The eras of kind in the root stop counting: what they held is to be
 * charged where the process goes (a move out of the root), as growth. */
void mirror_ledger_leave_root(struct mirror_proc *p, enum mirror_kind kind);
long mirror_kmem_pages(const struct proc_task *t);
/* A file mapping's resident pages outside the mount's children are not
 * charged: the root's (in_child false) become its base, and v->rss is
 * left with what is beyond it. */
void mirror_file_base(struct mirror_map *mm, struct mirror_vma *v, bool in_child);
long mirror_sim_take(long *budget, long n);
void mirror_sim_budget(struct mirror_proc *p, struct mirror_sample *s);
void mirror_sim_file(struct mirror_proc *p, const struct mirror_map *mm, struct mirror_vma *v);

/* mirror_enforce.c */
int mirror_signal(struct mirror_proc *p, int sig);
void mirror_oom(struct mirror *m, struct mirror_proc *p);
void mirror_cont(struct mirror_proc *p);
/* Page out, in the real process, the mappings whose stand-ins reclaim
 * took pages from (s: the sample just read, for their resident pages
 * before). true if it did any: the caller reads a new sample and hands
 * each paged-out mapping's to mirror_pageout_done. */
bool mirror_pageout(struct mirror *m, struct mirror_proc *p, const struct mirror_sample *s);
/* mm was paged out and now has rss resident (before its base is taken
 * off): true when the pageout is confirmed (fewer pages than before);
 * otherwise the file's stand-ins are pinned for the back-off. */
bool mirror_pageout_done(struct mirror *m, struct mirror_map *mm, long rss);
/* f's stand-ins evictable again (a mapping of it went: nobody may be
 * left to retry its pageout). */
void mirror_file_unpin(struct mirror_file *f);
/* Reclaim took pages p maps that are not paged out yet, or a pin of a
 * file it maps has expired: a full sample is due. */
bool mirror_pageout_due(struct mirror *m, const struct mirror_proc *p);
bool mirror_exited(struct mirror_proc *p);

#endif
