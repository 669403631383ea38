/* ns.h: memcgfs-run's private mount namespace (and user namespace when
 * not root), in which /sys/fs/cgroup is a tmpfs holding the memcgfs
 * hierarchy and the stand-in hierarchies (FUSE mounts standin.c serves),
 * as on a cgroup v1 host run by systemd. */
#ifndef MEMCGFS_BRIDGE_NS_H
#define MEMCGFS_BRIDGE_NS_H

#include "bridge/view.h"

/* Called by the child before the filter and the exec: enters the new
 * namespaces and builds /sys/fs/cgroup there (memcgfs's MNT bound at
 * memory, or its group ns->root when set; a FUSE mount per stand-in
 * hierarchy whose controllers the kernel has, its /dev/fuse descriptor
 * in FUSE_FD[c], -1 elsewhere; systemd's links), and records the mount
 * ids in NS (top_id, ctl_id, hidden). The host's mounts are not touched.
 * 0 or a negative errno, with *WHAT naming the step that failed. */
int ns_setup(const char *mnt, struct view_ns *ns, int fuse_fd[VIEW_NCTL], const char **what);

#endif
