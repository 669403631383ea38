/* test_mirror.c: reading /proc/PID/smaps into what the mirror charges:
 * anon, shmem and file mappings keyed by device, inode and offset. */
#include <check.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "source/mirror.h"
#include "suites.h"

static const char smaps_text[] =
	"55d0c0000000-55d0c0002000 r--p 00000000 fe:00 5308512                    /usr/bin/prog\n"
	"Size:                  8 kB\n"
	"Rss:                   8 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Dirty:         0 kB\n"
	"Anonymous:             0 kB\n"
	"VmFlags: rd mr mw me dw sd\n"
	"55d0c0002000-55d0c0012000 rw-p 00002000 fe:00 5308512                    /usr/bin/prog\n"
	"Rss:                  64 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Dirty:        24 kB\n"
	"Anonymous:            16 kB\n"
	"7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n"
	"Rss:               65536 kB\n"
	"Private_Dirty:     65536 kB\n"
	"Anonymous:         65536 kB\n"
	"7f1000000000-7f1000100000 rw-s 00000000 00:01 1029                       /dev/zero (deleted)\n"
	"Rss:                1024 kB\n"
	"Anonymous:             0 kB\n"
	"7f2000000000-7f2000010000 rw-s 00000000 00:1a 77                         /run/x.shm\n"
	"Rss:                  40 kB\n"
	"Anonymous:             0 kB\n"
	"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
	"Rss:                   8 kB\n"
	"Anonymous:             0 kB\n";

struct seen {
	int n;
	struct mirror_vma v[8];
};

static void collect(const struct mirror_vma *v, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->v[s->n++] = *v;
}

static bool tmpfs_1a(unsigned long dev, void *arg)
{
	(void)arg;
	return dev == makedev(0, 0x1a);
}

START_TEST(test_smaps_parse)
{
	struct seen s = { 0 };

	ck_assert_int_eq(mirror_parse_smaps(smaps_text, tmpfs_1a, NULL, collect, &s), 6);
	/* a read-only file mapping: rss, no anon, keyed by dev/ino/offset */
	ck_assert_uint_eq(s.v[0].ino, 5308512);
	ck_assert_uint_eq(s.v[0].dev, makedev(0xfe, 0));
	ck_assert_uint_eq(s.v[0].off, 0);
	ck_assert_int_eq(s.v[0].rss, 2);
	ck_assert(!s.v[0].shmem);
	/* a private writable file mapping: its COW pages are anon */
	ck_assert_uint_eq(s.v[1].off, 2);
	ck_assert_int_eq(s.v[1].rss, 16);
	ck_assert_int_eq(s.v[1].anon, 4);
	ck_assert_int_eq(s.v[1].dirty, 6);
	/* anonymous memory */
	ck_assert_uint_eq(s.v[2].ino, 0);
	ck_assert_int_eq(s.v[2].anon, 16384);
	/* shared anon (/dev/zero on the internal shm mount) and tmpfs */
	ck_assert(s.v[3].shmem);
	ck_assert_int_eq(s.v[3].rss, 256);
	ck_assert(s.v[4].shmem);
	ck_assert_int_eq(s.v[4].rss, 10);
	ck_assert(!s.v[5].shmem);
	ck_assert_uint_eq(s.v[5].ino, 0);
}
END_TEST

START_TEST(test_smaps_empty)
{
	struct seen s = { 0 };

	ck_assert_int_eq(mirror_parse_smaps("", NULL, NULL, collect, &s), 0);
	ck_assert_int_eq(mirror_parse_smaps("garbage\nRss: 4 kB\n", NULL, NULL, collect, &s), 0);
	ck_assert_int_eq(s.n, 0);
}
END_TEST

Suite *mirror_suite(void)
{
	Suite *s = suite_create("mirror");
	TCase *tc = tcase_create("smaps");

	tcase_add_test(tc, test_smaps_parse);
	tcase_add_test(tc, test_smaps_empty);
	suite_add_tcase(s, tc);
	return s;
}
