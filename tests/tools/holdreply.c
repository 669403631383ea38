/* holdreply.c: holds a FUSE server's answers, so that a test knows which
 * calls are in flight (read by the server, not yet answered) when it
 * kills the server.
 *   holdreply PID N CALLER...
 * Traces every thread of PID (ptrace, new threads included) and stops each
 * thread at the entry of a write(2) or writev(2) of an answer (a
 * fuse_out_header with a unique id other than 0; notifications pass) to a
 * /dev/fuse descriptor, when the request it answers came from one of the
 * CALLER processes; it never lets a stopped one go. The request is the one
 * the thread read last (a read(2) of /dev/fuse, as libfuse reads without
 * splice): its fuse_in_header names the caller. Answers pass that the
 * caller would not see fail: LOOKUP (a failed revalidation of a cached
 * name is retried by the kernel as a fresh lookup, which the next server
 * answers), RELEASE and RELEASEDIR (sent after a close returned). Prints "held N"
 * once N answers are held, and "total M" when PID is gone (M: the answers
 * held in all, each the one call in flight of its caller). x86-64 only.
 * Exit status 0 once PID is gone, 1 on an error. Needs CAP_SYS_PTRACE. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TIDS 4096

struct tid_state {
	pid_t tid;
	uint32_t opcode;              /* of the request it read last */
	uint32_t caller;              /* and the process that made it */
};

#define FUSE_LOOKUP     1
#define FUSE_RELEASE    18
#define FUSE_RELEASEDIR 29

static struct tid_state tids[MAX_TIDS];
static int ntids;
static pid_t target;
static pid_t callers[64];
static int ncallers;

static struct tid_state *tid_of(pid_t t)
{
	for (int i = 0; i < ntids; i++)
		if (tids[i].tid == t)
			return &tids[i];
	if (ntids == MAX_TIDS)
		return NULL;
	tids[ntids] = (struct tid_state){ t, 0, 0 };
	return &tids[ntids++];
}

static int is_fuse_fd(long fd)
{
	char path[64], to[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)target, fd);
	n = readlink(path, to, sizeof(to) - 1);
	if (n < 0)
		return 0;
	to[n] = '\0';
	return strcmp(to, "/dev/fuse") == 0;
}

/* The unique id of the fuse_out_header at addr in tid, or 0. */
static uint64_t out_unique(pid_t tid, unsigned long addr)
{
	unsigned char h[16];
	struct iovec local = { h, sizeof(h) }, remote = { (void *)addr, sizeof(h) };
	uint64_t u;

	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(h))
		return 0;
	memcpy(&u, h + 8, sizeof(u));
	return u;
}

/* Whether s, stopped at a syscall, is at the entry of an answer to a FUSE
 * call someone waits for (at an entry, rax holds -ENOSYS; at an exit, the
 * result). At the exit of a read of a request, notes its opcode. */
static int answering(struct tid_state *s)
{
	struct user_regs_struct r;
	unsigned long base = 0;
	pid_t tid = s->tid;
	int i;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return 0;
	if ((long)r.rax != -ENOSYS) {
		if (r.orig_rax == SYS_read && (long)r.rax >= 40 && is_fuse_fd((long)r.rdi)) {
			uint32_t h[10];
			struct iovec local = { h, sizeof(h) }, remote = { (void *)r.rsi, sizeof(h) };

			if (process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(h)) {
				s->opcode = h[1];       /* len, opcode, unique, nodeid, uid, gid, pid */
				s->caller = h[8];
			}
		}
		return 0;
	}
	if (s->opcode == 0 || s->opcode == FUSE_LOOKUP || s->opcode == FUSE_RELEASE ||
	    s->opcode == FUSE_RELEASEDIR)
		return 0;
	for (i = 0; i < ncallers && callers[i] != (pid_t)s->caller; i++)
		;
	if (i == ncallers)
		return 0;
	if (r.orig_rax == SYS_write) {
		base = r.rsi;
	} else if (r.orig_rax == SYS_writev) {
		struct iovec first, local = { &first, sizeof(first) };
		struct iovec remote = { (void *)r.rsi, sizeof(first) };

		if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(first))
			return 0;
		base = (unsigned long)first.iov_base;
	} else {
		return 0;
	}
	return is_fuse_fd((long)r.rdi) && out_unique(tid, base) != 0;
}

static int attach_all(void)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)target);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir))) {
		pid_t t = atoi(d->d_name);

		if (t <= 0 || tid_of(t) == NULL)
			continue;
		if (ptrace(PTRACE_SEIZE, t, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE) == 0 &&
		    ptrace(PTRACE_INTERRUPT, t, 0, 0) == 0)
			n++;
	}
	closedir(dir);
	return n;
}

int main(int argc, char **argv)
{
	long want, held = 0;
	int status;
	pid_t t;

	if (argc < 4 || argc - 3 > 64) {
		fprintf(stderr, "usage: holdreply PID N CALLER...\n");
		return 1;
	}
	target = atoi(argv[1]);
	want = atol(argv[2]);
	for (int i = 3; i < argc; i++)
		callers[ncallers++] = atoi(argv[i]);
	if (attach_all() <= 0) {
		perror("holdreply: attach");
		return 1;
	}
	while ((t = waitpid(-1, &status, __WALL)) > 0) {
		struct tid_state *s = tid_of(t);
		int sig = 0;

		if (WIFEXITED(status) || WIFSIGNALED(status))
			continue;
		if (!WIFSTOPPED(status) || !s)
			continue;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (answering(s)) {
				/* held: the call stays in flight */
				if (++held == want) {
					printf("held %ld\n", held);
					fflush(stdout);
				}
				continue;
			}
		} else if (status >> 16) {
			/* an event stop (a clone, PTRACE_INTERRUPT): no signal */
		} else if (WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status);   /* a signal for the thread: deliver it */
		}
		ptrace(PTRACE_SYSCALL, t, 0, sig);
	}
	printf("total %ld\n", held);
	return errno == ECHILD ? 0 : 1;
}
