/* test_acl.c: unit tests for src/fs/acl.c (POSIX ACL xattr values).
 * Pure data tests: no mount, no I/O beyond the test runner itself. */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/acl.h"
#include "suites.h"

#define UNDEF 0xFFFFFFFFu

/* `setfacl -m u:1001:rw- f` on a 0644 file, as read back with
 * `getfattr -e hex -n system.posix_acl_access f`:
 * user::rw- user:1001:rw- group::r-- mask::rw- other::r-- */
static const unsigned char real_access[] = {
	0x02, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x06, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x02, 0x00, 0x06, 0x00, 0xe9, 0x03, 0x00, 0x00,
	0x04, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x10, 0x00, 0x06, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x20, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0xff,
};

/* `setfacl -d -m u:1001:rw- d` on a 0755 directory:
 * user::rwx user:1001:rw- group::r-x mask::rwx other::r-x */
static const unsigned char real_default[] = {
	0x02, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x07, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x02, 0x00, 0x06, 0x00, 0xe9, 0x03, 0x00, 0x00,
	0x04, 0x00, 0x05, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x10, 0x00, 0x07, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x20, 0x00, 0x05, 0x00, 0xff, 0xff, 0xff, 0xff,
};

/* Encode entries by hand (little endian) with a given header version. */
static size_t build(unsigned char *buf, uint32_t version,
		    const struct acl_entry *ents, size_t n)
{
	unsigned char *p = buf;

	p[0] = version & 0xff;
	p[1] = (version >> 8) & 0xff;
	p[2] = (version >> 16) & 0xff;
	p[3] = (version >> 24) & 0xff;
	p += 4;
	for (size_t i = 0; i < n; i++, p += 8) {
		p[0] = ents[i].tag & 0xff;
		p[1] = ents[i].tag >> 8;
		p[2] = ents[i].perm & 0xff;
		p[3] = ents[i].perm >> 8;
		p[4] = ents[i].id & 0xff;
		p[5] = (ents[i].id >> 8) & 0xff;
		p[6] = (ents[i].id >> 16) & 0xff;
		p[7] = (ents[i].id >> 24) & 0xff;
	}
	return 4 + 8 * n;
}

static int parse_entries(const struct acl_entry *ents, size_t n,
			 struct acl *out)
{
	unsigned char buf[4 + 8 * (ACL_MAX_ENTRIES + 2)];
	size_t len = build(buf, 2, ents, n);

	return acl_parse(buf, len, out);
}

static void set_acl(struct acl *a, const struct acl_entry *ents, size_t n)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->e, ents, n * sizeof(*ents));
	a->n = n;
}

static uint16_t perm_of(const struct acl *a, uint16_t tag, uint32_t id)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].tag == tag &&
		    ((tag != ACL_TAG_USER && tag != ACL_TAG_GROUP) ||
		     a->e[i].id == id))
			return a->e[i].perm;
	ck_abort_msg("entry tag 0x%x id %u not found", tag, id);
	return 0xffff;
}

#define EXPECT_EINVAL(...)                                                   \
	do {                                                                 \
		const struct acl_entry ents_[] = { __VA_ARGS__ };            \
		struct acl a_;                                               \
		ck_assert_int_eq(parse_entries(ents_,                        \
					       sizeof(ents_) / sizeof(ents_[0]), \
					       &a_),                         \
				 -EINVAL);                                   \
	} while (0)

/* ---- parse / serialise ------------------------------------------------ */

START_TEST(test_roundtrip_real_value)
{
	struct acl a;
	unsigned char out[sizeof(real_access)];

	ck_assert_int_eq(acl_parse(real_access, sizeof(real_access), &a), 0);
	ck_assert_uint_eq(a.n, 5);
	ck_assert_uint_eq(a.e[0].tag, ACL_TAG_USER_OBJ);
	ck_assert_uint_eq(a.e[0].perm, 6);
	ck_assert_uint_eq(a.e[1].tag, ACL_TAG_USER);
	ck_assert_uint_eq(a.e[1].perm, 6);
	ck_assert_uint_eq(a.e[1].id, 1001);
	ck_assert_uint_eq(a.e[2].tag, ACL_TAG_GROUP_OBJ);
	ck_assert_uint_eq(a.e[2].perm, 4);
	ck_assert_uint_eq(a.e[3].tag, ACL_TAG_MASK);
	ck_assert_uint_eq(a.e[3].perm, 6);
	ck_assert_uint_eq(a.e[4].tag, ACL_TAG_OTHER);
	ck_assert_uint_eq(a.e[4].perm, 4);

	ck_assert_int_eq(acl_serialize(&a, out, sizeof(out)),
			 (int)sizeof(real_access));
	ck_assert_mem_eq(out, real_access, sizeof(real_access));

	ck_assert_int_eq(acl_parse(real_default, sizeof(real_default), &a), 0);
	ck_assert_uint_eq(a.n, 5);
	ck_assert_int_eq(acl_serialize(&a, out, sizeof(out)),
			 (int)sizeof(real_default));
	ck_assert_mem_eq(out, real_default, sizeof(real_default));
}
END_TEST

START_TEST(test_obj_ids_normalised)
{
	/* ids of USER_OBJ/GROUP_OBJ/MASK/OTHER are ignored on input and
	 * written as ACL_UNDEFINED_ID. */
	const struct acl_entry ents[] = {
		{ ACL_TAG_USER_OBJ, 7, 0 },
		{ ACL_TAG_GROUP_OBJ, 5, 12345 },
		{ ACL_TAG_MASK, 5, 0 },
		{ ACL_TAG_OTHER, 1, 42 },
	};
	unsigned char buf[64], expect[64];
	const struct acl_entry norm[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 5, UNDEF },
		{ ACL_TAG_MASK, 5, UNDEF },
		{ ACL_TAG_OTHER, 1, UNDEF },
	};
	size_t elen = build(expect, 2, norm, 4);
	struct acl a;

	ck_assert_int_eq(parse_entries(ents, 4, &a), 0);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_int_eq(acl_serialize(&a, buf, sizeof(buf)), (int)elen);
	ck_assert_mem_eq(buf, expect, elen);
}
END_TEST

START_TEST(test_parse_accepts_valid_shapes)
{
	struct acl a;
	const struct acl_entry minimal[] = {
		{ ACL_TAG_USER_OBJ, 6, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		{ ACL_TAG_OTHER, 4, UNDEF },
	};
	/* A mask without named entries is accepted by the kernel too. */
	const struct acl_entry mask_only[] = {
		{ ACL_TAG_USER_OBJ, 6, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		{ ACL_TAG_MASK, 6, UNDEF },
		{ ACL_TAG_OTHER, 4, UNDEF },
	};
	const struct acl_entry many[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_USER, 6, 0 },
		{ ACL_TAG_USER, 4, 1000 },
		{ ACL_TAG_USER, 2, 1001 },
		{ ACL_TAG_GROUP_OBJ, 5, UNDEF },
		{ ACL_TAG_GROUP, 1, 10 },
		{ ACL_TAG_GROUP, 0, 20 },
		{ ACL_TAG_MASK, 7, UNDEF },
		{ ACL_TAG_OTHER, 0, UNDEF },
	};

	ck_assert_int_eq(parse_entries(minimal, 3, &a), 0);
	ck_assert_uint_eq(a.n, 3);
	ck_assert_int_eq(parse_entries(mask_only, 4, &a), 0);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_int_eq(parse_entries(many, 9, &a), 0);
	ck_assert_uint_eq(a.n, 9);
	ck_assert_uint_eq(a.e[3].id, 1001);
	ck_assert_uint_eq(a.e[6].id, 20);
}
END_TEST

START_TEST(test_reject_bad_header_and_size)
{
	struct acl a;
	unsigned char buf[sizeof(real_access)];

	/* empty, shorter than the header */
	ck_assert_int_eq(acl_parse(real_access, 0, &a), -EINVAL);
	ck_assert_int_eq(acl_parse(real_access, 3, &a), -EINVAL);
	/* header only: no entries at all */
	ck_assert_int_eq(acl_parse(real_access, 4, &a), -EINVAL);
	/* truncated: length not 4 + a multiple of 8 */
	for (size_t cut = 1; cut < 8; cut++)
		ck_assert_int_eq(acl_parse(real_access,
					   sizeof(real_access) - cut, &a),
				 -EINVAL);
	/* bad version: 1, 3 and version 2 in the wrong byte order */
	memcpy(buf, real_access, sizeof(buf));
	buf[0] = 1;
	ck_assert_int_eq(acl_parse(buf, sizeof(buf), &a), -EINVAL);
	buf[0] = 3;
	ck_assert_int_eq(acl_parse(buf, sizeof(buf), &a), -EINVAL);
	buf[0] = 0;
	buf[3] = 2;
	ck_assert_int_eq(acl_parse(buf, sizeof(buf), &a), -EINVAL);
}
END_TEST

START_TEST(test_reject_too_many_entries)
{
	struct acl_entry ents[ACL_MAX_ENTRIES + 1];
	struct acl a;
	size_t n = 0;

	ents[n++] = (struct acl_entry){ ACL_TAG_USER_OBJ, 7, UNDEF };
	while (n < ACL_MAX_ENTRIES - 2) {
		ents[n] = (struct acl_entry){ ACL_TAG_USER, 4, 1000 + (uint32_t)n };
		n++;
	}
	ents[n++] = (struct acl_entry){ ACL_TAG_GROUP_OBJ, 5, UNDEF };
	ents[n++] = (struct acl_entry){ ACL_TAG_MASK, 7, UNDEF };
	ents[n++] = (struct acl_entry){ ACL_TAG_OTHER, 5, UNDEF };
	ck_assert_uint_eq(n, ACL_MAX_ENTRIES + 1);

	ck_assert_int_eq(parse_entries(ents, n, &a), -EINVAL);
	/* drop one named user: exactly ACL_MAX_ENTRIES fits */
	memmove(&ents[1], &ents[2], (n - 2) * sizeof(ents[0]));
	ck_assert_int_eq(parse_entries(ents, n - 1, &a), 0);
	ck_assert_uint_eq(a.n, ACL_MAX_ENTRIES);
}
END_TEST

START_TEST(test_reject_unsorted)
{
	/* GROUP_OBJ before USER_OBJ */
	EXPECT_EINVAL({ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	/* OTHER before MASK */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_USER, 6, 1001 },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF },
		      { ACL_TAG_MASK, 6, UNDEF });
	/* named users out of id order */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_USER, 6, 1002 },
		      { ACL_TAG_USER, 6, 1001 },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_MASK, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	/* named groups out of id order */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_GROUP, 6, 20 },
		      { ACL_TAG_GROUP, 6, 10 },
		      { ACL_TAG_MASK, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
}
END_TEST

START_TEST(test_reject_duplicates)
{
	/* duplicate USER_OBJ */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_USER_OBJ, 4, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	/* duplicate named user */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_USER, 6, 1001 },
		      { ACL_TAG_USER, 4, 1001 },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_MASK, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	/* two masks */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_USER, 6, 1001 },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_MASK, 6, UNDEF },
		      { ACL_TAG_MASK, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	/* duplicate OTHER */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
}
END_TEST

START_TEST(test_reject_missing_required)
{
	/* named entry without a mask */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_USER, 6, 1001 },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_GROUP, 6, 10 },
		      { ACL_TAG_OTHER, 4, UNDEF });
	/* missing USER_OBJ, GROUP_OBJ, OTHER */
	EXPECT_EINVAL({ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF });
}
END_TEST

START_TEST(test_reject_bad_perm_and_tag)
{
	/* perm bits outside rwx */
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 8, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 0x8004, UNDEF });
	/* unknown tags: 0, a combination, one past OTHER, high bits */
	EXPECT_EINVAL({ 0x00, 6, UNDEF },
		      { ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { 0x03, 6, 1 },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_MASK, 6, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF },
		      { 0x40, 4, UNDEF });
	EXPECT_EINVAL({ ACL_TAG_USER_OBJ, 6, UNDEF },
		      { ACL_TAG_GROUP_OBJ, 4, UNDEF },
		      { ACL_TAG_OTHER, 4, UNDEF },
		      { 0x8000, 4, UNDEF });
}
END_TEST

START_TEST(test_parse_failure_leaves_output)
{
	struct acl a, before;
	/* fails only after every entry was read: named user, no mask */
	const struct acl_entry late[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_USER, 7, 5 },
		{ ACL_TAG_GROUP_OBJ, 7, UNDEF },
		{ ACL_TAG_OTHER, 7, UNDEF },
	};

	ck_assert_int_eq(acl_parse(real_access, sizeof(real_access), &a), 0);
	before = a;
	ck_assert_int_eq(parse_entries(late, 4, &a), -EINVAL);
	ck_assert_mem_eq(&a, &before, sizeof(a));
	ck_assert_int_eq(acl_parse(real_access, sizeof(real_access) - 7, &a),
			 -EINVAL);
	ck_assert_mem_eq(&a, &before, sizeof(a));
}
END_TEST

START_TEST(test_serialize_sizes)
{
	struct acl a;
	unsigned char buf[sizeof(real_access) + 16];

	ck_assert_int_eq(acl_parse(real_access, sizeof(real_access), &a), 0);
	/* size 0 is a length query, buf may be NULL */
	ck_assert_int_eq(acl_serialize(&a, NULL, 0), 44);
	ck_assert_int_eq(acl_serialize(&a, buf, 0), 44);
	/* too small: -ERANGE, including one byte short and header-sized */
	ck_assert_int_eq(acl_serialize(&a, buf, 43), -ERANGE);
	ck_assert_int_eq(acl_serialize(&a, buf, 4), -ERANGE);
	ck_assert_int_eq(acl_serialize(&a, buf, 1), -ERANGE);
	/* exact and larger buffers */
	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(acl_serialize(&a, buf, 44), 44);
	ck_assert_mem_eq(buf, real_access, 44);
	ck_assert_uint_eq(buf[44], 0xAA);
	ck_assert_int_eq(acl_serialize(&a, buf, sizeof(buf)), 44);
	ck_assert_mem_eq(buf, real_access, 44);

	a.n = 3;
	ck_assert_int_eq(acl_serialize(&a, NULL, 0), 28);
}
END_TEST

/* ---- mode synchronisation --------------------------------------------- */

START_TEST(test_is_minimal)
{
	struct acl a;
	const struct acl_entry minimal[] = {
		{ ACL_TAG_USER_OBJ, 6, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		{ ACL_TAG_OTHER, 4, UNDEF },
	};
	const struct acl_entry mask_only[] = {
		{ ACL_TAG_USER_OBJ, 6, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		{ ACL_TAG_MASK, 6, UNDEF },
		{ ACL_TAG_OTHER, 4, UNDEF },
	};

	ck_assert_int_eq(parse_entries(minimal, 3, &a), 0);
	ck_assert(acl_is_minimal(&a));
	ck_assert_int_eq(parse_entries(mask_only, 4, &a), 0);
	ck_assert(!acl_is_minimal(&a));
	ck_assert_int_eq(acl_parse(real_access, sizeof(real_access), &a), 0);
	ck_assert(!acl_is_minimal(&a));
}
END_TEST

START_TEST(test_mode_from_acl)
{
	struct acl a;
	const struct acl_entry nomask[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 5, UNDEF },
		{ ACL_TAG_OTHER, 1, UNDEF },
	};
	const struct acl_entry withmask[] = {
		{ ACL_TAG_USER_OBJ, 6, UNDEF },
		{ ACL_TAG_USER, 7, 1001 },
		{ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		{ ACL_TAG_MASK, 2, UNDEF },
		{ ACL_TAG_OTHER, 0, UNDEF },
	};

	set_acl(&a, nomask, 3);
	ck_assert_uint_eq(acl_mode_from_acl(&a, 0), 0751);
	ck_assert_uint_eq(acl_mode_from_acl(&a, S_IFREG | 0000), S_IFREG | 0751);
	/* bits outside 0777 are kept, old permission bits are replaced */
	ck_assert_uint_eq(acl_mode_from_acl(&a, S_IFDIR | S_ISGID | 0777),
			  S_IFDIR | S_ISGID | 0751);

	/* with a mask, the group bits come from the mask, not GROUP_OBJ */
	set_acl(&a, withmask, 5);
	ck_assert_uint_eq(acl_mode_from_acl(&a, S_IFREG | 0777),
			  S_IFREG | 0620);
}
END_TEST

START_TEST(test_chmod_rewrites_mask)
{
	struct acl a;

	ck_assert_int_eq(acl_parse(real_access, sizeof(real_access), &a), 0);
	acl_apply_chmod(&a, S_IFREG | 0750);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_USER_OBJ, 0), 7);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_MASK, 0), 5);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_OTHER, 0), 0);
	/* GROUP_OBJ and the named entry are untouched */
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_GROUP_OBJ, 0), 4);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_USER, 1001), 6);
	ck_assert_uint_eq(acl_mode_from_acl(&a, S_IFREG), S_IFREG | 0750);
}
END_TEST

START_TEST(test_chmod_rewrites_group_obj_without_mask)
{
	struct acl a;
	const struct acl_entry nomask[] = {
		{ ACL_TAG_USER_OBJ, 6, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 4, UNDEF },
		{ ACL_TAG_OTHER, 4, UNDEF },
	};

	set_acl(&a, nomask, 3);
	acl_apply_chmod(&a, 04713);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_USER_OBJ, 0), 7);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_GROUP_OBJ, 0), 1);
	ck_assert_uint_eq(perm_of(&a, ACL_TAG_OTHER, 0), 3);
	ck_assert_uint_eq(a.n, 3);
}
END_TEST

/* ---- inheritance ------------------------------------------------------- */

START_TEST(test_inherit_dir)
{
	struct acl def, acc;
	mode_t mode = 0;

	ck_assert_int_eq(acl_parse(real_default, sizeof(real_default), &def), 0);
	ck_assert(acl_inherit(&def, S_IFDIR | 0755, true, &acc, &mode));
	ck_assert_uint_eq(mode, S_IFDIR | 0755);
	ck_assert_uint_eq(acc.n, 5);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER_OBJ, 0), 7);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER, 1001), 6);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP_OBJ, 0), 5);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_MASK, 0), 5);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_OTHER, 0), 5);

	/* mkdir 0700: mask and other are cleared, named entries kept */
	ck_assert(acl_inherit(&def, 0700, true, &acc, &mode));
	ck_assert_uint_eq(mode, 0700);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_MASK, 0), 0);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_OTHER, 0), 0);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER, 1001), 6);

	/* mkdir 0777: the ACL restricts the mode */
	ck_assert(acl_inherit(&def, 0777, true, &acc, &mode));
	ck_assert_uint_eq(mode, 0775);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_MASK, 0), 7);
}
END_TEST

START_TEST(test_inherit_dir_without_mask)
{
	struct acl def, acc;
	mode_t mode = 0;
	const struct acl_entry ents[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 7, UNDEF },
		{ ACL_TAG_OTHER, 5, UNDEF },
	};

	set_acl(&def, ents, 3);
	/* GROUP_OBJ is masked with the group bits when there is no mask */
	ck_assert(!acl_inherit(&def, S_IFDIR | 0751, true, &acc, &mode));
	ck_assert_uint_eq(mode, S_IFDIR | 0751);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP_OBJ, 0), 5);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_OTHER, 0), 1);
}
END_TEST

START_TEST(test_inherit_control_0644)
{
	struct acl def, acc;
	mode_t mode = 0;

	ck_assert_int_eq(acl_parse(real_default, sizeof(real_default), &def), 0);
	ck_assert(acl_inherit(&def, S_IFREG | 0644, false, &acc, &mode));
	/* the delegated rw- stays effective: mask rw-, group bits rw- */
	ck_assert_uint_eq(mode, S_IFREG | 0664);
	ck_assert_uint_eq(acc.n, 5);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER_OBJ, 0), 6);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER, 1001), 6);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP_OBJ, 0), 4);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_MASK, 0), 6);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_OTHER, 0), 4);

	/* and it survives a serialise/parse round trip */
	{
		unsigned char buf[64];
		struct acl back;
		int len = acl_serialize(&acc, buf, sizeof(buf));

		ck_assert_int_eq(len, 44);
		ck_assert_int_eq(acl_parse(buf, (size_t)len, &back), 0);
		ck_assert_mem_eq(back.e, acc.e, 5 * sizeof(acc.e[0]));
	}
}
END_TEST

START_TEST(test_inherit_control_0444)
{
	struct acl def, acc;
	mode_t mode = 0;

	ck_assert_int_eq(acl_parse(real_default, sizeof(real_default), &def), 0);
	ck_assert(acl_inherit(&def, 0444, false, &acc, &mode));
	/* a read-only file grants no write, whatever the default says */
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER_OBJ, 0), 4);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER, 1001), 4);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP_OBJ, 0), 4);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_MASK, 0), 4);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_OTHER, 0), 4);
	ck_assert_uint_eq(mode, 0444);
}
END_TEST

START_TEST(test_inherit_control_0200)
{
	struct acl def, acc;
	mode_t mode = 0;

	ck_assert_int_eq(acl_parse(real_default, sizeof(real_default), &def), 0);
	ck_assert(acl_inherit(&def, S_IFREG | 0200, false, &acc, &mode));
	/* a write-only file grants no read */
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER_OBJ, 0), 2);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_USER, 1001), 2);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP_OBJ, 0), 0);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_MASK, 0), 2);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_OTHER, 0), 0);
	ck_assert_uint_eq(mode, S_IFREG | 0220);
}
END_TEST

START_TEST(test_inherit_control_strips_exec)
{
	struct acl def, acc;
	mode_t mode = 0;
	const struct acl_entry ents[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_USER, 7, 1001 },
		{ ACL_TAG_GROUP_OBJ, 7, UNDEF },
		{ ACL_TAG_GROUP, 1, 50 },
		{ ACL_TAG_MASK, 7, UNDEF },
		{ ACL_TAG_OTHER, 7, UNDEF },
	};

	set_acl(&def, ents, 6);
	ck_assert(acl_inherit(&def, 0644, false, &acc, &mode));
	for (size_t i = 0; i < acc.n; i++)
		ck_assert_uint_eq(acc.e[i].perm & 1, 0);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP, 50), 0);
	ck_assert_uint_eq(perm_of(&acc, ACL_TAG_GROUP_OBJ, 0), 6);
	ck_assert_uint_eq(mode, 0664);
}
END_TEST

START_TEST(test_inherit_minimal_default)
{
	struct acl def, acc;
	mode_t mode = 0;
	const struct acl_entry ents[] = {
		{ ACL_TAG_USER_OBJ, 7, UNDEF },
		{ ACL_TAG_GROUP_OBJ, 5, UNDEF },
		{ ACL_TAG_OTHER, 5, UNDEF },
	};
	unsigned char buf[64];
	size_t len = build(buf, 2, ents, 3);

	ck_assert_int_eq(acl_parse(buf, len, &def), 0);
	ck_assert(!acl_inherit(&def, S_IFDIR | 0755, true, &acc, &mode));
	ck_assert_uint_eq(mode, S_IFDIR | 0755);
	ck_assert(acl_is_minimal(&acc));
	ck_assert(!acl_inherit(&def, S_IFREG | 0644, false, &acc, &mode));
	ck_assert_uint_eq(mode, S_IFREG | 0644);
	ck_assert(acl_is_minimal(&acc));
}
END_TEST

UNIT_SUITE(acl)
{
	Suite *s = suite_create("acl");
	TCase *tc;

	tc = tcase_create("xattr");
	tcase_add_test(tc, test_roundtrip_real_value);
	tcase_add_test(tc, test_obj_ids_normalised);
	tcase_add_test(tc, test_parse_accepts_valid_shapes);
	tcase_add_test(tc, test_reject_bad_header_and_size);
	tcase_add_test(tc, test_reject_too_many_entries);
	tcase_add_test(tc, test_reject_unsorted);
	tcase_add_test(tc, test_reject_duplicates);
	tcase_add_test(tc, test_reject_missing_required);
	tcase_add_test(tc, test_reject_bad_perm_and_tag);
	tcase_add_test(tc, test_parse_failure_leaves_output);
	tcase_add_test(tc, test_serialize_sizes);
	suite_add_tcase(s, tc);

	tc = tcase_create("mode");
	tcase_add_test(tc, test_is_minimal);
	tcase_add_test(tc, test_mode_from_acl);
	tcase_add_test(tc, test_chmod_rewrites_mask);
	tcase_add_test(tc, test_chmod_rewrites_group_obj_without_mask);
	suite_add_tcase(s, tc);

	tc = tcase_create("inherit");
	tcase_add_test(tc, test_inherit_dir);
	tcase_add_test(tc, test_inherit_dir_without_mask);
	tcase_add_test(tc, test_inherit_control_0644);
	tcase_add_test(tc, test_inherit_control_0444);
	tcase_add_test(tc, test_inherit_control_0200);
	tcase_add_test(tc, test_inherit_control_strips_exec);
	tcase_add_test(tc, test_inherit_minimal_default);
	suite_add_tcase(s, tc);

	return s;
}
