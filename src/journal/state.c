/* state.c: the state file of a mount, as a file: its path, its lock, the
 * journal frame appended (and fdatasync'ed) before each change's reply
 * with the records of the groups that changed, the saver's after a fork,
 * the compaction into one snapshot written atomically, reading it at
 * start and re-attaching its live tasks; the compaction runs on the
 * saver's thread while commits go on appending. The text itself is
 * state_text.c's. Never holds an engine lock while writing, never
 * re-attaches a reused PID, and never starts empty when the file it was
 * given cannot be read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fs/tasks.h"
#include "journal/state.h"
#include "journal/state_text.h"
#include "os/proc.h"
#include "util/log.h"

#define STATE_NOTE_DELAY_MS 100       /* a fork is on disk this long after */

#define STATE_DIRTY_MAX 4096       /* more changed groups at once: a snapshot */
#define STATE_COMPACT_RETRY (64 << 10) /* journal bytes before a failed
					 * compaction is tried again */

struct state {
	struct cgfs *fs;
	char *path, *tmp, *ctmp;      /* ctmp: the compaction's own temporary file */
	int lock_fd, dir_fd;
	pthread_mutex_t lock;         /* one write at a time (design.md: state.lock,
				       * taken with no lock held); and: */
	int fd;                       /* path, open for appends (-1: none yet) */
	off_t size, snap_size;        /* its bytes, those of its snapshot */
	size_t compact_at;            /* MEMCGFS_STATE_COMPACT_BYTES, or 0 */
	bool need_snapshot;           /* an append failed: what it lost goes in one */
	unsigned long snapshots;      /* written by state_write (a compaction that
				       * saw one meanwhile gives way) */
	atomic_ulong seq;             /* changes asked to be saved */
	unsigned long saved;          /* the seq the last write started at */
	bool live;                    /* state_attach ran: commits write */
	/* the groups changed since the last write took the list */
	pthread_mutex_t dirty_lock;   /* (a leaf) dirty, ndirty, overflow */
	struct mcg_group **dirty;     /* referenced, each once */
	size_t ndirty, dirty_cap;
	bool overflow;                /* more than STATE_DIRTY_MAX: dirty dropped */
	/* membership that changes with no reply to wait for (a fork joins its
	 * parent's group): the saver writes it a moment later */
	pthread_mutex_t note_lock;    /* (a leaf) noted, compact, stop */
	pthread_cond_t note_cond;
	bool noted, stop;
	bool compact;                 /* the journal is full: the saver compacts */
	/* a compaction in the background (state_compact): from its cut on,
	 * each frame appended to the old file notes its groups here (under
	 * st->lock), whose current records then follow the snapshot */
	bool compacting;
	struct mcg_group **since;     /* referenced, each once */
	size_t nsince, since_cap;
	bool since_overflow;          /* more than STATE_DIRTY_MAX: start again */
	atomic_ulong compactions;     /* done in the background (memcgctl status) */
	atomic_ulong renames;         /* groups renamed (state_renamed) */
	off_t compact_failed_at;      /* the file's size when one last failed, or 0 */
	atomic_bool saver_started;    /* (read by state_note on the pidwatch thread) */
	pthread_t saver;
	struct state_task *tasks;     /* recorded, until state_attach */
	size_t ntasks;
};

static int state_write_all(int fd, const char *p, size_t n, off_t at)
{
	while (n) {
		ssize_t k = pwrite(fd, p, n, at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		at += k;
		n -= (size_t)k;
	}
	return 0;
}

void state_changed(struct state *st, struct mcg_group *g)
{
	if (!st || !g)
		return;
	pthread_mutex_lock(&st->dirty_lock);
	for (size_t i = 0; i < st->ndirty; i++)
		if (st->dirty[i] == g)
			goto out;
	if (st->overflow)
		goto out;
	if (st->ndirty == st->dirty_cap) {
		size_t cap = st->dirty_cap ? st->dirty_cap * 2 : 16;
		struct mcg_group **d = cap <= STATE_DIRTY_MAX ?
				       realloc(st->dirty, cap * sizeof(*d)) : NULL;

		if (!d) {
			/* a snapshot carries every change: the list is not needed */
			st->overflow = true;
			goto out;
		}
		st->dirty = d;
		st->dirty_cap = cap;
	}
	mcg_get(g);
	st->dirty[st->ndirty++] = g;
out:
	pthread_mutex_unlock(&st->dirty_lock);
}

/* The changed groups noted so far, taken (the caller puts them and frees
 * the array); *overflow: some were dropped. */
static struct mcg_group **state_take_dirty(struct state *st, size_t *n, bool *overflow)
{
	struct mcg_group **d;

	pthread_mutex_lock(&st->dirty_lock);
	d = st->dirty;
	*n = st->ndirty;
	*overflow = st->overflow;
	st->dirty = NULL;
	st->ndirty = st->dirty_cap = 0;
	st->overflow = false;
	pthread_mutex_unlock(&st->dirty_lock);
	return d;
}

static void state_put_dirty(struct mcg_group **d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mcg_put(d[i]);
	free(d);
}

/* The whole state as one snapshot (the compaction), atomically: a
 * temporary file in the same directory, fsync, rename over the old one
 * (snapshot and journal), fsync of the directory. The new file stays open
 * for the appends that follow. A crash at any step leaves the old file or
 * the new one, each whole. Under st->lock, with the dirty list taken
 * before (what it carries is in the render). */
static int state_write(struct state *st)
{
	struct cgfs_out o = { 0 };
	int fd = -1, err = state_render(st->fs, &o);

	if (!err && (fd = open(st->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			       0600)) < 0)
		err = -errno;
	if (!err && !(err = state_write_all(fd, o.buf, o.len, 0)) && fsync(fd))
		err = -errno;
	if (!err && rename(st->tmp, st->path))
		err = -errno;
	if (!err && fsync(st->dir_fd))
		err = -errno;
	if (err) {
		if (fd >= 0) {
			close(fd);
			unlink(st->tmp);
		}
		st->need_snapshot = true;
	} else {
		if (st->fd >= 0)
			close(st->fd);
		st->fd = fd;
		st->size = st->snap_size = (off_t)o.len;
		st->need_snapshot = false;
		st->snapshots++;
		st->compact_failed_at = 0;
	}
	cgfs_out_free(&o);
	return err;
}

/* The journal's bound before a compaction, in bytes. */
static size_t state_journal_bound(const struct state *st)
{
	size_t snap = (size_t)st->snap_size;

	if (st->compact_at)
		return st->compact_at;
	return 2 * snap > STATE_COMPACT_MIN ? 2 * snap : STATE_COMPACT_MIN;
}

static bool state_journal_full(const struct state *st)
{
	return (size_t)(st->size - st->snap_size) > state_journal_bound(st);
}

/* A compaction in the background notes the groups of a frame appended
 * after its cut (under st->lock). */
static void state_note_since(struct state *st, struct mcg_group **d, size_t n)
{
	for (size_t i = 0; i < n && !st->since_overflow; i++) {
		size_t k;

		for (k = 0; k < st->nsince && st->since[k] != d[i]; k++)
			;
		if (k < st->nsince)
			continue;
		if (st->nsince == st->since_cap) {
			size_t cap = st->since_cap ? 2 * st->since_cap : 64;
			struct mcg_group **m = cap <= STATE_DIRTY_MAX ?
					       realloc(st->since, cap * sizeof(*m)) : NULL;

			if (!m) {
				st->since_overflow = true;
				break;
			}
			st->since = m;
			st->since_cap = cap;
		}
		mcg_get(d[i]);
		st->since[st->nsince++] = d[i];
	}
}

/* The journal is full: the saver compacts it in the background (under
 * st->lock; takes note_lock, a leaf). Without a saver (before
 * state_attach), or when the journal has grown to four times its bound
 * while compactions kept failing, the caller writes a snapshot itself. */
static bool state_compact_later(struct state *st)
{
	if (!atomic_load(&st->saver_started) ||
	    (size_t)(st->size - st->snap_size) > 4 * state_journal_bound(st))
		return false;
	if (!st->compacting &&
	    (!st->compact_failed_at || st->size >= st->compact_failed_at + STATE_COMPACT_RETRY)) {
		pthread_mutex_lock(&st->note_lock);
		st->compact = true;
		pthread_cond_signal(&st->note_cond);
		pthread_mutex_unlock(&st->note_lock);
	}
	return true;
}

/* One write of what changed since the last: a frame with the records of
 * the changed groups appended and fdatasync'ed (its cost is theirs, not
 * the tree's), or, when an earlier append failed, a snapshot. A full
 * journal is compacted by the saver in the background (state_compact),
 * never on a change's reply. A failed append is cut off again (a torn
 * frame the next one followed would be damage) and the next write is a
 * snapshot. Under st->lock. */
static int state_flush(struct state *st)
{
	struct cgfs_out o = { 0 };
	bool overflow;
	size_t n;
	struct mcg_group **d = state_take_dirty(st, &n, &overflow);
	int err;

	if (overflow || st->need_snapshot || st->fd < 0 ||
	    (state_journal_full(st) && !state_compact_later(st))) {
		err = state_write(st);
	} else if (!n) {
		err = 0;
	} else if (!(err = state_render_frame(st->fs, d, n, &o)) &&
		   !(err = state_write_all(st->fd, o.buf, o.len, st->size)) && fdatasync(st->fd)) {
		err = -errno;
	}
	if (err) {
		/* (if even the cut fails, the snapshot next replaces it all) */
		if (o.len && st->fd >= 0 && ftruncate(st->fd, st->size) < 0)
			st->need_snapshot = true;
		st->need_snapshot = true;
	} else {
		st->size += (off_t)o.len;
		if (st->compacting)
			state_note_since(st, d, n);
	}
	cgfs_out_free(&o);
	state_put_dirty(d, n);
	return err;
}

static void state_since_clear(struct state *st)
{
	state_put_dirty(st->since, st->nsince);
	st->since = NULL;
	st->nsince = st->since_cap = 0;
	st->since_overflow = false;
	st->compacting = false;
}

/* The compaction, on the saver's thread, while commits go on appending to
 * the old file. The cut (under st->lock): what was noted is appended, and
 * from then on each appended frame notes its groups. The snapshot is
 * rendered and written to a temporary file and fdatasync'ed with no lock
 * held: it may show some changes made after the cut (a group's record is
 * read whole, under the engine's locks). Then, under st->lock again, the
 * current records of every group a frame after the cut named follow it
 * (a frame: so the file reads back as each of them is now, whatever of it
 * the snapshot caught), fdatasync, the rename over the old file and the
 * directory's fsync; appends go to the new file from there. A crash at
 * any step leaves the old file (whole, with every acknowledged change in
 * its journal) or the new one (whole). 0 or -errno; on an error the old
 * file stays and the journal tries again once it has grown by another
 * STATE_COMPACT_RETRY bytes. */
static int state_compact(struct state *st)
{
	struct cgfs_out o = { 0 }, f = { 0 };
	int fd = -1, err = 0;
	unsigned long snapshots, renames;
	bool give_way;

	pthread_mutex_lock(&st->lock);
	if (!st->live || st->need_snapshot || st->fd < 0 || !state_journal_full(st)) {
		pthread_mutex_unlock(&st->lock);
		return 0;             /* (a snapshot was written meanwhile) */
	}
	err = state_flush(st);
	st->compacting = !err;
	snapshots = st->snapshots;
	renames = atomic_load(&st->renames);
	pthread_mutex_unlock(&st->lock);
	if (!err)
		err = state_render(st->fs, &o);
	if (!err && (fd = open(st->ctmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			       0600)) < 0)
		err = -errno;
	if (!err && !(err = state_write_all(fd, o.buf, o.len, 0)) && fdatasync(fd))
		err = -errno;

	pthread_mutex_lock(&st->lock);
	/* It gives way (the next append asks again) when more groups changed
	 * meanwhile than a frame should carry, when an append failed (a
	 * snapshot replaces all) or a snapshot was written, and when a group
	 * was renamed: names swapped between siblings would meet in the one
	 * frame that follows the snapshot, where the replay would give the
	 * first its new name while the second still has it. */
	give_way = !err && (st->since_overflow || st->need_snapshot || st->fd < 0 ||
			    st->snapshots != snapshots || atomic_load(&st->renames) != renames);
	if (!err && !give_way && st->nsince &&
	    !(err = state_render_frame(st->fs, st->since, st->nsince, &f)) &&
	    !(err = state_write_all(fd, f.buf, f.len, (off_t)o.len)) && fdatasync(fd))
		err = -errno;
	if (!err && !give_way && rename(st->ctmp, st->path))
		err = -errno;
	else if (!err && !give_way && fsync(st->dir_fd))
		/* renamed, not known to be on disk: appends go to the new file
		 * (the old one is gone from the directory), and the next write
		 * is a snapshot, which syncs the directory again */
		st->need_snapshot = true;
	if (err || give_way) {
		if (fd >= 0) {
			close(fd);
			unlink(st->ctmp);
		}
		if (err)
			st->compact_failed_at = st->size;
	} else {
		close(st->fd);
		st->fd = fd;
		st->snap_size = (off_t)o.len;
		st->size = (off_t)(o.len + f.len);
		st->compact_failed_at = 0;
		atomic_fetch_add(&st->compactions, 1);
	}
	state_since_clear(st);
	pthread_mutex_unlock(&st->lock);
	cgfs_out_free(&o);
	cgfs_out_free(&f);
	return err;
}

int state_commit(struct state *st)
{
	unsigned long want, cur;
	int err = 0;

	if (!st || !st->live)
		return 0;
	/* group commit: a write that started after this change was made
	 * carries it (its group was noted before the seq moved, so the write
	 * that read the seq found it in the list); otherwise this call
	 * writes, and carries the others */
	want = atomic_fetch_add(&st->seq, 1) + 1;
	pthread_mutex_lock(&st->lock);
	if (st->saved < want) {
		cur = atomic_load(&st->seq);
		if (!(err = state_flush(st)))
			st->saved = cur;
	}
	pthread_mutex_unlock(&st->lock);
	return err;
}

/* A snapshot, whatever was noted: at the start and the end. */
static int state_snapshot(struct state *st)
{
	bool overflow;
	size_t n;
	struct mcg_group **d = state_take_dirty(st, &n, &overflow);
	int err = state_write(st);

	state_put_dirty(d, n);
	return err;
}

/* ---- the file ----------------------------------------------------------- */

/* systemd-escape --path: '/' between components as '-', bytes other than
 * [A-Za-z0-9:_.] (and a leading '.') as \xHH; the root is "-". */
static void state_escape_path(const char *mnt, struct cgfs_out *o)
{
	const char *p = mnt, *end;

	while (*p == '/')
		p++;
	end = p + strlen(p);
	while (end > p && end[-1] == '/')
		end--;
	if (p == end)
		cgfs_printf(o, "-");
	for (const char *c = p; c < end; c++) {
		unsigned char ch = (unsigned char)*c;

		if (ch == '/')
			cgfs_printf(o, "-");
		else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			 ch == ':' || ch == '_' || (ch == '.' && c != p))
			cgfs_printf(o, "%c", ch);
		else
			cgfs_printf(o, "\\x%02x", ch);
	}
}

int state_default_path(const char *mountpoint, char *buf, size_t size)
{
	const char *dir = getenv("STATE_DIRECTORY");
	struct cgfs_out o = { 0 };
	struct stat ns;
	int n;

	/* systemd may pass several directories, ':'-separated: the first */
	if (!dir || !*dir)
		dir = STATE_DIR;
	if (stat("/proc/self/ns/mnt", &ns))
		return -errno;
	state_escape_path(mountpoint, &o);
	if (o.err)
		return o.err;
	n = snprintf(buf, size, "%.*s/%s.%lu.state", (int)strcspn(dir, ":"), dir, o.buf,
		     (unsigned long)ns.st_ino);
	cgfs_out_free(&o);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	{
		char *slash = strrchr(buf, '/');

		*slash = '\0';
		n = mkdir(buf, 0700) && errno != EEXIST ? -errno : 0;
		*slash = '/';
	}
	return n;
}

/* The whole of path, malloc'ed; -ENOENT when there is none. */
static int state_read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t cap = 65536, n = 0;
	struct stat sb;
	char *buf;

	if (fd < 0)
		return -errno;
	/* what it holds runs as root (release_agent) and says who may do
	 * what: only a file of the daemon's own, that nobody else may write */
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	if (!(buf = malloc(cap))) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t k;

		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int err = -errno;

			free(buf);
			close(fd);
			return err;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
}

static void state_free(struct state *st)
{
	state_text_tasks_free(st->tasks, st->ntasks);
	if (st->lock_fd >= 0)
		close(st->lock_fd);       /* (releases the flock) */
	if (st->dir_fd >= 0)
		close(st->dir_fd);
	if (st->fd >= 0)
		close(st->fd);
	state_put_dirty(st->dirty, st->ndirty);
	pthread_mutex_destroy(&st->dirty_lock);
	pthread_mutex_destroy(&st->lock);
	pthread_mutex_destroy(&st->note_lock);
	pthread_cond_destroy(&st->note_cond);
	free(st->path);
	free(st->tmp);
	free(st->ctmp);
	state_put_dirty(st->since, st->nsince);
	free(st);
}

/* The lock holder's pid in the lock file, for the next one's message
 * (best effort: nothing depends on it). */
static void state_note_pid(struct state *st)
{
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	if (ftruncate(st->lock_fd, 0) == 0 && pwrite(st->lock_fd, pid, (size_t)n, 0) != n)
		n = 0;
}

/* The lock, waiting up to 2 s: a daemon that was just unmounted is still
 * writing its final state. */
static int state_flock(int fd)
{
	for (int i = 0;; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK || i == 40)
			return -1;
		usleep(50000);
	}
}

/* PATH.lock, held with flock for the daemon's life: an flock belongs to
 * the open file, so it survives fuse_daemonize's fork. */
static int state_take_lock(struct state *st, char *msg, size_t msglen)
{
	char *lk;
	int err = 0;

	if (asprintf(&lk, "%s.lock", st->path) < 0)
		return -ENOMEM;
	st->lock_fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (st->lock_fd < 0) {
		err = -errno;
		snprintf(msg, msglen, "%s: %s", lk, strerror(errno));
	} else if (state_flock(st->lock_fd)) {
		char other[32] = "";
		ssize_t n = pread(st->lock_fd, other, sizeof(other) - 1, 0);

		err = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
		other[n > 0 ? n : 0] = '\0';
		other[strcspn(other, "\n")] = '\0';
		if (err == -EWOULDBLOCK)
			snprintf(msg, msglen, "state file %s is in use by another memcgfs%s%s%s "
				 "(locked through %s)", st->path, *other ? " (pid " : "", other,
				 *other ? ")" : "", lk);
		else
			snprintf(msg, msglen, "%s: flock: %s", lk, strerror(-err));
	} else {
		state_note_pid(st);
	}
	free(lk);
	return err;
}

/* The file surface's view of the journal (cgfs.h's struct cgfs_journal):
 * it calls these without knowing the journal. */
static void state_journal_changed(void *st, struct mcg_group *g)
{
	state_changed(st, g);
}

static void state_journal_note(void *st, struct mcg_group *g)
{
	state_note(st, g);
}

int state_open(struct cgfs *fs, const char *path, bool fresh, struct state **out,
	       char *msg, size_t msglen)
{
	struct state *st = calloc(1, sizeof(*st));
	char *text = NULL, *slash;
	size_t len = 0;
	int err;

	if (!st)
		return -ENOMEM;
	st->fs = fs;
	st->lock_fd = st->dir_fd = st->fd = -1;
	if (getenv("MEMCGFS_STATE_COMPACT_BYTES"))
		st->compact_at = strtoul(getenv("MEMCGFS_STATE_COMPACT_BYTES"), NULL, 10);
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->dirty_lock, NULL);
	pthread_mutex_init(&st->note_lock, NULL);
	pthread_cond_init(&st->note_cond, NULL);
	/* absolute: the daemon changes to / when it daemonizes */
	if (path[0] == '/') {
		st->path = strdup(path);
	} else {
		char *cwd = getcwd(NULL, 0);

		if (cwd && asprintf(&st->path, "%s/%s", cwd, path) < 0)
			st->path = NULL;
		free(cwd);
	}
	if (st->path && asprintf(&st->tmp, "%s.tmp", st->path) < 0)
		st->tmp = NULL;
	if (st->tmp && asprintf(&st->ctmp, "%s.compact.tmp", st->path) < 0)
		st->ctmp = NULL;
	if (!st->ctmp) {
		state_free(st);
		return -ENOMEM;
	}
	slash = strrchr(st->path, '/');
	*slash = '\0';
	st->dir_fd = open(slash == st->path ? "/" : st->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (st->dir_fd < 0) {
		err = -errno;
		snprintf(msg, msglen, "state file %s: its directory: %s", st->path, strerror(errno));
		state_free(st);
		return err;
	}
	if ((err = state_take_lock(st, msg, msglen))) {
		state_free(st);
		return err;
	}
	if (!fresh && (err = state_read_file(st->path, &text, &len)) && err != -ENOENT) {
		snprintf(msg, msglen, "state file %s: %s", st->path, err == -EPERM ?
			 "not a regular file of this user's that only it may write: refused" :
			 strerror(-err));
		state_free(st);
		return err;
	}
	if (!fresh && !err) {
		err = state_text_load(fs, st->path, text, len, &st->tasks, &st->ntasks, msg, msglen);
		free(text);
		if (err) {
			state_free(st);
			return err;
		}
	}
	fs->journal = (struct cgfs_journal){ state_journal_changed, state_journal_note, st };
	*out = st;
	return 0;
}

/* One recorded task back into its group if its PID still names it: the
 * pidfd pins the PID while the start time is compared, so the task that
 * is attached is the one compared. */
static bool state_reattach(struct state *st, const struct state_task *t)
{
	struct cgfs_req r;
	struct gram_value v = { .pid = t->tid };
	unsigned long long start;
	int fd = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
	bool ok;

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, t->tid, 0);   /* a leader, before 6.9 */
	if (fd < 0 && errno == ESRCH)
		return false;
	ok = proc_start_time(t->tid, &start) == 0 && start == t->start && !mcg_removed(t->g);
	state_req(&r, st->fs, t->g);
	/* the writer is the daemon itself (our PID namespace, root) */
	ok = ok && cgfs_tasks_write(&r, TASKS_THREADS, &v) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

void state_note(struct state *st, struct mcg_group *g)
{
	state_changed(st, g);
	if (!st || !atomic_load(&st->saver_started))
		return;
	pthread_mutex_lock(&st->note_lock);
	st->noted = true;
	pthread_cond_signal(&st->note_cond);
	pthread_mutex_unlock(&st->note_lock);
}

/* Wait until stop, or until the deadline when deadline is given, or
 * (without one) a note or a compaction is asked for. */
static void state_note_wait(struct state *st, const struct timespec *deadline)
{
	while (!st->stop && (deadline || (!st->noted && !st->compact)))
		if (deadline ? pthread_cond_timedwait(&st->note_cond, &st->note_lock, deadline) == ETIMEDOUT
			     : pthread_cond_wait(&st->note_cond, &st->note_lock) != 0)
			break;
}

/* The saver: a noted change is written STATE_NOTE_DELAY_MS later, with
 * whatever else was noted meanwhile (a burst of forks, one write); and a
 * full journal is compacted (state_compact). */
static void *state_saver(void *arg)
{
	struct state *st = arg;

	pthread_mutex_lock(&st->note_lock);
	for (;;) {
		struct timespec at;
		int err;

		state_note_wait(st, NULL);
		if (st->stop)
			break;
		if (st->compact) {
			st->compact = false;
			pthread_mutex_unlock(&st->note_lock);
			if ((err = state_compact(st)))
				mcg_log(MCG_LOG_WARNING, "state file %s: compaction: %s (the journal "
					"goes on; tried again when it grows)", st->path, strerror(-err));
			pthread_mutex_lock(&st->note_lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_nsec += STATE_NOTE_DELAY_MS * 1000000L;
		at.tv_sec += at.tv_nsec / 1000000000L;
		at.tv_nsec %= 1000000000L;
		state_note_wait(st, &at);
		st->noted = false;
		pthread_mutex_unlock(&st->note_lock);
		if (state_commit(st))
			fprintf(stderr, "memcgfs: state file %s: a write after a fork failed\n", st->path);
		pthread_mutex_lock(&st->note_lock);
	}
	pthread_mutex_unlock(&st->note_lock);
	return NULL;
}

int state_attach(struct state *st, unsigned *attached, unsigned *skipped)
{
	int err;

	*attached = *skipped = 0;
	for (size_t i = 0; i < st->ntasks; i++) {
		if (state_reattach(st, &st->tasks[i]))
			++*attached;
		else
			++*skipped;
		mcg_put(st->tasks[i].g);
	}
	free(st->tasks);
	st->tasks = NULL;
	st->ntasks = 0;
	state_note_pid(st);           /* (the daemon's, after daemonizing) */
	pthread_mutex_lock(&st->lock);
	err = state_snapshot(st);
	st->live = !err;
	pthread_mutex_unlock(&st->lock);
	/* without the saver a fork is written with the next change */
	if (!err && pthread_create(&st->saver, NULL, state_saver, st) == 0)
		atomic_store(&st->saver_started, true);
	return err;
}

int state_close(struct state *st)
{
	int err = 0;

	if (!st)
		return 0;
	if (atomic_load(&st->saver_started)) {
		pthread_mutex_lock(&st->note_lock);
		st->stop = true;
		pthread_cond_signal(&st->note_cond);
		pthread_mutex_unlock(&st->note_lock);
		pthread_join(st->saver, NULL);
	}
	pthread_mutex_lock(&st->lock);
	if (st->live)
		err = state_snapshot(st);
	pthread_mutex_unlock(&st->lock);
	state_free(st);
	return err;
}

const char *state_path(const struct state *st)
{
	return st->path;
}

void state_renamed(struct state *st)
{
	if (st)
		atomic_fetch_add(&st->renames, 1);
}

unsigned long state_compactions(struct state *st)
{
	return st ? atomic_load(&st->compactions) : 0;
}
