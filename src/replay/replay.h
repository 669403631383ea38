/* replay.h: deterministic scenarios. A scenario file describes a simulated
 * machine, groups, files and tasks running workload programs; it runs in
 * an engine of its own on a simulated clock with a seeded RNG, one task
 * step at a time (always the task that is due first), and prints a
 * timeline. The same file gives byte-identical output every time. Owns the
 * language and the scheduler; never touches real processes or time. */
#ifndef MEMCGFS_REPLAY_H
#define MEMCGFS_REPLAY_H

#include <stdio.h>

/* Run the scenario text, printing the timeline to out and errors (with
 * line numbers) to err. 0, or -EINVAL for a bad scenario. */
int replay_run(const char *text, FILE *out, FILE *err);

#endif
