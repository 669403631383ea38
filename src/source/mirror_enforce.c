/* mirror_enforce.c: what the mirror does to a real process: signals
 * through the pidfd it holds (never a PID number), SIGSTOP under
 * oom_kill_disable with the watchdog told first, SIGCONT once there is
 * room, and MADV_PAGEOUT of what reclaim took from its file stand-ins.
 * Never charges. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/charge.h"
#include "engine/oom.h"
#include "source/mirror_int.h"
#include "source/proc.h"
#include "source/watchdog.h"

/* Every signal goes through the pidfd the mirror holds, which names the
 * process itself (a reused PID is never signalled); the pidfd stays open
 * until the record is freed. */
int mirror_signal(struct mirror_proc *p, int sig)
{
	return proc_pidfd_signal(p->pidfd, p->tgid, sig);
}

/* A charge failed. With oom_kill_disable the group named the engine's OOM
 * and this process stops until there is room. */
void mirror_oom(struct mirror *m, struct mirror_proc *p)
{
	struct mcg_group *over = p->mode.over;   /* the failed charge's */

	p->mode.over = NULL;
	if (!over)
		return;                   /* nothing killable: retried next time */
	if (!m->enforce || p->stopped) {
		mcg_put(over);
		return;
	}
	/* the watchdog learns of the stop first, so that the process is
	 * continued if the daemon dies by any means from here on; without a
	 * watchdog nothing would, so it is not stopped */
	if (watchdog_stopped(m->env->watchdog, p->pidfd, (uintptr_t)p)) {
		mcg_put(over);
		return;
	}
	if (mirror_signal(p, SIGSTOP)) {
		watchdog_continued(m->env->watchdog, (uintptr_t)p);
		mcg_put(over);
		return;
	}
	mcg_under_oom_add(over, 1);
	p->stopped = over;
}

void mirror_cont(struct mirror_proc *p)
{
	if (!p->stopped)
		return;
	mirror_signal(p, SIGCONT);
	watchdog_continued(p->m->env->watchdog, (uintptr_t)p);
	mcg_under_oom_add(p->stopped, -1);
	mcg_put(p->stopped);
	p->stopped = NULL;
}

/* Page out, in the real process, the mappings whose stand-ins reclaim took
 * pages from since this process last looked. true if it did any. */
bool mirror_pageout(struct mirror *m, struct mirror_proc *p)
{
	struct iovec iov[MIRROR_IOV];
	int n = 0;
	bool any = false;

	if (!m->enforce) {
		for (unsigned i = 0; i < p->nmap; i++)   /* account only */
			p->map[i].seen = atomic_load(&p->map[i].f->obj->evicted);
		return false;
	}
	for (unsigned i = 0; i < p->nmap; i++) {
		struct mirror_map *mm = &p->map[i];
		unsigned ev = atomic_load(&mm->f->obj->evicted);

		if (ev == mm->seen)
			continue;
		mm->seen = ev;
		iov[n].iov_base = (void *)mm->start;
		iov[n].iov_len = (size_t)mm->f->npages * PC_PAGE_SIZE;
		if (++n == MIRROR_IOV) {
			process_madvise(p->pidfd, iov, (size_t)n, MADV_PAGEOUT, 0u);
			n = 0;
			any = true;
		}
	}
	if (n) {                          /* the rest, in one call */
		process_madvise(p->pidfd, iov, (size_t)n, MADV_PAGEOUT, 0u);
		any = true;
	}
	return any;
}

/* The pidfd turns readable when the process has exited. */
bool mirror_exited(struct mirror_proc *p)
{
	return proc_pidfd_exited(p->pidfd);
}
