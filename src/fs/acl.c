/* acl.c: POSIX ACL xattr values (system.posix_acl_*) for memcgfs.
 * Owns parsing, validation, serialisation, mode<->ACL synchronisation and
 * default-ACL inheritance. Pure data: never does I/O, never takes a lock,
 * never allocates, never touches FUSE or the engine. */
#include "fs/acl.h"

#include <errno.h>
#include <string.h>

#define ACL_XATTR_VERSION 2u
#define ACL_UNDEFINED_ID  0xFFFFFFFFu
#define ACL_HEADER_SIZE   4u
#define ACL_ENTRY_SIZE    8u
#define ACL_PERM_MASK     7u
#define ACL_PERM_EXEC     1u

static uint16_t acl_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t acl_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void acl_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v & 0xFF);
	p[1] = (unsigned char)(v >> 8);
}

static void acl_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xFF);
	p[1] = (unsigned char)((v >> 8) & 0xFF);
	p[2] = (unsigned char)((v >> 16) & 0xFF);
	p[3] = (unsigned char)(v >> 24);
}

static bool acl_tag_is_named(uint16_t tag)
{
	return tag == ACL_TAG_USER || tag == ACL_TAG_GROUP;
}

static bool acl_tag_is_known(uint16_t tag)
{
	switch (tag) {
	case ACL_TAG_USER_OBJ:
	case ACL_TAG_USER:
	case ACL_TAG_GROUP_OBJ:
	case ACL_TAG_GROUP:
	case ACL_TAG_MASK:
	case ACL_TAG_OTHER:
		return true;
	default:
		return false;
	}
}

/* Index of the (single) entry with a non-named tag, or -1. */
static int acl_find(const struct acl *a, uint16_t tag)
{
	for (size_t i = 0; i < a->n && i < ACL_MAX_ENTRIES; i++)
		if (a->e[i].tag == tag)
			return (int)i;
	return -1;
}

/* The entry that carries the group class: MASK if present, else GROUP_OBJ. */
static int acl_find_group_class(const struct acl *a)
{
	int i = acl_find(a, ACL_TAG_MASK);

	return i >= 0 ? i : acl_find(a, ACL_TAG_GROUP_OBJ);
}

static void acl_and_perm(struct acl *a, int idx, unsigned int bits)
{
	if (idx >= 0)
		a->e[idx].perm &= (uint16_t)(bits & ACL_PERM_MASK);
}

static void acl_set_perm(struct acl *a, int idx, unsigned int bits)
{
	if (idx >= 0)
		a->e[idx].perm = (uint16_t)(bits & ACL_PERM_MASK);
}

static unsigned int acl_perm_of(const struct acl *a, int idx)
{
	return idx >= 0 ? (a->e[idx].perm & ACL_PERM_MASK) : 0;
}

int acl_parse(const void *buf, size_t len, struct acl *out)
{
	const unsigned char *p = buf;
	size_t count, named = 0, masks = 0;
	size_t user_obj = 0, group_obj = 0, other = 0;
	struct acl tmp;

	if (!p || !out || len < ACL_HEADER_SIZE)
		return -EINVAL;
	if ((len - ACL_HEADER_SIZE) % ACL_ENTRY_SIZE != 0)
		return -EINVAL;
	if (acl_get32(p) != ACL_XATTR_VERSION)
		return -EINVAL;
	count = (len - ACL_HEADER_SIZE) / ACL_ENTRY_SIZE;
	if (count > ACL_MAX_ENTRIES)
		return -EINVAL;

	memset(&tmp, 0, sizeof(tmp));
	p += ACL_HEADER_SIZE;
	for (size_t i = 0; i < count; i++, p += ACL_ENTRY_SIZE) {
		struct acl_entry e = {
			.tag = acl_get16(p),
			.perm = acl_get16(p + 2),
			.id = acl_get32(p + 4),
		};

		if (!acl_tag_is_known(e.tag))
			return -EINVAL;
		if (e.perm & ~ACL_PERM_MASK)
			return -EINVAL;
		if (!acl_tag_is_named(e.tag))
			e.id = ACL_UNDEFINED_ID;

		/* Canonical order: tags ascending; within USER/GROUP, ids
		 * strictly ascending; any other repeated tag is a duplicate. */
		if (i > 0) {
			const struct acl_entry *prev = &tmp.e[i - 1];

			if (e.tag < prev->tag)
				return -EINVAL;
			if (e.tag == prev->tag &&
			    (!acl_tag_is_named(e.tag) || e.id <= prev->id))
				return -EINVAL;
		}

		switch (e.tag) {
		case ACL_TAG_USER_OBJ:
			user_obj++;
			break;
		case ACL_TAG_GROUP_OBJ:
			group_obj++;
			break;
		case ACL_TAG_OTHER:
			other++;
			break;
		case ACL_TAG_MASK:
			masks++;
			break;
		default:
			named++;
			break;
		}
		tmp.e[i] = e;
	}
	tmp.n = count;

	if (user_obj != 1 || group_obj != 1 || other != 1 || masks > 1)
		return -EINVAL;
	if (named > 0 && masks == 0)
		return -EINVAL;

	*out = tmp;
	return 0;
}

int acl_serialize(const struct acl *a, void *buf, size_t size)
{
	unsigned char *p = buf;
	size_t need;

	if (!a || a->n > ACL_MAX_ENTRIES)
		return -EINVAL;
	need = ACL_HEADER_SIZE + a->n * ACL_ENTRY_SIZE;
	if (size == 0)
		return (int)need;
	if (size < need || !p)
		return -ERANGE;

	acl_put32(p, ACL_XATTR_VERSION);
	p += ACL_HEADER_SIZE;
	for (size_t i = 0; i < a->n; i++, p += ACL_ENTRY_SIZE) {
		const struct acl_entry *e = &a->e[i];

		acl_put16(p, e->tag);
		acl_put16(p + 2, e->perm);
		acl_put32(p + 4, acl_tag_is_named(e->tag) ? e->id
							  : ACL_UNDEFINED_ID);
	}
	return (int)need;
}

bool acl_is_minimal(const struct acl *a)
{
	return a->n == 3;
}

mode_t acl_mode_from_acl(const struct acl *a, mode_t mode)
{
	unsigned int u = acl_perm_of(a, acl_find(a, ACL_TAG_USER_OBJ));
	unsigned int g = acl_perm_of(a, acl_find_group_class(a));
	unsigned int o = acl_perm_of(a, acl_find(a, ACL_TAG_OTHER));

	return (mode & ~(mode_t)0777) | (mode_t)((u << 6) | (g << 3) | o);
}

void acl_apply_chmod(struct acl *a, mode_t mode)
{
	acl_set_perm(a, acl_find(a, ACL_TAG_USER_OBJ), (mode >> 6) & 7);
	acl_set_perm(a, acl_find_group_class(a), (mode >> 3) & 7);
	acl_set_perm(a, acl_find(a, ACL_TAG_OTHER), mode & 7);
}

bool acl_inherit(const struct acl *def, mode_t natural, bool is_dir,
		 struct acl *access, mode_t *mode)
{
	*access = *def;
	if (access->n > ACL_MAX_ENTRIES)
		access->n = ACL_MAX_ENTRIES;

	if (is_dir) {
		acl_and_perm(access, acl_find(access, ACL_TAG_USER_OBJ),
			     (natural >> 6) & 7);
		acl_and_perm(access, acl_find_group_class(access),
			     (natural >> 3) & 7);
		acl_and_perm(access, acl_find(access, ACL_TAG_OTHER),
			     natural & 7);
	} else {
		/* Nothing beyond what the file supports at all: no x ever, no
		 * w on a read-only file, no r on a write-only one. */
		unsigned cap = (((natural >> 6) | (natural >> 3) | natural) & 7) & ~ACL_PERM_EXEC;

		for (size_t i = 0; i < access->n; i++)
			access->e[i].perm &= (uint16_t)cap;
		acl_and_perm(access, acl_find(access, ACL_TAG_USER_OBJ),
			     (natural >> 6) & 7);
		acl_and_perm(access, acl_find(access, ACL_TAG_OTHER),
			     natural & 7);
		/* Without a mask nothing was delegated: the group class is
		 * masked as POSIX creation would, so a write-only control file
		 * never becomes group-readable. */
		if (acl_find(access, ACL_TAG_MASK) < 0)
			acl_and_perm(access, acl_find(access, ACL_TAG_GROUP_OBJ),
				     (natural >> 3) & 7);
	}

	*mode = acl_mode_from_acl(access, natural);
	return !acl_is_minimal(access);
}
