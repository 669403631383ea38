/* fuse_floor.c: the floor under memcgfs's requests. A bare FUSE server
 * with memcgfs's mount options and loop configuration (multithreaded, up
 * to 64 workers, direct I/O, the entry and attribute timeout it is given)
 * serving a tree of directories the bench makes with mkdir(2) and removes
 * with rmdir(2), each holding two constant files: "f" (20 bytes, as a
 * usage file) and "memory.stat" (as long as -s says, 800 bytes unless).
 * It starts with one directory, "g". The root's "user.floor.requests"
 * attribute counts the requests it received, as memcgfs's status does.
 * bench/fuse_floor.sh runs it beside memcgfs. It does nothing else; not a
 * test fixture.
 *
 *   fuse_floor [-t SECONDS] [-s BYTES] MOUNTPOINT
 *                              (in the foreground; fusermount3 -u ends it)
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char floor_text[] = "9223372036854771712\n";   /* 20 bytes */
static char *stat_text;
static size_t stat_len = 800;
static double timeout;
static atomic_ulong requests;

/* Directories are inodes 1 (the root) to FLOOR_DIRS - 1, never reused; a
 * directory d's files are FLOOR_DIRS + 2d ("f") and + 1 ("memory.stat"). */
#define FLOOR_DIRS (1u << 20)
#define FLOOR_HASH (1u << 21)
#define FLOOR_NAME 64

struct floor_dir {
	fuse_ino_t parent;
	char name[FLOOR_NAME];
	bool live;
};

static struct floor_dir *dirs;
static uint32_t *hash;                /* dir inode per slot; 0 free, UINT32_MAX deleted */
static fuse_ino_t next_dir = 2;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t floor_hash(fuse_ino_t parent, const char *name)
{
	uint32_t h = 2166136261u ^ (uint32_t)parent;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h & (FLOOR_HASH - 1);
}

/* The slot of (parent, name), or of where it would go (lock held). */
static uint32_t *floor_slot(fuse_ino_t parent, const char *name, bool *found)
{
	uint32_t *free_slot = NULL;

	for (uint32_t h = floor_hash(parent, name);; h = (h + 1) & (FLOOR_HASH - 1)) {
		uint32_t d = hash[h];

		if (d == 0) {
			*found = false;
			return free_slot ? free_slot : &hash[h];
		}
		if (d == UINT32_MAX) {
			if (!free_slot)
				free_slot = &hash[h];
		} else if (dirs[d].parent == parent && !strcmp(dirs[d].name, name)) {
			*found = true;
			return &hash[h];
		}
	}
}

static void floor_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = ino < FLOOR_DIRS ? 2 : 1;
	st->st_mode = ino < FLOOR_DIRS ? S_IFDIR | 0755 : S_IFREG | 0644;
}

static void floor_entry(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = ino;
	e.entry_timeout = e.attr_timeout = timeout;
	floor_stat(ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_ino_t ino = 0;
	bool found;
	uint32_t *s;

	atomic_fetch_add(&requests, 1);
	if (parent >= FLOOR_DIRS)
		return (void)fuse_reply_err(req, ENOTDIR);
	if (!strcmp(name, "f"))
		ino = FLOOR_DIRS + 2 * parent;
	else if (!strcmp(name, "memory.stat"))
		ino = FLOOR_DIRS + 2 * parent + 1;
	if (!ino) {
		pthread_mutex_lock(&lock);
		s = floor_slot(parent, name, &found);
		ino = found ? *s : 0;
		pthread_mutex_unlock(&lock);
	}
	if (!ino)
		return (void)fuse_reply_err(req, ENOENT);
	floor_entry(req, ino);
}

static void floor_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	atomic_fetch_add(&requests, 1);
	fuse_reply_none(req);
}

static void floor_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
	atomic_fetch_add(&requests, 1);
	fuse_reply_none(req);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	atomic_fetch_add(&requests, 1);
	floor_stat(ino, &st);
	fuse_reply_attr(req, &st, timeout);
}

static void floor_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_ino_t ino = 0;
	bool found;
	uint32_t *s;
	int err = 0;

	atomic_fetch_add(&requests, 1);
	if (strlen(name) >= FLOOR_NAME)
		return (void)fuse_reply_err(req, ENAMETOOLONG);
	pthread_mutex_lock(&lock);
	s = floor_slot(parent, name, &found);
	if (found) {
		err = EEXIST;
	} else if (next_dir >= FLOOR_DIRS) {
		err = ENOSPC;
	} else {
		ino = next_dir++;
		dirs[ino].parent = parent;
		strcpy(dirs[ino].name, name);
		dirs[ino].live = true;
		*s = (uint32_t)ino;
	}
	pthread_mutex_unlock(&lock);
	if (err)
		return (void)fuse_reply_err(req, err);
	floor_entry(req, ino);
}

static void floor_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	bool found;
	uint32_t *s;

	atomic_fetch_add(&requests, 1);
	pthread_mutex_lock(&lock);
	s = floor_slot(parent, name, &found);
	if (found) {
		dirs[*s].live = false;
		*s = UINT32_MAX;
	}
	pthread_mutex_unlock(&lock);
	fuse_reply_err(req, found ? 0 : ENOENT);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	atomic_fetch_add(&requests, 1);
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	bool st = (ino - FLOOR_DIRS) & 1;
	const char *text = st ? stat_text : floor_text;
	size_t len = st ? stat_len : sizeof(floor_text) - 1;

	atomic_fetch_add(&requests, 1);
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, text + off, len - (size_t)off < size ? len - (size_t)off : size);
}

/* as memcgfs: no FLUSH (the kernel stops sending it) */
static void floor_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	atomic_fetch_add(&requests, 1);
	fuse_reply_err(req, ENOSYS);
}

static void floor_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	atomic_fetch_add(&requests, 1);
	fuse_reply_err(req, 0);
}

static void floor_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char text[32];
	int n;

	atomic_fetch_add(&requests, 1);
	if (ino != 1 || strcmp(name, "user.floor.requests"))
		return (void)fuse_reply_err(req, ENODATA);
	n = snprintf(text, sizeof(text), "%lu", atomic_load(&requests));
	if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else if (size < (size_t)n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, text, (size_t)n);
}

static const struct fuse_lowlevel_ops floor_ops = {
	.lookup = floor_lookup,
	.forget = floor_forget,
	.forget_multi = floor_forget_multi,
	.getattr = floor_getattr,
	.mkdir = floor_mkdir,
	.rmdir = floor_rmdir,
	.open = floor_open,
	.read = floor_read,
	.flush = floor_flush,
	.release = floor_release,
	.getxattr = floor_getxattr,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *loop;
	struct fuse_session *se;
	bool found;
	int ret = 1, c;

	while ((c = getopt(argc, argv, "t:s:")) != -1) {
		if (c == 't')
			timeout = strtod(optarg, NULL);
		else if (c == 's')
			stat_len = strtoul(optarg, NULL, 10);
		else
			optind = argc + 1;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: fuse_floor [-t SECONDS] [-s BYTES] MOUNTPOINT\n");
		return 2;
	}
	dirs = calloc(FLOOR_DIRS, sizeof(*dirs));
	hash = calloc(FLOOR_HASH, sizeof(*hash));
	stat_text = malloc(stat_len + 1);
	if (!dirs || !hash || !stat_text)
		return 1;
	/* "key value" lines, as memory.stat's */
	for (size_t i = 0; i < stat_len; i++)
		stat_text[i] = i % 16 == 15 ? '\n' : i % 16 == 13 ? ' ' : 'a' + (char)(i % 13);
	dirs[2] = (struct floor_dir){ .parent = 1, .name = "g", .live = true };
	*floor_slot(1, "g", &found) = 2;
	next_dir = 3;
	if (fuse_opt_add_arg(&args, argv[0]) ||
	    fuse_opt_add_arg(&args, "-odefault_permissions,allow_other,fsname=floor,subtype=floor"))
		return 1;
	if (!(se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL)))
		return 1;
	if (fuse_session_mount(se, argv[optind]) == 0) {
		loop = fuse_loop_cfg_create();
		fuse_loop_cfg_set_max_threads(loop, 64);
		ret = fuse_session_loop_mt(se, loop) < 0;
		fuse_loop_cfg_destroy(loop);
		fuse_session_unmount(se);
	}
	fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	free(dirs);
	free(hash);
	free(stat_text);
	return ret;
}
