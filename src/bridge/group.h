/* group.h: which memcgfs group a task is in, and how many groups there
 * are, read from the mount's own files (every child group's tasks), as
 * any tool could. No other way into the daemon. */
#ifndef MEMCGFS_BRIDGE_GROUP_H
#define MEMCGFS_BRIDGE_GROUP_H

#include <stddef.h>
#include <sys/types.h>

/* The group of thread TID under the memcgfs mount MNT, as a path from the
 * mount's root ("/a/b"), into OUT; "/" when no child group lists it (the
 * root holds every other task). 0 or a negative errno. */
int group_of(const char *mnt, pid_t tid, char *out, size_t size);
/* The number of groups under MNT, its root included, or a negative errno. */
long group_count(const char *mnt);

#endif
