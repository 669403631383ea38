/* sources.c: the registry of charge sources (sources.h). Calls each
 * registered source's ops and logs OOM kills in the kernel's words; never
 * signals, charges or samples itself. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "engine/engine.h"
#include "fs/cgfs.h"
#include "fs/registry.h"
#include "os/proc.h"
#include "util/log.h"

int cgfs_source_add(struct cgfs *fs, const struct source_ops *ops, void *self)
{
	int n = atomic_load(&fs->nsources);

	if (n == CGFS_SOURCES)
		return -ENOSPC;
	fs->sources[n] = (struct cgfs_source){ ops, self };
	atomic_store(&fs->nsources, n + 1);
	return 0;
}

void cgfs_sources_settle(struct cgfs *fs, pid_t tgid, struct mcg_group *dst)
{
	for (int i = 0, n = atomic_load(&fs->nsources); i < n; i++)
		if (fs->sources[i].ops->settle)
			fs->sources[i].ops->settle(fs->sources[i].self, tgid, dst);
}

int cgfs_sources_move(struct cgfs *fs, pid_t tgid, struct mcg_group *dst, unsigned mask)
{
	int err = 0;

	for (int i = 0, n = atomic_load(&fs->nsources); i < n && !err; i++)
		if (fs->sources[i].ops->move)
			err = fs->sources[i].ops->move(fs->sources[i].self, tgid, dst, mask);
	return err;
}

void cgfs_sources_attached(struct cgfs *fs, pid_t tgid)
{
	for (int i = 0, n = atomic_load(&fs->nsources); i < n; i++)
		if (fs->sources[i].ops->attached)
			fs->sources[i].ops->attached(fs->sources[i].self, tgid);
}

void cgfs_sources_refresh(struct cgfs *fs, struct mcg_group *g)
{
	for (int i = 0, n = atomic_load(&fs->nsources); i < n; i++)
		if (fs->sources[i].ops->refresh)
			fs->sources[i].ops->refresh(fs->sources[i].self, g);
}

void cgfs_sources_place(struct cgfs *fs)
{
	for (int i = 0, n = atomic_load(&fs->nsources); i < n; i++)
		if (fs->sources[i].ops->place)
			fs->sources[i].ops->place(fs->sources[i].self);
}

size_t cgfs_sources_describe(struct cgfs *fs, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (int i = 0, n = atomic_load(&fs->nsources); i < n && len + 1 < size; i++)
		if (fs->sources[i].ops->describe) {
			int k = fs->sources[i].ops->describe(fs->sources[i].self, buf + len, size - len);

			if (k < 0 || (size_t)k >= size - len)
				break;            /* (cut: what fitted stays) */
			len += (size_t)k;
		}
	buf[len < size ? len : size - 1] = '\0';
	return len < size ? len : size - 1;
}

/* The kernel's report of a memcg OOM kill (mem_cgroup_print_oom_meminfo,
 * dump_oom_victim and __oom_kill_process print these lines), one message a
 * line. Sizes are kB; a limit never set reads as the kernel's maximum. */
static void cgfs_sources_report(struct cgfs *fs, pid_t pid, struct mcg_group *over,
				struct mcg_group *victim, const struct proc_oom_info *v)
{
	static const struct { enum mcg_counter c; const char *name; } rows[] = {
		{ MCG_MEM, "memory" }, { MCG_MEMSW, "memory+swap" }, { MCG_KMEM, "kmem" },
	};
	char opath[4096], vpath[4096];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		mcg_log(MCG_LOG_WARNING, "%s: usage %llukB, limit %llukB, failcnt %lu", rows[i].name,
			(unsigned long long)mcg_usage(over, rows[i].c) * (PC_PAGE_SIZE / 1024),
			(unsigned long long)mcg_limit(over, rows[i].c) * (PC_PAGE_SIZE / 1024),
			mcg_failcnt(over, rows[i].c));
	if (mcg_path(fs->eng, over, opath, sizeof(opath)) < 0)
		strcpy(opath, "?");
	if (mcg_path(fs->eng, victim, vpath, sizeof(vpath)) < 0)
		strcpy(vpath, "?");
	mcg_log(MCG_LOG_ERR, "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
		"mems_allowed=0,oom_memcg=%s,task_memcg=%s,task=%s,pid=%d,uid=%u",
		opath, vpath, v->comm, (int)pid, (unsigned)v->uid);
	mcg_log(MCG_LOG_ERR, "Memory cgroup out of memory: Killed process %d (%s) total-vm:%ldkB, "
		"anon-rss:%ldkB, file-rss:%ldkB, shmem-rss:%ldkB, UID:%u pgtables:%ldkB oom_score_adj:%d",
		(int)pid, v->comm, v->total_vm_kb, v->anon_kb, v->file_kb, v->shmem_kb,
		(unsigned)v->uid, v->pte_kb, v->oom_score_adj);
}

void cgfs_sources_kill(uint32_t pid, struct mcg_group *over, struct mcg_group *victim, void *arg)
{
	struct cgfs *fs = arg;
	struct proc_oom_info v;

	/* read before the signal: a killed process's figures are gone */
	if (proc_read_oom_info((pid_t)pid, &v) == 0)
		cgfs_sources_report(fs, (pid_t)pid, over, victim, &v);
	for (int i = 0, n = atomic_load(&fs->nsources); i < n; i++)
		if (fs->sources[i].ops->kill &&
		    fs->sources[i].ops->kill(fs->sources[i].self, (pid_t)pid))
			return;
}
