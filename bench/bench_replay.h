/* bench_replay.h: how the simulated-time benchmarks run a scenario. One
 * replay into a memory buffer, and where its final "end t=" line starts;
 * the time that line gives. Header-only: each benchmark is one program. */
#ifndef MEMCGFS_BENCH_REPLAY_H
#define MEMCGFS_BENCH_REPLAY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

/* Run text (malloc'ed; freed here) and return the start of its "end t="
 * line inside *out (malloc'ed, the caller's to free), or NULL when the
 * replay failed or printed none. */
static inline char *bench_replay(char *text, char **out)
{
	size_t len = 0;
	FILE *f;
	char *end;
	int err;

	*out = NULL;
	if (!text)
		return NULL;
	if (!(f = open_memstream(out, &len))) {
		free(text);
		return NULL;
	}
	err = replay_run(text, f, stderr);
	fclose(f);
	free(text);
	if (err || !*out)
		return NULL;
	if (!strncmp(*out, "end t=", 6))
		return *out;
	return (end = strstr(*out, "\nend t=")) ? end + 1 : NULL;
}

/* The simulated time an "end t=" line gives, in ms (it prints ms or us);
 * *rest (may be NULL) is what follows the number's unit. */
static inline double bench_replay_ms(const char *end, char **rest)
{
	char *p;
	double ms = strtod(end + 6, &p);

	if (!strncmp(p, "us", 2))
		ms /= 1000;
	if (rest)
		*rest = p;
	return ms;
}

#endif
