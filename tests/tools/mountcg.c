/* mountcg.c: makes one call of the mount family as asked and prints
 * "ok" or the errno's name, for the tests of memcgfs-run's mount guard.
 *   mountcg mount SOURCE TARGET FSTYPE FLAGS [DATA]   FLAGS: a comma list of
 *           bind, rec, ro, remount, move, private, or "-" for none
 *   mountcg umount TARGET
 *   mountcg fsopen FSTYPE         (FSTYPE "-": a NULL name, a probe)
 *   mountcg fspick PATH
 *   mountcg clone PATH [TARGET]     open_tree(OPEN_TREE_CLONE), then
 *                                   move_mount it to TARGET if given
 *   mountcg rclone PATH             the same with AT_RECURSIVE
 *   mountcg mount32 TARGET DATA     a cgroup mount through the i386 ABI
 *                                   (int 0x80); "noia32" if there is none
 * Exit status 0 when the call succeeded, 1 when it failed, 2 on usage. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int report(long rc)
{
	if (rc < 0) {
		const char *name = strerrorname_np(errno);

		printf("%s\n", name ? name : "E?");
		return 1;
	}
	printf("ok\n");
	return 0;
}

static unsigned long parse_flags(const char *s)
{
	static const struct { const char *name; unsigned long flag; } map[] = {
		{ "bind", MS_BIND }, { "rec", MS_REC }, { "ro", MS_RDONLY },
		{ "remount", MS_REMOUNT }, { "move", MS_MOVE }, { "private", MS_PRIVATE },
	};
	char buf[256], *save = NULL;
	unsigned long fl = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (!strcmp(t, map[i].name))
				fl |= map[i].flag;
	return fl;
}

#if defined(__x86_64__)
static long int80(long nr, long a, long b, long c, long d, long e)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "memory");
	return ret;
}

/* i386: getpid is 20, mount 21; the strings below 4 GiB */
static int mount32(const char *target, const char *data)
{
	char *low = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			 -1, 0);
	long rc;

	pid_t probe;
	int st = 0;

	/* (a kernel without the i386 ABI, or booted with ia32_emulation=0,
	 * answers int 0x80 with SIGSEGV: asked in a child first) */
	fflush(stdout);
	probe = fork();
	if (probe == 0)
		_exit(int80(20, 0, 0, 0, 0, 0) == getpid() ? 0 : 1);
	if (low == MAP_FAILED || probe < 0 || waitpid(probe, &st, 0) != probe || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		printf("noia32\n");
		return 1;
	}
	strcpy(low, "cgroup");
	snprintf(low + 64, 4000, "%s", target);
	snprintf(low + 4096, 4000, "%s", data);
	rc = int80(21, (long)low, (long)(low + 64), (long)low, MS_RDONLY, (long)(low + 4096));
	if (rc < 0) {
		errno = (int)-rc;
		rc = -1;
	}
	return report(rc);
}
#else
static int mount32(const char *target, const char *data)
{
	printf("noia32\n");
	return 1;
}
#endif

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	if (!strcmp(op, "mount") && argc >= 6)
		return report(mount(strcmp(argv[2], "-") ? argv[2] : NULL, argv[3],
				    strcmp(argv[4], "-") ? argv[4] : NULL, parse_flags(argv[5]),
				    argc > 6 ? argv[6] : NULL));
	if (!strcmp(op, "umount") && argc == 3)
		return report(umount2(argv[2], 0));
	if (!strcmp(op, "fsopen") && argc == 3)   /* ("-": NULL, a probe) */
		return report(syscall(SYS_fsopen, strcmp(argv[2], "-") ? argv[2] : NULL, 0));
	if (!strcmp(op, "fspick") && argc == 3)
		return report(syscall(SYS_fspick, AT_FDCWD, argv[2], 0));
	if ((!strcmp(op, "clone") || !strcmp(op, "rclone")) && (argc == 3 || argc == 4)) {
		unsigned flags = OPEN_TREE_CLONE | (op[0] == 'r' ? AT_RECURSIVE : 0);
		long fd = syscall(SYS_open_tree, AT_FDCWD, argv[2], flags);

		if (fd < 0 || argc == 3)
			return report(fd);
		return report(syscall(SYS_move_mount, (int)fd, "", AT_FDCWD, argv[3],
				      MOVE_MOUNT_F_EMPTY_PATH));
	}
	if (!strcmp(op, "mount32") && argc == 4)
		return mount32(argv[2], argv[3]);
	fprintf(stderr, "usage: mountcg mount|umount|fsopen|fspick|clone|rclone|mount32 ...\n");
	return 2;
}
