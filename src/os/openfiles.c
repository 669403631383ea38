/* openfiles.c: the regular files a process has open and their page cache,
 * seen through duplicates of its descriptors (pidfd_getfd), never through
 * a path. Owns /proc/PID/fd, /proc/PID/mountinfo and /proc/PID/io reading
 * for the mirror's page-cache scan; never reads or writes a file's data
 * (nor faults a page of it in), never opens a path of another process (a
 * write-only duplicate is reopened for reading through /proc/self/fd), and duplicates no descriptor of
 * a file system that is not on the local list below (a FUSE or network
 * file's attributes or close may wait on a server that never answers):
 * fdinfo's mount id is checked first, and a duplicate that turns out to
 * be on another mount is closed on a thread of its own. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "os/openfiles.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

/* (the kernel's uapi structures of cachestat(2), which glibc 2.36 lacks) */
struct openfiles_cs_range {
	uint64_t off, len;
};

struct openfiles_cs {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* File systems whose files live on this machine: attributes and close
 * never wait on another process or host. */
static const char *const openfiles_local[] = {
	"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "vfat", "msdos", "exfat", "jfs",
	"reiserfs", "bcachefs", "nilfs2", "squashfs", "erofs", "iso9660", "udf", "hfsplus",
	"minix", "tmpfs", "ramfs",
};

struct openfiles_mount {
	uint64_t id;
	unsigned long dev;            /* the superblock's, as the kernel's events name it */
	char type[16];
};

struct openfiles_walk {
	pid_t tgid;
	struct openfiles_mount *mnt;  /* the process's mounts, read at the first need */
	size_t nmnt;
	bool loaded;
};

/* The process's mount table, id and type of each (the types that fit). */
static void openfiles_load_mounts(struct openfiles_walk *w)
{
	char path[64], *line = NULL;
	size_t cap = 0, want = 0;
	FILE *f;

	w->loaded = true;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)w->tgid);
	if (!(f = fopen(path, "re")))
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long id;
		unsigned maj, min;
		char *dash = strstr(line, " - "), type[16];

		if (!dash || sscanf(line, "%llu %*u %u:%u", &id, &maj, &min) != 3 ||
		    sscanf(dash + 3, "%15s", type) != 1)
			continue;
		if (w->nmnt == want) {
			size_t n = want ? 2 * want : 64;
			struct openfiles_mount *nm = realloc(w->mnt, n * sizeof(*nm));

			if (!nm)
				break;
			w->mnt = nm;
			want = n;
		}
		w->mnt[w->nmnt].id = id;
		w->mnt[w->nmnt].dev = makedev(maj, min);
		memcpy(w->mnt[w->nmnt].type, type, sizeof(type));
		w->nmnt++;
	}
	free(line);
	fclose(f);
}

/* The process's mount of that id, or NULL when it has none by it. */
static const struct openfiles_mount *openfiles_mount(struct openfiles_walk *w, uint64_t id)
{
	if (!w->loaded)
		openfiles_load_mounts(w);
	for (size_t i = 0; i < w->nmnt; i++)
		if (w->mnt[i].id == id)
			return &w->mnt[i];
	return NULL;
}

static bool openfiles_is_local(const char *type)
{
	for (size_t i = 0; i < sizeof(openfiles_local) / sizeof(openfiles_local[0]); i++)
		if (!strcmp(type, openfiles_local[i]))
			return true;
	return false;
}

/* The mount id descriptor fd of the process is on (/proc/PID/fdinfo;
 * the kernel's internal mounts show 0), or UINT64_MAX when not shown. */
static uint64_t openfiles_fd_mount(pid_t tgid, const char *fd)
{
	char path[320], buf[512], *at;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)tgid, fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return UINT64_MAX;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	return (at = strstr(buf, "mnt_id:")) ? strtoull(at + 7, NULL, 10) : UINT64_MAX;
}

/* May a descriptor on mount id be duplicated (and so closed by us)? A
 * local file system's, or the kernel's internal shmem mount (memfd, in
 * no table): a FUSE or network file's close may wait on its server. */
static bool openfiles_may_dup(struct openfiles_walk *w, uint64_t id, const char *target)
{
	const struct openfiles_mount *mt = openfiles_mount(w, id);

	if (mt)
		return openfiles_is_local(mt->type);
	return !strncmp(target, "/memfd:", 7);
}

/* What the duplicate fd (on mount id, as fdinfo said) is, into f; false
 * to pass it by. */
static bool openfiles_describe(struct openfiles_walk *w, int fd, uint64_t id, struct openfile *f)
{
	const struct openfiles_mount *mt;
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MNT_ID, &sx) ||
	    !S_ISREG(sx.stx_mode) || !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != id)
		return false;
	*f = (struct openfile){
		.fd = fd,
		.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
		.ino = sx.stx_ino,
		.pages = (sx.stx_size + OPENFILES_PAGE - 1) / OPENFILES_PAGE,
	};
	/* the kernel's internal shmem mount (memfd, SysV shm), in no table */
	if (!(mt = openfiles_mount(w, id))) {
		f->shmem = sx.stx_dev_major == 0 && sx.stx_dev_minor == 1;
		return f->shmem;
	}
	/* (the superblock's device: btrfs shows a subvolume's in stat) */
	f->dev = mt->dev;
	f->shmem = !strcmp(mt->type, "tmpfs") || !strcmp(mt->type, "ramfs");
	if (!strncmp(mt->type, "ext", 3) && sx.stx_blksize > 0 && sx.stx_blksize <= OPENFILES_PAGE)
		f->bh_per_page = (unsigned)(OPENFILES_PAGE / sx.stx_blksize);
	return true;
}

/* Duplicates whose file turned out not to be what fdinfo said (the
 * process put another file at that number meanwhile) are closed on
 * threads of their own, as their close might wait on a server; at most
 * OPENFILES_CLOSERS at a time, and while that many wait, no walk
 * duplicates anything. */
#define OPENFILES_CLOSERS 16
static atomic_int openfiles_closers;

static void *openfiles_closer(void *arg)
{
	close((int)(intptr_t)arg);
	atomic_fetch_sub(&openfiles_closers, 1);
	return NULL;
}

static void openfiles_discard(int fd)
{
	pthread_attr_t a;
	pthread_t t;

	atomic_fetch_add(&openfiles_closers, 1);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, openfiles_closer, (void *)(intptr_t)fd))
		atomic_fetch_sub(&openfiles_closers, 1);   /* (kept open: never waits) */
	pthread_attr_destroy(&a);
}

int openfiles_each(pid_t tgid, int pidfd, unsigned max,
		   int (*fn)(void *arg, const struct openfile *f), void *arg)
{
	struct openfiles_walk w = { .tgid = tgid };
	char path[64];
	struct dirent *d;
	unsigned seen = 0;
	int err = 0;
	DIR *dir;

	if (atomic_load(&openfiles_closers) >= OPENFILES_CLOSERS)
		return -EAGAIN;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)tgid);
	if (!(dir = opendir(path)))
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && (d = readdir(dir))) {
		char link[320], target[8] = "";
		struct openfile f;
		uint64_t id;
		long n;
		int fd;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		if (seen++ == max) {          /* (every descriptor counts) */
			err = -E2BIG;
			break;
		}
		/* sockets, pipes and anon inodes read "socket:[..]" and the
		 * like: only paths (memfds included) are worth a look */
		snprintf(link, sizeof(link), "%s/%s", path, d->d_name);
		if (readlink(link, target, sizeof(target) - 1) < 1 || target[0] != '/' ||
		    (id = openfiles_fd_mount(tgid, d->d_name)) == UINT64_MAX ||
		    !openfiles_may_dup(&w, id, target))
			continue;
		n = strtol(d->d_name, NULL, 10);
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)n, 0);
		if (fd < 0) {
			if (errno == EPERM || errno == ESRCH)
				err = -errno;
			continue;             /* (closed meanwhile: EBADF) */
		}
		if (!openfiles_describe(&w, fd, id, &f)) {
			openfiles_discard(fd);   /* (not what fdinfo said) */
			continue;
		}
		err = fn(arg, &f);
		close(fd);
	}
	closedir(dir);
	free(w.mnt);
	return err;
}

int openfiles_cachestat(int fd, uint64_t first, uint64_t n, uint64_t *cache, uint64_t *dirty)
{
	struct openfiles_cs_range r = { first * OPENFILES_PAGE, n * OPENFILES_PAGE };
	struct openfiles_cs cs;

	if (syscall(SYS_cachestat, fd, &r, &cs, 0))
		return -errno;
	*cache = cs.nr_cache;
	*dirty = cs.nr_dirty;
	return 0;
}

/* Would mincore(2) tell this caller the truth about fd's file? The
 * kernel's can_do_mincore(): the owner, CAP_FOWNER over the file's owner,
 * or a caller that may write it; to anyone else every page is "resident". */
static bool openfiles_mincore_told(int fd, const struct stat *st)
{
	static int fowner = -1;       /* CAP_FOWNER in effect (-1: not asked yet) */
	int acc = fcntl(fd, F_GETFL);
	char link[64];

	if (st->st_uid == geteuid() || (acc >= 0 && (acc & O_ACCMODE) != O_RDONLY))
		return true;
	if (fowner < 0) {
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2];

		fowner = !syscall(SYS_capget, &h, d) && (d[0].effective & (1u << CAP_FOWNER));
	}
	/* (an owner this namespace cannot name shows as the overflow id,
	 * over which CAP_FOWNER here is nothing) */
	if (fowner && st->st_uid != (uid_t)65534)
		return true;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return faccessat(AT_FDCWD, link, W_OK, AT_EACCESS) == 0;
}

/* Resident pages of [first, first + n) of fd's file, counted through a
 * mapping of at most OPENFILES_MINCORE_SPAN pages at a time: 0 or -errno
 * (-EACCES: fd is not open for reading). */
#define OPENFILES_MINCORE_SPAN 65536ul
static int openfiles_mincore_count(int fd, uint64_t first, uint64_t n, uint64_t *cache)
{
	unsigned char *vec = malloc(n < OPENFILES_MINCORE_SPAN ? n : OPENFILES_MINCORE_SPAN);
	uint64_t c = 0;
	int err = 0;

	if (!vec)
		return -ENOMEM;
	for (uint64_t at = first; at < first + n && !err;) {
		size_t span = (size_t)(first + n - at < OPENFILES_MINCORE_SPAN ? first + n - at
									: OPENFILES_MINCORE_SPAN);
		void *map = mmap(NULL, span * OPENFILES_PAGE, PROT_READ, MAP_SHARED, fd,
				 (off_t)(at * OPENFILES_PAGE));

		if (map == MAP_FAILED) {
			err = -errno;
			break;
		}
		if (mincore(map, span * OPENFILES_PAGE, vec))
			err = -errno;
		else
			for (size_t i = 0; i < span; i++)
				c += vec[i] & 1;
		munmap(map, span * OPENFILES_PAGE);
		at += span;
	}
	free(vec);
	if (!err)
		*cache = c;
	return err;
}

int openfiles_mincore(int fd, uint64_t first, uint64_t n, uint64_t *cache, uint64_t *dirty)
{
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (!openfiles_mincore_told(fd, &st))
		return -EPERM;
	if (n == 0) {                 /* (to its end) */
		uint64_t pages = ((uint64_t)st.st_size + OPENFILES_PAGE - 1) / OPENFILES_PAGE;

		n = pages > first ? pages - first : 0;
	}
	*dirty = 0;
	*cache = 0;
	if (n == 0)
		return 0;
	err = openfiles_mincore_count(fd, first, n, cache);
	if (err == -EACCES) {
		/* open for writing only: a description of our own that reads
		 * (the file system's open runs; it is a local one) */
		char link[64];
		int rfd;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		rfd = open(link, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (rfd < 0)
			return errno == EACCES ? -EPERM : -errno;
		err = openfiles_mincore_count(rfd, first, n, cache);
		close(rfd);
	}
	return err;
}

int openfiles_io(int fd, uint64_t io[4])
{
	static const char *const keys[4] = { "rchar: ", "wchar: ", "syscr: ", "syscw: " };
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);   /* (a read regenerates it) */

	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	for (int i = 0; i < 4; i++) {
		const char *at = strstr(buf, keys[i]);

		if (!at)
			return -EIO;
		io[i] = strtoull(at + strlen(keys[i]), NULL, 10);
	}
	return 0;
}
