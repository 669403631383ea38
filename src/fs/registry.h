/* sources.h: the file layer's registry of charge sources (source.h). The
 * daemon registers each source once before serving; tasks and file reads
 * reach them through these calls, in registration order. Owns the list
 * only; never knows a source by name. */
#ifndef MEMCGFS_SOURCES_H
#define MEMCGFS_SOURCES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/source.h"

struct cgfs;

/* 0, or -ENOSPC past CGFS_SOURCES. Not thread-safe: call before serving. */
int cgfs_source_add(struct cgfs *fs, const struct source_ops *ops, void *self);
void cgfs_sources_settle(struct cgfs *fs, pid_t tgid, struct mcg_group *dst);
/* The first error of a source's move (each source moves only its own). */
int cgfs_sources_move(struct cgfs *fs, pid_t tgid, struct mcg_group *dst, unsigned mask);
void cgfs_sources_attached(struct cgfs *fs, pid_t tgid);
void cgfs_sources_refresh(struct cgfs *fs, struct mcg_group *g);
void cgfs_sources_place(struct cgfs *fs);
/* Every source's description lines into buf (size bytes, NUL-ended);
 * the length written. */
size_t cgfs_sources_describe(struct cgfs *fs, char *buf, size_t size);
/* The engine's kill hook (arg: the cgfs): the victim's own source signals
 * it; a PID no source knows is never signalled. The kill is logged in the
 * kernel's words (oom-kill: and "Memory cgroup out of memory: Killed
 * process"), with the victim's figures read from /proc just before. */
void cgfs_sources_kill(uint32_t pid, struct mcg_group *over, struct mcg_group *victim, void *arg);

#endif
