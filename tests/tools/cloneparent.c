/* cloneparent.c: runs COMMAND in a process made with clone(CLONE_PARENT),
 * as runc's nsexec makes a container's init: the new process's real
 * parent is this one's parent, its maker this one. Prints the new
 * process's id and waits until it has started COMMAND (its /proc/PID/exe
 * changed), then exits 0.
 *   cloneparent COMMAND [ARG...] */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char stack[64 * 1024] __attribute__((aligned(16)));

static int child(void *arg)
{
	char **argv = arg;

	execvp(argv[0], argv);
	perror("cloneparent: exec");
	_exit(127);
}

int main(int argc, char **argv)
{
	char self[4096], path[64], exe[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (argc < 2 || n < 0) {
		fprintf(stderr, "usage: cloneparent COMMAND [ARG...]\n");
		return 2;
	}
	self[n] = '\0';
	/* (SIGCHLD goes to the real parent, which may wait for it) */
	pid = clone(child, stack + sizeof(stack), CLONE_PARENT | SIGCHLD, argv + 1);
	if (pid < 0) {
		perror("cloneparent: clone");
		return 1;
	}
	printf("%d\n", (int)pid);
	fflush(stdout);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 2000; i++) {
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n < 0 || (exe[n] = '\0', strcmp(exe, self)))
			break;
		usleep(1000);
	}
	return 0;
}
