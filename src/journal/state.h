/* state.h: the state file of a mount (-o state=PATH): what a restart of
 * the daemon keeps, as a snapshot followed by a journal of the groups
 * changed since. Owns the file, its lock and its writes (state.c), its
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

#define STATE_FORMAT 2        /* the "memcgfs-state N" this daemon writes; it reads
			       * 1 (a snapshot alone) and 2 */
#define STATE_DIR "/var/lib/memcgfs"
/* The journal is compacted (the file written again as one snapshot, by
 * the saver's thread while commits go on appending) once it holds more
 * than max(STATE_COMPACT_MIN, 2 x the snapshot) bytes; the
 * environment's MEMCGFS_STATE_COMPACT_BYTES, when set, replaces that
 * bound (tests force compactions with it). */
#define STATE_COMPACT_MIN (1u << 20)

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
/* g (referenced by the call while it needs it) changed in a way the file
 * records, or was removed: its records go into the next append. Noting a
 * group that did not change costs an append of its records, nothing
 * more. Only takes a leaf lock (any lock may be held); NULL st or g:
 * nothing. */
void state_changed(struct state *st, struct mcg_group *g);
/* After a change the state file records (its group noted with
 * state_changed), before its reply: the file on disk holds the change
 * when this returns 0. Concurrent commits share one append and one
 * fdatasync. 0 (also for a NULL st) or -errno. */
int state_commit(struct state *st);
/* A change of g the file records that no reply waits for (a fork joined
 * its parent's group): written about 100 ms later by the state's saver
 * thread. Only takes leaf locks; NULL st: nothing. */
void state_note(struct state *st, struct mcg_group *g);
/* The final write, the lock released, st freed. 0 or -errno. */
int state_close(struct state *st);
const char *state_path(const struct state *st);
/* A group was renamed (before its commit): a compaction in flight gives
 * way (state.c, state_compact). Only an atomic; NULL st: nothing. */
void state_renamed(struct state *st);
/* Compactions done in the background since the state was opened (0 for
 * a NULL st). */
unsigned long state_compactions(struct state *st);

/* The text of fs's state (a whole snapshot), into o. 0 or -errno. */
int state_render(struct cgfs *fs, struct cgfs_out *o);
/* One journal frame, appended to o: the id cursor, a remove record for
 * each removed group of g[0..n), the records of each other one (parents
 * first), and the commit record that seals them. 0 or -errno. */
int state_render_frame(struct cgfs *fs, struct mcg_group *const *g, size_t n, struct cgfs_out *o);
/* Replay text (a whole file, named name in messages: a snapshot and the
 * journal's frames after it) into fs, an engine with only its root. A
 * torn last frame is ignored; damage before the last is refused.
 * Recorded tasks are not attached: *tasks (may be NULL) gets their
 * number. 0 or -errno with msg set. */
int state_load_text(struct cgfs *fs, const char *name, const char *text, size_t len,
		    unsigned *tasks, char *msg, size_t msglen);
/* The end record's checksum: CRC-32 (IEEE 802.3, zlib's crc32) of every
 * byte before it. */
uint32_t state_crc32(const char *p, size_t n);

#endif
