/* grammar.c: parsers for the write grammars of §2.4, with the kernel's
 * quirks kept (octal on a leading 0, silent wrap in byte values, empty byte
 * writes meaning 0). Never decides whether a value is acceptable for a
 * particular file; that is the file handler's job. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "engine/page_counter.h"
#include "fs/grammar.h"

/* The kernel hands the handlers a C string: a write ends at its first NUL
 * (§11.1), whatever length write(2) gave. */
static const char *gram_end(const char *buf, size_t len)
{
	const char *nul = memchr(buf, '\0', len);

	return nul ? nul : buf + len;
}

/* The kernel's isspace(): the C locale's six and 0xA0 (§11.2). */
static bool gram_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xA0;
}

/* Base detection shared by every numeric grammar: 0x/0X followed by a hex
 * digit means 16 (prefix skipped), a leading 0 means 8, else 10. */
static unsigned gram_base(const char **s, const char *end)
{
	const char *p = *s;

	if (p < end && p[0] == '0') {
		if (end - p >= 3 && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
			*s = p + 2;
			return 16;
		}
		return 8;
	}
	return 10;
}

static int gram_digit(char c, unsigned base)
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

/* Accumulate digits from *s. Returns the number of digits consumed; sets
 * *overflow when the value did not fit (the result then wraps mod 2^64). */
static size_t gram_digits(const char **s, const char *end, unsigned base,
			  unsigned long long *val, bool *overflow)
{
	unsigned long long v = 0;
	size_t n = 0;
	int d;

	*overflow = false;
	while (*s < end && (d = gram_digit(**s, base)) >= 0) {
		if (v > (ULLONG_MAX - (unsigned)d) / base)
			*overflow = true;
		v = v * base + (unsigned)d;
		(*s)++;
		n++;
	}
	*val = v;
	return n;
}

int gram_u64(const char *buf, size_t len, unsigned long long *out)
{
	const char *s = buf, *end = gram_end(buf, len);
	unsigned long long v;
	bool overflow;
	unsigned base;

	if (s < end && *s == '+')
		s++;
	base = gram_base(&s, end);
	if (gram_digits(&s, end, base, &v, &overflow) == 0)
		return -EINVAL;
	if (overflow)
		return -ERANGE;           /* before any trailing junk (§11.3) */
	if (s < end && *s == '\n')
		s++;
	if (s != end)
		return -EINVAL;
	*out = v;
	return 0;
}

static void gram_trim(const char **s, const char **end)
{
	while (*s < *end && gram_space((unsigned char)**s))
		(*s)++;
	while (*end > *s && gram_space((unsigned char)(*end)[-1]))
		(*end)--;
}

int gram_bytes(const char *buf, size_t len, long *pages, bool *minus_one)
{
	const char *s = buf, *end = gram_end(buf, len);
	unsigned long long v;
	unsigned base, shift = 0;
	bool overflow, m1;

	gram_trim(&s, &end);
	m1 = end - s == 2 && s[0] == '-' && s[1] == '1';
	if (minus_one)
		*minus_one = m1;
	if (m1) {
		*pages = PC_MAX;
		return 0;
	}
	base = gram_base(&s, end);
	gram_digits(&s, end, base, &v, &overflow);   /* wraps silently, as memparse */
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
	v <<= shift;
	v /= (unsigned long long)PC_PAGE_SIZE;
	*pages = v > (unsigned long long)PC_MAX ? PC_MAX : (long)v;
	return 0;
}

int gram_pid(const char *buf, size_t len, pid_t *out)
{
	const char *s = buf, *end = gram_end(buf, len);
	unsigned long long v;
	bool neg = false, overflow;
	unsigned base;

	gram_trim(&s, &end);
	if (s < end && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	base = gram_base(&s, end);
	if (gram_digits(&s, end, base, &v, &overflow) == 0 || s != end || overflow)
		return -EINVAL;
	if (neg ? v > (unsigned long long)INT_MAX + 1 : v > INT_MAX)
		return -EINVAL;
	if (neg && v != 0)
		return -EINVAL;       /* negative ids are refused */
	*out = (pid_t)v;
	return 0;
}

int gram_strip(const char *buf, size_t len, char *out, size_t size)
{
	const char *s = buf, *end = gram_end(buf, len);

	gram_trim(&s, &end);
	if ((size_t)(end - s) >= size)
		return -E2BIG;
	memcpy(out, s, (size_t)(end - s));
	out[end - s] = '\0';
	return 0;
}

int gram_parse(enum gram_kind k, const char *buf, size_t len, struct gram_value *out)
{
	switch (k) {
	case G_U64:
		return gram_u64(buf, len, &out->u64);
	case G_BYTES:
		return gram_bytes(buf, len, &out->pages, &out->minus_one);
	case G_PID:
		return gram_pid(buf, len, &out->pid);
	case G_IGNORED:
		return 0;
	case G_STRING:
	case G_EVENT:
		return gram_strip(buf, len, out->str, sizeof(out->str));
	case G_NONE:
	default:
		return -EINVAL;
	}
}

const char *gram_name(enum gram_kind k)
{
	static const char *const names[] = {
		[G_NONE] = "-", [G_U64] = "G-U64", [G_BYTES] = "G-BYTES", [G_PID] = "G-PID",
		[G_IGNORED] = "G-IGNORED", [G_STRING] = "G-STRING", [G_EVENT] = "G-EVENT",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}
