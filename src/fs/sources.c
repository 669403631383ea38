/* sources.c: the registry of charge sources (sources.h). Calls each
 * registered source's ops; never signals, charges or samples itself. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fs/cgfs.h"
#include "fs/sources.h"

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

void cgfs_sources_kill(uint32_t pid, void *arg)
{
	struct cgfs *fs = arg;

	for (int i = 0, n = atomic_load(&fs->nsources); i < n; i++)
		if (fs->sources[i].ops->kill &&
		    fs->sources[i].ops->kill(fs->sources[i].self, (pid_t)pid))
			return;
}
