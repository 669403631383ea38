/* acl.h: POSIX ACLs as FUSE sees them (the system.posix_acl_* xattr values).
 * Owns parsing, validation, serialisation, mode<->ACL synchronisation and
 * default-ACL inheritance. Pure data: never does I/O, never takes a lock. */
#ifndef MEMCGFS_ACL_H
#define MEMCGFS_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ACL_XATTR_ACCESS  "system.posix_acl_access"
#define ACL_XATTR_DEFAULT "system.posix_acl_default"
#define ACL_MAX_ENTRIES   64

/* Tags and permission bits of the on-the-wire (xattr version 2) format. */
enum acl_tag {
	ACL_TAG_USER_OBJ  = 0x01,
	ACL_TAG_USER      = 0x02,
	ACL_TAG_GROUP_OBJ = 0x04,
	ACL_TAG_GROUP     = 0x08,
	ACL_TAG_MASK      = 0x10,
	ACL_TAG_OTHER     = 0x20,
};

struct acl_entry {
	uint16_t tag;
	uint16_t perm;   /* rwx in bits 2..0 */
	uint32_t id;     /* uid or gid for ACL_TAG_USER / ACL_TAG_GROUP */
};

/* Kept sorted in the canonical order (tag, then id), as the kernel does. */
struct acl {
	size_t n;
	struct acl_entry e[ACL_MAX_ENTRIES];
};

/* Parse and validate an xattr value. 0 or -EINVAL (bad header/version,
 * bad size, unknown tag, bad perm bits, duplicates, a missing USER_OBJ,
 * GROUP_OBJ or OTHER, named entries without a MASK). An empty value
 * (len 0) is -EINVAL for acl_parse; callers treat removal separately. */
int acl_parse(const void *buf, size_t len, struct acl *out);

/* Serialise. Returns the byte length; with size 0 only computes it;
 * -ERANGE when size is non-zero and too small. */
int acl_serialize(const struct acl *a, void *buf, size_t size);

/* True for a 3-entry ACL (USER_OBJ, GROUP_OBJ, OTHER): it says no more than
 * the mode bits, so storing it is the same as removing the ACL. */
bool acl_is_minimal(const struct acl *a);

/* The permission bits (0777 part) that an access ACL implies: user from
 * USER_OBJ, group from MASK (or GROUP_OBJ without a mask), other from OTHER.
 * Bits of mode outside 0777 are kept. */
mode_t acl_mode_from_acl(const struct acl *a, mode_t mode);

/* chmod on a node with an access ACL: rewrite USER_OBJ, MASK (or GROUP_OBJ
 * without a mask) and OTHER from the new mode. */
void acl_apply_chmod(struct acl *a, mode_t mode);

/* Build the access ACL of a new node from its parent's default ACL.
 * natural: the mode the node would get without ACLs (0644, 0444, 0200 for
 * control files; the requested mkdir mode for directories, umask NOT
 * applied).
 * - directories (is_dir): POSIX create semantics: USER_OBJ &= user bits,
 *   MASK (or GROUP_OBJ) &= group bits, OTHER &= other bits of natural.
 * - control files (!is_dir): named entries, GROUP_OBJ and MASK apply as
 *   written, capped by what the file supports at all (the union of the
 *   natural user, group and other bits, never x: rw- for 0644, r-- for
 *   0444, -w- for 0200); USER_OBJ &= natural user bits and OTHER &=
 *   natural other bits; without a MASK, GROUP_OBJ &= natural group bits.
 *   The group mode bits then follow the mask, so a delegated "rw" stays
 *   effective on a 0644 file.
 * *mode receives the resulting 0777 bits (plus the non-permission bits of
 * natural). Returns true when the result needs a stored access ACL, false
 * when it is minimal (then only *mode matters). */
bool acl_inherit(const struct acl *def, mode_t natural, bool is_dir,
		 struct acl *access, mode_t *mode);

#endif
