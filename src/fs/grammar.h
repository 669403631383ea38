/* grammar.h: the write grammars of the contract's §2.4 (G-U64, G-BYTES,
 * G-PID, G-IGNORED). Owns parsing only: never validates ranges that belong
 * to a file, never touches the engine. All parsers take (buf, len) exactly
 * as write(2) delivered it and return 0 or a negative errno. */
#ifndef MEMCGFS_GRAMMAR_H
#define MEMCGFS_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum gram_kind {
	G_NONE,     /* the file has no write handler */
	G_U64,      /* kstrtoull-like: [+]digits[\n], base detection */
	G_BYTES,    /* memparse-like after stripping; "-1" = unlimited */
	G_PID,      /* signed int after stripping, base detection, >= 0 */
	G_IGNORED,  /* content not examined */
	G_STRING,   /* whitespace-stripped text (release_agent) */
	G_EVENT,    /* "<efd> <cfd>[ <args>]" (cgroup.event_control) */
};

/* A parsed write. Which member is valid depends on the grammar. */
struct gram_value {
	unsigned long long u64;   /* G_U64 */
	long pages;               /* G_BYTES: pages after rounding down, clamped */
	bool minus_one;           /* G_BYTES: the input was exactly "-1" */
	pid_t pid;                /* G_PID */
	char str[4096];           /* G_STRING, G_EVENT: stripped text, NUL-ended */
};

int gram_parse(enum gram_kind k, const char *buf, size_t len, struct gram_value *out);

int gram_u64(const char *buf, size_t len, unsigned long long *out);
/* minus_one (may be NULL): whether the text was "-1" (pages then PC_MAX,
 * which a large number can also clamp to). */
int gram_bytes(const char *buf, size_t len, long *pages, bool *minus_one);
int gram_pid(const char *buf, size_t len, pid_t *out);
/* Strip leading and trailing isspace() into out (size bytes). -E2BIG when
 * the stripped text does not fit. */
int gram_strip(const char *buf, size_t len, char *out, size_t size);

const char *gram_name(enum gram_kind k);

#endif
