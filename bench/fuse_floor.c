/* fuse_floor.c: the floor under memcgfs's reads. A bare FUSE server with
 * memcgfs's mount options and loop configuration (multithreaded, up to 64
 * workers, no attribute or entry caching, direct I/O) serving one
 * constant 20-byte file, "g/f": a file one directory down, as a leaf
 * group's control file is, so that an open walks as many components.
 * bench/fuse_floor.sh reads it beside memcgfs's files. It does nothing
 * else; not a test fixture.
 *
 *   fuse_floor MOUNTPOINT      (in the foreground; fusermount3 -u ends it)
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char floor_text[] = "9223372036854771712\n";   /* 20 bytes */

/* inodes: 1 the root, 2 the directory g, 3 the file g/f */
static void floor_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = ino < 3 ? 2 : 1;
	st->st_mode = ino < 3 ? S_IFDIR | 0555 : S_IFREG | 0644;
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (!((parent == 1 && !strcmp(name, "g")) || (parent == 2 && !strcmp(name, "f")))) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = parent + 1;
	floor_stat(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	floor_stat(ino, &st);
	fuse_reply_attr(req, &st, 0);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	size_t len = sizeof(floor_text) - 1;

	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, floor_text + off, len - (size_t)off < size ? len - (size_t)off : size);
}

static const struct fuse_lowlevel_ops floor_ops = {
	.lookup = floor_lookup,
	.getattr = floor_getattr,
	.open = floor_open,
	.read = floor_read,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *loop;
	struct fuse_session *se;
	int ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: fuse_floor MOUNTPOINT\n");
		return 2;
	}
	if (fuse_opt_add_arg(&args, argv[0]) ||
	    fuse_opt_add_arg(&args, "-odefault_permissions,allow_other,fsname=floor,subtype=floor"))
		return 1;
	if (!(se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL)))
		return 1;
	if (fuse_session_mount(se, argv[1]) == 0) {
		loop = fuse_loop_cfg_create();
		fuse_loop_cfg_set_max_threads(loop, 64);
		ret = fuse_session_loop_mt(se, loop) < 0;
		fuse_loop_cfg_destroy(loop);
		fuse_session_unmount(se);
	}
	fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	return ret;
}
