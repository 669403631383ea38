/* test_size.c: the one number and size parser (util/size.h): every
 * suffix, base detection, the 2^64 edges where digits and suffixes wrap,
 * empty input, signs and whitespace; and the workload language's sizes
 * that are built on it. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "source/workload.h"
#include "suites.h"
#include "util/size.h"

#define P64(n) ((unsigned long long)1 << (n))

static const struct {
	const char *in;
	int err;
	unsigned long long bytes;
} size_vectors[] = {
	/* every suffix, both cases */
	{ "1k", 0, P64(10) }, { "1K", 0, P64(10) }, { "1m", 0, P64(20) }, { "1M", 0, P64(20) },
	{ "1g", 0, P64(30) }, { "1G", 0, P64(30) }, { "1t", 0, P64(40) }, { "1T", 0, P64(40) },
	{ "1p", 0, P64(50) }, { "1P", 0, P64(50) }, { "1e", 0, P64(60) }, { "1E", 0, P64(60) },
	{ "3k", 0, 3072 }, { "0k", 0, 0 }, { "4096", 0, 4096 }, { "0", 0, 0 },
	/* base detection on the number before the suffix */
	{ "0x1000", 0, 4096 }, { "0X1000", 0, 4096 }, { "0x10k", 0, 16384 }, { "0xfF", 0, 255 },
	{ "010000", 0, 4096 }, { "010k", 0, 8192 }, { "00", 0, 0 },
	/* "0x" without a hex digit is an octal 0 and then junk */
	{ "0x", -EINVAL, 0 }, { "0xg", -EINVAL, 0 }, { "08", -EINVAL, 0 }, { "09k", -EINVAL, 0 },
	/* in hex, e is a digit and g a suffix */
	{ "0x1e", 0, 30 }, { "0x1E", 0, 30 }, { "0x1g", 0, P64(30) },
	/* no digits read as 0, as the kernel's memparse */
	{ "", 0, 0 }, { "k", 0, 0 }, { "E", 0, 0 },
	/* the 2^64 edge of the digits: the largest value, then a wrap */
	{ "18446744073709551615", 0, ULLONG_MAX }, { "18446744073709551616", 0, 0 },
	{ "18446744073709551617", 0, 1 }, { "0xffffffffffffffff", 0, ULLONG_MAX },
	{ "0x10000000000000000", 0, 0 }, { "0x10000000000000001", 0, 1 },
	{ "01777777777777777777777", 0, ULLONG_MAX }, { "02000000000000000000000", 0, 0 },
	{ "9223372036854775808", 0, P64(63) },
	/* the 2^64 edge of each shift: the last value that fits, then a wrap */
	{ "15E", 0, 15 * P64(60) }, { "16E", 0, 0 }, { "17E", 0, P64(60) },
	{ "16383P", 0, 16383 * P64(50) }, { "16384P", 0, 0 },
	{ "16777215T", 0, 16777215 * P64(40) }, { "16777216T", 0, 0 },
	{ "17179869183G", 0, 17179869183ull * P64(30) }, { "17179869184G", 0, 0 },
	{ "17592186044415M", 0, 17592186044415ull * P64(20) }, { "17592186044416M", 0, 0 },
	{ "18014398509481983k", 0, 18014398509481983ull * P64(10) }, { "18014398509481984k", 0, 0 },
	{ "18446744073709551616k", 0, 0 },
	/* signs, whitespace and anything after the suffix */
	{ "-1", -EINVAL, 0 }, { "-0", -EINVAL, 0 }, { "+5", -EINVAL, 0 }, { "+", -EINVAL, 0 },
	{ "-", -EINVAL, 0 }, { " 1", -EINVAL, 0 }, { "1 ", -EINVAL, 0 }, { "1\n", -EINVAL, 0 },
	{ "4 k", -EINVAL, 0 }, { "1KB", -EINVAL, 0 }, { "1kk", -EINVAL, 0 }, { "1B", -EINVAL, 0 },
	{ "1.0", -EINVAL, 0 }, { "1xx", -EINVAL, 0 }, { "xx", -EINVAL, 0 }, { "1Z", -EINVAL, 0 },
};

START_TEST(test_size_vectors)
{
	const char *in = size_vectors[_i].in;
	unsigned long long v = 12345;
	int err = size_parse(in, strlen(in), &v);

	ck_assert_msg(err == size_vectors[_i].err, "'%s' gave %d", in, err);
	if (err)
		ck_assert_msg(v == 12345, "'%s': *bytes written on error", in);
	else
		ck_assert_msg(v == size_vectors[_i].bytes, "'%s' gave %llu", in, v);
}
END_TEST

/* The length is the input: a NUL or a suffix beyond it is not looked at,
 * a NUL inside it is junk (grammar.c cuts at the first NUL itself). */
START_TEST(test_size_length_bounds)
{
	unsigned long long v = 7;

	ck_assert_int_eq(size_parse("4kjunk", 2, &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(size_parse("4kjunk", 1, &v), 0);
	ck_assert_uint_eq(v, 4);
	ck_assert_int_eq(size_parse("0x10", 2, &v), -EINVAL);   /* "0x": no hex digit within */
	ck_assert_int_eq(size_parse("0x10", 3, &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(size_parse("1\0", 2, &v), -EINVAL);
	ck_assert_int_eq(size_parse("1", 0, &v), 0);
	ck_assert_uint_eq(v, 0);
}
END_TEST

/* size_number: where it stops, the digits it counts and when it wraps. */
START_TEST(test_size_number)
{
	unsigned long long v;
	const char *s, *in;
	bool wrapped;

	in = "18446744073709551615x";
	s = in;
	ck_assert_uint_eq(size_number(&s, in + strlen(in), &v, &wrapped), 20);
	ck_assert(!wrapped);
	ck_assert_uint_eq(v, ULLONG_MAX);
	ck_assert_ptr_eq(s, in + 20);

	in = "18446744073709551616";
	s = in;
	ck_assert_uint_eq(size_number(&s, in + strlen(in), &v, &wrapped), 20);
	ck_assert(wrapped);
	ck_assert_uint_eq(v, 0);

	in = "0x1fz";
	s = in;
	ck_assert_uint_eq(size_number(&s, in + strlen(in), &v, &wrapped), 2);   /* after 0x */
	ck_assert_uint_eq(v, 31);
	ck_assert_ptr_eq(s, in + 4);

	in = "0x";                        /* octal 0, stopped at the x */
	s = in;
	ck_assert_uint_eq(size_number(&s, in + 2, &v, &wrapped), 1);
	ck_assert_uint_eq(v, 0);
	ck_assert_ptr_eq(s, in + 1);

	in = "0778";
	s = in;
	ck_assert_uint_eq(size_number(&s, in + 4, &v, &wrapped), 3);
	ck_assert_uint_eq(v, 63);

	in = "+1";                        /* no sign: nothing read */
	s = in;
	ck_assert_uint_eq(size_number(&s, in + 2, &v, &wrapped), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_ptr_eq(s, in);
	ck_assert(!wrapped);

	in = "123";                       /* end bounds it */
	s = in;
	ck_assert_uint_eq(size_number(&s, in + 2, &v, &wrapped), 2);
	ck_assert_uint_eq(v, 12);
}
END_TEST

/* The workload language reads its sizes with the same parser and the same
 * wrap, and adds its own rules: a leading digit, a long long result. */
START_TEST(test_workload_sizes)
{
	ck_assert_int_eq(wl_size("64M"), 64ll << 20);
	ck_assert_int_eq(wl_size("4k"), 4096);
	ck_assert_int_eq(wl_size("1P"), 1ll << 50);
	ck_assert_int_eq(wl_size("0x10k"), 16384);
	ck_assert_int_eq(wl_size("010"), 8);
	ck_assert_int_eq(wl_size("0"), 0);
	ck_assert_int_eq(wl_size("17E"), 1ll << 60);          /* wraps, as control files do */
	ck_assert_int_eq(wl_size("18446744073709551617"), 1);
	ck_assert_int_eq(wl_size("9223372036854775807"), LLONG_MAX);
	ck_assert_int_eq(wl_size("9223372036854775808"), -1);  /* not a long long */
	ck_assert_int_eq(wl_size("8E"), -1);
	ck_assert_int_eq(wl_size(""), -1);
	ck_assert_int_eq(wl_size("k"), -1);
	ck_assert_int_eq(wl_size("-1"), -1);
	ck_assert_int_eq(wl_size("+1"), -1);
	ck_assert_int_eq(wl_size(" 1"), -1);
	ck_assert_int_eq(wl_size("1KB"), -1);
	ck_assert_int_eq(wl_pages("1"), 1);                    /* rounded up */
	ck_assert_int_eq(wl_pages("4k"), 1);
	ck_assert_int_eq(wl_pages("4097"), 2);
	ck_assert_int_eq(wl_pages("0"), 0);
	ck_assert_int_eq(wl_pages("x"), -1);
	/* near LLONG_MAX the rounding must not overflow */
	ck_assert_int_eq(wl_pages("9223372036854775807"), LLONG_MAX / 4096 + 1);
}
END_TEST

UNIT_SUITE(size)
{
	Suite *s = suite_create("size");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_size_vectors, 0, sizeof(size_vectors) / sizeof(size_vectors[0]));
	tcase_add_test(tc, test_size_length_bounds);
	tcase_add_test(tc, test_size_number);
	tcase_add_test(tc, test_workload_sizes);
	suite_add_tcase(s, tc);
	return s;
}
