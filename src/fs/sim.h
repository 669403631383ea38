/* sim.h: simulated tasks. Real processes (memcgctl sim) connect to the
 * daemon's socket and declare their memory in the workload language; the
 * daemon charges it through the engine for the peer's pid. Owns the socket,
 * the connections and the shared named files; never trusts a pid the peer
 * claims (SO_PEERCRED only). */
#ifndef MEMCGFS_SIM_H
#define MEMCGFS_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cgfs;
struct mcg_group;
struct sim_server;

/* The socket of the mount at mountpoint (an absolute, resolved path). */
int sim_socket_path(const char *mountpoint, char *buf, size_t size);

struct sim_server *sim_start(struct cgfs *fs);
void sim_stop(struct sim_server *s);
/* Move charge at immigrate for the simulated task tgid (if it is one):
 * its charges selected by mask go to dst. 0 (also when pid is not a
 * simulated task), or -ENOMEM with nothing moved. */
int sim_move(struct sim_server *s, pid_t tgid, struct mcg_group *dst, unsigned mask);

/* Whether tgid is a connected simulated task (its memory is declared, not
 * mirrored), or a fork of one (its parent ppid, 0 if unknown) that has not
 * exec'd. */
bool sim_owns(struct sim_server *s, pid_t tgid, pid_t ppid);

/* The engine's kill hook: SIGKILL the simulated task with that pid, unless
 * it is the daemon, a PID 1, or has oom_score_adj -1000. */
void sim_kill(uint32_t pid, void *fs);

#endif
