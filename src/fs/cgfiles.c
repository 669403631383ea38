/* cgfiles.c: the control-file table and the handlers it names. Each handler
 * renders one file or applies one parsed write through the engine; none
 * keeps state, none knows about FUSE, and no file is special-cased outside
 * the table. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "fs/cgfiles.h"
#include "fs/event.h"
#include "fs/registry.h"
#include "fs/release.h"
#include "fs/tasks.h"

#define CGFS_PAGE PC_PAGE_SIZE   /* bytes a page: what a file shows per page */

/* Room for n more bytes, or o->err. */
static bool cgfs_out_room(struct cgfs_out *o, size_t n)
{
	if (o->err)
		return false;
	if (o->cap - o->len < n) {
		size_t ncap = (o->cap ? o->cap * 2 : 512) + n;
		char *nb = realloc(o->buf, ncap);

		if (!nb) {
			o->err = -ENOMEM;
			return false;
		}
		o->buf = nb;
		o->cap = ncap;
	}
	return true;
}

void cgfs_printf(struct cgfs_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->err)
		return;
	for (;;) {
		size_t room = o->cap - o->len;

		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->err = -EIO;
			return;
		}
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		if (!cgfs_out_room(o, (size_t)n + 1))
			return;
	}
}

void cgfs_kv(struct cgfs_out *o, const char *prefix, const char *key, long v)
{
	size_t pl = prefix ? strlen(prefix) : 0, kl = key ? strlen(key) : 0;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
	char digits[24], *d = digits + sizeof(digits);
	size_t dl;
	char *p;

	do
		*--d = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--d = '-';
	dl = (size_t)(digits + sizeof(digits) - d);
	if (!cgfs_out_room(o, pl + kl + dl + 2))
		return;
	p = o->buf + o->len;
	if (key) {
		memcpy(p, prefix, pl);
		memcpy(p += pl, key, kl);
		*(p += kl) = ' ';
		p++;
	}
	memcpy(p, d, dl);
	p += dl;
	*p++ = '\n';
	o->len = (size_t)(p - o->buf);
}

void cgfs_out_free(struct cgfs_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

/* ---- read handlers ------------------------------------------------------ */

static int rd_limit(struct cgfs_req *r, int cnt, struct cgfs_out *o)
{
	cgfs_kv(o, NULL, NULL, mcg_limit(r->g, (enum mcg_counter)cnt) * CGFS_PAGE);
	return 0;
}

static int rd_usage(struct cgfs_req *r, int cnt, struct cgfs_out *o)
{
	cgfs_sources_refresh(r->fs, r->g);     /* real processes: a fresh sample */
	cgfs_kv(o, NULL, NULL, mcg_usage(r->g, (enum mcg_counter)cnt) * CGFS_PAGE);
	return 0;
}

static int rd_watermark(struct cgfs_req *r, int cnt, struct cgfs_out *o)
{
	cgfs_sources_refresh(r->fs, r->g);     /* real processes: a fresh sample */
	cgfs_kv(o, NULL, NULL, mcg_max_usage(r->g, (enum mcg_counter)cnt) * CGFS_PAGE);
	return 0;
}

static int rd_failcnt(struct cgfs_req *r, int cnt, struct cgfs_out *o)
{
	cgfs_sources_refresh(r->fs, r->g);     /* real processes: a fresh sample */
	cgfs_printf(o, "%lu\n", mcg_failcnt(r->g, (enum mcg_counter)cnt));
	return 0;
}

static int rd_soft_limit(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	cgfs_kv(o, NULL, NULL, mcg_soft_limit(r->g) * CGFS_PAGE);
	return 0;
}

static int rd_flag(struct cgfs_req *r, int which, struct cgfs_out *o)
{
	cgfs_printf(o, "%d\n", mcg_flag(r->g, (enum mcg_flag)which) ? 1 : 0);
	return 0;
}

static int rd_zero(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	cgfs_printf(o, "0\n");
	return 0;
}

static int rd_einval(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	return -EINVAL;
}

static int rd_use_hierarchy(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	cgfs_printf(o, "%d\n", mcg_use_hierarchy(r->g) ? 1 : 0);
	return 0;
}

static int rd_swappiness(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	cgfs_printf(o, "%u\n", mcg_swappiness(r->g));
	return 0;
}

static int rd_move_charge(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	cgfs_printf(o, "%u\n", mcg_move_charge(r->g));
	return 0;
}

static int rd_oom_control(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	/* The OOM marker covers the subtree of the group that hit its limit. */
	cgfs_printf(o, "oom_kill_disable %d\nunder_oom %d\noom_kill %lu\n",
		    mcg_oom_kill_disable(r->g) ? 1 : 0, mcg_under_oom(r->g) ? 1 : 0,
		    mcg_oom_kills(r->g));
	return 0;
}

static int rd_slabinfo(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	/* Before 5.9 the file printed a slabinfo header; nothing is charged
	 * to slabs in this engine, so no rows follow it. */
	if (!prof_has(r->fs->prof, PF_SLABINFO_EMPTY))
		cgfs_printf(o, "slabinfo - version: 2.1\n"
			    "# name            <active_objs> <num_objs> <objsize> <objperslab>"
			    " <pagesperslab> : tunables <limit> <batchcount> <sharedfactor>"
			    " : slabdata <active_slabs> <num_slabs> <sharedavail>\n");
	return 0;
}

/* memory.stat keys 1..20 in kernel order (§3.9). */
static const struct stat_key {
	const char *name;
	int item;          /* enum stat_item, or -1 for an LRU list */
	int lru;
	bool count;        /* an event count, not pages */
	int since;         /* feature, or -1 */
} stat_keys[] = {
	{ "cache",                   STAT_CACHE,        0, false, -1 },
	{ "rss",                     STAT_RSS,          0, false, -1 },
	{ "rss_huge",                STAT_RSS_HUGE,     0, false, -1 },
	{ "shmem",                   STAT_SHMEM,        0, false, -1 },
	{ "mapped_file",             STAT_MAPPED_FILE,  0, false, -1 },
	{ "dirty",                   STAT_DIRTY,        0, false, -1 },
	{ "writeback",               STAT_WRITEBACK,    0, false, -1 },
	{ "workingset_refault_anon", STAT_REFAULT_ANON, 0, true,  PF_REFAULT_STATS },
	{ "workingset_refault_file", STAT_REFAULT_FILE, 0, true,  PF_REFAULT_STATS },
	{ "swap",                    STAT_SWAP,         0, false, -1 },
	{ "swapcached",              STAT_SWAPCACHED,   0, false, PF_REFAULT_STATS },
	{ "pgpgin",                  STAT_PGPGIN,       0, true,  -1 },
	{ "pgpgout",                 STAT_PGPGOUT,      0, true,  -1 },
	{ "pgfault",                 STAT_PGFAULT,      0, true,  -1 },
	{ "pgmajfault",              STAT_PGMAJFAULT,   0, true,  -1 },
	{ "inactive_anon",           -1, LRU_INACTIVE_ANON, false, -1 },
	{ "active_anon",             -1, LRU_ACTIVE_ANON,   false, -1 },
	{ "inactive_file",           -1, LRU_INACTIVE_FILE, false, -1 },
	{ "active_file",             -1, LRU_ACTIVE_FILE,   false, -1 },
	{ "unevictable",             -1, LRU_UNEVICTABLE,   false, -1 },
};

static long stat_key_value(struct mcg_group *g, const struct stat_key *k, bool total)
{
	long v;

	if (k->item >= 0)
		v = total ? rstat_item(g, k->item) : stat_local(g, k->item);
	else
		v = total ? rstat_lru(g, k->lru, -1) : stat_lru_local(g, k->lru, -1);
	return k->count ? v : v * CGFS_PAGE;
}

static int rd_stat(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	const size_t n = sizeof(stat_keys) / sizeof(stat_keys[0]);

	cgfs_sources_refresh(r->fs, r->g);     /* real processes: a fresh sample */
	for (int total = 0; total <= 1; total++) {
		for (size_t i = 0; i < n; i++) {
			const struct stat_key *k = &stat_keys[i];

			if (k->since >= 0 && !prof_has(r->fs->prof, k->since))
				continue;
			cgfs_kv(o, total ? "total_" : "", k->name, stat_key_value(r->g, k, total));
		}
		if (!total) {
			cgfs_kv(o, "", "hierarchical_memory_limit",
				mcg_hierarchical_limit(r->g, MCG_MEM) * CGFS_PAGE);
			cgfs_kv(o, "", "hierarchical_memsw_limit",
				mcg_hierarchical_limit(r->g, MCG_MEMSW) * CGFS_PAGE);
		}
	}
	/* memcgfs extensions, after every kernel key (names of the seed's
	 * 2011 memcg patches): direct and background reclaim of this group */
	if (r->fs->watermarks) {
		struct mcg_reclaim_counts rc;

		mcg_reclaim_counts(r->g, &rc);
		cgfs_kv(o, "", "pg_scan", rc.scanned[0]);
		cgfs_kv(o, "", "pg_pgsteal", rc.reclaimed[0]);
		cgfs_kv(o, "", "kswapd_pgscan", rc.scanned[1]);
		cgfs_kv(o, "", "kswapd_steal", rc.reclaimed[1]);
		cgfs_kv(o, "", "pgoutrun", rc.bgr_runs);
		cgfs_kv(o, "", "allocstall", rc.allocstall);
	}
	return 0;
}

/* memory.numa_stat: eight lines, pages, one N<id> item per node (§3.10). */
static long numa_value(struct mcg_group *g, int line, bool total, int node)
{
	static const unsigned char sets[4] = {
		/* total */ 0x3f,
		/* file (the immediate list's pages too) */
		(1 << LRU_INACTIVE_FILE) | (1 << LRU_ACTIVE_FILE) | (1 << LRU_IMMEDIATE),
		/* anon */ (1 << LRU_INACTIVE_ANON) | (1 << LRU_ACTIVE_ANON),
		/* unevictable */ 1 << LRU_UNEVICTABLE,
	};
	long v = 0;

	for (int l = 0; l < LRU__COUNT; l++)
		if (sets[line] & (1 << l))
			v += total ? rstat_lru(g, l, node) : stat_lru_local(g, l, node);
	return v;
}

static int rd_numa_stat(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	static const char *const names[4] = { "total", "file", "anon", "unevictable" };
	unsigned nodes = r->fs->eng->m.nodes;

	cgfs_sources_refresh(r->fs, r->g);     /* real processes: a fresh sample */
	for (int total = 0; total <= 1; total++)
		for (int line = 0; line < 4; line++) {
			cgfs_printf(o, "%s%s=%ld", total ? "hierarchical_" : "", names[line],
				    numa_value(r->g, line, total, -1));
			for (unsigned n = 0; n < nodes; n++)
				cgfs_printf(o, " N%u=%ld", n, numa_value(r->g, line, total, (int)n));
			cgfs_printf(o, "\n");
		}
	return 0;
}

static int rd_wmark(struct cgfs_req *r, int which, struct cgfs_out *o)
{
	cgfs_kv(o, NULL, NULL, bgr_wmark(r->g, which) * CGFS_PAGE);
	return 0;
}

/* Kept values the read handlers show differently: oom_control's one
 * setting, and a watermark that is automatic (written back as "-1"). */
static int keep_oom_kill_disable(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	cgfs_printf(o, "%d\n", mcg_oom_kill_disable(r->g) ? 1 : 0);
	return 0;
}

static int keep_wmark(struct cgfs_req *r, int which, struct cgfs_out *o)
{
	long pages = bgr_wmark_explicit(r->g, which);

	if (pages < 0)
		cgfs_printf(o, "-1\n");
	else
		cgfs_printf(o, "%ld\n", pages * CGFS_PAGE);
	return 0;
}

/* ---- write handlers ----------------------------------------------------- */

static int wr_limit(struct cgfs_req *r, int cnt, const struct gram_value *v)
{
	return mcg_set_limit(r->g, cnt, v->pages, r->interrupted, r->interrupted_arg);
}

static int wr_wmark(struct cgfs_req *r, int which, const struct gram_value *v)
{
	/* "-1" gives the watermark back to its automatic value */
	return bgr_set_wmark(r->g, which, v->pages, v->minus_one);
}

static int wr_soft_limit(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	mcg_set_soft_limit(r->g, v->pages);
	return 0;
}

static int wr_reset_watermark(struct cgfs_req *r, int cnt, const struct gram_value *v)
{
	mcg_reset_max_usage(r->g, (enum mcg_counter)cnt);
	return 0;
}

static int wr_reset_failcnt(struct cgfs_req *r, int cnt, const struct gram_value *v)
{
	mcg_reset_failcnt(r->g, (enum mcg_counter)cnt);
	return 0;
}

static int wr_force_empty(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	/* (what the host charged real processes so far first, as the
	 * kernel's counters would have it: page cache a reader brought in
	 * and the tracer has reported, say) */
	cgfs_sources_refresh(r->fs, r->g);
	return mcg_force_empty(r->g, r->interrupted, r->interrupted_arg);
}

static int wr_flag(struct cgfs_req *r, int which, const struct gram_value *v)
{
	mcg_set_flag(r->g, (enum mcg_flag)which, v->u64 != 0);
	return 0;
}

static int wr_use_hierarchy(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	return mcg_set_use_hierarchy(r->g, v->u64);
}

static int wr_swappiness(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	return mcg_set_swappiness(r->g, v->u64);
}

static int wr_move_charge(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	return mcg_set_move_charge(r->g, v->u64);
}

static int wr_oom_control(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	return mcg_set_oom_control(r->g, v->u64);
}

/* ---- the table ---------------------------------------------------------- */


const struct cgfs_file cgfs_files[] = {
	{ .name = "cgroup.procs", .where = CGF_ANY, .read = cgfs_tasks_read,
	  .write = cgfs_tasks_write, .grammar = G_PID, .priv = TASKS_PROCS, .keep = CGK_MEMBERS,
	  .poll_empty = true },
	{ .name = "cgroup.clone_children", .where = CGF_ANY, .read = rd_flag, .write = wr_flag,
	  .grammar = G_U64, .priv = MCG_FLAG_CLONE_CHILDREN, .keep = CGK_SETTING },
	{ .name = "cgroup.sane_behavior", .where = CGF_ROOT, .read = rd_zero, .write = NULL,
	  .grammar = G_NONE },
	{ .name = "tasks", .where = CGF_ANY, .read = cgfs_tasks_read, .write = cgfs_tasks_write,
	  .grammar = G_PID, .priv = TASKS_THREADS, .keep = CGK_MEMBERS, .poll_empty = true },
	{ .name = "notify_on_release", .where = CGF_ANY, .read = rd_flag, .write = wr_flag,
	  .grammar = G_U64, .priv = MCG_FLAG_NOTIFY_ON_RELEASE, .keep = CGK_SETTING },
	{ .name = "release_agent", .where = CGF_ROOT, .read = release_agent_read,
	  .write = release_agent_write, .grammar = G_STRING, .max_write = 4095,
	  .capture_caps = true, .keep = CGK_SETTING },
	{ .name = "memory.usage_in_bytes", .where = CGF_ANY, .read = rd_usage, .write = NULL,
	  .grammar = G_NONE, .priv = MCG_MEM, .event = CGFS_EV_THRESHOLD },
	{ .name = "memory.max_usage_in_bytes", .where = CGF_ANY, .read = rd_watermark,
	  .write = wr_reset_watermark, .grammar = G_IGNORED, .priv = MCG_MEM },
	{ .name = "memory.limit_in_bytes", .where = CGF_ANY, .read = rd_limit, .write = wr_limit,
	  .grammar = G_BYTES, .priv = MCG_MEM, .keep = CGK_SETTING },
	{ .name = "memory.soft_limit_in_bytes", .where = CGF_ANY, .read = rd_soft_limit,
	  .write = wr_soft_limit, .grammar = G_BYTES, .keep = CGK_SETTING },
	{ .name = "memory.failcnt", .where = CGF_ANY, .read = rd_failcnt,
	  .write = wr_reset_failcnt, .grammar = G_IGNORED, .priv = MCG_MEM },
	{ .name = "memory.stat", .where = CGF_ANY, .read = rd_stat, .write = NULL,
	  .grammar = G_NONE },
	{ .name = "memory.force_empty", .where = CGF_ANY, .read = NULL, .write = wr_force_empty,
	  .grammar = G_IGNORED },
	{ .name = "memory.use_hierarchy", .where = CGF_ANY, .read = rd_use_hierarchy,
	  .write = wr_use_hierarchy, .grammar = G_U64, .keep = CGK_BEFORE_CHILDREN },
	{ .name = "cgroup.event_control", .where = CGF_ANY, .read = NULL,
	  .write = event_control_write, .grammar = G_EVENT,
	  .world_writable_until = PF_EVENTCTL_0200 },
	{ .name = "memory.swappiness", .where = CGF_ANY, .read = rd_swappiness,
	  .write = wr_swappiness, .grammar = G_U64, .keep = CGK_SETTING },
	{ .name = "memory.move_charge_at_immigrate", .where = CGF_ANY, .read = rd_move_charge,
	  .write = wr_move_charge, .grammar = G_U64, .keep = CGK_SETTING },
	{ .name = "memory.oom_control", .where = CGF_ANY, .read = rd_oom_control,
	  .write = wr_oom_control, .grammar = G_U64, .keep = CGK_SETTING,
	  .keep_read = keep_oom_kill_disable, .event = CGFS_EV_OOM },
	{ .name = "memory.pressure_level", .where = CGF_ANY, .read = rd_einval, .write = NULL,
	  .grammar = G_NONE, .event = CGFS_EV_PRESSURE },
	{ .name = "memory.numa_stat", .where = CGF_ANY, .read = rd_numa_stat, .write = NULL,
	  .grammar = G_NONE },
	{ .name = "memory.kmem.limit_in_bytes", .where = CGF_ANY, .read = rd_limit,
	  .write = wr_limit, .grammar = G_BYTES, .priv = MCG_KMEM, .keep = CGK_SETTING },
	{ .name = "memory.kmem.usage_in_bytes", .where = CGF_ANY, .read = rd_usage, .write = NULL,
	  .grammar = G_NONE, .priv = MCG_KMEM },
	{ .name = "memory.kmem.failcnt", .where = CGF_ANY, .read = rd_failcnt,
	  .write = wr_reset_failcnt, .grammar = G_IGNORED, .priv = MCG_KMEM },
	{ .name = "memory.kmem.max_usage_in_bytes", .where = CGF_ANY, .read = rd_watermark,
	  .write = wr_reset_watermark, .grammar = G_IGNORED, .priv = MCG_KMEM },
	{ .name = "memory.kmem.slabinfo", .where = CGF_ANY, .read = rd_slabinfo, .write = NULL,
	  .grammar = G_NONE },
	{ .name = "memory.kmem.tcp.limit_in_bytes", .where = CGF_ANY, .read = rd_limit,
	  .write = wr_limit, .grammar = G_BYTES, .priv = MCG_TCP, .keep = CGK_SETTING },
	{ .name = "memory.kmem.tcp.usage_in_bytes", .where = CGF_ANY, .read = rd_usage,
	  .write = NULL, .grammar = G_NONE, .priv = MCG_TCP },
	{ .name = "memory.kmem.tcp.failcnt", .where = CGF_ANY, .read = rd_failcnt,
	  .write = wr_reset_failcnt, .grammar = G_IGNORED, .priv = MCG_TCP },
	{ .name = "memory.kmem.tcp.max_usage_in_bytes", .where = CGF_ANY, .read = rd_watermark,
	  .write = wr_reset_watermark, .grammar = G_IGNORED, .priv = MCG_TCP },
	{ .name = "memory.memsw.usage_in_bytes", .where = CGF_ANY, .read = rd_usage, .write = NULL,
	  .grammar = G_NONE, .priv = MCG_MEMSW, .event = CGFS_EV_MEMSW_THRESHOLD },
	{ .name = "memory.memsw.max_usage_in_bytes", .where = CGF_ANY, .read = rd_watermark,
	  .write = wr_reset_watermark, .grammar = G_IGNORED, .priv = MCG_MEMSW },
	{ .name = "memory.memsw.limit_in_bytes", .where = CGF_ANY, .read = rd_limit,
	  .write = wr_limit, .grammar = G_BYTES, .priv = MCG_MEMSW, .keep = CGK_SETTING },
	{ .name = "memory.memsw.failcnt", .where = CGF_ANY, .read = rd_failcnt,
	  .write = wr_reset_failcnt, .grammar = G_IGNORED, .priv = MCG_MEMSW },
	/* memcgfs extensions (-o nowatermarks hides them) */
	{ .name = "memory.high_watermark_in_bytes", .where = CGF_ANY, .read = rd_wmark,
	  .write = wr_wmark, .grammar = G_BYTES, .priv = BGR_HIGH, .extension = true,
	  .keep = CGK_AFTER_LIMITS, .keep_read = keep_wmark },
	{ .name = "memory.low_watermark_in_bytes", .where = CGF_ANY, .read = rd_wmark,
	  .write = wr_wmark, .grammar = G_BYTES, .priv = BGR_LOW, .extension = true,
	  .keep = CGK_AFTER_LIMITS, .keep_read = keep_wmark },
};

const size_t cgfs_nfiles = sizeof(cgfs_files) / sizeof(cgfs_files[0]);

bool cgfs_file_readable(const struct cgfs_file *f)
{
	return f->read && f->read != rd_einval;
}

bool cgfs_file_present(const struct cgfs *fs, const struct cgfs_file *f, bool root)
{
	if (!(f->where & (root ? CGF_ROOT : CGF_CHILD)))
		return false;
	if (f->extension && !fs->watermarks)
		return false;
	return true;
}

mode_t cgfs_file_mode(const struct cgfs *fs, const struct cgfs_file *f)
{
	mode_t m = 0;

	if (f->read)
		m |= 0444;
	if (f->write)
		m |= (f->world_writable_until && !prof_has(fs->prof, f->world_writable_until))
			? 0222 : 0200;
	return m;
}

int cgfs_file_lookup(const struct cgfs *fs, const char *name, bool root)
{
	for (size_t i = 0; i < cgfs_nfiles; i++)
		if (strcmp(cgfs_files[i].name, name) == 0)
			return cgfs_file_present(fs, &cgfs_files[i], root) ? (int)i : -1;
	return -1;
}

int cgfs_file_read(struct cgfs_req *r, const struct cgfs_file *f, struct cgfs_out *o)
{
	int err;

	if (mcg_removed(r->g))
		return -ENODEV;
	if (!f->read)
		return -EINVAL;
	err = f->read(r, f->priv, o);
	return err ? err : o->err;
}

int cgfs_file_write(struct cgfs_req *r, const struct cgfs_file *f, const char *buf, size_t len)
{
	struct gram_value *v;
	int err;

	if (len > (f->max_write ? f->max_write : 4096))
		return -E2BIG;
	if (len == 0)
		return 0;
	if (mcg_removed(r->g))
		return -ENODEV;
	if (!f->write)
		return -EINVAL;
	if (!(v = malloc(sizeof(*v))))
		return -ENOMEM;
	err = gram_parse(f->grammar, buf, len, v);
	if (!err)
		err = f->write(r, f->priv, v);
	free(v);
	return err;
}
