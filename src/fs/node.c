/* node.c: path resolution and per-node metadata (mode, owner, ACLs) for
 * group directories and their control files. All metadata is guarded by
 * fs->meta_lock, which is never held while calling into the engine's
 * tree-changing functions. Never renders content; never includes FUSE. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>

#include "fs/cgfiles.h"
#include "fs/node.h"

/* Times as kernfs keeps them: a node is born with all three at its
 * creation; a directory's mtime and ctime move when a child group comes or
 * goes; a setattr (chmod, chown, utimensat) moves ctime and sets what it
 * names; reads and writes of control files move nothing. */
struct node_times {
	struct timespec atime, mtime, ctime;
};

struct node_group {
	struct node_times dtimes;     /* the directory's */
	struct timespec born;         /* every control file's, until changed */
	struct node_times *ftimes;    /* per file once one was changed, or NULL */
	struct node_meta dir;
	struct node_meta file[];      /* one per row of cgfs_files */
};

static struct node_meta *node_meta_of(struct mcg_group *g, int row)
{
	struct node_group *ng = mcg_owner_data(g);

	return row < 0 ? &ng->dir : &ng->file[row];
}

int node_resolve(struct cgfs *fs, const char *path, struct mcg_group **out, int *row)
{
	struct mcg_group *g = fs->eng->root;
	const char *p = path;
	char comp[MCG_NAME_MAX + 1];

	mcg_get(g);
	*row = -1;
	while (*p == '/')
		p++;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		struct mcg_group *c;

		if (len > MCG_NAME_MAX) {
			mcg_put(g);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		while (*end == '/')
			end++;
		if ((c = mcg_lookup(fs->eng, g, comp))) {
			mcg_put(g);
			g = c;
		} else {
			int r = cgfs_file_lookup(fs, comp, mcg_is_root(g));

			if (r < 0 || *end) {
				mcg_put(g);
				return r >= 0 ? -ENOTDIR : -ENOENT;
			}
			*row = r;
		}
		p = end;
	}
	*out = g;
	return 0;
}

uint64_t node_ino(struct mcg_group *g, int row)
{
	if (row < 0 && mcg_is_root(g))
		return 1;
	return (uint64_t)mcg_id(g) * NODE_INO_STRIDE + (uint64_t)(row + 1);
}

int node_from_ino(struct cgfs *fs, uint64_t ino, struct mcg_group **out, int *row)
{
	struct mcg_group *g;
	unsigned r = (unsigned)(ino % NODE_INO_STRIDE);

	if (ino == 1) {
		mcg_get(fs->eng->root);
		*out = fs->eng->root;
		*row = -1;
		return 0;
	}
	if (ino / NODE_INO_STRIDE > MCG_ID_MAX ||
	    !(g = mcg_by_id(fs->eng, (unsigned)(ino / NODE_INO_STRIDE))))
		return -ESTALE;
	if (r > 0 && (r - 1 >= cgfs_nfiles ||
		      !cgfs_file_present(fs, &cgfs_files[r - 1], mcg_is_root(g)))) {
		mcg_put(g);
		return -ENOENT;
	}
	*out = g;
	*row = (int)r - 1;
	return 0;
}

int node_of_fd(struct cgfs *fs, int fd, struct mcg_group **g, int *row)
{
	struct statx sx;

	if (fs->fd_node)
		return fs->fd_node(fs, fd, g, row);
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &sx))
		return -errno;
	if (!fs->mount_dev || makedev(sx.stx_dev_major, sx.stx_dev_minor) != fs->mount_dev ||
	    !(sx.stx_mask & STATX_INO))
		return -EXDEV;
	return node_from_ino(fs, sx.stx_ino, g, row);
}

static struct node_group *node_group_alloc(void)
{
	struct node_group *ng = calloc(1, sizeof(struct node_group) + cgfs_nfiles * sizeof(struct node_meta));

	if (ng) {
		clock_gettime(CLOCK_REALTIME, &ng->born);
		ng->dtimes = (struct node_times){ ng->born, ng->born, ng->born };
	}
	return ng;
}

/* The times of a node (meta_lock held); a file's own are made on first
 * need (alloc), NULL if there is no memory for them. */
static struct node_times *node_times_of(struct node_group *ng, int row, bool alloc)
{
	if (row < 0)
		return &ng->dtimes;
	if (!ng->ftimes && alloc) {
		if (!(ng->ftimes = malloc(cgfs_nfiles * sizeof(*ng->ftimes))))
			return NULL;
		for (size_t i = 0; i < cgfs_nfiles; i++)
			ng->ftimes[i] = (struct node_times){ ng->born, ng->born, ng->born };
	}
	return ng->ftimes ? &ng->ftimes[row] : NULL;
}

void node_touch_dir(struct cgfs *fs, struct mcg_group *g)
{
	struct node_group *ng = mcg_owner_data(g);
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&fs->meta_lock);
	ng->dtimes.mtime = ng->dtimes.ctime = now;
	pthread_mutex_unlock(&fs->meta_lock);
}

int node_set_times(struct cgfs *fs, struct mcg_group *g, int row,
		   const struct timespec *atime, const struct timespec *mtime)
{
	struct node_times *t;
	struct timespec now;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&fs->meta_lock);
	if ((t = node_times_of(mcg_owner_data(g), row, true))) {
		if (atime)
			t->atime = *atime;
		if (mtime)
			t->mtime = *mtime;
		t->ctime = now;
	} else {
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&fs->meta_lock);
	return err;
}

int node_init_root(struct cgfs *fs, struct mcg_group *root, uid_t uid, gid_t gid)
{
	struct node_group *ng = node_group_alloc();

	if (!ng)
		return -ENOMEM;
	ng->dir = (struct node_meta){ .mode = 0555, .uid = uid, .gid = gid };
	for (size_t i = 0; i < cgfs_nfiles; i++)
		ng->file[i] = (struct node_meta){ .mode = cgfs_file_mode(fs, &cgfs_files[i]),
						  .uid = uid, .gid = gid };
	mcg_set_owner_data(root, ng);
	return 0;
}

static struct acl *node_acl_dup(const struct acl *a)
{
	struct acl *n = a ? malloc(sizeof(*n)) : NULL;

	if (n)
		*n = *a;
	return n;
}

/* Give m the access ACL that inheriting def implies for a node whose mode
 * without ACLs would be natural. */
static int node_inherit(struct node_meta *m, const struct acl *def, mode_t natural, bool is_dir)
{
	struct acl acc;

	if (acl_inherit(def, natural, is_dir, &acc, &m->mode)) {
		if (!(m->acl = node_acl_dup(&acc)))
			return -ENOMEM;
	}
	m->mode &= 07777;
	return 0;
}

int node_init_child(struct cgfs *fs, struct mcg_group *g, uid_t uid, gid_t gid,
		    mode_t mode, mode_t umask)
{
	struct node_group *ng = node_group_alloc();
	struct acl *def;
	int err = 0;

	if (!ng)
		return -ENOMEM;
	pthread_mutex_lock(&fs->meta_lock);
	def = node_meta_of(mcg_parent(g), -1)->dacl;
	ng->dir = (struct node_meta){ .mode = (mode & ~umask) & 07777, .uid = uid, .gid = gid };
	for (size_t i = 0; i < cgfs_nfiles; i++)
		ng->file[i] = (struct node_meta){ .mode = cgfs_file_mode(fs, &cgfs_files[i]),
						  .uid = uid, .gid = gid };
	if (def) {
		/* A default ACL replaces the umask (POSIX) and is inherited by the
		 * directory and applied to every control file in it. */
		if (!(ng->dir.dacl = node_acl_dup(def)))
			err = -ENOMEM;
		if (!err)
			err = node_inherit(&ng->dir, def, mode & 07777, true);
		for (size_t i = 0; i < cgfs_nfiles && !err; i++)
			if (!fs->acl_inherit || fs->acl_inherit[i])
				err = node_inherit(&ng->file[i], def, cgfs_file_mode(fs, &cgfs_files[i]), false);
	}
	pthread_mutex_unlock(&fs->meta_lock);
	mcg_set_owner_data(g, ng);
	return err;
}

int node_set_acl_inherit(struct cgfs *fs, const char *globs)
{
	bool *take = calloc(cgfs_nfiles, sizeof(*take));
	char *list = strdup(globs), *save = NULL;
	int err = 0;

	if (!take || !list) {
		err = -ENOMEM;
		goto out;
	}
	for (char *glob = strtok_r(list, ":", &save); glob && !err; glob = strtok_r(NULL, ":", &save)) {
		bool hit = false;

		for (size_t i = 0; i < cgfs_nfiles; i++)
			if (fnmatch(glob, cgfs_files[i].name, 0) == 0)
				take[i] = hit = true;
		if (!hit)
			err = -EINVAL;        /* a glob naming no file: a typo */
	}
	if (!err) {
		free(fs->acl_inherit);
		fs->acl_inherit = take;
		take = NULL;
	}
out:
	free(take);
	free(list);
	return err;
}

void node_free_group(struct mcg_group *g, void *arg)
{
	struct node_group *ng = mcg_owner_data(g);

	if (!ng)
		return;
	free(ng->ftimes);
	free(ng->dir.acl);
	free(ng->dir.dacl);
	for (size_t i = 0; i < cgfs_nfiles; i++)
		free(ng->file[i].acl);
	free(ng);
	mcg_set_owner_data(g, NULL);
}

int node_getattr(struct cgfs *fs, struct mcg_group *g, int row, struct stat *st)
{
	struct node_group *ng = mcg_owner_data(g);
	const struct node_times *t;
	struct node_meta *m;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&fs->meta_lock);
	m = node_meta_of(g, row);
	st->st_mode = (row < 0 ? S_IFDIR : S_IFREG) | m->mode;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	if ((t = node_times_of(ng, row, false))) {
		st->st_atim = t->atime;
		st->st_mtim = t->mtime;
		st->st_ctim = t->ctime;
	} else {
		st->st_atim = st->st_mtim = st->st_ctim = ng->born;
	}
	pthread_mutex_unlock(&fs->meta_lock);
	st->st_nlink = row < 0 ? 2 + mcg_nr_children(fs->eng, g) : 1;
	st->st_size = 0;
	st->st_blksize = 4096;
	return 0;
}

int node_chmod(struct cgfs *fs, struct mcg_group *g, int row, mode_t mode)
{
	struct node_meta *m;

	pthread_mutex_lock(&fs->meta_lock);
	m = node_meta_of(g, row);
	m->mode = mode & 07777;
	if (m->acl)
		acl_apply_chmod(m->acl, m->mode);
	pthread_mutex_unlock(&fs->meta_lock);
	return 0;
}

int node_chown(struct cgfs *fs, struct mcg_group *g, int row, uid_t uid, gid_t gid)
{
	struct node_meta *m;

	pthread_mutex_lock(&fs->meta_lock);
	m = node_meta_of(g, row);
	if (uid != (uid_t)-1)
		m->uid = uid;
	if (gid != (gid_t)-1)
		m->gid = gid;
	pthread_mutex_unlock(&fs->meta_lock);
	return 0;
}

/* Which ACL slot an xattr name refers to; NULL for names we do not keep. */
static struct acl **node_acl_slot(struct node_meta *m, int row, const char *name)
{
	if (strcmp(name, ACL_XATTR_ACCESS) == 0)
		return &m->acl;
	if (strcmp(name, ACL_XATTR_DEFAULT) == 0 && row < 0)
		return &m->dacl;
	return NULL;
}

int node_getxattr(struct cgfs *fs, struct mcg_group *g, int row, const char *name,
		  char *buf, size_t size)
{
	struct acl **slot;
	int ret = -ENODATA;

	pthread_mutex_lock(&fs->meta_lock);
	slot = node_acl_slot(node_meta_of(g, row), row, name);
	if (slot && *slot)
		ret = acl_serialize(*slot, buf, size);
	pthread_mutex_unlock(&fs->meta_lock);
	return ret;
}

int node_setxattr(struct cgfs *fs, struct mcg_group *g, int row, const char *name,
		  const char *buf, size_t size, int flags)
{
	struct node_meta *m;
	struct acl **slot, parsed;
	int err;

	if (strcmp(name, ACL_XATTR_ACCESS) && strcmp(name, ACL_XATTR_DEFAULT))
		return -EOPNOTSUPP;     /* cgroupfs keeps no other xattrs */
	if ((err = acl_parse(buf, size, &parsed)))
		return err;
	pthread_mutex_lock(&fs->meta_lock);
	m = node_meta_of(g, row);
	if (!(slot = node_acl_slot(m, row, name))) {
		err = -EACCES;          /* a default ACL on a file */
	} else if ((flags & XATTR_CREATE) && *slot) {
		err = -EEXIST;
	} else if ((flags & XATTR_REPLACE) && !*slot) {
		err = -ENODATA;
	} else if (slot == &m->acl) {
		/* The kernel does not sync mode and ACL for FUSE: we do both
		 * ways, and a minimal ACL is the same as none (as ext4). */
		m->mode = (m->mode & ~0777u) | (acl_mode_from_acl(&parsed, m->mode) & 0777);
		if (acl_is_minimal(&parsed)) {
			free(m->acl);
			m->acl = NULL;
		} else if (m->acl || (m->acl = malloc(sizeof(*m->acl)))) {
			*m->acl = parsed;
		} else {
			err = -ENOMEM;
		}
	} else if (m->dacl || (m->dacl = malloc(sizeof(*m->dacl)))) {
		*m->dacl = parsed;
	} else {
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&fs->meta_lock);
	return err;
}

int node_removexattr(struct cgfs *fs, struct mcg_group *g, int row, const char *name)
{
	struct acl **slot;
	int err = -ENODATA;

	pthread_mutex_lock(&fs->meta_lock);
	slot = node_acl_slot(node_meta_of(g, row), row, name);
	if (slot && *slot) {
		free(*slot);
		*slot = NULL;
		err = 0;
	}
	pthread_mutex_unlock(&fs->meta_lock);
	return err;
}

int node_listxattr(struct cgfs *fs, struct mcg_group *g, int row, char *buf, size_t size)
{
	struct node_meta *m;
	size_t len = 0;
	char names[128];

	pthread_mutex_lock(&fs->meta_lock);
	m = node_meta_of(g, row);
	if (m->acl) {
		memcpy(names + len, ACL_XATTR_ACCESS, sizeof(ACL_XATTR_ACCESS));
		len += sizeof(ACL_XATTR_ACCESS);
	}
	if (m->dacl) {
		memcpy(names + len, ACL_XATTR_DEFAULT, sizeof(ACL_XATTR_DEFAULT));
		len += sizeof(ACL_XATTR_DEFAULT);
	}
	pthread_mutex_unlock(&fs->meta_lock);
	if (size == 0)
		return (int)len;
	if (size < len)
		return -ERANGE;
	memcpy(buf, names, len);
	return (int)len;
}

/* POSIX access check for "read" by uid and primary gid. */
bool node_may_read(struct cgfs *fs, struct mcg_group *g, int row, uid_t uid, gid_t gid)
{
	struct node_meta *m;
	unsigned perm;

	if (uid == 0)
		return true;
	pthread_mutex_lock(&fs->meta_lock);
	m = node_meta_of(g, row);
	if (uid == m->uid) {
		perm = (m->mode >> 6) & 7;
	} else if (!m->acl) {
		perm = gid == m->gid ? (m->mode >> 3) & 7 : m->mode & 7;
	} else {
		unsigned mask = 7, named = 0, other = 0;
		bool user_hit = false, group_hit = false;

		for (size_t i = 0; i < m->acl->n; i++) {
			const struct acl_entry *e = &m->acl->e[i];

			switch (e->tag) {
			case ACL_TAG_USER:
				if (e->id == uid) { named = e->perm; user_hit = true; }
				break;
			case ACL_TAG_GROUP_OBJ:
				if (!user_hit && gid == m->gid) { named |= e->perm; group_hit = true; }
				break;
			case ACL_TAG_GROUP:
				if (!user_hit && e->id == gid) { named |= e->perm; group_hit = true; }
				break;
			case ACL_TAG_MASK:
				mask = e->perm;
				break;
			case ACL_TAG_OTHER:
				other = e->perm;
				break;
			}
		}
		perm = user_hit || group_hit ? named & mask : other;
	}
	pthread_mutex_unlock(&fs->meta_lock);
	return (perm & 4) != 0;
}
