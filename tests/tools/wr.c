/* wr.c: a tiny writer/reader for integration tests that reports errno names.
 *   wr FILE DATA      one write(2) of DATA (no newline added); prints OK
 *   wr -n N FILE      one write(2) of N spaces
 *   wr -r FILE        read and print the content, or the errno name
 * Exit status 0 on success, 1 on failure (the name is printed either way). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what)
{
	const char *name = strerrorname_np(errno);

	printf("%s\n", name ? name : "EUNKNOWN");
	(void)what;
	return 1;
}

int main(int argc, char **argv)
{
	char buf[65536];
	ssize_t n;
	int fd;

	if (argc == 3 && strcmp(argv[1], "-r") == 0) {
		if ((fd = open(argv[2], O_RDONLY)) < 0)
			return fail("open");
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		return n < 0 ? fail("read") : 0;
	}
	if (argc == 4 && strcmp(argv[1], "-n") == 0) {
		size_t len = strtoul(argv[2], NULL, 10);
		char *data = malloc(len + 1);

		memset(data, ' ', len);
		if ((fd = open(argv[3], O_WRONLY)) < 0) {
			free(data);
			return fail("open");
		}
		if (write(fd, data, len) < 0) {
			free(data);
			return fail("write");
		}
		free(data);
		printf("OK\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: wr FILE DATA | wr -n N FILE | wr -r FILE\n");
		return 2;
	}
	if ((fd = open(argv[1], O_WRONLY)) < 0)
		return fail("open");
	if (write(fd, argv[2], strlen(argv[2])) < 0)
		return fail("write");
	printf("OK\n");
	return 0;
}
