/* state.h: the state file of a mount (-o state=PATH): what a restart of
 * the daemon keeps. Owns the file, its lock and its writes (state.c), its
 * format and the replay of what it records through the control files' own
 * write handlers (state_text.c). Never validates a setting itself and
 * never includes FUSE. */
#ifndef MEMCGFS_STATE_H
#define MEMCGFS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/cgfs.h"

#define STATE_FORMAT 1        /* the "memcgfs-state N" this daemon reads and writes */
#define STATE_DIR "/var/lib/memcgfs"

struct state;

/* The default state file of a mountpoint (absolute, canonical) in this
 * mount namespace: DIR/ESCAPED.MNTNS.state, with the mountpoint escaped as
 * systemd-escape --path does and MNTNS the inode of /proc/self/ns/mnt. DIR
 * is $STATE_DIRECTORY when set (systemd's StateDirectory=), else
 * STATE_DIR; it is created 0700 when missing. 0 or -errno. */
int state_default_path(const char *mountpoint, char *buf, size_t size);

/* Lock path (an flock on PATH.lock: -EWOULDBLOCK when another daemon holds
 * it), then, unless fresh, read PATH and replay its groups, settings and
 * node metadata into fs, whose engine has only its root. A missing file is
 * an empty state; a corrupt, truncated or newer one an error. On error msg
 * says what, naming the file and the line and byte. 0 or -errno. */
int state_open(struct cgfs *fs, const char *path, bool fresh, struct state **out,
	       char *msg, size_t msglen);
/* Once the task watch and the sources run: re-attach each recorded task
 * whose PID still names a task with the recorded start time (never a
 * reused PID), write the state, and make state_commit live. *attached
 * and *skipped count the tasks. 0 or -errno (the write's). */
int state_attach(struct state *st, unsigned *attached, unsigned *skipped);
/* After a change the state file records, before its reply: the file on
 * disk holds the change when this returns 0. Concurrent commits share one
 * write. 0 (also for a NULL st) or -errno. */
int state_commit(struct state *st);
/* A change the file records that no reply waits for (a fork joined its
 * parent's group): written about 100 ms later by the state's saver
 * thread. Only takes a leaf lock; NULL st: nothing. */
void state_note(struct state *st);
/* The final write, the lock released, st freed. 0 or -errno. */
int state_close(struct state *st);
const char *state_path(const struct state *st);

/* The text of fs's state (a whole file), into o. 0 or -errno. */
int state_render(struct cgfs *fs, struct cgfs_out *o);
/* Replay text (a whole file, named name in messages) into fs, an engine
 * with only its root. Recorded tasks are not attached: *tasks (may be
 * NULL) gets their number. 0 or -errno with msg set. */
int state_load_text(struct cgfs *fs, const char *name, const char *text, size_t len,
		    unsigned *tasks, char *msg, size_t msglen);
/* The end record's checksum: CRC-32 (IEEE 802.3, zlib's crc32) of every
 * byte before it. */
uint32_t state_crc32(const char *p, size_t n);

#endif
