/* supervisor.h: the process that holds a mount's FUSE connection and runs
 * the workers that serve it (supervisor.c), and the two helpers it starts
 * (the unmount agent) or that a worker calls once (sup_worker_attach). No
 * FUSE header here: callers see only the FUSE types they already have. */
#ifndef MEMCGFS_SUPERVISOR_H
#define MEMCGFS_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>

struct fuse_args;
struct fuse_session;

/* A worker finds its socket to the supervisor at SUP_CHAN_FD, its clone
 * of the connection's device at SUP_CLONE_FD and, when the supervisor
 * could make it, the memory every worker of the connection shares (the
 * names the kernel may keep: daemon/dentries.h) at SUP_NAMES_FD when it
 * starts. */
#define SUP_CHAN_FD  3
#define SUP_CLONE_FD 4
#define SUP_NAMES_FD 5

struct sup_params {
	struct fuse_args *args;       /* libfuse's options: the mount's */
	const char *mountpoint;       /* absolute */
	bool foreground;              /* -f: no fuse_daemonize */
	int argc;                     /* the daemon's own arguments: a worker */
	char **argv;                  /* runs argv[0] --worker R MNT argv[1..] */
	int mnt_index;                /* ... without argv[mnt_index] (the mountpoint) */
	/* optional: systemd's readiness messages ("READY=1...", "STOPPING=1"),
	 * and what to do once stdio is /dev/null (a background start: logs
	 * go to syslog from then on) */
	void (*notify)(const char *state);
	void (*detached)(void);
};

/* Mount, daemonize unless foreground (the calling process then exits once
 * the first worker answers, 1 if it fails), and run workers until the mount ends
 * (a worker's exit 0) or SIGTERM/SIGINT/SIGHUP (forwarded to the worker,
 * then unmounted). Restarts a worker that dies otherwise, with back-off.
 * Returns the exit status: 0 for a clean end. Single-threaded. */
int sup_run(const struct sup_params *p);

/* In a worker, on a session made with fuse_session_new and not mounted:
 * adopt SUP_CHAN_FD as the session's fd, replay the connection's INIT
 * (sent by the supervisor on it), then make that fd number the clone at
 * SUP_CLONE_FD. 0, or -1 with a message. */
int sup_worker_attach(struct fuse_session *se);

/* In a worker: the shared names' descriptor (SUP_NAMES_FD, made
 * close-on-exec here), or -1 when the supervisor had none. */
int sup_worker_names_fd(void);

/* Standard input, output and error to /dev/null (a background daemon's,
 * once its start-up messages have been said). */
void sup_detach_stdio(void);

/* memcgfs --unmount-agent MNT DEV: wait for EOF on fd 3 (the supervisor's
 * end, gone however the supervisor ends), then lazily unmount MNT if the
 * top mount there is still device DEV. Returns the exit status. */
int sup_agent_main(int argc, char **argv);

/* Is path (absolute) the top mount of a memcgfs instance? Its device
 * ("MAJOR:MINOR" of mountinfo) in dev when dev is not NULL. */
bool sup_mounted_at(const char *path, char *dev, size_t size);

/* path is a memcgfs mount whose daemon is gone (statfs: ENOTCONN): unmount
 * it lazily and say so. 0 when path is usable (not stale, or recovered),
 * -1 with a message otherwise. */
int sup_recover_stale(const char *path);

#endif
