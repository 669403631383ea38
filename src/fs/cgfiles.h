/* cgfiles.h: the one declarative table of control files (the cftype idea):
 * name, where it appears, read and write handlers, grammar and the profile
 * features bounding its existence. Modes, listings and dispatch all derive
 * from it. Never special-cases a file outside the table. */
#ifndef MEMCGFS_CGFILES_H
#define MEMCGFS_CGFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/engine.h"
#include "fs/cgfs.h"
#include "fs/grammar.h"

enum cgfs_where {
	CGF_ROOT  = 1,
	CGF_CHILD = 2,
	CGF_ANY   = CGF_ROOT | CGF_CHILD,
};

/* What a restart keeps of a row (fs/state.c), in the order the state file
 * replays it: use_hierarchy before the group has children, the limits
 * before what they bound. Members are no value: a write of tasks or
 * cgroup.procs changes the membership the state file records. */
enum cgfs_keep {
	CGK_NONE = 0,
	CGK_BEFORE_CHILDREN,
	CGK_SETTING,
	CGK_AFTER_LIMITS,
	CGK_MEMBERS,
};

/* What cgroup.event_control registers on a row's file (§3.17; 0: none). */
enum cgfs_event {
	CGFS_EV_NONE = 0,
	CGFS_EV_THRESHOLD,         /* memory.usage_in_bytes */
	CGFS_EV_MEMSW_THRESHOLD,   /* memory.memsw.usage_in_bytes */
	CGFS_EV_OOM,               /* memory.oom_control */
	CGFS_EV_PRESSURE,          /* memory.pressure_level */
};

struct cgfs_file {
	const char *name;
	unsigned where;
	int (*read)(struct cgfs_req *r, int priv, struct cgfs_out *o);
	int (*write)(struct cgfs_req *r, int priv, const struct gram_value *v);
	enum gram_kind grammar;
	int priv;                      /* handler argument: a counter, a flag ... */
	unsigned max_write;            /* bytes per write(2); 0 means 4096 */
	enum prof_feature world_writable_until;   /* 0222 until this feature (PF_NONE: never) */
	bool extension;                /* a memcgfs extension: -o nowatermarks hides it */
	bool capture_caps;             /* record the opener's capabilities at open */
	enum cgfs_keep keep;           /* kept across restarts, and when replayed */
	/* the kept value as the write handler takes it, where the read shows
	 * more or less than that; NULL: what read shows */
	int (*keep_read)(struct cgfs_req *r, int priv, struct cgfs_out *o);
	enum cgfs_event event;         /* the registrations it takes */
	bool poll_empty;               /* poll reports too once the list it
					* shows is empty (tasks, cgroup.procs) */
};

extern const struct cgfs_file cgfs_files[];
extern const size_t cgfs_nfiles;

/* Can row f's text ever be read (a read handler that does not always
 * fail: not memory.pressure_level, not a write-only file)? */
bool cgfs_file_readable(const struct cgfs_file *f);
/* Does row f exist in a root (root=true) or child directory of this mount? */
bool cgfs_file_present(const struct cgfs *fs, const struct cgfs_file *f, bool root);
/* The mode the row's handlers imply (§1.2), under this mount's profile. */
mode_t cgfs_file_mode(const struct cgfs *fs, const struct cgfs_file *f);
/* Row index of name in such a directory, or -1. */
int cgfs_file_lookup(const struct cgfs *fs, const char *name, bool root);

/* Render a read (fresh content, §2.2). -EINVAL without a read handler,
 * -ENODEV once the group is removed. */
int cgfs_file_read(struct cgfs_req *r, const struct cgfs_file *f, struct cgfs_out *o);
/* One write(2): size rules, grammar, then the handler (§2.3). */
int cgfs_file_write(struct cgfs_req *r, const struct cgfs_file *f, const char *buf, size_t len);

#endif
