/* caller.h: reading a supervised caller: its memory (the arguments of
 * the call it is stopped in), its /proc files, its thread group. Shared
 * by the two answerers of memcgfs-run's supervisor (notify.c for the
 * /proc views, guard.c for the mount family). Never writes anything but
 * the buffer caller_write_mem is given. */
#ifndef MEMCGFS_BRIDGE_CALLER_H
#define MEMCGFS_BRIDGE_CALLER_H

#include <stddef.h>
#include <sys/types.h>

#include "bridge/view.h"

/* A NUL-terminated string at ADDR in task TID's memory. 0, -EFAULT,
 * -ENAMETOOLONG (no NUL in SIZE bytes), or process_vm_readv's errno. */
int caller_read_str(pid_t tid, unsigned long addr, char *out, size_t size);
/* Exactly N bytes at ADDR in TID's memory, from or into the buffer: 0 or
 * -EFAULT. */
int caller_read_mem(pid_t tid, unsigned long addr, void *out, size_t n);
int caller_write_mem(pid_t tid, unsigned long addr, const void *in, size_t n);
/* A whole small file (a /proc file) into B, NUL-terminated. */
int caller_slurp(const char *path, struct view_buf *b);
/* The number of line KEY ("Tgid", "CapEff") of /proc/TID/status, read in
 * BASE; 0 when there is none. */
unsigned long long caller_status(pid_t tid, const char *key, int base);
/* The thread group of thread TID, or 0. */
pid_t caller_tgid(pid_t tid);
/* The directory a relative path of TID starts from, as a path: its cwd
 * (DIRFD AT_FDCWD) or DIRFD's. 0 or a negative errno. */
int caller_base(pid_t tid, int dirfd, char *out, size_t size);

#endif
