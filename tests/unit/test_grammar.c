/* test_grammar.c: the §2.4 vector tables for G-BYTES, G-U64 and G-PID. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "engine/page_counter.h"
#include "fs/grammar.h"
#include "suites.h"

#define UNLIMITED 9223372036854771712L

static const struct {
	const char *in;
	long bytes;        /* read back; -1 for EINVAL */
} bytes_vectors[] = {
	{ "4096", 4096 }, { "4097", 4096 }, { "4095", 0 }, { "1", 0 }, { "1k", 0 },
	{ "4k", 4096 }, { "4K", 4096 }, { "0x1000", 4096 }, { "010000", 4096 },
	{ "1m", 1048576 }, { "1G", 1073741824 }, { "1e", 1152921504606846976L },
	{ "8E", UNLIMITED }, { "9223372036854775807", UNLIMITED },
	{ "18446744073709551615", UNLIMITED }, { "16E", 0 },
	{ "-1", UNLIMITED }, { "  -1  ", UNLIMITED }, { "-1\n", UNLIMITED },
	{ "", 0 }, { "\n", 0 }, { "100M\n", 104857600 }, { " 4k\t", 4096 },
	{ "1.0", -1 }, { "1xx", -1 }, { "xx", -1 }, { "1KB", -1 }, { "4 k", -1 },
	{ "-2", -1 }, { "+5", -1 }, { "0x", -1 }, { "08", -1 }, { "-1 1", -1 },
};

START_TEST(test_bytes_vectors)
{
	const char *in = bytes_vectors[_i].in;
	long pages = -7;
	int err = gram_bytes(in, strlen(in), &pages, NULL);

	if (bytes_vectors[_i].bytes < 0) {
		ck_assert_msg(err == -EINVAL, "'%s' gave %d", in, err);
	} else {
		ck_assert_msg(err == 0, "'%s' gave %d", in, err);
		ck_assert_int_eq(pages * PC_PAGE_SIZE, bytes_vectors[_i].bytes);
	}
}
END_TEST

static const struct {
	const char *in;
	int err;
	unsigned long long v;
} u64_vectors[] = {
	{ "1", 0, 1 }, { "1\n", 0, 1 }, { "+1", 0, 1 }, { "010", 0, 8 }, { "0x10", 0, 16 },
	{ "0", 0, 0 }, { "18446744073709551615", 0, 18446744073709551615ull },
	{ "18446744073709551616", -ERANGE, 0 }, { " 1", -EINVAL, 0 }, { "1 ", -EINVAL, 0 },
	{ "1\n\n", -EINVAL, 0 }, { "\n", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "-1", -EINVAL, 0 },
	{ "1x", -EINVAL, 0 }, { "0x", -EINVAL, 0 }, { "09", -EINVAL, 0 }, { "++1", -EINVAL, 0 },
};

START_TEST(test_u64_vectors)
{
	unsigned long long v = 12345;
	const char *in = u64_vectors[_i].in;
	int err = gram_u64(in, strlen(in), &v);

	ck_assert_msg(err == u64_vectors[_i].err, "'%s' gave %d", in, err);
	if (!err)
		ck_assert_uint_eq(v, u64_vectors[_i].v);
}
END_TEST

static const struct {
	const char *in;
	int err;
	int pid;
} pid_vectors[] = {
	{ "1", 0, 1 }, { " 42\n", 0, 42 }, { "0", 0, 0 }, { "0x10", 0, 16 }, { "010", 0, 8 },
	{ "+7", 0, 7 }, { "2147483647", 0, 2147483647 }, { "2147483648", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 }, { "abc", -EINVAL, 0 }, { "1 2", -EINVAL, 0 },
	{ "1\n2\n", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "99999999999999999999", -EINVAL, 0 },
};

START_TEST(test_pid_vectors)
{
	pid_t p = -5;
	const char *in = pid_vectors[_i].in;
	int err = gram_pid(in, strlen(in), &p);

	ck_assert_msg(err == pid_vectors[_i].err, "'%s' gave %d", in, err);
	if (!err)
		ck_assert_int_eq(p, pid_vectors[_i].pid);
}
END_TEST

START_TEST(test_strip_and_dispatch)
{
	struct gram_value v;
	char big[5000];

	ck_assert_int_eq(gram_parse(G_STRING, "  /sbin/agent \n", 15, &v), 0);
	ck_assert_str_eq(v.str, "/sbin/agent");
	ck_assert_int_eq(gram_parse(G_IGNORED, "xyz", 3, &v), 0);
	ck_assert_int_eq(gram_parse(G_NONE, "1", 1, &v), -EINVAL);
	memset(big, 'a', sizeof(big));
	ck_assert_int_eq(gram_parse(G_STRING, big, sizeof(big), &v), -E2BIG);
	ck_assert_str_eq(gram_name(G_BYTES), "G-BYTES");
}
END_TEST

/* §11.1-§11.3, measured on the live kernel: the buffer ends at its first
 * NUL, 0xA0 is whitespace where whitespace is stripped, and G-U64 reports
 * overflow before trailing junk (found by tests/fuzz/fuzz_grammar). */
START_TEST(test_spec_corrections)
{
	struct gram_value v;
	unsigned long long u = 7;
	long pages = -7;
	bool m1 = true;
	pid_t p = -5;

	ck_assert_int_eq(gram_bytes("4096\0junk", 9, &pages, &m1), 0);
	ck_assert_int_eq(pages, 1);
	ck_assert(!m1);
	ck_assert_int_eq(gram_bytes("-1\0x", 4, &pages, &m1), 0);
	ck_assert(m1);
	ck_assert_int_eq(gram_bytes("\0abc", 4, &pages, NULL), 0);        /* empty: 0 */
	ck_assert_int_eq(pages, 0);
	ck_assert_int_eq(gram_u64("1\0x", 3, &u), 0);
	ck_assert_uint_eq(u, 1);
	ck_assert_int_eq(gram_u64("\0", 1, &u), -EINVAL);
	ck_assert_int_eq(gram_pid("42\0junk", 7, &p), 0);
	ck_assert_int_eq(p, 42);
	ck_assert_int_eq(gram_parse(G_STRING, " /a \0 b", 7, &v), 0);
	ck_assert_str_eq(v.str, "/a");
	ck_assert_int_eq(gram_bytes("\xa0" "4096", 5, &pages, NULL), 0);
	ck_assert_int_eq(pages, 1);
	ck_assert_int_eq(gram_pid("4194400\xa0", 8, &p), 0);
	ck_assert_int_eq(p, 4194400);
	ck_assert_int_eq(gram_parse(G_STRING, "\xa0/bin/x\xa0\n", 9, &v), 0);
	ck_assert_str_eq(v.str, "/bin/x");
	ck_assert_int_eq(gram_u64("\xa0" "1", 2, &u), -EINVAL);           /* G-U64 strips nothing */
	ck_assert_int_eq(gram_u64("18446744073709551616x", 21, &u), -ERANGE);
	ck_assert_int_eq(gram_u64("18446744073709551616\n", 21, &u), -ERANGE);
	ck_assert_int_eq(gram_u64("1x", 2, &u), -EINVAL);
}
END_TEST

UNIT_SUITE(grammar)
{
	Suite *s = suite_create("grammar");
	TCase *tc = tcase_create("vectors");

	tcase_add_loop_test(tc, test_bytes_vectors, 0, sizeof(bytes_vectors) / sizeof(bytes_vectors[0]));
	tcase_add_loop_test(tc, test_u64_vectors, 0, sizeof(u64_vectors) / sizeof(u64_vectors[0]));
	tcase_add_loop_test(tc, test_pid_vectors, 0, sizeof(pid_vectors) / sizeof(pid_vectors[0]));
	tcase_add_test(tc, test_strip_and_dispatch);
	tcase_add_test(tc, test_spec_corrections);
	suite_add_tcase(s, tc);
	return s;
}
