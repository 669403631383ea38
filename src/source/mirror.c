/* mirror.c: real processes as stand-in pages: the sampler and the API.
 * One thread samples every mirrored process (more often near a limit, and
 * on reads of usage and statistics) and reconciles the engine with what
 * /proc says, through the ledger (mirror_ledger.c) for anon and shmem, the
 * shared file stand-ins (mirror_standin.c) for file pages, and enforcement
 * (mirror_enforce.c) past a limit. Owns the list of processes, their
 * lifetimes and their schedule; an exit releases what the process had at
 * once (its pidfd turns readable: the exit watch, os/pidwatch.c). Lock order: a
 * process's lock, then engine locks; the mirror's own lock and the file
 * table's are never held while charging. Never signals but through
 * mirror_enforce.c. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "os/pidwatch.h"
#include "os/proc.h"
#include "os/watchdog.h"
#include "source/mirror.h"
#include "source/mirror_int.h"
#include "source/source.h"

/* ---- one sample ---- */

static bool mirror_near_limit(struct mcg_group *g, long *headroom)
{
	bool near = false;

	*headroom = PC_MAX;
	for (; g && !mcg_is_root(g); g = mcg_parent(g)) {
		long max = mcg_limit(g, MCG_MEM), use = mcg_usage(g, MCG_MEM);

		if (max == PC_MAX)
			continue;
		if (max - use < *headroom)
			*headroom = max - use;
		near |= use * 10 >= max * 9;
	}
	return near;
}

static void mirror_release(struct mirror_proc *p);
static struct mirror_proc *mirror_find(struct mirror *m, pid_t tgid);
static void mirror_unwatch(struct mirror_proc *p);
static void mirror_poke(struct mirror *m, uint64_t at);
static void mirror_unpin(struct mirror_proc *p);

/* Nothing moved in p since its last full sample (its /proc/PID/stat reads
 * the same, it was not attached anywhere, nothing of it waits to be paged
 * out or continued): no smaps read, and the next look backs off, never
 * later than growth at MIRROR_IDLE_RATE could eat its group's headroom.
 * Near a limit it is sampled in full as always. Caller holds p->lock. */
static bool mirror_idle(struct mirror *m, struct mirror_proc *p, uint64_t now)
{
	struct proc_activity a;
	bool forced = atomic_exchange(&p->force, false), same;

	p->forced = forced;
	struct mcg_group *g;
	long headroom;
	uint64_t period, bound;

	if (p->stat_fd < 0)
		p->stat_fd = proc_open_stat(p->tgid);
	if (p->stat_fd < 0 || proc_read_activity(p->stat_fd, &a)) {
		p->act_valid = false;
		p->act_new = (struct proc_activity){ 0 };   /* (no execve seen) */
		return false;
	}
	same = p->act_valid && !forced && !p->stopped && !p->sim && !mirror_pageout_due(m, p) &&
	       a.minflt == p->act.minflt && a.majflt == p->act.majflt && a.vsize == p->act.vsize &&
	       a.threads == p->act.threads && a.rss == p->act.rss &&
	       a.start_code == p->act.start_code && a.start_stack == p->act.start_stack;
	/* the reading a full sample starts from: it is the baseline once that
	 * sample is done (mirror_sample's end), not before */
	p->act_new = a;
	p->act_valid = false;
	if (!same) {
		p->idle_ns = 0;
		return false;
	}
	p->act_valid = true;
	g = task_group(m->env->eng, p->tgid);
	if (mirror_near_limit(g, &headroom)) {
		mcg_put(g);
		p->idle_ns = 0;
		return false;
	}
	mcg_put(g);
	p->idle_ns = p->idle_ns ? p->idle_ns * 2 : 2 * MIRROR_PERIOD_NS;
	if (p->idle_ns > MIRROR_IDLE_MAX_NS)
		p->idle_ns = MIRROR_IDLE_MAX_NS;
	period = p->idle_ns;
	bound = headroom == PC_MAX ? UINT64_MAX :
		(uint64_t)headroom * PC_PAGE_SIZE / MIRROR_IDLE_RATE;
	if (period > bound)
		period = bound > MIRROR_PERIOD_NS ? bound : MIRROR_PERIOD_NS;
	/* on a grid: idle processes come due together, in few rounds of the
	 * sampler (each round reads every process's next_ns); a period of
	 * seconds on a grid of MIRROR_IDLE_GRID_NS, so that a thousand idle
	 * processes wake it once a second, not ten times (the period comes
	 * out shorter, never longer) */
	{
		uint64_t grid = period >= 2 * MIRROR_IDLE_GRID_NS ? MIRROR_IDLE_GRID_NS : MIRROR_PERIOD_NS;

		p->next_ns = (now + period) / grid * grid;
	}
	return true;
}

/* p ran execve since the last reading that showed its image: the old
 * image is gone, and with it every page and page table charged for it
 * (§11.9: what the new one faults is the current group's). A reading in
 * the middle of an execve shows none (0) and is skipped. Not seen for a
 * program placed exactly where the old one was (no address randomisation,
 * same program). */
static bool mirror_execed(struct mirror_proc *p)
{
	const struct proc_activity *a = &p->act_new;
	bool changed;

	if (p->sim || !a->start_stack)
		return false;
	changed = p->image_stack && (a->start_code != p->image_code ||
				     a->start_stack != p->image_stack);
	p->image_code = a->start_code;
	p->image_stack = a->start_stack;
	return changed;
}

/* Reconcile p with /proc. Caller holds p->lock. */
/* A stopped process (oom_kill_disable) goes on once its group has room
 * for what it is missing, or its killer may act. */
static void mirror_maybe_cont(struct mirror_proc *p, const struct mirror_sample *s)
{
	long missing = s->anon + s->locked + s->shmem - mirror_ledger_mem(p);
	struct mcg_group *o = p->stopped;

	if (!mcg_oom_kill_disable(o) ||
	    mcg_limit(o, MCG_MEM) - mcg_usage(o, MCG_MEM) >= (missing > 0 ? missing : 1))
		mirror_cont(p);
}

/* Only anon moved since the last smaps read (the mm's file, shmem and
 * locked counters in t read as then, within MIRROR_SMAPS_MAX_NS, nothing
 * else to reconcile): s gets that read's counts with the anon moved by
 * what RssAnon moved, and no file mappings (they stay as they are).
 * false: read smaps. A read made while the process grew is off by what it
 * grew meanwhile: it is read again once the process is still. A sample
 * that must be exact (a reader's) reads smaps: the mm's counters are
 * per-CPU sums, not exact at every moment. */
static bool mirror_counted(struct mirror *m, struct mirror_proc *p, const struct proc_task *t,
			   uint64_t now, bool exact, struct mirror_sample *s)
{
	bool still = t && t->rss_anon_kb == p->prev_anon_kb;

	if (t)
		p->prev_anon_kb = t->rss_anon_kb;
	if (!t || !p->smaps_valid || p->forced || p->sim || p->stopped || p->smaps_cow ||
	    t->rss_anon_kb < 0 ||
	    exact || (still && !p->smaps_exact) || now - p->smaps_ns > MIRROR_SMAPS_MAX_NS ||
	    t->rss_file_kb != p->smaps_file_kb || t->rss_shmem_kb != p->smaps_shmem_kb ||
	    t->vm_lck_kb != p->smaps_lck_kb || mirror_pageout_due(m, p))
		return false;
	s->anon = p->smaps_anon + (t->rss_anon_kb - p->smaps_anon_kb) / (PC_PAGE_SIZE / 1024);
	if (s->anon < 0)
		s->anon = 0;
	s->locked = p->smaps_locked;
	s->shmem = p->smaps_shmem;
	s->n = 0;
	return true;
}

/* Anon pages p shares copy-on-write with an older process are that one's
 * to count (the kernel charged them once, at the first fault, and a fork
 * charges nothing): they leave s's anon. */
static void mirror_cow(struct mirror *m, struct mirror_proc *p, const struct proc_task *t,
		       struct mirror_sample *s)
{
	struct mirror_proc *parent;
	bool defer = false;
	uint64_t *pfn;
	long n, others;

	p->smaps_cow = s->ncow > 0;
	if (!m->frames || p->sim || (!s->ncow && !p->claimer.n))
		return;                  /* (no frame numbers: counted in each) */
	if (!p->claimer.alive) {
		p->claimer = (struct mirror_claimer){ .tgid = p->tgid, .alive = true,
						      .start = p->act_new.start_time };
	}
	/* a parent mirrored before it came that has not read its smaps
	 * since (its fork moved none of its counters) shares them with it:
	 * they are the parent's to claim, at its next sample, which comes
	 * at once */
	if (s->ncow && t && t->ppid > 0 && (parent = mirror_find(m, t->ppid))) {
		if (parent != p && !atomic_load(&parent->gone) && parent->born_ns < p->born_ns &&
		    atomic_load(&parent->smaps_ns) < p->born_ns) {
			defer = true;
			atomic_store(&parent->force, true);
			parent->next_ns = 0;     /* (racy hint, as mirror_track's) */
			mirror_poke(m, 0);
		}
		mirror_unpin(parent);
	}
	if ((n = mirror_shared_frames(p->tgid, s->cow, s->ncow, &pfn)) < 0)
		return;                  /* (gone meanwhile: the next sample) */
	others = mirror_shared_claim(&m->shared, &p->claimer, pfn, (size_t)n, defer);
	s->anon = s->anon > others ? s->anon - others : 0;
}

/* s was read from smaps, after t: the base of mirror_counted, exact if
 * the counters read the same after it. */
static void mirror_smaps_read(struct mirror_proc *p, const struct proc_task *t, uint64_t now,
			      const struct mirror_sample *s)
{
	struct proc_task after;

	p->smaps_valid = t && !p->sim && t->rss_anon_kb >= 0;
	p->smaps_exact = p->smaps_valid && proc_read_task(p->tgid, &after) == 0 &&
			 after.rss_anon_kb == t->rss_anon_kb && after.rss_file_kb == t->rss_file_kb &&
			 after.rss_shmem_kb == t->rss_shmem_kb && after.vm_lck_kb == t->vm_lck_kb;
	p->smaps_ns = now;
	p->smaps_anon = s->anon;
	p->smaps_locked = s->locked;
	p->smaps_shmem = s->shmem;
	if (t) {
		p->smaps_anon_kb = t->rss_anon_kb;
		p->smaps_file_kb = t->rss_file_kb;
		p->smaps_shmem_kb = t->rss_shmem_kb;
		p->smaps_lck_kb = t->vm_lck_kb;
	}
}

/* The sample's file mappings into p's stand-ins (charged in a child
 * group only); mappings that are gone lose their region, their pages
 * staying as page cache. The first charge error, or 0. */
static int mirror_account_files(struct mirror *m, struct mirror_proc *p, struct mirror_sample *s,
				bool in_child, unsigned cpu, int err)
{
	for (unsigned i = 0; i < p->nmap; i++)
		p->map[i].alive = false;
	for (size_t i = 0; i < s->n; i++) {
		struct mirror_map *mm = mirror_map_for(m, p, &s->files[i]);
		long rss = s->files[i].rss;   /* as /proc has it */
		bool trim;

		if (p->sim)
			mirror_sim_file(p, mm, &s->files[i]);
		if (!mm)
			continue;
		/* a pageout is accounted only once this sample shows
		 * it: the stand-ins are then trimmed to what stayed */
		trim = mm->out && mirror_pageout_done(m, mm, rss);
		if (!p->sim)
			mirror_file_base(mm, &s->files[i], in_child);
		mm->alive = true;
		if (in_child && !err)
			err = mirror_fill(m, mm, s->files[i].rss, s->files[i].dirty, cpu, trim);
	}
	/* unmapped: the mapping goes, its pages stay as page cache */
	for (unsigned i = 0; i < p->nmap;)
		if (!p->map[i].alive) {
			/* (paged out to nothing: smaps shows it no more,
			 * and neither has the page cache its pages) */
			if (p->map[i].out && mirror_pageout_done(m, &p->map[i], 0) && in_child)
				mirror_fill(m, &p->map[i], 0, 0, cpu, true);
			mirror_map_gone(m, &p->map[i]);
			vm_region_free(p->map[i].map);
			p->map[i] = p->map[--p->nmap];
		} else {
			i++;
		}
	return err;
}

/* A running process's sample into g: its anon and shmem ledgers, its
 * files, its kernel memory; an OOM or a kill as the charges say. The
 * first charge error, or 0. */
static int mirror_account(struct mirror *m, struct mirror_proc *p, struct mirror_sample *s,
			  struct mcg_group *g, const struct proc_task *t, bool in_child, unsigned cpu,
			  bool files)
{
	int err;

	vm_object_set_group(p->obj, g);
	err = mirror_ledger_sample(p, s, g, cpu);
	if (files)                   /* (else they stay as the last read left them) */
		err = mirror_account_files(m, p, s, in_child, cpu, err);
	if (err == -ENOMEM)
		mirror_oom(m, p);
	else if (err == -EFAULT)
		mirror_release(p);   /* the OOM killer chose it */
	if (!p->gone) {
		long kmem = mirror_kmem_pages(t);

		if (kmem >= 0 && p->sim)
			kmem = mirror_sim_take(&p->sim_left, kmem - p->base_kmem);
		if (kmem >= 0)
			mirror_ledger_set(p, MK_KMEM, g, kmem, cpu);
	}
	return err;
}

/* The next sample: sooner near a limit, and before growth at the last
 * rate could reach it. Returns the headroom g's limits leave (PC_MAX:
 * none). */
static long mirror_schedule(struct mirror_proc *p, struct mcg_group *g, uint64_t now, int err)
{
	long headroom, total = mirror_ledger_mem(p);
	uint64_t period = mirror_near_limit(g, &headroom) ? MIRROR_NEAR_PERIOD_NS : MIRROR_PERIOD_NS;

	if (p->last_ns && total > p->last_pages && headroom < PC_MAX) {
		uint64_t reach = (uint64_t)((double)headroom * (double)(now - p->last_ns) /
					    (double)(total - p->last_pages) / 2);

		if (reach < period)
			period = reach > MIRROR_NEAR_PERIOD_NS ? reach : MIRROR_NEAR_PERIOD_NS;
	}
	p->last_pages = total;
	p->last_ns = now;
	p->next_ns = now + period;
	p->act = p->act_new;             /* a full sample done: the idle baseline */
	/* (not one from the counters on a smaps read the process grew
	 * through: nothing moving afterwards must not keep it) */
	p->act_valid = !err && (!p->last_counted || p->smaps_exact);
	return headroom;
}

/* The tracer tells the sampler of p (mirror_alarmed) as soon as p has
 * grown past what this sample read by half the headroom its groups' limits
 * leave (MIRROR_ALARM_MIN_PAGES at least): a process faulting in memory
 * fast meets its limit within that much of it, not a sampling period
 * later. No alarm outside a limited group (headroom PC_MAX), for a
 * simulated task, or without the tracer. Without a reading of the
 * process's counters (t), it stays as it is, fired or not. Caller holds
 * p->lock. */
static void mirror_arm(struct mirror *m, struct mirror_proc *p, long headroom,
		       const struct proc_task *t, bool in_child)
{
	bool fired;
	uint64_t at = 0;

	if (!t)
		return;
	fired = atomic_exchange(&p->alarm_fired, false);
	if (in_child && !p->sim && headroom != PC_MAX && t->rss_anon_kb >= 0 &&
	    t->rss_file_kb >= 0 && t->rss_shmem_kb >= 0) {
		long step = headroom / 2 > MIRROR_ALARM_MIN_PAGES ? headroom / 2 :
								  MIRROR_ALARM_MIN_PAGES;

		at = (uint64_t)(t->rss_anon_kb + t->rss_file_kb + t->rss_shmem_kb) /
			     (PC_PAGE_SIZE / 1024) + (uint64_t)step;
	}
	if (at == p->alarm_at && !fired)
		return;
	if (mirror_pcache_alarm(m, p->tgid, at) == 0)
		p->alarm_at = at;
}

static void mirror_sample_one(struct mirror *m, struct mirror_proc *p, bool exact)
{
	struct mcg_engine *e = m->env->eng;
	struct mirror_sample s = { 0 };
	struct proc_task task, *t;        /* its /proc status, read once */
	unsigned cpu = (unsigned)p->tgid % e->m.cpus;
	struct mcg_group *g = NULL;
	uint64_t now = mirror_now(m);
	bool in_child, idle, counted;
	int err = 0;

	if (p->gone)
		return;
	/* /proc is read before the pidfd says the process is still ours */
	idle = mirror_idle(m, p, now);
	/* its charges go through the stock of the CPU it ran on last, as
	 * its faults' did on the kernel */
	if (p->act_new.processor >= 0)
		cpu = (unsigned)p->act_new.processor % e->m.cpus;
	t = !idle && proc_read_task(p->tgid, &task) == 0 ? &task : NULL;
	if (atomic_load(&p->obj->dead) || mirror_exited(p)) {
		mirror_release(p);       /* killed or exited */
		return;
	}
	if (idle)
		return;
	/* a simulated task's fork connects on its own in a moment; one that
	 * does not within the grace is mirrored like any other process */
	if (!p->sim && p->nera == 0 && p->nmap == 0 && now - p->born_ns < MIRROR_FORK_GRACE_NS &&
	    m->env->fork_of_simulated &&
	    m->env->fork_of_simulated(m->env->sim, p->tgid, t ? t->ppid : 0)) {
		p->next_ns = now + MIRROR_NEAR_PERIOD_NS;
		return;
	}
	if (mirror_execed(p)) {
		mirror_ledger_clear(p);  /* the old image is gone */
		p->smaps_valid = false;
	}
	counted = mirror_counted(m, p, t, now, exact, &s);
	if (!counted && mirror_read(m, p->tgid, &s)) {
		/* no mappings for a moment (an exec switching them): again soon */
		p->smaps_valid = false;
		p->next_ns = now + MIRROR_NEAR_PERIOD_NS;
		goto out;
	}
	if (!counted && mirror_pageout(m, p, &s) && mirror_read(m, p->tgid, &s)) {
		p->smaps_valid = false;
		goto out;                /* (exiting meanwhile: next time) */
	}
	p->last_counted = counted;
	if (!counted) {
		mirror_cow(m, p, t, &s);
		mirror_smaps_read(p, t, now, &s);
	}
	if (p->sim)
		mirror_sim_budget(p, &s);
	atomic_store(&p->obj->unkillable, !m->enforce || proc_oom_exempt_task(p->tgid, t));
	g = task_group(e, p->tgid);
	in_child = !mcg_is_root(g);
	if (!in_child && p->nera == 0 && p->nmap == 0 && !p->sim && !atomic_load(&p->held)) {
		mirror_release(p);       /* back in the root with nothing charged */
		goto out;
	}
	if (p->stopped)
		mirror_maybe_cont(p, &s);  /* room again (or the killer may act) */
	if (!p->stopped)
		err = mirror_account(m, p, &s, g, t, in_child, cpu, !counted);
	if (!p->gone)
		mirror_arm(m, p, mirror_schedule(p, g, now, err), t, in_child);
out:
	free(s.files);
	free(s.cow);
	if (g)
		mcg_put(g);
}

/* p comes due at `at`: wake the sampler if it planned to look later.
 * Takes m->lock (under p->lock, as the OOM path does). */
static void mirror_poke(struct mirror *m, uint64_t at)
{
	pthread_mutex_lock(&m->lock);
	if (at < m->wake_at) {
		m->wake_at = at;
		pthread_cond_signal(&m->wake);
	}
	pthread_mutex_unlock(&m->lock);
}

/* A sample of p, on any thread, and the sampler told when p is due next.
 * Caller holds p->lock. */
static void mirror_sample(struct mirror *m, struct mirror_proc *p, bool exact)
{
	mirror_sample_one(m, p, exact);
	if (!p->gone)
		mirror_poke(m, p->next_ns);
}

/* Every stand-in of p goes: anon and shmem uncharged, file pages stay as
 * page cache. Caller holds p->lock. */
static void mirror_release(struct mirror_proc *p)
{
	if (p->gone)
		return;
	if (p->alarm_at && mirror_pcache_alarm(p->m, p->tgid, 0) == 0)
		p->alarm_at = 0;
	mirror_cont(p);
	for (unsigned i = 0; i < p->nera; i++) {
		struct mirror_era *e = &p->era[i];

		if (e->kind == MK_KMEM && !mcg_is_root(e->g))
			uncharge_kmem(e->g, e->pages);
		mcg_put(e->g);
		free(e->reg);
	}
	for (unsigned i = 0; i < p->nmap; i++)
		mirror_map_gone(p->m, &p->map[i]);   /* (page cache nobody maps) */
	if (p->claimer.alive)
		mirror_shared_forget(&p->m->shared, &p->claimer);   /* younger sharers count them */
	free(p->era);
	free(p->map);
	p->era = NULL;
	p->map = NULL;
	p->nera = p->nmap = p->capmap = 0;
	vm_object_free(p->obj);          /* its regions, mappings included */
	p->obj = NULL;
	if (p->mode.over)
		mcg_put(p->mode.over);
	p->mode.over = NULL;
	/* gone once it is all given back: a read's refresh passes gone
	 * records by without their lock, so one that saw it before would
	 * show charges an exit is still giving back */
	p->gone = true;
	/* the pidfd stays until the record goes: mirror_kill may hold it */
}

static void mirror_unpin(struct mirror_proc *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	mirror_unwatch(p);
	close(p->pidfd);
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Unlink released processes. Caller holds m->lock. */
static void mirror_reap_locked(struct mirror *m)
{
	for (struct mirror_proc **pp = &m->procs; *pp;) {
		struct mirror_proc *p = *pp;

		/* no p->lock here: a sample holding it may be inside the OOM
		 * killer, which looks processes up under m->lock */
		if (atomic_load(&p->gone)) {
			*pp = p->next;
			atomic_fetch_sub(&m->nprocs, 1);
			mirror_unpin(p);
		} else {
			pp = &p->next;
		}
	}
}

/* The processes due by `due` (pinned, into *v, grown as needed; every one
 * for UINT64_MAX), and in *next the earliest time one of the others comes
 * due. A round touches only what it samples: the rest cost a load each,
 * with no lock and no pin (m->lock keeps them from going meanwhile). */
static size_t mirror_due(struct mirror *m, uint64_t due, struct mirror_proc ***v, size_t *cap,
			 uint64_t *next)
{
	size_t k = 0;

	pthread_mutex_lock(&m->lock);
	for (struct mirror_proc *p = m->procs; p; p = p->next) {
		uint64_t at = atomic_load_explicit(&p->next_ns, memory_order_relaxed);

		if (atomic_load_explicit(&p->gone, memory_order_relaxed))
			continue;
		if (at > due) {
			if (at < *next)
				*next = at;
			continue;
		}
		if (k == *cap) {
			size_t nc = *cap ? *cap * 2 : (size_t)atomic_load(&m->nprocs) + 1;
			struct mirror_proc **nv = realloc(*v, nc * sizeof(*nv));

			if (!nv) {            /* the rest wait for the next round */
				*next = due;
				break;
			}
			*v = nv;
			*cap = nc;
		}
		atomic_fetch_add(&p->refs, 1);
		(*v)[k++] = p;
	}
	pthread_mutex_unlock(&m->lock);
	return k;
}

static int mirror_older_first(const void *a, const void *b)
{
	uint64_t x = (*(struct mirror_proc *const *)a)->born_ns;
	uint64_t y = (*(struct mirror_proc *const *)b)->born_ns;

	return (x > y) - (x < y);
}

/* The processes of a round, the longest mirrored first: a parent's sample
 * claims the pages it shares with a child forked after it came before
 * the child's sample sees them (mirror_shared.c: the oldest counts), so
 * that one round never counts them in both. */
static void mirror_order(struct mirror_proc **v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), mirror_older_first);
}

static void *mirror_main(void *arg)
{
	struct mirror *m = arg;
	struct mirror_proc **v = NULL;
	size_t cap = 0;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		uint64_t now = mirror_now(m), next = now + MIRROR_ROUND_MAX_NS;
		struct timespec ts;
		size_t n;

		m->wake_at = UINT64_MAX;      /* (a round: pokes only lower it) */
		pthread_mutex_unlock(&m->lock);
		/* what the kernel reported so far: the faults that brought in
		 * the file pages the samples will find mapped */
		mirror_pcache_drain(m);
		/* (due within the coming round's lateness: now) */
		n = mirror_due(m, now + MIRROR_NEAR_PERIOD_NS / 2, &v, &cap, &next);
		mirror_order(v, n);
		for (size_t i = 0; i < n; i++) {
			struct mirror_proc *p = v[i];

			pthread_mutex_lock(&p->lock);
			if (!p->gone && p->next_ns <= now + MIRROR_NEAR_PERIOD_NS / 2)
				mirror_sample(m, p, false);
			if (!p->gone && p->next_ns < next)
				next = p->next_ns;
			pthread_mutex_unlock(&p->lock);
			mirror_unpin(p);
		}
		pthread_mutex_lock(&m->lock);
		mirror_reap_locked(m);
		if (m->stop)
			break;
		if (m->wake_at < next)
			next = m->wake_at;    /* came due during the round */
		/* rounds at least MIRROR_NEAR_PERIOD_NS apart (unless woken):
		 * processes due close together share one pass over the list */
		if (next < now + MIRROR_NEAR_PERIOD_NS)
			next = now + MIRROR_NEAR_PERIOD_NS;
		m->wake_at = next;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		pthread_cond_timedwait(&m->wake, &m->lock, &ts);
	}
	pthread_mutex_unlock(&m->lock);
	free(v);
	return NULL;
}

/* ---- exits ---- */

/* The kernel uncharges a process's memory as it exits, before its parent
 * reaps it: the mirror lets go of a record's charges when the pidfd it
 * watches says so, not at the next sample (an idle process's is seconds
 * away). On the watch's thread. */
static void mirror_exit_seen(void *arg, struct pidwatch *w, pid_t tgid, int fd)
{
	struct mirror_proc *p = mirror_find(arg, tgid);
	int mine = fd;

	if (!p)
		return;                  /* (its record went: the fd with it) */
	if (atomic_compare_exchange_strong(&p->watch_fd, &mine, -1))
		pidwatch_forget(w, fd);
	/* the page cache it added before it exited is charged while its
	 * record can still say where (not under p->lock: the events take it) */
	mirror_pcache_drain(arg);
	pthread_mutex_lock(&p->lock);
	if (!p->gone && mirror_exited(p))
		mirror_release(p);       /* unlinked by the sampler's next round */
	pthread_mutex_unlock(&p->lock);
	mirror_pcscan_drain(arg, false); /* (the files it had open let go) */
	mirror_unpin(p);
}

static const struct pidwatch_hooks mirror_exit_hooks = { .exited = mirror_exit_seen };

/* p's exit to be seen by the watch. Caller holds m->lock. */
static void mirror_watch(struct mirror *m, struct mirror_proc *p)
{
	int fd = m->exits ? fcntl(p->pidfd, F_DUPFD_CLOEXEC, 0) : -1;

	atomic_store(&p->watch_fd, fd);
	if (fd >= 0)
		pidwatch_add(m->exits, fd, p->tgid);
}

static void mirror_unwatch(struct mirror_proc *p)
{
	int fd = atomic_exchange(&p->watch_fd, -1);

	if (fd < 0)
		return;
	if (p->m->exits)
		pidwatch_forget(p->m->exits, fd);
	else
		close(fd);               /* (the watch has stopped) */
}

struct mirror *mirror_start(struct source_env *env, bool enforce, enum mirror_pc_source pcs)
{
	struct mirror *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;

	if (!m)
		return NULL;
	m->env = env;
	m->enforce = enforce;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->files_lock, NULL);
	pthread_mutex_init(&m->shared.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &ca);
	pthread_condattr_destroy(&ca);
	mirror_load_tmpfs(m);
	m->frames = mirror_shared_visible();
	m->exits = pidwatch_new(&mirror_exit_hooks, m);
	{
		static const struct mirror_pc_hooks hooks = {
			.pin = mirror_proc_pin, .unpin = mirror_proc_unpin,
			.alarmed = mirror_alarmed, .dropped = mirror_files_dropped,
			.resample = mirror_files_resample,
		};

		/* pc_err: why there are no events, scan_err: why no scan
		 * (-ENOSYS: not asked for) */
		m->pc_err = m->scan_err = -ENOSYS;
		if (pcs == MIRROR_PC_EVENTS && !(m->pc_err = mirror_pcache_start(m, &hooks)))
			pcs = MIRROR_PC_NONE;     /* (the events: no scan) */
		/* without them, the scan of open files, unless asked for none */
		if (pcs != MIRROR_PC_NONE && !(m->scan_err = mirror_pcache_open(m, &hooks)) &&
		    (m->scan_err = mirror_pcscan_start(m, true, pcs == MIRROR_PC_MINCORE)))
			mirror_pcache_stop(m);
	}
	if (pthread_create(&m->thread, NULL, mirror_main, m)) {
		mirror_pcscan_stop(m);
		mirror_pcache_stop(m);
		pidwatch_free(m->exits);
		pthread_mutex_destroy(&m->shared.lock);
		pthread_cond_destroy(&m->wake);
		pthread_mutex_destroy(&m->lock);
		pthread_mutex_destroy(&m->files_lock);
		free(m);
		return NULL;
	}
	return m;
}

void mirror_stop(struct mirror *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	mirror_pcscan_halt(m);           /* (its passes may let records go, which
					  * the exit watch may still hold) */
	pidwatch_free(m->exits);         /* (no exit is seen from here on) */
	m->exits = NULL;
	mirror_pcscan_stop(m);           /* (its processes' files uncharged) */
	mirror_pcache_stop(m);           /* (no event is charged from here on:
					  * the exit watch drained them too) */
	while (m->procs) {
		struct mirror_proc *p = m->procs;

		m->procs = p->next;
		pthread_mutex_lock(&p->lock);
		mirror_release(p);       /* continues what it stopped */
		pthread_mutex_unlock(&p->lock);
		mirror_unpin(p);
	}
	for (unsigned b = 0; b < MIRROR_FILE_BUCKETS; b++)
		while (m->files[b]) {
			struct mirror_file *f = m->files[b];

			m->files[b] = f->next;
			vm_object_free(f->obj);
			free(f);
		}
	mirror_shared_free(&m->shared);
	pthread_mutex_destroy(&m->shared.lock);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->files_lock);
	free(m);
}

/* The record of tgid, pinned, or NULL. */
static struct mirror_proc *mirror_find(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	for (p = m->procs; p; p = p->next)
		if (p->tgid == tgid) {
			atomic_fetch_add(&p->refs, 1);
			break;
		}
	pthread_mutex_unlock(&m->lock);
	return p;
}

/* The live record of tgid, or NULL. Caller holds m->lock. */
static struct mirror_proc *mirror_live_locked(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p;

	for (p = m->procs; p; p = p->next)
		if (p->tgid == tgid && !atomic_load(&p->gone))
			break;
	return p;
}

/* The live record of tgid, made if there is none (with a duplicate of
 * pidfd, or a pidfd of its own when pidfd is -1), pinned; NULL when it
 * cannot be had. Caller holds m->lock. */
static struct mirror_proc *mirror_get_locked(struct mirror *m, pid_t tgid, int pidfd)
{
	struct mirror_proc *p = mirror_live_locked(m, tgid);

	if (!p && !m->stop && (p = calloc(1, sizeof(*p)))) {
		p->m = m;
		p->tgid = tgid;
		p->born_ns = mirror_now(m);
		p->pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 0) :
			   (int)syscall(SYS_pidfd_open, tgid, 0);
		p->obj = p->pidfd >= 0 ? vm_object_new(m->env->eng, m->env->eng->root, true, (uint32_t)tgid) :
					 NULL;
		if (!p->obj) {
			if (p->pidfd >= 0)
				close(p->pidfd);
			free(p);
			return NULL;
		}
		p->obj->real = true;
		p->stat_fd = -1;
		mirror_watch(m, p);
		p->mode.nowait = true;
		vm_object_set_mode(p->obj, &p->mode);
		atomic_init(&p->refs, 1);
		pthread_mutex_init(&p->lock, NULL);
		p->next = m->procs;
		m->procs = p;
		atomic_fetch_add(&m->nprocs, 1);
		mirror_pcache_track(m, tgid);
		m->wake_at = 0;               /* due now (next_ns 0) */
		pthread_cond_signal(&m->wake);
	}
	if (p)
		atomic_fetch_add(&p->refs, 1);
	return p;
}

struct mirror_proc *mirror_proc_pin(struct mirror *m, pid_t tgid, bool make)
{
	struct mirror_proc *p;

	pthread_mutex_lock(&m->lock);
	if (make)
		p = mirror_get_locked(m, tgid, -1);
	else if ((p = mirror_live_locked(m, tgid)))
		atomic_fetch_add(&p->refs, 1);
	pthread_mutex_unlock(&m->lock);
	return p;
}

void mirror_proc_unpin(struct mirror_proc *p)
{
	mirror_unpin(p);
}

void mirror_alarmed(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p;

	pthread_mutex_lock(&m->lock);
	if ((p = mirror_live_locked(m, tgid))) {
		atomic_store(&p->alarm_fired, true);
		p->next_ns = 0;          /* sample it now (racy hint, as below) */
		m->wake_at = 0;
		pthread_cond_signal(&m->wake);
	}
	pthread_mutex_unlock(&m->lock);
}

void mirror_track(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p;

	if (!m || tgid == getpid())
		return;
	pthread_mutex_lock(&m->lock);
	if ((p = mirror_get_locked(m, tgid, -1))) {
		atomic_store(&p->force, true);   /* in full: its group changed */
		p->next_ns = 0;          /* sample it now (racy hint, fine) */
		m->wake_at = 0;
		pthread_cond_signal(&m->wake);
	}
	pthread_mutex_unlock(&m->lock);
	if (p)
		mirror_unpin(p);
}

int mirror_declare(struct mirror *m, pid_t tgid, int pidfd)
{
	struct mirror_sample s = { 0 };
	struct mirror_proc *p;
	int err = 0;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	/* marked before the list's lock goes, so that a sample between the
	 * two locks does not release it as a process with nothing charged */
	if ((p = mirror_get_locked(m, tgid, pidfd)))
		atomic_fetch_add(&p->held, 1);
	pthread_mutex_unlock(&m->lock);
	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&p->lock);     /* after a sample in progress */
	if (p->gone) {
		err = mirror_exited(p) ? -ESRCH : -EBUSY;   /* killed, or gone */
	} else if (mirror_charged(p) > MIRROR_SIM_SLACK / PC_PAGE_SIZE) {
		/* mirrored: it cannot opt out. (A process just born in a
		 * group, memcgctl run from a shell there, has been sampled
		 * with next to nothing: within the slack it may declare.) */
		err = -EBUSY;
	} else if (!p->sim && (err = mirror_read(m, tgid, &s)) == 0) {
		/* what it has now is its own from before; only growth past
		 * MIRROR_SIM_SLACK is charged from here on */
		struct proc_task task;

		p->base_anon = s.anon;
		p->base_locked = s.locked;
		p->base_shmem = s.shmem;
		p->base_kmem = proc_read_task(tgid, &task) == 0 ? mirror_kmem_pages(&task) : 0;
		if (p->base_kmem < 0)
			p->base_kmem = 0;
		for (size_t i = 0; i < s.n; i++) {
			struct mirror_map *mm = mirror_map_for(m, p, &s.files[i]);

			if (mm)
				mm->base = s.files[i].rss;
		}
		p->sim = true;
	}
	atomic_fetch_sub(&p->held, 1);
	pthread_mutex_unlock(&p->lock);
	free(s.files);
	free(s.cow);
	mirror_unpin(p);
	return err;
}

void mirror_files_resample(struct mirror *m, unsigned long dev, unsigned long ino)
{
	struct mirror_proc **v = NULL;
	uint64_t unused = UINT64_MAX;
	size_t cap = 0, n = mirror_due(m, UINT64_MAX, &v, &cap, &unused);

	for (size_t i = 0; i < n; i++) {
		struct mirror_proc *p = v[i];
		bool maps = false;

		pthread_mutex_lock(&p->lock);
		for (unsigned j = 0; j < p->nmap && !maps; j++)
			maps = p->map[j].f->dev == dev && p->map[j].f->ino == ino;
		if (maps && !p->gone) {
			atomic_store(&p->force, true);
			p->next_ns = mirror_now(m);
			mirror_poke(m, p->next_ns);
		}
		pthread_mutex_unlock(&p->lock);
		mirror_unpin(p);
	}
	free(v);
}

void mirror_refresh(struct mirror *m, struct mcg_group *g)
{
	struct mirror_proc **v = NULL;
	uint64_t unused = UINT64_MAX;
	size_t n, cap = 0;

	if (!m)
		return;
	mirror_pcache_drain(m);          /* what the kernel reported so far */
	mirror_pcscan_drain(m, true);    /* (or what the open files hold now) */
	if (atomic_load(&m->nprocs) == 0)
		return;
	n = mirror_due(m, UINT64_MAX, &v, &cap, &unused);
	mirror_order(v, n);
	for (size_t i = 0; i < n; i++) {
		struct mirror_proc *p = v[i];
		struct mcg_group *pg = task_group(m->env->eng, p->tgid);
		bool mine = mcg_in_subtree(pg, g);
		/* an exit the exit thread has not handled yet: its task has
		 * left the group (pidwatch), its charges not (the root's
		 * processes are few: the mirror lets go of those with
		 * nothing charged) */
		bool exited = (mine || mcg_is_root(pg)) && mirror_exited(p);

		mcg_put(pg);
		if (mine || exited) {
			pthread_mutex_lock(&p->lock);
			/* (attached since its last sample: that one saw it
			 * where it was, mirror_settle; one from the mm's
			 * counters is not exact enough for a reader) */
			if (!p->gone && (exited || atomic_load(&p->force) || mirror_pageout_due(m, p) ||
					 p->last_counted ||
					 mirror_now(m) - p->last_ns > MIRROR_READ_AGE_NS))
				mirror_sample(m, p, true);   /* (what the reader sees) */
			pthread_mutex_unlock(&p->lock);
		}
		mirror_unpin(p);
	}
	free(v);
	mirror_pcscan_drain(m, false);   /* (the files of those it released) */
}

void mirror_settle(struct mirror *m, pid_t tgid, struct mcg_group *dst)
{
	struct mirror_proc *p;
	bool held;

	if (!m || tgid == getpid())
		return;
	mirror_pcache_drain(m);          /* (before any record's lock) */
	mirror_pcscan_drain(m, true);
	pthread_mutex_lock(&m->lock);
	/* a process going to the root that was not mirrored has nothing to
	 * settle: nothing of it will be charged. Held before the list's lock
	 * goes, so that a sample between the two locks does not release a
	 * new record with nothing in it yet */
	p = mcg_is_root(dst) ? NULL : mirror_get_locked(m, tgid, -1);
	if ((held = p != NULL))
		atomic_fetch_add(&p->held, 1);
	pthread_mutex_unlock(&m->lock);
	if (!p && !(p = mirror_find(m, tgid)))
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->gone) {
		atomic_store(&p->force, true);
		mirror_sample(m, p, true);
	}
	if (held)
		atomic_fetch_sub(&p->held, 1);
	pthread_mutex_unlock(&p->lock);
	mirror_unpin(p);
}

int mirror_move(struct mirror *m, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	struct mirror_proc *p = NULL;
	struct move_stats st;
	struct mcg_group *cur;
	int err = 0;

	if (!(p = mirror_find(m, tgid)))
		return 0;
	pthread_mutex_lock(&p->lock);
	if (!p->gone && !atomic_load(&p->obj->dead)) {
		/* the source is the group the process is in now */
		cur = task_group(m->env->eng, tgid);
		vm_object_set_group(p->obj, cur);
		err = move_charges(p->obj, dst, mask, &st);
		for (unsigned i = 0; !err && !mcg_is_root(cur) && i < p->nera; i++) {
			struct mirror_era *e = &p->era[i];

			/* (kernel memory never moves) */
			if (e->g == cur && (e->kind == MK_ANON || e->kind == MK_LOCKED ?
					    mask & MOVE_ANON :
					    e->kind == MK_SHMEM && (mask & MOVE_FILE))) {
				mcg_get(dst);
				mcg_put(e->g);
				e->g = dst;
			}
		}
		/* the root's pages were never charged, so nothing above moved
		 * them: what the process has there is charged to dst by the
		 * next sample, as growth */
		if (!err && mcg_is_root(cur)) {
			if (mask & MOVE_ANON) {
				mirror_ledger_leave_root(p, MK_ANON);
				mirror_ledger_leave_root(p, MK_LOCKED);
			}
			if (mask & MOVE_FILE) {
				mirror_ledger_leave_root(p, MK_SHMEM);
				for (unsigned i = 0; i < p->nmap && !p->sim; i++)
					p->map[i].base = 0;
			}
		}
		mcg_put(cur);
	}
	pthread_mutex_unlock(&p->lock);
	mirror_unpin(p);
	return err;
}

bool mirror_kill(struct mirror *m, pid_t tgid)
{
	struct mirror_proc *p = mirror_find(m, tgid);

	if (!p)
		return false;
	/* no p->lock: the killer may run inside this process's own sample */
	if (m->enforce)
		mirror_signal(p, SIGKILL);
	mirror_unpin(p);
	return true;
}

static int mirror_src_move(void *self, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	return mirror_move(self, tgid, dst, mask);
}

static void mirror_src_settle(void *self, pid_t tgid, struct mcg_group *dst)
{
	mirror_settle(self, tgid, dst);
}

static void mirror_src_attached(void *self, pid_t tgid)
{
	mirror_track(self, tgid);
}

static void mirror_src_refresh(void *self, struct mcg_group *g)
{
	mirror_refresh(self, g);
}

static void mirror_src_place(void *self)
{
	if (self)
		mirror_pcache_place(self);
}

static bool mirror_src_kill(void *self, pid_t pid)
{
	return mirror_kill(self, pid);
}

/* The charge source of real processes, for memcgctl status: the /proc
 * sampler, and what it can see here. */
static int mirror_src_describe(void *self, char *buf, size_t size)
{
	struct mirror *m = self;
	bool events = mirror_pcache_events(m);
	const char *cache = events ? "" : m->scan ? "closed-file-page-cache," : "read-write-page-cache,";
	char misses[96];
	int n;

	snprintf(misses, sizeof(misses), "%s%s", cache, m->frames ? "" : "shared-cow-pages,");
	if (misses[0])
		misses[strlen(misses) - 1] = '\0';   /* (the last comma) */
	n = snprintf(buf, size,
			 "real_processes proc-sampler\n"
			 "real_processes_sees smaps,status,pidfd-exits%s%s%s\n"
			 "real_processes_misses %s\n"
			 "real_processes_mirrored %d\n",
			 m->frames ? ",pagemap-frames" : "", m->enforce ? ",enforcing" : "",
			 events ? ",page-cache-events" : m->scan ? ",open-file-page-cache" : "",
			 misses[0] ? misses : "none", atomic_load(&m->nprocs));
	if (n < 0 || (size_t)n >= size)
		return n;
	/* the source in use, and why each one before it is not */
	if (events) {
		n += snprintf(buf + n, size - (size_t)n, "page_cache_source ebpf\n");
	} else if (m->scan) {
		int cs_err;
		const char *way = mirror_pcscan_way(m, &cs_err);
		char why[160] = "";

		/* (why not the events, and for mincore why not cachestat) */
		if (m->pc_err != -ENOSYS)
			snprintf(why, sizeof(why), "ebpf: %s", strerror(-m->pc_err));
		if (cs_err)
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%scachestat: %s",
				 why[0] ? "; " : "", strerror(-cs_err));
		else if (!strcmp(way, "mincore"))
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%scachestat: not asked for",
				 why[0] ? "; " : "");
		n += snprintf(buf + n, size - (size_t)n, "page_cache_source %s%s%s%s\n", way,
			      why[0] ? " (" : "", why, why[0] ? ")" : "");
	} else
		n += snprintf(buf + n, size - (size_t)n, "page_cache_source none (ebpf: %s; cachestat: %s)\n",
			      m->pc_err == -ENOSYS ? "not asked for" : strerror(-m->pc_err),
			      m->scan_err == -ENOSYS ? "not asked for" : strerror(-m->scan_err));
	if (!m->pc || n < 0 || (size_t)n >= size)
		return n;
	n += mirror_pcache_describe(m, buf + n, size - (size_t)n);
	if (n < 0 || (size_t)n >= size)
		return n;
	return n + mirror_pcscan_describe(m, buf + n, size - (size_t)n);
}

const struct source_ops mirror_source_ops = {
	.name = "mirror",
	.settle = mirror_src_settle,
	.move = mirror_src_move,
	.attached = mirror_src_attached,
	.refresh = mirror_src_refresh,
	.place = mirror_src_place,
	.kill = mirror_src_kill,
	.describe = mirror_src_describe,
};
