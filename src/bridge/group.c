/* group.c: finding a task's memcgfs group by walking the mount's child
 * groups and reading their tasks files. Owns only that walk: never
 * writes to the mount, never asks the daemon anything but its files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge/group.h"

/* Does the tasks file in directory DFD list TID? */
static bool group_lists(int dfd, pid_t tid)
{
	int fd = openat(dfd, "tasks", O_RDONLY | O_CLOEXEC);
	char buf[8192], carry[16];
	size_t nc = 0;
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	while (!found && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && !found; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				if (nc < sizeof(carry) - 1)
					carry[nc++] = buf[i];
			} else {
				carry[nc] = '\0';
				found = nc && strtol(carry, NULL, 10) == (long)tid;
				nc = 0;
			}
		}
	}
	close(fd);
	return found;
}

/* The walk below directory DFD, whose path from the root is PATH (LEN
 * bytes in a buffer of SIZE). With TID > 0, stops at the group listing
 * it (returns 1, PATH holding it); counts the groups into *COUNT. */
static int group_walk(int dfd, char *path, size_t len, size_t size, pid_t tid, long *count)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while (!rc && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int sub;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;  /* a file (DT_UNKNOWN), or removed meanwhile */
		if (len + 1 + n + 1 > size) {
			close(sub);
			rc = -ENAMETOOLONG;
			break;
		}
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		(*count)++;
		if (tid > 0 && group_lists(sub, tid)) {
			close(sub);
			rc = 1;
			break;
		}
		rc = group_walk(sub, path, len + 1 + n, size, tid, count);
		if (rc == 0)
			path[len] = '\0';
	}
	closedir(d);
	return rc;
}

int group_of(const char *mnt, pid_t tid, char *out, size_t size)
{
	int dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	long count = 0;

	if (size < 2)
		return -ENAMETOOLONG;
	if (dfd < 0)
		return -errno;
	out[0] = '\0';
	rc = group_walk(dfd, out, 0, size, tid, &count);
	if (rc < 0)
		return rc;
	if (rc == 0)
		strcpy(out, "/");
	return 0;
}

long group_count(const char *mnt)
{
	int dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	char path[4096] = "";
	long count = 1;

	if (dfd < 0)
		return -errno;
	rc = group_walk(dfd, path, 0, sizeof(path), 0, &count);
	return rc < 0 ? rc : count;
}
