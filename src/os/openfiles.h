/* openfiles.h: the regular files a process has open, as the daemon may
 * look at them without opening any path of the process: each duplicated
 * through the process's pidfd, with its device, inode, size and file
 * system, and what the page cache holds of it (cachestat(2), or mincore(2)
 * before 6.5). Owns reading
 * /proc/PID/fd and /proc/PID/mountinfo for that; never reads or writes a
 * file's data and never touches a file whose attributes or close could
 * wait on a server (FUSE, NFS and other network or user-space file
 * systems are passed by). */
#ifndef MEMCGFS_OPENFILES_H
#define MEMCGFS_OPENFILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define OPENFILES_PAGE 4096ul

struct openfile {
	int fd;                       /* the daemon's duplicate (closed after the call) */
	unsigned long dev, ino;       /* the superblock's device (as the kernel's
				       * events and /proc/PID/maps name it) and inode */
	uint64_t pages;               /* its size, in pages (rounded up) */
	bool shmem;                   /* tmpfs, memfd, SysV shm */
	unsigned bh_per_page;         /* buffer heads a dirty page carries (ext2/3/4) */
};

/* Calls fn for each regular file on a local file system (or tmpfs) that
 * process tgid (pidfd) has open, once per descriptor, looking at no more
 * than max descriptors of any kind. 0, or -errno: -EPERM when the daemon
 * may not duplicate its descriptors, -ESRCH when it is gone, -E2BIG past
 * max (what came before was passed to fn), -EAGAIN while duplicates of
 * files that were not what they seemed are still being closed. fn's
 * non-zero return stops the walk and is returned. */
int openfiles_each(pid_t tgid, int pidfd, unsigned max,
		   int (*fn)(void *arg, const struct openfile *f), void *arg);

/* What the page cache holds of pages [first, first + n) of the file fd
 * (n 0: to its end): resident and dirty pages. 0, or -errno (-EPERM: the
 * kernel shows this caller nothing of a file it could not write). */
int openfiles_cachestat(int fd, uint64_t first, uint64_t n, uint64_t *cache, uint64_t *dirty);

/* The same from mincore(2) over a read-only shared mapping of the file,
 * for kernels without cachestat(2) (before 6.5): resident pages, and dirty
 * always 0 (mincore cannot tell). A descriptor not open for reading is
 * reopened for reading through the daemon's own /proc/self/fd link (never
 * a path of the process). Nothing is faulted in or read. 0, or -errno:
 * -EPERM where the kernel would pretend every page resident (a file the
 * daemon may not write and does not own, without CAP_FOWNER), as
 * cachestat refuses it. */
int openfiles_mincore(int fd, uint64_t first, uint64_t n, uint64_t *cache, uint64_t *dirty);

/* A process's read and write system calls and bytes so far (its
 * /proc/PID/io, as proc_open opens it: rchar, wchar, syscr, syscw): equal
 * readings mean it has not read or written. 0, or -errno. */
int openfiles_io(int fd, uint64_t io[4]);

#endif
