/* caller.c: reading a supervised caller's memory and /proc files.
 * Owns nothing but the reads (process_vm_readv, /proc/TID/...); never
 * acts on the caller beyond writing a result buffer it names, and never
 * blocks on it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bridge/caller.h"

/* A NUL-terminated string at ADDR in task TID's memory, read a page at a
 * time (the string may end just before an unmapped page). */
int caller_read_str(pid_t tid, unsigned long addr, char *out, size_t size)
{
	size_t got = 0;

	while (got < size) {
		size_t page = 4096 - ((addr + got) & 4095), n = page < size - got ? page : size - got;
		struct iovec local = { out + got, n };
		struct iovec remote = { (void *)(addr + got), n };
		ssize_t r = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		char *nul;

		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		if ((nul = memchr(out + got, '\0', (size_t)r)))
			return 0;
		got += (size_t)r;
	}
	return -ENAMETOOLONG;
}

int caller_read_mem(pid_t tid, unsigned long addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

int caller_write_mem(pid_t tid, unsigned long addr, const void *in, size_t n)
{
	struct iovec local = { (void *)in, n }, remote = { (void *)addr, n };

	return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* A whole /proc file (or any small file) into B. */
int caller_slurp(const char *path, struct view_buf *b)
{
	char chunk[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if ((rc = view_buf_add(b, "", 0)) == 0)
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			if ((rc = view_buf_add(b, chunk, (size_t)n)))
				break;
	if (!rc && n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

unsigned long long caller_status(pid_t tid, const char *key, int base)
{
	char path[64];
	struct view_buf b = { 0 };
	const char *t;
	unsigned long long v = 0;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!caller_slurp(path, &b))
		for (t = b.p; t && *t; t = strchr(t, '\n') ? strchr(t, '\n') + 1 : NULL)
			if (!strncmp(t, key, klen) && t[klen] == ':') {
				v = strtoull(t + klen + 1, NULL, base);
				break;
			}
	view_buf_free(&b);
	return v;
}

pid_t caller_tgid(pid_t tid)
{
	return (pid_t)caller_status(tid, "Tgid", 10);
}

/* The directory a relative path of TID starts from: its cwd, or DIRFD. */
int caller_base(pid_t tid, int dirfd, char *out, size_t size)
{
	char link[64];
	ssize_t n;

	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
	if ((n = readlink(link, out, size - 1)) < 0)
		return -errno;
	out[n] = '\0';
	return out[0] == '/' ? 0 : -ENOTDIR;
}
