/* test_node.c: fs/node.c without a mount: path resolution, inode numbers
 * and their way back (ESTALE, ENOENT, a removed group still reachable while
 * referenced), the metadata of new nodes (creator, umask, default ACLs),
 * chmod, chown, the ACL xattrs and the read check. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "engine/engine.h"
#include "engine/internal.h"   /* (white-box: reference counts) */
#include "fs/acl.h"
#include "fs/cgfiles.h"
#include "fs/node.h"
#include "suites.h"

static struct cgfs nfs;

struct nd_mkdir {
	uid_t uid;
	gid_t gid;
	mode_t mode, umask;
};

static int nd_init(struct mcg_group *g, void *arg)
{
	const struct nd_mkdir *a = arg;

	return node_init_child(&nfs, g, a->uid, a->gid, a->mode, a->umask);
}

/* A mount's state as memcgfs.c builds it: the engine frees each group's
 * metadata (its free hook), the root belongs to 0:0. */
static void nd_setup(bool watermarks)
{
	static const struct mcg_owner_ops own = { .free = node_free_group };
	struct mcg_machine cfg = {
		.mem_pages = 65536, .nodes = 1, .cpus = 1, .vm_swappiness = 60,
	};

	memset(&nfs, 0, sizeof(nfs));
	prof_init(&cfg.prof, PROF_KV(6, 18));
	ck_assert_ptr_nonnull(nfs.eng = mcg_engine_new(&cfg, NULL, &(struct mcg_owner){ &own, &nfs }));
	nfs.prof = &nfs.eng->m.prof;
	nfs.watermarks = watermarks;
	cgfs_init(&nfs);
	ck_assert_int_eq(node_init_root(&nfs, nfs.eng->root, 0, 0), 0);
}

static void nd_teardown(void)
{
	mcg_engine_free(nfs.eng);
	cgfs_destroy(&nfs);
}

/* mkdir name under parent by uid:gid, with a reference for the test. */
static struct mcg_group *nd_mkdir(struct mcg_group *parent, const char *name, uid_t uid,
				  gid_t gid, mode_t mode, mode_t umask)
{
	struct nd_mkdir a = { uid, gid, mode, umask };
	struct mcg_group *g = NULL;

	ck_assert_int_eq(mcg_create(nfs.eng, parent, name, nd_init, &a, &g), 0);
	return g;
}

/* The row of a file by name, whether or not this directory shows it. */
static int nd_row(const char *name)
{
	for (size_t i = 0; i < cgfs_nfiles; i++)
		if (!strcmp(cgfs_files[i].name, name))
			return (int)i;
	ck_abort_msg("no row %s", name);
	return -1;
}

static int nd_resolve(const char *path, struct mcg_group **g, int *row)
{
	*g = NULL;
	*row = -7;
	return node_resolve(&nfs, path, g, row);
}

START_TEST(test_resolve)
{
	struct mcg_group *root, *a, *b, *g;
	char longname[MCG_NAME_MAX + 3];
	int row;

	nd_setup(true);
	root = nfs.eng->root;
	a = nd_mkdir(root, "a", 0, 0, 0755, 022);
	b = nd_mkdir(a, "b", 0, 0, 0755, 022);

	ck_assert_int_eq(nd_resolve("/", &g, &row), 0);
	ck_assert_ptr_eq(g, root);
	ck_assert_int_eq(row, -1);
	mcg_put(g);
	ck_assert_int_eq(nd_resolve("", &g, &row), 0);
	ck_assert_ptr_eq(g, root);
	mcg_put(g);
	ck_assert_int_eq(nd_resolve("/a/b", &g, &row), 0);
	ck_assert_ptr_eq(g, b);
	ck_assert_int_eq(row, -1);
	mcg_put(g);
	ck_assert_int_eq(nd_resolve("//a///b//", &g, &row), 0);   /* runs of slashes */
	ck_assert_ptr_eq(g, b);
	mcg_put(g);
	ck_assert_int_eq(nd_resolve("/a/memory.stat", &g, &row), 0);
	ck_assert_ptr_eq(g, a);
	ck_assert_int_eq(row, nd_row("memory.stat"));
	mcg_put(g);
	ck_assert_int_eq(nd_resolve("/release_agent", &g, &row), 0);
	ck_assert_ptr_eq(g, root);
	ck_assert_int_eq(row, nd_row("release_agent"));
	mcg_put(g);

	/* the root's own files are not in a child; nothing is under a file */
	ck_assert_int_eq(nd_resolve("/a/release_agent", &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/a/cgroup.sane_behavior", &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/a/c", &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/x/b", &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/a/memory.stat/x", &g, &row), -ENOTDIR);
	memset(longname, 'n', sizeof(longname));
	longname[0] = '/';
	longname[MCG_NAME_MAX + 2] = '\0';
	ck_assert_int_eq(nd_resolve(longname, &g, &row), -ENAMETOOLONG);
	ck_assert_ptr_null(g);
	/* §11.6: a component longer than 255 bytes is a name like another */
	longname[NAME_MAX + 2] = '\0';
	ck_assert_int_eq(nd_resolve(longname, &g, &row), -ENOENT);
	ck_assert_ptr_null(g);

	/* a removed group is no longer found by its path */
	mcg_put(b);
	ck_assert_int_eq(mcg_remove(nfs.eng, b), 0);
	ck_assert_int_eq(nd_resolve("/a/b", &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/a", &g, &row), 0);
	mcg_put(g);
	mcg_put(a);
	nd_teardown();
}
END_TEST

/* Failed resolutions leave no reference behind, successful ones one: the
 * group's count after each. */
START_TEST(test_resolve_references)
{
	struct mcg_group *a, *g;
	int refs, row;

	nd_setup(true);
	a = nd_mkdir(nfs.eng->root, "a", 0, 0, 0755, 022);
	refs = atomic_load(&a->refs);
	ck_assert_int_eq(nd_resolve("/a/nothing", &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/a/memory.stat/x", &g, &row), -ENOTDIR);
	ck_assert_int_eq(atomic_load(&a->refs), refs);
	ck_assert_int_eq(nd_resolve("/a/tasks", &g, &row), 0);
	ck_assert_int_eq(atomic_load(&a->refs), refs + 1);
	mcg_put(g);
	ck_assert_int_eq(atomic_load(&a->refs), refs);
	mcg_put(a);
	nd_teardown();
}
END_TEST

START_TEST(test_inode_numbers)
{
	struct mcg_group *root, *a, *b, *g;
	int row, r_stat = nd_row("memory.stat");

	nd_setup(true);
	root = nfs.eng->root;
	a = nd_mkdir(root, "a", 0, 0, 0755, 022);
	b = nd_mkdir(a, "b", 0, 0, 0755, 022);

	ck_assert_uint_lt(cgfs_nfiles, NODE_INO_STRIDE);  /* rows fit in a stride */
	ck_assert_uint_eq(node_ino(root, -1), 1);           /* FUSE_ROOT_ID */
	ck_assert_uint_eq(node_ino(root, 0), (uint64_t)root->id * NODE_INO_STRIDE + 1);
	ck_assert_uint_eq(node_ino(a, -1), (uint64_t)a->id * NODE_INO_STRIDE);
	ck_assert_uint_eq(node_ino(a, r_stat), (uint64_t)a->id * NODE_INO_STRIDE + 1 + r_stat);
	ck_assert_uint_ne(node_ino(a, -1), node_ino(b, -1));

	/* every node shown comes back from its number, every other is ENOENT */
	for (int gi = 0; gi < 3; gi++) {
		struct mcg_group *d = gi == 0 ? root : gi == 1 ? a : b;

		for (int r = -1; r < (int)cgfs_nfiles; r++) {
			bool shown = r < 0 || cgfs_file_present(&nfs, &cgfs_files[r], d == root);
			int err = node_from_ino(&nfs, node_ino(d, r), &g, &row);

			ck_assert_msg(err == (shown ? 0 : -ENOENT), "group %d row %d: %d", gi, r, err);
			if (!err) {
				ck_assert_ptr_eq(g, d);
				ck_assert_int_eq(row, r);
				mcg_put(g);
			}
		}
	}
	/* rows past the table, ids no group holds, ids past MCG_ID_MAX */
	ck_assert_int_eq(node_from_ino(&nfs, (uint64_t)a->id * NODE_INO_STRIDE + 1 + cgfs_nfiles,
				       &g, &row), -ENOENT);
	ck_assert_int_eq(node_from_ino(&nfs, 5, &g, &row), -ESTALE);   /* id 0 */
	ck_assert_int_eq(node_from_ino(&nfs, 4000ull * NODE_INO_STRIDE, &g, &row), -ESTALE);
	ck_assert_int_eq(node_from_ino(&nfs, (MCG_ID_MAX + 1ull) * NODE_INO_STRIDE, &g, &row),
			 -ESTALE);
	ck_assert_int_eq(node_from_ino(&nfs, UINT64_MAX, &g, &row), -ESTALE);
	/* an id past 32 bits is not its low 32 bits */
	ck_assert_int_eq(node_from_ino(&nfs, ((1ull << 32) + a->id) * NODE_INO_STRIDE, &g, &row),
			 -ESTALE);
	mcg_put(b);
	mcg_put(a);
	nd_teardown();
}
END_TEST

/* -o nowatermarks: the extension files have no inode in any directory. */
START_TEST(test_inode_extension_hidden)
{
	struct mcg_group *a, *g;
	int row, r = nd_row("memory.high_watermark_in_bytes");

	nd_setup(false);
	a = nd_mkdir(nfs.eng->root, "a", 0, 0, 0755, 022);
	ck_assert_int_eq(node_from_ino(&nfs, node_ino(a, r), &g, &row), -ENOENT);
	ck_assert_int_eq(node_from_ino(&nfs, node_ino(nfs.eng->root, r), &g, &row), -ENOENT);
	ck_assert_int_eq(nd_resolve("/a/memory.high_watermark_in_bytes", &g, &row), -ENOENT);
	mcg_put(a);
	nd_teardown();
}
END_TEST

/* A file held open across rmdir: its number still reaches the group while
 * it is referenced; once the group is freed the number is stale, and a new
 * group on the same id is told apart by its generation. */
START_TEST(test_inode_after_rmdir)
{
	struct mcg_group *a, *g, *a2;
	unsigned id, gen;
	uint64_t ino;
	int row, r_tasks = nd_row("tasks");

	nd_setup(true);
	a = nd_mkdir(nfs.eng->root, "a", 0, 0, 0755, 022);
	ino = node_ino(a, r_tasks);
	id = a->id;
	gen = a->gen;
	ck_assert_int_eq(mcg_remove(nfs.eng, a), 0);
	ck_assert_int_eq(node_from_ino(&nfs, ino, &g, &row), 0);
	ck_assert_ptr_eq(g, a);
	ck_assert(atomic_load(&g->removed));
	mcg_put(g);
	mcg_put(a);                                   /* the last reference */
	ck_assert_int_eq(node_from_ino(&nfs, ino, &g, &row), -ESTALE);
	/* ids are handed out cyclically: go round to reach id again */
	for (unsigned i = 0; i < MCG_ID_MAX + 1; i++) {
		a2 = nd_mkdir(nfs.eng->root, "b", 0, 0, 0755, 022);
		if (a2->id == id)
			break;
		ck_assert_int_eq(mcg_remove(nfs.eng, a2), 0);
		mcg_put(a2);
	}
	ck_assert_uint_eq(a2->id, id);
	ck_assert_uint_ne(a2->gen, gen);
	ck_assert_uint_eq(node_ino(a2, r_tasks), ino);  /* same number, a new generation */
	mcg_put(a2);
	nd_teardown();
}
END_TEST

START_TEST(test_init_and_getattr)
{
	struct mcg_group *root, *a, *b;
	struct stat st;
	int r_stat = nd_row("memory.stat"), r_force = nd_row("memory.force_empty");
	int r_limit = nd_row("memory.limit_in_bytes");

	nd_setup(true);
	root = nfs.eng->root;
	ck_assert_int_eq(node_getattr(&nfs, root, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0555);
	ck_assert_uint_eq(st.st_nlink, 2);
	ck_assert_uint_eq(st.st_uid, 0);

	a = nd_mkdir(root, "a", 1000, 1001, 0777, 022);
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0755);     /* the umask, without a default ACL */
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_uint_eq(st.st_gid, 1001);
	ck_assert_int_eq(st.st_size, 0);
	/* born now: the three times are its creation (kernfs) */
	ck_assert_int_gt(st.st_mtim.tv_sec, 0);
	ck_assert(st.st_atim.tv_sec == st.st_mtim.tv_sec && st.st_atim.tv_nsec == st.st_mtim.tv_nsec);
	ck_assert(st.st_ctim.tv_sec == st.st_mtim.tv_sec && st.st_ctim.tv_nsec == st.st_mtim.tv_nsec);
	/* the creator owns the control files too, with the table's modes */
	for (int r = 0; r < (int)cgfs_nfiles; r++) {
		if (!cgfs_file_present(&nfs, &cgfs_files[r], false))
			continue;
		ck_assert_int_eq(node_getattr(&nfs, a, r, &st), 0);
		ck_assert_uint_eq(st.st_mode, S_IFREG | cgfs_file_mode(&nfs, &cgfs_files[r]));
		ck_assert_uint_eq(st.st_nlink, 1);
		ck_assert_uint_eq(st.st_uid, 1000);
		ck_assert_uint_eq(st.st_gid, 1001);
	}
	ck_assert_int_eq(node_getattr(&nfs, a, r_stat, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0444);
	ck_assert_int_eq(node_getattr(&nfs, a, r_force, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0200);
	ck_assert_int_eq(node_getattr(&nfs, a, r_limit, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0644);     /* the umask is for the directory */

	/* mkdir's setgid and sticky bits stay; the umask takes what it masks */
	b = nd_mkdir(a, "b", 0, 0, 01777, 077);
	ck_assert_int_eq(node_getattr(&nfs, b, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 01700);
	/* links: 2 + live children */
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 3);
	ck_assert_int_eq(node_getattr(&nfs, root, -1, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 3);
	ck_assert_int_eq(mcg_remove(nfs.eng, b), 0);
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 2);
	mcg_put(b);
	mcg_put(a);
	nd_teardown();
}
END_TEST

START_TEST(test_chmod_chown)
{
	struct mcg_group *a;
	struct stat st;
	int r_limit = nd_row("memory.limit_in_bytes");

	nd_setup(true);
	a = nd_mkdir(nfs.eng->root, "a", 0, 0, 0755, 022);
	ck_assert_int_eq(node_chmod(&nfs, a, -1, S_IFDIR | 0710), 0);
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0710);      /* the type is not the mode's */
	ck_assert_int_eq(node_chmod(&nfs, a, r_limit, 0666), 0);
	ck_assert_int_eq(node_getattr(&nfs, a, r_limit, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0666);
	/* one node's metadata: the directory's mode did not move */
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0710);

	ck_assert_int_eq(node_chown(&nfs, a, r_limit, 1000, (gid_t)-1), 0);
	ck_assert_int_eq(node_getattr(&nfs, a, r_limit, &st), 0);
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_uint_eq(st.st_gid, 0);
	ck_assert_int_eq(node_chown(&nfs, a, r_limit, (uid_t)-1, 1002), 0);
	ck_assert_int_eq(node_getattr(&nfs, a, r_limit, &st), 0);
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_uint_eq(st.st_gid, 1002);
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	mcg_put(a);
	nd_teardown();
}
END_TEST

/* An ACL as setfacl would send it (entries in canonical order). */
static int nd_acl(char *buf, size_t size, const struct acl_entry *e, size_t n)
{
	struct acl a = { .n = n };

	memcpy(a.e, e, n * sizeof(*e));
	return acl_serialize(&a, buf, size);
}

#define U_OBJ(p)  { ACL_TAG_USER_OBJ, p, 0xffffffffu }
#define USER(i, p) { ACL_TAG_USER, p, i }
#define G_OBJ(p)  { ACL_TAG_GROUP_OBJ, p, 0xffffffffu }
#define GROUP(i, p) { ACL_TAG_GROUP, p, i }
#define MASK(p)   { ACL_TAG_MASK, p, 0xffffffffu }
#define OTHER(p)  { ACL_TAG_OTHER, p, 0xffffffffu }

START_TEST(test_access_acl_xattrs)
{
	static const struct acl_entry named[] = { U_OBJ(6), USER(1001, 6), G_OBJ(4), MASK(4), OTHER(0) };
	static const struct acl_entry minimal[] = { U_OBJ(6), G_OBJ(0), OTHER(4) };
	struct mcg_group *a;
	char val[256], out[256], names[128];
	int len, r = nd_row("memory.limit_in_bytes");
	struct stat st;

	nd_setup(true);
	a = nd_mkdir(nfs.eng->root, "a", 0, 0, 0755, 022);
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, out, sizeof(out)), -ENODATA);
	ck_assert_int_eq(node_listxattr(&nfs, a, r, names, sizeof(names)), 0);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, "user.x", "1", 1, 0), -EOPNOTSUPP);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, "junk", 4, 0), -EINVAL);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, 0, XATTR_REPLACE), -EINVAL);

	len = nd_acl(val, sizeof(val), named, 5);
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, XATTR_REPLACE),
			 -ENODATA);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, XATTR_CREATE), 0);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, XATTR_CREATE),
			 -EEXIST);
	/* stored as sent, and the mode follows it: group bits from the mask */
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, out, sizeof(out)), len);
	ck_assert_mem_eq(out, val, (size_t)len);
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, NULL, 0), len);
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, out, 4), -ERANGE);
	ck_assert_int_eq(node_getattr(&nfs, a, r, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0640);
	/* listed, and a default ACL on a file is refused */
	ck_assert_int_eq(node_listxattr(&nfs, a, r, NULL, 0), (int)sizeof(ACL_XATTR_ACCESS));
	ck_assert_int_eq(node_listxattr(&nfs, a, r, names, sizeof(names)), (int)sizeof(ACL_XATTR_ACCESS));
	ck_assert_str_eq(names, ACL_XATTR_ACCESS);
	ck_assert_int_eq(node_listxattr(&nfs, a, r, names, 3), -ERANGE);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_DEFAULT, val, (size_t)len, 0), -EACCES);
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_DEFAULT, out, sizeof(out)), -ENODATA);

	/* chmod rewrites the ACL: the group bits go to the mask */
	ck_assert_int_eq(node_chmod(&nfs, a, r, 0604), 0);
	len = node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, out, sizeof(out));
	ck_assert_int_gt(len, 0);
	{
		struct acl got;

		ck_assert_int_eq(acl_parse(out, (size_t)len, &got), 0);
		ck_assert_uint_eq(got.n, 5);
		for (size_t i = 0; i < got.n; i++) {
			if (got.e[i].tag == ACL_TAG_MASK)
				ck_assert_uint_eq(got.e[i].perm, 0);
			if (got.e[i].tag == ACL_TAG_USER)
				ck_assert_uint_eq(got.e[i].perm, 6);     /* named entries stay */
			if (got.e[i].tag == ACL_TAG_OTHER)
				ck_assert_uint_eq(got.e[i].perm, 4);
		}
	}

	/* a minimal ACL is the same as none: the mode takes it, nothing is kept */
	len = nd_acl(val, sizeof(val), minimal, 3);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, 0), 0);
	ck_assert_int_eq(node_getattr(&nfs, a, r, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0604);
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, out, sizeof(out)), -ENODATA);
	ck_assert_int_eq(node_listxattr(&nfs, a, r, NULL, 0), 0);
	ck_assert_int_eq(node_removexattr(&nfs, a, r, ACL_XATTR_ACCESS), -ENODATA);

	/* removal */
	len = nd_acl(val, sizeof(val), named, 5);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, 0), 0);
	ck_assert_int_eq(node_removexattr(&nfs, a, r, ACL_XATTR_ACCESS), 0);
	ck_assert_int_eq(node_getxattr(&nfs, a, r, ACL_XATTR_ACCESS, out, sizeof(out)), -ENODATA);
	ck_assert_int_eq(node_removexattr(&nfs, a, r, "user.x"), -ENODATA);
	mcg_put(a);
	nd_teardown();
}
END_TEST

/* A default ACL on a directory: kept, listed, and inherited by what mkdir
 * makes below it, in place of the umask. */
START_TEST(test_default_acl_inherited)
{
	/* setfacl -d -m u:1001:rw- on a 0755 directory */
	static const struct acl_entry def[] = { U_OBJ(7), USER(1001, 6), G_OBJ(5), MASK(7), OTHER(5) };
	struct mcg_group *a, *b, *c;
	char val[256], out[256], names[128];
	int len, r_limit = nd_row("memory.limit_in_bytes"), r_force = nd_row("memory.force_empty");
	struct stat st;

	nd_setup(true);
	a = nd_mkdir(nfs.eng->root, "a", 0, 0, 0755, 022);
	len = nd_acl(val, sizeof(val), def, 5);
	ck_assert_int_eq(node_setxattr(&nfs, a, -1, ACL_XATTR_DEFAULT, val, (size_t)len, 0), 0);
	ck_assert_int_eq(node_getxattr(&nfs, a, -1, ACL_XATTR_DEFAULT, out, sizeof(out)), len);
	ck_assert_int_eq(node_listxattr(&nfs, a, -1, names, sizeof(names)), (int)sizeof(ACL_XATTR_DEFAULT));
	ck_assert_str_eq(names, ACL_XATTR_DEFAULT);
	ck_assert_int_eq(node_getattr(&nfs, a, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0755);   /* a default ACL leaves the mode be */

	/* the umask 077 does not apply: the default ACL does */
	b = nd_mkdir(a, "b", 1000, 1000, 0755, 077);
	ck_assert_int_eq(node_getattr(&nfs, b, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0755);
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_int_eq(node_getxattr(&nfs, b, -1, ACL_XATTR_DEFAULT, out, sizeof(out)), len);
	ck_assert_mem_eq(out, val, (size_t)len);         /* handed down as it is */
	ck_assert_int_gt(node_getxattr(&nfs, b, -1, ACL_XATTR_ACCESS, out, sizeof(out)), 0);
	ck_assert_int_eq(node_listxattr(&nfs, b, -1, NULL, 0),
			 (int)(sizeof(ACL_XATTR_ACCESS) + sizeof(ACL_XATTR_DEFAULT)));
	/* the control files get access ACLs capped by what each can do */
	ck_assert_int_gt(node_getxattr(&nfs, b, r_limit, ACL_XATTR_ACCESS, out, sizeof(out)), 0);
	ck_assert_int_eq(node_getattr(&nfs, b, r_limit, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0664);
	ck_assert(node_may_read(&nfs, b, r_limit, 1001, 1001));
	ck_assert(!node_may_read(&nfs, b, r_force, 1001, 1001));   /* write-only file */
	ck_assert(node_may_read(&nfs, a, r_limit, 1001, 1001));   /* a's own: 0644, other r */
	/* and a grandchild inherits again, from b's copy */
	c = nd_mkdir(b, "c", 0, 0, 0700, 022);
	ck_assert_int_eq(node_getxattr(&nfs, c, -1, ACL_XATTR_DEFAULT, out, sizeof(out)), len);
	/* removing the default ACL: the next mkdir has the umask again */
	ck_assert_int_eq(node_removexattr(&nfs, b, -1, ACL_XATTR_DEFAULT), 0);
	mcg_put(c);
	c = nd_mkdir(b, "d", 0, 0, 0777, 027);
	ck_assert_int_eq(node_getattr(&nfs, c, -1, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0750);
	ck_assert_int_eq(node_getxattr(&nfs, c, -1, ACL_XATTR_ACCESS, out, sizeof(out)), -ENODATA);
	ck_assert_int_eq(node_getxattr(&nfs, c, r_limit, ACL_XATTR_ACCESS, out, sizeof(out)), -ENODATA);
	mcg_put(c);
	mcg_put(b);
	mcg_put(a);
	nd_teardown();
}
END_TEST

START_TEST(test_may_read)
{
	static const struct acl_entry acl[] = {
		U_OBJ(0), USER(1001, 4), USER(1002, 0), G_OBJ(4), GROUP(2000, 4), MASK(4), OTHER(0),
	};
	static const struct acl_entry masked[] = {
		U_OBJ(6), USER(1001, 4), G_OBJ(4), MASK(0), OTHER(4),
	};
	struct mcg_group *a;
	int r = nd_row("memory.stat"), len;
	char val[256];

	nd_setup(true);
	a = nd_mkdir(nfs.eng->root, "a", 1000, 100, 0755, 022);
	/* modes: owner, group, other */
	ck_assert_int_eq(node_chmod(&nfs, a, r, 0040), 0);
	ck_assert(!node_may_read(&nfs, a, r, 1000, 100));   /* the owner class wins, even empty */
	ck_assert(node_may_read(&nfs, a, r, 1001, 100));
	ck_assert(!node_may_read(&nfs, a, r, 1001, 101));
	ck_assert(node_may_read(&nfs, a, r, 0, 0));        /* root reads everything */
	ck_assert_int_eq(node_chmod(&nfs, a, r, 0004), 0);
	ck_assert(node_may_read(&nfs, a, r, 1001, 101));
	ck_assert(!node_may_read(&nfs, a, r, 1001, 100));  /* the group class, without r */

	/* an access ACL: named users, then groups, then other */
	len = nd_acl(val, sizeof(val), acl, 7);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, 0), 0);
	ck_assert(!node_may_read(&nfs, a, r, 1000, 100));  /* user:: --- */
	ck_assert(node_may_read(&nfs, a, r, 1001, 555));   /* user:1001:r-- */
	ck_assert(!node_may_read(&nfs, a, r, 1002, 100));  /* user:1002:---, even in the group */
	ck_assert(node_may_read(&nfs, a, r, 1003, 100));   /* group:: r-- */
	ck_assert(node_may_read(&nfs, a, r, 1003, 2000));  /* group:2000:r-- */
	ck_assert(!node_may_read(&nfs, a, r, 1003, 555));  /* other --- */
	ck_assert(node_may_read(&nfs, a, r, 0, 0));

	/* the mask limits named users and groups, not the owner or other */
	len = nd_acl(val, sizeof(val), masked, 5);
	ck_assert_int_eq(node_setxattr(&nfs, a, r, ACL_XATTR_ACCESS, val, (size_t)len, 0), 0);
	ck_assert(node_may_read(&nfs, a, r, 1000, 100));
	ck_assert(!node_may_read(&nfs, a, r, 1001, 555));
	ck_assert(!node_may_read(&nfs, a, r, 1003, 100));
	ck_assert(node_may_read(&nfs, a, r, 1003, 555));
	mcg_put(a);
	nd_teardown();
}
END_TEST

UNIT_SUITE(node)
{
	Suite *s = suite_create("node");
	TCase *tc = tcase_create("nodes");

	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_resolve_references);
	tcase_add_test(tc, test_inode_numbers);
	tcase_add_test(tc, test_inode_extension_hidden);
	tcase_add_test(tc, test_inode_after_rmdir);
	tcase_add_test(tc, test_init_and_getattr);
	tcase_add_test(tc, test_chmod_chown);
	tcase_add_test(tc, test_access_acl_xattrs);
	tcase_add_test(tc, test_default_acl_inherited);
	tcase_add_test(tc, test_may_read);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
