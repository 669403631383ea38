/* memcgctl.c: the control CLI of memcgfs. Today: `memcgctl replay FILE`
 * runs a scenario deterministically (docs/replay.md) and prints its
 * timeline. Owns argument handling only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/replay.h"

static char *memcgctl_slurp(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t n;

	if (!f || !buf) {
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
	}
	if (f != stdin)
		fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	char *text;
	int err;

	if (argc != 3 || strcmp(argv[1], "replay")) {
		fprintf(stderr, "usage: memcgctl replay FILE   (FILE may be -)\n");
		return 2;
	}
	if (!(text = memcgctl_slurp(argv[2]))) {
		fprintf(stderr, "memcgctl: cannot read %s\n", argv[2]);
		return 1;
	}
	err = replay_run(text, stdout, stderr);
	free(text);
	return err ? 1 : 0;
}
