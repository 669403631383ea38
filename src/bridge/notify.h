/* notify.h: the seccomp user-notification side of memcgfs-run: the
 * filter its command runs under, and the supervisor that answers the
 * intercepted open/openat/openat2/statfs/fstatfs calls, hands sendfile
 * and splice to copy.h and the mount family (mount, umount2, fsopen, fspick, open_tree's clones,
 * move_mount) to the mount guard. A compatibility layer, not a security
 * boundary: paths are read from the caller's memory, which another of
 * its threads may change. */
#ifndef MEMCGFS_BRIDGE_NOTIFY_H
#define MEMCGFS_BRIDGE_NOTIFY_H

#include <stdbool.h>
#include <sys/types.h>

#include "bridge/guard.h"
#include "bridge/view.h"

/* In the child, just before exec: loads the filter on this (single-
 * threaded) process; it survives exec and fork, so the whole tree is
 * supervised. The mount family of the other ABIs (i386, x32), which the
 * supervisor does not read, fails with EPERM in the filter itself.
 * Returns the listener fd, or a negative errno. */
int notify_install(void);

struct notify_counts {
	unsigned long seen;      /* notifications received */
	unsigned long answered;  /* answered with a synthesized file */
	unsigned long statfs;    /* statfs/fstatfs answered as cgroupfs */
	unsigned long mounts;    /* mount-family calls seen by the guard */
	unsigned long copied;    /* sendfile/splice from the view answered */
};

struct notify {
	int lfd;                 /* the listener */
	int qfd;                 /* the stand-ins' server's questions (-1: none) */
	ino_t mntns_ino;         /* the wrapper's mount namespace */
	dev_t mntns_dev;
	const char *mnt;         /* memcgfs's mount point, as we see it */
	const struct view_ns *ns;  /* the guard's: it records the mounts it binds */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	bool no_addfd;           /* the kernel has no ADDFD_FLAG_SEND (< 5.14) */
	struct guard *guard;     /* the mount family's answerer */
	struct notify_counts counts;
};

/* 0 or a negative errno. GUARD (opened by the caller) answers the mount
 * family; the view is its namespace record (guard->ns); QFD asks the
 * stand-ins' server (standin.h) a task's groups. */
int notify_init(struct notify *s, int lfd, const char *mnt, struct guard *guard, int qfd);
/* Receives one notification and answers it: a synthesized fd, a
 * cgroupfs statfs, or "continue" (the call proceeds as if unwatched).
 * 0; -ENOENT when the caller went away meanwhile (harmless); another
 * negative errno when the listener itself failed. */
int notify_serve_one(struct notify *s);
void notify_fini(struct notify *s);

#endif
