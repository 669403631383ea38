/* size.c: the one parser of numbers and byte sizes (size.h), shared by the
 * control-file grammars (fs/grammar.c) and the workload language
 * (source/workload.c). Keeps the kernel's quirks: octal on a leading 0,
 * silent wrap, no digits meaning 0. Never strips, never rounds to pages,
 * never reads the locale (the kernel's ctype is fixed). */
#include <errno.h>
#include <limits.h>

#include "util/size.h"

/* The value of digit c in base, or -1. */
static int size_digit(char c, unsigned base)
{
	int d;

	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return d < (int)base ? d : -1;
}

/* Base detection: 0x/0X followed by a hex digit means 16 (prefix skipped),
 * a leading 0 means 8, else 10. */
static unsigned size_base(const char **s, const char *end)
{
	const char *p = *s;

	if (p < end && p[0] == '0') {
		if (end - p >= 3 && (p[1] == 'x' || p[1] == 'X') && size_digit(p[2], 16) >= 0) {
			*s = p + 2;
			return 16;
		}
		return 8;
	}
	return 10;
}

size_t size_number(const char **s, const char *end, unsigned long long *val, bool *wrapped)
{
	unsigned base = size_base(s, end);
	unsigned long long v = 0;
	size_t n = 0;
	int d;

	*wrapped = false;
	while (*s < end && (d = size_digit(**s, base)) >= 0) {
		if (v > (ULLONG_MAX - (unsigned)d) / base)
			*wrapped = true;
		v = v * base + (unsigned)d;
		(*s)++;
		n++;
	}
	*val = v;
	return n;
}

int size_parse(const char *s, size_t len, unsigned long long *bytes)
{
	const char *end = s + len;
	unsigned long long v;
	unsigned shift = 0;
	bool wrapped;

	size_number(&s, end, &v, &wrapped);   /* wrapping is silent, as memparse */
	if (s < end) {
		switch (*s) {
		case 'e': case 'E': shift += 10; /* fall through */
		case 'p': case 'P': shift += 10; /* fall through */
		case 't': case 'T': shift += 10; /* fall through */
		case 'g': case 'G': shift += 10; /* fall through */
		case 'm': case 'M': shift += 10; /* fall through */
		case 'k': case 'K': shift += 10;
			s++;
			break;
		default:
			return -EINVAL;
		}
	}
	if (s != end)
		return -EINVAL;
	*bytes = v << shift;
	return 0;
}
