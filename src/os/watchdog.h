/* watchdog.h: a small process that outlives the daemon and continues every
 * real process the daemon stopped (SIGSTOP under oom_kill_disable) when the
 * daemon dies by any means, SIGKILL included. The daemon hands it a pidfd
 * before each stop and takes it back after each continue; the watchdog
 * signals only through those pidfds. Owns that process and its socket;
 * never stops anything itself. */
#ifndef MEMCGFS_WATCHDOG_H
#define MEMCGFS_WATCHDOG_H

#include <stdint.h>

struct watchdog;

/* Fork and exec the watchdog (self, "--watchdog"); call before any thread
 * starts. NULL when it could not be started. */
struct watchdog *watchdog_start(const char *self);
/* Continue what is still stopped, end the watchdog and wait for it. */
void watchdog_stop(struct watchdog *w);
/* The process behind pidfd is about to be stopped, under the key. 0, or a
 * negative errno (then do not stop it: nothing would continue it). */
int watchdog_stopped(struct watchdog *w, int pidfd, uint64_t key);
/* The process stopped under key was continued (or never stopped). */
void watchdog_continued(struct watchdog *w, uint64_t key);
/* The watchdog process's main, on the socket at fd. Returns its exit
 * status once the daemon's end of the socket is gone. */
int watchdog_main(int fd);

#endif
