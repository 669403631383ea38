/* fuzz_grammar.c: libFuzzer harness for the write grammars (src/fs/grammar.h).
 * Owns only the properties every parse must keep, for every enum gram_kind:
 * documented errors and ranges, determinism, and the contract's §11.1-§11.3
 * rules. Never touches the engine, a file or the network; a broken property
 * aborts so that libFuzzer records the input. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/page_counter.h"
#include "fs/grammar.h"

/* enum gram_kind has no count member: G_EVENT is its last. */
#define FG_KINDS (G_EVENT + 1)

#define FG_FAIL(...) do {                                                   \
	fprintf(stderr, "fuzz_grammar: " __VA_ARGS__);                      \
	fputc('\n', stderr);                                                \
	abort();                                                            \
} while (0)

struct fg_result {
	int err;
	struct gram_value v;
};

/* The kernel's isspace() (lib/ctype.c), which §11.2 measured: the C
 * locale's six plus 0xA0. */
static int fg_kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xA0;
}

static void fg_parse(enum gram_kind k, const uint8_t *data, size_t len, struct fg_result *res)
{
	/* an exact-size copy: a read past len is an ASan report */
	char *buf = malloc(len ? len : 1);

	if (!buf)
		abort();
	memcpy(buf, data, len);
	memset(&res->v, 0x5a, sizeof(res->v));
	res->err = gram_parse(k, buf, len, &res->v);
	free(buf);
}

/* Do two parses of kind k agree on everything the kind defines? */
static int fg_same(enum gram_kind k, const struct fg_result *a, const struct fg_result *b)
{
	if (a->err != b->err)
		return 0;
	if (a->err)
		return 1;
	switch (k) {
	case G_U64:
		return a->v.u64 == b->v.u64;
	case G_BYTES:
		return a->v.pages == b->v.pages && a->v.minus_one == b->v.minus_one;
	case G_PID:
		return a->v.pid == b->v.pid;
	case G_STRING:
	case G_EVENT:
		return strcmp(a->v.str, b->v.str) == 0;
	default:
		return 1;
	}
}

static void fg_expect_same(enum gram_kind k, const char *rule, const struct fg_result *a,
			   const struct fg_result *b)
{
	if (!fg_same(k, a, b))
		FG_FAIL("%s: %s: %d vs %d", gram_name(k), rule, a->err, b->err);
}

/* [s, e) trimmed of kernel whitespace. */
static void fg_trim(const uint8_t **s, const uint8_t **e)
{
	while (*s < *e && fg_kspace(**s))
		(*s)++;
	while (*e > *s && fg_kspace((*e)[-1]))
		(*e)--;
}

/* A plain decimal number (no sign, no leading 0, at most 18 digits, so no
 * overflow) in [s, e), or -1. */
static long long fg_plain_decimal(const uint8_t *s, const uint8_t *e)
{
	long long v = 0;

	if (s == e || e - s > 18 || *s == '0')
		return -1;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* Documented errors and ranges of one successful or failed parse. */
static void fg_check_ranges(enum gram_kind k, const uint8_t *data, size_t len,
			    const struct fg_result *r)
{
	const uint8_t *s = data, *e = data + len;
	long long dec;

	switch (k) {
	case G_NONE:
		if (r->err != -EINVAL)
			FG_FAIL("G_NONE gave %d", r->err);
		return;
	case G_IGNORED:
		if (r->err)
			FG_FAIL("G-IGNORED gave %d", r->err);
		return;
	case G_U64:
		if (r->err && r->err != -EINVAL && r->err != -ERANGE)
			FG_FAIL("G-U64 gave %d", r->err);
		/* "[+]digits[\n]" in plain decimal must parse to its value */
		if (s < e && *s == '+')
			s++;
		if (e > s && e[-1] == '\n')
			e--;
		if ((dec = fg_plain_decimal(s, e)) >= 0 && !memchr(data, 0, len) &&
		    (r->err || r->v.u64 != (unsigned long long)dec))
			FG_FAIL("G-U64: plain %lld gave %d/%llu", dec, r->err, r->v.u64);
		return;
	case G_BYTES:
		if (r->err && r->err != -EINVAL)
			FG_FAIL("G-BYTES gave %d", r->err);
		if (r->err)
			return;
		if (r->v.pages < 0 || r->v.pages > PC_MAX)
			FG_FAIL("G-BYTES: %ld pages out of range", r->v.pages);
		if (r->v.minus_one && r->v.pages != PC_MAX)
			FG_FAIL("G-BYTES: -1 gave %ld pages", r->v.pages);
		if (!memchr(data, 0, len)) {
			fg_trim(&s, &e);
			if (r->v.minus_one != (e - s == 2 && s[0] == '-' && s[1] == '1'))
				FG_FAIL("G-BYTES: minus_one %d for this text", r->v.minus_one);
			if ((dec = fg_plain_decimal(s, e)) >= 0 && r->v.pages != dec / PC_PAGE_SIZE)
				FG_FAIL("G-BYTES: plain %lld gave %ld pages", dec, r->v.pages);
		}
		return;
	case G_PID:
		if (r->err && r->err != -EINVAL)
			FG_FAIL("G-PID gave %d", r->err);
		if (!r->err && r->v.pid < 0)
			FG_FAIL("G-PID: negative %d", (int)r->v.pid);
		return;
	case G_STRING:
	case G_EVENT: {
		const uint8_t *nul = memchr(data, 0, len);
		size_t n;

		if (nul)
			e = nul;
		fg_trim(&s, &e);
		n = (size_t)(e - s);
		if (r->err && r->err != -E2BIG)
			FG_FAIL("%s gave %d", gram_name(k), r->err);
		if ((r->err == -E2BIG) != (n >= sizeof(r->v.str)))
			FG_FAIL("%s: %zu stripped bytes gave %d", gram_name(k), n, r->err);
		if (r->err)
			return;
		/* the stripped text, as the kernel's strstrip() leaves it */
		if (strlen(r->v.str) != n || memcmp(r->v.str, s, n))
			FG_FAIL("%s: stripped text differs (%zu vs %zu bytes)", gram_name(k),
				strlen(r->v.str), n);
		return;
	}
	}
	FG_FAIL("unknown kind %d", (int)k);
}

/* The direct parsers agree with gram_parse. */
static void fg_check_direct(enum gram_kind k, const uint8_t *data, size_t len,
			    const struct fg_result *r)
{
	char *buf = malloc(len ? len : 1);
	unsigned long long u = 0;
	long pages = 0;
	bool m1 = false;
	pid_t pid = 0;
	int err = 0;

	if (!buf)
		abort();
	memcpy(buf, data, len);
	switch (k) {
	case G_U64:
		err = gram_u64(buf, len, &u);
		if (err != r->err || (!err && u != r->v.u64))
			FG_FAIL("gram_u64 and gram_parse differ");
		break;
	case G_BYTES:
		err = gram_bytes(buf, len, &pages, NULL);   /* minus_one may be NULL */
		if (err != r->err || (!err && pages != r->v.pages))
			FG_FAIL("gram_bytes(NULL) and gram_parse differ");
		err = gram_bytes(buf, len, &pages, &m1);
		if (err != r->err || (!err && (pages != r->v.pages || m1 != r->v.minus_one)))
			FG_FAIL("gram_bytes and gram_parse differ");
		break;
	case G_PID:
		err = gram_pid(buf, len, &pid);
		if (err != r->err || (!err && pid != r->v.pid))
			FG_FAIL("gram_pid and gram_parse differ");
		break;
	default:
		break;
	}
	free(buf);
}

/* gram_strip into small exact-size buffers: E2BIG exactly when the
 * stripped text does not fit with its NUL. */
static void fg_check_strip_sizes(const uint8_t *data, size_t len)
{
	static const size_t sizes[] = { 1, 2, 3, 8, 64 };
	const uint8_t *s = data, *e = data + len, *nul = memchr(data, 0, len);

	if (nul)
		e = nul;
	fg_trim(&s, &e);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *out = malloc(sizes[i]);
		size_t n = (size_t)(e - s);
		int err;

		if (!out)
			abort();
		err = gram_strip((const char *)data, len, out, sizes[i]);
		if ((err == -E2BIG) != (n >= sizes[i]) || (err && err != -E2BIG))
			FG_FAIL("gram_strip size %zu: %zu bytes gave %d", sizes[i], n, err);
		if (!err && (strlen(out) != n || memcmp(out, s, n)))
			FG_FAIL("gram_strip size %zu: wrong text", sizes[i]);
		free(out);
	}
}

/* §11.2: 0xA0 in the whitespace the trimming grammars strip is the same
 * as a space there. The copy has every 0xA0 of the leading and trailing
 * whitespace runs (before the first NUL) turned into ' '. */
static int fg_nbsp_to_space(const uint8_t *data, size_t len, uint8_t *out)
{
	size_t end = len, i, changed = 0;
	const uint8_t *nul = memchr(data, 0, len);

	memcpy(out, data, len);
	if (nul)
		end = (size_t)(nul - data);
	for (i = 0; i < end && fg_kspace(out[i]); i++)
		if (out[i] == 0xA0) {
			out[i] = ' ';
			changed++;
		}
	for (size_t j = end; j > i && fg_kspace(out[j - 1]); j--)
		if (out[j - 1] == 0xA0) {
			out[j - 1] = ' ';
			changed++;
		}
	return changed != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const uint8_t *nul = memchr(data, 0, len);
	uint8_t *alt = malloc(len + 1);

	if (!alt)
		abort();
	for (int ki = 0; ki < FG_KINDS; ki++) {
		enum gram_kind k = (enum gram_kind)ki;
		struct fg_result a, b;
		const char *name = gram_name(k);

		if (!name || !strcmp(name, "?"))
			FG_FAIL("kind %d has no name", ki);
		fg_parse(k, data, len, &a);
		fg_parse(k, data, len, &b);
		fg_expect_same(k, "determinism", &a, &b);
		fg_check_ranges(k, data, len, &a);
		fg_check_direct(k, data, len, &a);
		if (k == G_NONE || k == G_IGNORED)
			continue;
		/* §11.1: the buffer ends at its first NUL */
		if (nul) {
			fg_parse(k, data, (size_t)(nul - data), &b);
			fg_expect_same(k, "NUL ends the input (§11.1)", &a, &b);
		}
		/* §11.2: 0xA0 is whitespace where whitespace is stripped */
		if (k != G_U64 && fg_nbsp_to_space(data, len, alt)) {
			fg_parse(k, alt, len, &b);
			fg_expect_same(k, "0xA0 is whitespace (§11.2)", &a, &b);
		}
		/* §11.3: overflow is reported before trailing junk; junk
		 * after a good number is refused */
		if (k == G_U64 && !nul) {
			memcpy(alt, data, len);
			alt[len] = 'x';
			fg_parse(k, alt, len + 1, &b);
			if (a.err == -ERANGE && b.err != -ERANGE)
				FG_FAIL("G-U64: overflow then junk gave %d, not ERANGE (§11.3)", b.err);
			if (a.err == 0 && b.err != -EINVAL)
				FG_FAIL("G-U64: number then junk gave %d, not EINVAL", b.err);
		}
	}
	fg_check_strip_sizes(data, len);
	free(alt);
	return 0;
}
