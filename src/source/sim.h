/* sim.h: simulated tasks. Real processes (memcgctl sim) connect to the
 * daemon's socket and declare their memory in the workload language; the
 * daemon charges it through the engine for the peer's pid. Owns the socket,
 * the connections and each user's named files; never trusts a pid the peer
 * claims (the kernel's SO_PEERPIDFD / SO_PEERCRED only). */
#ifndef MEMCGFS_SIM_H
#define MEMCGFS_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct source_env;
struct mcg_group;
struct sim_server;

/* The socket of the mount at mountpoint (an absolute, resolved path) made
 * in the caller's mount namespace: one per mount instance (two daemons on
 * the same path in two namespaces have two), the same for every worker of
 * a mount. Clients learn it from the mount (its status attribute's
 * "socket" line), never by computing it. */
int sim_socket_path(const char *mountpoint, char *buf, size_t size);
/* The path the server listens on. */
const char *sim_path(const struct sim_server *s);

struct sim_server *sim_start(struct source_env *env);
/* Stop accepting and end every connection (their threads are gone when it
 * returns); the lookups below still answer, with nothing connected. */
void sim_stop(struct sim_server *s);
void sim_free(struct sim_server *s);
/* Move charge at immigrate for the simulated task tgid (if it is one):
 * its charges selected by mask go to dst. 0 (also when pid is not a
 * simulated task), or -ENOMEM with nothing moved. */
int sim_move(struct sim_server *s, pid_t tgid, struct mcg_group *dst, unsigned mask);

/* Whether tgid is a connected simulated task (its memory is declared, not
 * mirrored). */
bool sim_connected(struct sim_server *s, pid_t tgid);
/* Whether tgid is a fork (its parent ppid, 0 if unknown) of a connected
 * task that has not exec'd: it will connect on its own or be mirrored. */
bool sim_fork_of_task(struct sim_server *s, pid_t tgid, pid_t ppid);

/* The OOM killer chose the task with that pid: if it is a simulated task,
 * SIGKILL it through the pidfd its connection holds (unless it is the
 * daemon, a PID 1, or has oom_score_adj -1000) and return true; false
 * when no connection is that task. */
bool sim_kill(struct sim_server *s, pid_t pid);

/* Limits per user (uid of the connecting process), docs/security.md. */
#define SIM_USER_CONNS  16            /* connections (a daemon thread each) */
#define SIM_MAX_CONNS   512           /* connections of all users */
#define SIM_USER_FILES  64            /* named files */

#endif
