/* cgfs.h: the state one mount of memcgfs shares between its FUSE glue and
 * its file handlers, and the per-open and per-request contexts. Owns no
 * logic; never includes a FUSE header. */
#ifndef MEMCGFS_CGFS_H
#define MEMCGFS_CGFS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/engine.h"

#define CGFS_SOURCES 4

struct pidwatch;
struct release_runner;
struct event_registry;
struct source_ops;
struct state;

/* The state journal as the file surface sees it (the journal fills it in
 * when its file is opened; all NULL without one): a group's records
 * changed, to be committed before the reply; or changed where no reply
 * waits (a fork seen by pidwatch), for the journal's saver to write. */
struct cgfs_journal {
	void (*changed)(void *arg, struct mcg_group *g);
	void (*note)(void *arg, struct mcg_group *g);
	void *arg;
};
struct trim;
struct dentries;

/* The kinds of request a worker counts (user.memcgfs.status): every one
 * the kernel sends that the daemon answers itself; the ones libfuse
 * answers ENOSYS for (access, lseek, fallocate, ...) never reach it. */
enum cgfs_rq {
	CGFS_RQ_LOOKUP, CGFS_RQ_FORGET, CGFS_RQ_GETATTR, CGFS_RQ_SETATTR,
	CGFS_RQ_MKDIR, CGFS_RQ_RMDIR, CGFS_RQ_RENAME, CGFS_RQ_OPEN, CGFS_RQ_READ,
	CGFS_RQ_WRITE, CGFS_RQ_FLUSH, CGFS_RQ_RELEASE, CGFS_RQ_POLL,
	CGFS_RQ_OPENDIR, CGFS_RQ_READDIR, CGFS_RQ_RELEASEDIR, CGFS_RQ_GETXATTR,
	CGFS_RQ_LISTXATTR, CGFS_RQ_SETXATTR, CGFS_RQ_REMOVEXATTR, CGFS_RQ_CREATE,
	CGFS_RQ_MKNOD, CGFS_RQ_UNLINK, CGFS_RQ_SYMLINK, CGFS_RQ_LINK, CGFS_RQ_STATFS,
	CGFS_RQ_N
};

#define CGFS_GONE 64
#define CGFS_MAKERS 16

struct cgfs {
	struct mcg_engine *eng;
	const struct prof *prof;
	bool watermarks;               /* extension files shown (-o nowatermarks) */
	pthread_mutex_t meta_lock;     /* modes, owners and ACLs of every node */
	pthread_mutex_t agent_lock;    /* release_agent */
	pthread_mutex_t attach_lock;   /* task attach/exit and their pidfds */
	/* under attach_lock: the groups of the last processes that left a
	 * child group by exiting, or were made there by CLONE_PARENT but gone
	 * before they could be placed: where a late-told CLONE_PARENT's maker
	 * was (cgfs_tasks_made_by) */
	struct cgfs_gone {
		pid_t tid;
		unsigned id, gen;      /* the group's (no reference: a removed
					* group is not kept for this; id 0: none) */
	} gone[CGFS_GONE];
	unsigned gone_next;
	/* under attach_lock: clones with CLONE_PARENT told before they were
	 * made (cgfs_tasks_clone_parent, by memcgfs-run's supervisor): the
	 * next process a fork event names as REAL's child, started since,
	 * with the maker's real uid, starts in the maker's group, as the
	 * kernel places a child where the thread that made it is */
	struct cgfs_maker {
		pid_t real, maker;
		uid_t ruid;
		unsigned long long since;   /* clock ticks after boot, as start times */
		unsigned id, gen;      /* the maker's group (id 0: none) */
	} makers[CGFS_MAKERS];
	pthread_mutex_t fh_lock;       /* fh_head: handles open at exit are freed */
	struct cgfs_fh *fh_head;
	struct trim *trim;             /* the heap trim after removals (fs/trim.h) */
	/* The names of groups the kernel may keep, shared with the workers
	 * before and after this one (daemon/dentries.h), written only where
	 * the kernel cannot be told to drop every name at a restart (before
	 * 6.16); NULL otherwise. */
	struct dentries *dentries;
	char release_agent[4096];
	struct pidwatch *watch;
	struct release_runner *rel;
	struct event_registry *_Atomic events;  /* NULL again at teardown */
	struct cgfs_source {           /* the charge sources (fs/sources.h) */
		const struct source_ops *ops;
		void *self;
	} sources[CGFS_SOURCES];
	atomic_int nsources;           /* 0 again at teardown */
	char mountpoint[4096];         /* absolute, as the daemon mounted it */
	/* The mount's device, as statx gives it for each of its files in every
	 * mount namespace and through every bind (the superblock's); 0 until
	 * the daemon knows it. event_control knows its files by it and their
	 * inode numbers (node_of_fd). */
	unsigned long long mount_dev;
	/* Which node a descriptor is: NULL for node_of_fd's own answer (the
	 * device and inode number); the unit tests, which have no mount, put
	 * theirs here. */
	int (*fd_node)(struct cgfs *fs, int fd, struct mcg_group **g, int *row);
	bool *acl_inherit;             /* per file row: takes a parent's default
					* ACL at mkdir (-o acl_inherit); NULL: all */
	pid_t supervisor_pid;          /* who holds the connection (memcgctl status) */
	unsigned restarts;             /* workers before this one on the connection */
	const char *state_file;        /* NULL: none (memcgctl status says so) */
	const char *sim_socket;        /* the simulated-task socket, or NULL */
	uint64_t fh_tag;               /* this worker's tag in every fi->fh (ops.c) */
	struct state *state;           /* the state file (journal/state.h), or NULL */
	struct cgfs_journal journal;   /* how the surface tells it of changes */
	/* How long the kernel may keep names and attributes this worker
	 * replies with (seconds; -o cache_timeout, 0 where the kernel cannot
	 * be told to drop them all: docs/design.md, Kernel caches). */
	double cache_timeout;
	/* Requests this worker received, by kind (memcgctl status). */
	atomic_ulong requests[CGFS_RQ_N];
};

/* fs's locks, in a struct the caller zeroed (and may have filled in part:
 * the mountpoint, acl_inherit); cgfs_destroy undoes it once nothing uses
 * fs any more. */
void cgfs_init(struct cgfs *fs);
void cgfs_destroy(struct cgfs *fs);

/* The root's extended attribute that says who serves the mount. */
#define CGFS_STATUS_XATTR "user.memcgfs.status"
#define CGFS_CLONE_PARENT_XATTR "user.memcgfs.clone_parent."

/* A handle (fi->fh) is the address of its struct cgfs_fh with the tag of
 * the worker that made it in the top 16 bits: a handle a dead worker made
 * is never taken for a pointer by the next one (whose tag differs). */
#define CGFS_FH_TAG_MASK (0xffffull << 48)
static inline uint64_t cgfs_fh_tag(unsigned restarts)
{
	return ((uint64_t)(restarts % 0xffffu) + 1) << 48;
}

/* Per open file or directory (fi->fh). */
struct cgfs_fh {
	struct mcg_group *g;           /* referenced */
	int row;                       /* index in the file table, -1 for a dir */
	uid_t uid;                     /* opener's credentials, kept for §6.1 */
	gid_t gid;
	pid_t pid;
	bool agent_cap;                /* opener may write release_agent */
	pthread_mutex_t lock;          /* the read snapshot, pos, read */
	char *snap;                    /* its buffer, kept for the next one */
	size_t snap_len, snap_cap;
	bool snapped;                  /* snap holds a rendering */
	off_t pos;                     /* where the last read ended (seq_file's
					* read_pos): a read there continues */
	bool read;                     /* read at least once (poll, §11.7) */
	struct cgfs_fh *prev, *next;   /* every open handle (fs->fh_lock) */
};

/* Everything a file handler may look at. */
struct cgfs_req {
	struct cgfs *fs;
	struct mcg_group *g;
	const struct cgfs_fh *fh;
	pid_t pid;                     /* calling thread, in our namespace */
	uid_t uid;
	gid_t gid;
	bool (*interrupted)(void *arg);
	void *interrupted_arg;
};

/* A growing text buffer for rendering reads. */
struct cgfs_out {
	char *buf;
	size_t len;
	size_t cap;
	int err;                       /* first allocation failure, sticky */
};

void cgfs_printf(struct cgfs_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "PREFIXKEY VALUE\n", as cgfs_printf("%s%s %ld\n") writes it, without
 * its format pass: the line of memory.stat and its kind. key NULL: the
 * value alone, "VALUE\n" (a limit's or a usage's file). */
void cgfs_kv(struct cgfs_out *o, const char *prefix, const char *key, long v);
void cgfs_out_free(struct cgfs_out *o);

#endif
