/* mirror_enforce.c: what the mirror does to a real process: signals
 * through the pidfd it holds (never a PID number), SIGSTOP under
 * oom_kill_disable with the watchdog told first, SIGCONT once there is
 * room, and MADV_PAGEOUT of what reclaim took from its file stand-ins,
 * confirmed by the next sample, with a bounded back-off (stand-ins pinned
 * unevictable) when the kernel would not page them out. Never charges. */
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

#include "engine/engine.h"
#include "os/proc.h"
#include "os/watchdog.h"
#include "source/mirror_int.h"

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

/* Every resident stand-in of f unevictable (on) or evictable again. */
static void mirror_pin_file(struct mirror_file *f, bool on)
{
	for (uint32_t i = 0; i < f->npages; i++)
		if (vm_resident(f->r, i))
			vm_pin(f->r, i, on);
}

void mirror_file_unpin(struct mirror_file *f)
{
	if (atomic_exchange(&f->pinned, false))
		mirror_pin_file(f, false);
}

/* The pin of f ends when its time has come: reclaim may take its
 * stand-ins again, and the next pageout is the retry. */
static void mirror_pin_expire(struct mirror *m, struct mirror_file *f)
{
	if (atomic_load(&f->pinned) && mirror_now(m) >= atomic_load(&f->pin_until))
		mirror_file_unpin(f);
}

bool mirror_pageout_due(struct mirror *m, const struct mirror_proc *p)
{
	uint64_t now = mirror_now(m);

	for (unsigned i = 0; i < p->nmap; i++) {
		struct mirror_file *f = p->map[i].f;

		if (atomic_load(&f->obj->evicted) != p->map[i].seen ||
		    (atomic_load(&f->pinned) && now >= atomic_load(&f->pin_until)))
			return true;
	}
	return false;
}

/* The resident pages of mm's mapping in sample s (0: not in it). */
static long mirror_sample_rss(const struct mirror_sample *s, const struct mirror_map *mm)
{
	for (size_t i = 0; i < s->n; i++)
		if (mirror_map_is(mm, &s->files[i]))
			return s->files[i].rss;
	return 0;
}

/* One process_madvise for the n mappings of iov (theirs in out): an error
 * fails them all. */
static void mirror_madvise(struct mirror_proc *p, struct iovec *iov, struct mirror_map **out, int n)
{
	if (process_madvise(p->pidfd, iov, (size_t)n, MADV_PAGEOUT, 0u) >= 0)
		return;
	for (int i = 0; i < n; i++)
		out[i]->out_rss = -1;
}

/* Reclaim uncharged the stand-ins at once; the sample that follows this
 * pageout confirms it (mirror_pageout_done) or charges back what stayed
 * (mirror_fill), so usage is below what the process has resident only
 * between an eviction and the next sample (which a read of the group's
 * usage does first: mirror_refresh). */
bool mirror_pageout(struct mirror *m, struct mirror_proc *p, const struct mirror_sample *s)
{
	struct iovec iov[MIRROR_IOV];
	struct mirror_map *out[MIRROR_IOV];
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

		mirror_pin_expire(m, mm->f);
		mm->out = false;
		if (ev == mm->seen)
			continue;
		mm->seen = ev;
		mm->out = true;
		mm->out_rss = mirror_sample_rss(s, mm);
		out[n] = mm;
		iov[n].iov_base = (void *)mm->start;
		iov[n].iov_len = (size_t)mm->f->npages * PC_PAGE_SIZE;
		if (++n == MIRROR_IOV) {
			mirror_madvise(p, iov, out, n);
			n = 0;
			any = true;
		}
	}
	if (n) {                          /* the rest, in one call */
		mirror_madvise(p, iov, out, n);
		any = true;
	}
	return any;
}

bool mirror_pageout_done(struct mirror *m, struct mirror_map *mm, long rss)
{
	struct mirror_file *f = mm->f;
	unsigned fails;
	uint64_t delay;

	mm->out = false;
	if (mm->out_rss == 0 || (mm->out_rss > 0 && rss < mm->out_rss)) {
		atomic_store(&f->fails, 0);
		return true;
	}
	/* nothing went (pages another process maps, a file we may not page
	 * out, an error): what reclaim took is charged back by the fill that
	 * follows, and stays unevictable for the back-off, so that
	 * background reclaim does not spin on it */
	fails = atomic_fetch_add(&f->fails, 1);
	delay = MIRROR_PIN_MIN_NS << (fails < 5 ? fails : 5);
	atomic_store(&f->pin_until, mirror_now(m) + (delay < MIRROR_PIN_MAX_NS ? delay : MIRROR_PIN_MAX_NS));
	if (!atomic_exchange(&f->pinned, true))
		mirror_pin_file(f, true);
	return false;
}

/* The pidfd turns readable when the process has exited. */
bool mirror_exited(struct mirror_proc *p)
{
	return proc_pidfd_exited(p->pidfd);
}
