/* grammar.c: parsers for the write grammars of §2.4, with the kernel's
 * quirks kept (octal on a leading 0, silent wrap in byte values, empty byte
 * writes meaning 0). Numbers and sizes are read by the engine's one parser
 * (util/size.h); this file adds what each grammar does around them (NUL,
 * stripping, signs, "-1", pages). Never decides whether a value is
 * acceptable for a particular file; that is the file handler's job. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "engine/engine.h"
#include "fs/grammar.h"
#include "util/size.h"

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

int gram_u64(const char *buf, size_t len, unsigned long long *out)
{
	const char *s = buf, *end = gram_end(buf, len);
	unsigned long long v;
	bool overflow;

	if (s < end && *s == '+')
		s++;
	if (size_number(&s, end, &v, &overflow) == 0)
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
	bool m1;
	int err;

	gram_trim(&s, &end);
	m1 = end - s == 2 && s[0] == '-' && s[1] == '1';
	if (minus_one)
		*minus_one = m1;
	if (m1) {
		*pages = PC_MAX;
		return 0;
	}
	if ((err = size_parse(s, (size_t)(end - s), &v)))   /* wraps silently */
		return err;
	v /= (unsigned long long)PC_PAGE_SIZE;
	*pages = v > (unsigned long long)PC_MAX ? PC_MAX : (long)v;
	return 0;
}

int gram_pid(const char *buf, size_t len, pid_t *out)
{
	const char *s = buf, *end = gram_end(buf, len);
	unsigned long long v;
	bool neg = false, overflow;

	gram_trim(&s, &end);
	if (s < end && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	if (size_number(&s, end, &v, &overflow) == 0 || s != end || overflow)
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
