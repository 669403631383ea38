/* memcgctl.c: the control CLI of memcgfs.
 *   memcgctl replay FILE         run a scenario deterministically
 *   memcgctl sim -m MOUNT [-g GROUP] (-f FILE | -e LINE...)
 *                                be a simulated task: join GROUP through
 *                                the mount, then declare memory to the
 *                                daemon in the workload language
 *   memcgctl status -m MOUNT     who serves the mount (supervisor, worker,
 *                                restarts, state file, profile)
 * Owns argument handling and the client side of the sim protocol. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fs/cgfs.h"
#include "replay/replay.h"
#include "source/sim.h"
#include "source/workload.h"

#define CTL_MAX_LINES 4096

static char *ctl_slurp(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap);

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

static int ctl_ask(int fd, const char *line, char *ans, size_t size);

/* The root's status attribute (the worker answers it, at most 4 KiB),
 * NUL-terminated in buf: its length, or -1 with a message. */
#define CTL_STATUS_MAX 8192
static ssize_t ctl_status_text(const char *mount, char *buf, size_t size)
{
	ssize_t n = getxattr(mount, CGFS_STATUS_XATTR, buf, size - 1);

	if (n < 0) {
		fprintf(stderr, "memcgctl: %s: no memcgfs status: %s\n", mount, strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	return n;
}

/* The mount's simulated-task socket, as the mount itself says (the
 * "socket" line of the root's status attribute): each mount instance has
 * its own, whichever namespace this runs in. */
static int ctl_socket_of(const char *mount, char *path, size_t size)
{
	char buf[CTL_STATUS_MAX];
	const char *p;
	size_t len;

	if (ctl_status_text(mount, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && strncmp(p, "socket ", 7); p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		;
	if (!p || !strncmp(p + 7, "none", 4) || (len = strcspn(p + 7, "\n")) >= size) {
		fprintf(stderr, "memcgctl: %s: the daemon has no simulated-task socket\n", mount);
		return -1;
	}
	memcpy(path, p + 7, len);
	path[len] = '\0';
	return 0;
}

/* Connected, and known to the daemon (the hello round trip) before it
 * returns; a refusal's reason is printed. */
static int ctl_connect(const char *mount)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (ctl_socket_of(mount, sa.sun_path, sizeof(sa.sun_path)))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	if (fd >= 0) {
		char ans[64];

		if (ctl_ask(fd, "hello", ans, sizeof(ans)) || strcmp(ans, "ok")) {
			if (ans[0])
				fprintf(stderr, "memcgctl: the daemon says: %s\n", ans);
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Send one line, read the one-line answer into ans. */
static int ctl_ask(int fd, const char *line, char *ans, size_t size)
{
	char out[1100];
	int w = snprintf(out, sizeof(out), "%s\n", line);
	size_t len = 0;
	ssize_t n;

	ans[0] = '\0';
	/* a daemon gone is an error to report, not a SIGPIPE */
	if (w < 0 || (size_t)w >= sizeof(out))
		return -1;
	/* a send that fails still reads: a refusal may be waiting */
	(void)!send(fd, out, (size_t)w, MSG_NOSIGNAL);
	while (len < size - 1 && (n = read(fd, ans + len, 1)) == 1 && ans[len] != '\n')
		len++;
	ans[len] = '\0';
	return len ? 0 : -1;
}

static int ctl_join(const char *mount, const char *group);

static int ctl_sim(const char *mount, const char *group, char **lines, int nlines)
{
	int fd = ctl_connect(mount), pc = 0, sp = 0;
	int rstart[16];
	long rleft[16];
	char ans[256];

	if (fd < 0) {
		fprintf(stderr, "memcgctl: cannot reach the memcgfs daemon of %s\n", mount);
		return 1;
	}
	/* connected first: the daemon knows this process declares its memory
	 * before it is in a group, so it is never mirrored from /proc */
	if (group && ctl_join(mount, group))
		return 1;
	while (pc < nlines) {
		char copy[1024], *argv[16], *save = NULL, *w, msg[128];
		int argc = 0;
		struct wl_op op;

		snprintf(copy, sizeof(copy), "%s", lines[pc]);
		for (w = strtok_r(copy, " \t\r", &save); w && argc < 16; w = strtok_r(NULL, " \t\r", &save))
			argv[argc++] = w;
		if (argc == 0 || argv[0][0] == '#' || !strcmp(argv[0], "file")) {
			/* comments; files are made by the daemon */
		} else if (wl_parse(argv, argc, &op, msg, sizeof(msg))) {
			fprintf(stderr, "memcgctl: line %d: %s\n", pc + 1, msg);
			return 1;
		} else if (op.code == WL_COMPUTE) {
			/* CPU work of its own: spin for that long */
			struct timespec t0, t1;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			do
				clock_gettime(CLOCK_MONOTONIC, &t1);
			while ((uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
			       (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec < op.ns);
		} else if (op.code == WL_SLEEP) {
			struct timespec ts = { (time_t)(op.ns / 1000000000u), (long)(op.ns % 1000000000u) };

			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		} else if (op.code == WL_REPEAT) {
			if (sp == 16) {
				fprintf(stderr, "memcgctl: repeats nested too deep\n");
				return 1;
			}
			rstart[sp] = pc;
			rleft[sp++] = op.count;
		} else if (op.code == WL_END) {
			if (sp == 0) {
				fprintf(stderr, "memcgctl: line %d: end without repeat\n", pc + 1);
				return 1;
			}
			if (--rleft[sp - 1] > 0) {
				pc = rstart[sp - 1] + 1;
				continue;
			}
			sp--;
		} else if (op.code == WL_EXIT) {
			return 0;
		} else if (op.code == WL_FORK) {
			/* the child is a new task with no memory yet, in our group */
			pid_t child = fork();

			if (child < 0) {
				perror("memcgctl: fork");
				return 1;
			}
			if (child == 0) {
				close(fd);
				if ((fd = ctl_connect(mount)) < 0)
					_exit(1);
			}
		} else {
			if (ctl_ask(fd, lines[pc], ans, sizeof(ans))) {
				fprintf(stderr, "memcgctl: the daemon went away\n");
				return 1;
			}
			if (!strcmp(ans, "killed")) {
				pause();      /* SIGKILL is on its way */
				return 137;
			}
			if (strcmp(ans, "ok")) {
				fprintf(stderr, "memcgctl: line %d: %s\n", pc + 1, ans);
				return 1;
			}
		}
		if (argc && !strcmp(argv[0], "file") && (ctl_ask(fd, lines[pc], ans, sizeof(ans)) ||
							 strcmp(ans, "ok"))) {
			fprintf(stderr, "memcgctl: line %d: %s\n", pc + 1, ans);
			return 1;
		}
		pc++;
	}
	return 0;
}

static int ctl_join(const char *mount, const char *group)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", mount, group);
	if ((fd = open(path, O_WRONLY)) < 0 || write(fd, "0", 1) != 1) {
		fprintf(stderr, "memcgctl: cannot join %s: %s\n", group, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The worker answers the root's status attribute: print it as it is. */
static int ctl_status(const char *mount)
{
	char buf[CTL_STATUS_MAX];
	ssize_t n = ctl_status_text(mount, buf, sizeof(buf));

	if (n < 0)
		return 1;
	fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

static int ctl_usage(FILE *out, int status)
{
	fprintf(out, "usage: memcgctl replay FILE            (FILE may be -)\n"
		     "       memcgctl sim -m MOUNT [-g GROUP] (-f FILE | -e LINE...)\n"
		     "       memcgctl status -m MOUNT\n"
		     "       memcgctl --version\n");
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("memcgctl %s\n", MEMCGFS_VERSION);
		return 0;
	}
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return ctl_usage(stdout, 0);
	if (argc == 3 && !strcmp(argv[1], "replay")) {
		char *text = ctl_slurp(argv[2]);
		int err;

		if (!text) {
			fprintf(stderr, "memcgctl: cannot read %s\n", argv[2]);
			return 1;
		}
		err = replay_run(text, stdout, stderr);
		free(text);
		return err ? 1 : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "status") && !strcmp(argv[2], "-m"))
		return ctl_status(argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "sim")) {
		const char *mount = NULL, *group = NULL;
		char *lines[CTL_MAX_LINES], *text = NULL;
		int n = 0, opt, ret;

		optind = 2;
		while ((opt = getopt(argc, argv, "m:g:f:e:")) != -1) {
			switch (opt) {
			case 'm': mount = optarg; break;
			case 'g': group = optarg; break;
			case 'e':
				if (n < CTL_MAX_LINES)
					lines[n++] = optarg;
				break;
			case 'f':
				if (!(text = ctl_slurp(optarg))) {
					fprintf(stderr, "memcgctl: cannot read %s\n", optarg);
					return 1;
				}
				for (char *l = strtok(text, "\n"); l && n < CTL_MAX_LINES; l = strtok(NULL, "\n"))
					lines[n++] = l;
				break;
			default:
				return ctl_usage(stderr, 2);
			}
		}
		if (!mount || n == 0)
			return ctl_usage(stderr, 2);
		ret = ctl_sim(mount, group, lines, n);
		free(text);
		return ret;
	}
	return ctl_usage(stderr, 2);
}
