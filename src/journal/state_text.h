/* state_text.h: what state.c takes from state_text.c, the state file's
 * text: the tasks a file records and the request its replay writes with.
 * Between the two halves of the state module only; nothing else includes
 * it. */
#ifndef MEMCGFS_STATE_TEXT_H
#define MEMCGFS_STATE_TEXT_H

#include <stddef.h>
#include <sys/types.h>

#include "fs/cgfs.h"

/* A member task a file records: its group (referenced), TID, start time. */
struct state_task {
	struct mcg_group *g;
	pid_t tid;
	unsigned long long start;
};

/* state_load_text, handing over the recorded tasks (*tasks malloc'ed,
 * free with state_text_tasks_free). */
int state_text_load(struct cgfs *fs, const char *name, const char *text, size_t len,
		    struct state_task **tasks, size_t *ntasks, char *msg, size_t msglen);
void state_text_tasks_free(struct state_task *tasks, size_t n);
/* The request a replayed write is made with: the daemon itself (its own
 * PID namespace, root, allowed to write release_agent). */
void state_req(struct cgfs_req *r, struct cgfs *fs, struct mcg_group *g);

#endif
