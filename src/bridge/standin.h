/* standin.h: memcgfs-run's server of the stand-in hierarchies: a process
 * of its own, outside the wrapper's namespaces, that answers the FUSE
 * mounts the child made (one per hierarchy, like the kernel's v1 roots)
 * over hier.h, and the supervisor's questions about a task's groups. */
#ifndef MEMCGFS_BRIDGE_STANDIN_H
#define MEMCGFS_BRIDGE_STANDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bridge/hier.h"
#include "bridge/view.h"

/* The stand-in mounts' type, as mountinfo shows it from outside. */
#define STANDIN_FSTYPE "fuse.memcgfs-run"
#define STANDIN_SOURCE "memcgfs-run"

/* Serves the FUSE connections FUSE_FD[c] (-1 where hierarchy c is not a
 * mounted stand-in) and the questions on QFD until every connection has
 * ended (the supervisor's hanging up ends only the questions). The roots belong to OWNER and GROUP. Returns 0 or
 * a negative errno (nothing could be served). */
int standin_serve(const int fuse_fd[VIEW_NCTL], int qfd, uid_t owner, gid_t group);

/* The supervisor's side: TID's group in each hierarchy (GROUPS[c], ""
 * where the server has none) and the count of groups in each, asked on
 * QFD. 0 or a negative errno (-ETIMEDOUT after a second). */
int standin_ask(int qfd, pid_t tid, char groups[VIEW_NCTL][4096], long counts[VIEW_NCTL]);

/* The supervisor's side: TID is about to clone with CLONE_PARENT (its
 * child will start in TID's groups: hier_maker). Answered before the
 * clone goes on. 0 or a negative errno. */
int standin_tell_maker(int qfd, pid_t tid);

/* standin_os.c: the system (/proc, kill) */
extern const struct hier_os standin_os;
bool standin_os_sys_admin(pid_t pid);
/* The first line of a sysfs list (the online CPUs or nodes) into OUT. */
int standin_os_online(const char *path, char *out, size_t size);
/* The huge page sizes in KiB, smallest first: their count. */
int standin_os_huge(unsigned *kb, int max);
/* A set of stand-in hierarchies over OS, with this system's online CPUs
 * and nodes and huge page sizes, the roots OWNER's and GROUP's; NULL on
 * ENOMEM. */
struct hier_set *standin_os_hier(const struct hier_os *os, uid_t owner, gid_t group);

#endif
