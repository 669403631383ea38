/* hier.c: the stand-in hierarchies' groups, files and members (hier.h).
 * Owns the tree of each hierarchy, the kept values, the devices rules
 * and which group each task is in. Never reads a file nor signals a task
 * but through struct hier_os, and holds no lock: one thread (the
 * stand-in server's) calls it. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/hier_int.h"

/* ---- the files of each hierarchy ---- */

#define HIER_CORE                                                                  \
	{ "cgroup.clone_children", 0644, HK_BOOL, HW_ALL, "0" },                   \
	{ "cgroup.procs", 0644, HK_PROCS, HW_ALL, NULL },                          \
	{ "cgroup.sane_behavior", 0444, HK_RO, HW_ROOT, "0" },                     \
	{ "notify_on_release", 0644, HK_BOOL, HW_ALL, "0" },                       \
	{ "release_agent", 0644, HK_TEXT, HW_ROOT, "" },                           \
	{ "tasks", 0644, HK_TASKS, HW_ALL, NULL }

static const struct hier_fspec hier_cpuset[] = {
	HIER_CORE,
	{ "cpuset.cpu_exclusive", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpuset.cpus", 0644, HK_CPUS, HW_ALL, NULL },
	{ "cpuset.effective_cpus", 0444, HK_ECPUS, HW_ALL, NULL },
	{ "cpuset.effective_mems", 0444, HK_EMEMS, HW_ALL, NULL },
	{ "cpuset.mem_exclusive", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpuset.mem_hardwall", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpuset.memory_migrate", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpuset.memory_pressure", 0444, HK_RO, HW_ALL, "0" },
	{ "cpuset.memory_pressure_enabled", 0644, HK_BOOL, HW_ROOT, "0" },
	{ "cpuset.memory_spread_page", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpuset.memory_spread_slab", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpuset.mems", 0644, HK_MEMS, HW_ALL, NULL },
	{ "cpuset.sched_load_balance", 0644, HK_BOOL, HW_ALL, "1" },
	{ "cpuset.sched_relax_domain_level", 0644, HK_S64, HW_ALL, "-1" },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_cpu[] = {
	HIER_CORE,
	{ "cpu.cfs_burst_us", 0644, HK_U64, HW_ALL, "0" },
	{ "cpu.cfs_period_us", 0644, HK_PERIOD, HW_ALL, "100000" },
	{ "cpu.cfs_quota_us", 0644, HK_QUOTA, HW_ALL, "-1" },
	{ "cpu.idle", 0644, HK_BOOL, HW_ALL, "0" },
	{ "cpu.shares", 0644, HK_SHARES, HW_ALL, "1024" },
	{ "cpu.stat", 0444, HK_RO, HW_ALL,
	  "nr_periods 0\nnr_throttled 0\nthrottled_time 0\nnr_bursts 0\nburst_time 0" },
	{ "cpuacct.stat", 0444, HK_RO, HW_ALL, "user 0\nsystem 0" },
	{ "cpuacct.usage", 0644, HK_ZERO, HW_ALL, "0" },
	{ "cpuacct.usage_all", 0444, HK_USAGE_ALL, HW_ALL, NULL },
	{ "cpuacct.usage_percpu", 0444, HK_PERCPU, HW_ALL, NULL },
	{ "cpuacct.usage_percpu_sys", 0444, HK_PERCPU, HW_ALL, NULL },
	{ "cpuacct.usage_percpu_user", 0444, HK_PERCPU, HW_ALL, NULL },
	{ "cpuacct.usage_sys", 0444, HK_RO, HW_ALL, "0" },
	{ "cpuacct.usage_user", 0444, HK_RO, HW_ALL, "0" },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_devices[] = {
	HIER_CORE,
	{ "devices.allow", 0200, HK_DEV_ALLOW, HW_ALL, NULL },
	{ "devices.deny", 0200, HK_DEV_DENY, HW_ALL, NULL },
	{ "devices.list", 0444, HK_DEV_LIST, HW_ALL, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_freezer[] = {
	HIER_CORE,
	{ "freezer.parent_freezing", 0444, HK_FRZ_PARENT, HW_NOT_ROOT, NULL },
	{ "freezer.self_freezing", 0444, HK_FRZ_SELF, HW_NOT_ROOT, NULL },
	{ "freezer.state", 0644, HK_FRZ_STATE, HW_NOT_ROOT, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_pids[] = {
	HIER_CORE,
	{ "pids.current", 0444, HK_PIDS_CUR, HW_NOT_ROOT, NULL },
	{ "pids.events", 0444, HK_RO, HW_NOT_ROOT, "max 0" },
	{ "pids.max", 0644, HK_PIDS_MAX, HW_NOT_ROOT, "max" },
	{ "pids.peak", 0444, HK_PIDS_PEAK, HW_NOT_ROOT, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_blkio[] = {
	HIER_CORE,
	{ "blkio.reset_stats", 0200, HK_WONLY, HW_ALL, NULL },
	{ "blkio.throttle.io_service_bytes", 0444, HK_RO, HW_ALL, "Total 0" },
	{ "blkio.throttle.io_service_bytes_recursive", 0444, HK_RO, HW_ALL, "Total 0" },
	{ "blkio.throttle.io_serviced", 0444, HK_RO, HW_ALL, "Total 0" },
	{ "blkio.throttle.io_serviced_recursive", 0444, HK_RO, HW_ALL, "Total 0" },
	{ "blkio.throttle.read_bps_device", 0644, HK_DEVLIMIT, HW_ALL, NULL },
	{ "blkio.throttle.read_iops_device", 0644, HK_DEVLIMIT, HW_ALL, NULL },
	{ "blkio.throttle.write_bps_device", 0644, HK_DEVLIMIT, HW_ALL, NULL },
	{ "blkio.throttle.write_iops_device", 0644, HK_DEVLIMIT, HW_ALL, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_net[] = {
	HIER_CORE,
	{ "net_cls.classid", 0644, HK_U64, HW_ALL, "0" },
	{ "net_prio.ifpriomap", 0644, HK_IFPRIOMAP, HW_ALL, NULL },
	{ "net_prio.prioidx", 0444, HK_PRIOIDX, HW_ALL, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_rdma[] = {
	HIER_CORE,
	{ "rdma.current", 0444, HK_RO, HW_NOT_ROOT, "" },
	{ "rdma.max", 0644, HK_TEXT, HW_NOT_ROOT, "" },
	{ NULL, 0, 0, 0, NULL },
};

static const struct hier_fspec hier_core[] = {
	HIER_CORE,
	{ NULL, 0, 0, 0, NULL },
};

/* hugetlb's files, per huge page size (made at hier_new) */
static const struct hier_fspec hier_huge_each[] = {
	{ "failcnt", 0644, HK_ZERO, HW_ALL, "0" },
	{ "limit_in_bytes", 0644, HK_HUGE_LIMIT, HW_ALL, NULL },
	{ "max_usage_in_bytes", 0644, HK_ZERO, HW_ALL, "0" },
	{ "numa_stat", 0444, HK_RO, HW_ALL, "total=0 N0=0\nhierarchical_total=0 N0=0" },
	{ "rsvd.failcnt", 0644, HK_ZERO, HW_ALL, "0" },
	{ "rsvd.limit_in_bytes", 0644, HK_HUGE_LIMIT, HW_ALL, NULL },
	{ "rsvd.max_usage_in_bytes", 0644, HK_ZERO, HW_ALL, "0" },
	{ "rsvd.usage_in_bytes", 0444, HK_RO, HW_ALL, "0" },
	{ "usage_in_bytes", 0444, HK_RO, HW_ALL, "0" },
};

bool hier_is_standin(int h)
{
	return h >= 0 && h < VIEW_NCTL && h != VIEW_MEMORY;
}

bool hier_is_root(const struct hier_group *g)
{
	return !g->parent;
}

unsigned hier_id(const struct hier_group *g)
{
	return g->id;
}

const char *hier_name(const struct hier_group *g)
{
	return g->name;
}

struct hier_group *hier_nth_child(const struct hier_group *g, size_t i)
{
	return i < g->nkids ? g->kids[i] : NULL;
}

long hier_count(const struct hier_set *s, int h)
{
	return hier_is_standin(h) ? s->t[h].count : 0;
}

struct hier_group *hier_group(struct hier_set *s, int h, unsigned id)
{
	if (!hier_is_standin(h) || id >= s->t[h].cap)
		return NULL;
	return s->t[h].byid[id];
}

struct hier_group *hier_child(struct hier_set *s, int h, const struct hier_group *g,
			      const char *name)
{
	(void)s;
	(void)h;
	for (size_t i = 0; i < g->nkids; i++)
		if (!strcmp(g->kids[i]->name, name))
			return g->kids[i];
	return NULL;
}

int hier_path(const struct hier_group *g, char *out, size_t size)
{
	size_t len = 0;
	const struct hier_group *p;

	if (hier_is_root(g))
		return snprintf(out, size, "/") < (int)size ? 0 : -ENAMETOOLONG;
	for (p = g; !hier_is_root(p); p = p->parent)
		len += 1 + strlen(p->name);
	if (len + 1 > size)
		return -ENAMETOOLONG;
	out[len] = '\0';
	for (p = g; !hier_is_root(p); p = p->parent) {
		size_t n = strlen(p->name);

		len -= n;
		memcpy(out + len, p->name, n);
		out[--len] = '/';
	}
	return 0;
}

/* ---- files ---- */

static bool hier_file_here(const struct hier_fspec *f, const struct hier_group *g)
{
	return f->where == HW_ALL || (f->where == HW_ROOT) == hier_is_root(g);
}

int hier_file(const struct hier_set *s, int h, const struct hier_group *g, int i,
	      const char **name, unsigned *mode)
{
	int k = -1;

	if (!hier_is_standin(h))
		return -ENOENT;
	for (int f = 0; f < s->t[h].nfiles; f++) {
		if (!hier_file_here(&s->t[h].files[f], g))
			continue;
		if (++k == i) {
			*name = s->t[h].files[f].name;
			*mode = s->t[h].files[f].mode;
			return f;
		}
	}
	return -ENOENT;
}

int hier_file_index(const struct hier_set *s, int h, const struct hier_group *g, const char *name)
{
	if (!hier_is_standin(h))
		return -ENOENT;
	for (int f = 0; f < s->t[h].nfiles; f++)
		if (hier_file_here(&s->t[h].files[f], g) && !strcmp(s->t[h].files[f].name, name))
			return f;
	return -ENOENT;
}

bool hier_file_here_at(const struct hier_set *s, int h, const struct hier_group *g, int file)
{
	return hier_is_standin(h) && file >= 0 && file < s->t[h].nfiles &&
	       hier_file_here(&s->t[h].files[file], g);
}

unsigned hier_file_mode(const struct hier_set *s, int h, int file)
{
	return hier_is_standin(h) && file >= 0 && file < s->t[h].nfiles ? s->t[h].files[file].mode
									 : 0;
}

/* ---- task membership ---- */

static size_t hier_hash(pid_t tid, size_t n)
{
	return ((uint32_t)tid * 2654435761u) & (n - 1);
}

static int hier_reindex(struct hier_set *s)
{
	size_t n = 64;

	while (n < s->ntasks * 2 + 2)
		n *= 2;
	if (n != s->nindex) {
		int *ix = malloc(n * sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		free(s->index);
		s->index = ix;
		s->nindex = n;
	}
	for (size_t i = 0; i < n; i++)
		s->index[i] = -1;
	for (size_t k = 0; k < s->ntasks; k++) {
		size_t i = hier_hash(s->tasks[k].tid, n);

		while (s->index[i] >= 0)
			i = (i + 1) & (n - 1);
		s->index[i] = (int)k;
	}
	return 0;
}

struct hier_task *hier_find(struct hier_set *s, pid_t tid)
{
	if (!s->nindex)
		return NULL;
	for (size_t i = hier_hash(tid, s->nindex); s->index[i] >= 0; i = (i + 1) & (s->nindex - 1))
		if (s->tasks[s->index[i]].tid == tid)
			return &s->tasks[s->index[i]];
	return NULL;
}

static struct hier_task *hier_insert(struct hier_set *s, pid_t tid)
{
	struct hier_task *t = hier_find(s, tid);

	if (t)
		return t;
	if (s->ntasks == s->captasks) {
		size_t cap = s->captasks ? s->captasks * 2 : 256;
		struct hier_task *n = realloc(s->tasks, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->tasks = n;
		s->captasks = cap;
	}
	t = &s->tasks[s->ntasks++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (s->ntasks * 2 + 2 > s->nindex) {
		if (hier_reindex(s)) {
			s->ntasks--;
			return NULL;
		}
	} else {
		size_t i = hier_hash(tid, s->nindex);

		while (s->index[i] >= 0)
			i = (i + 1) & (s->nindex - 1);
		s->index[i] = (int)(s->ntasks - 1);
	}
	return t;
}

/* The groups of a pending CLONE_PARENT of REAL's, for a process of REAL's
 * started at START: the latest that fits, taken; false if none. */
static bool hier_take_pending(struct hier_set *s, pid_t real, uint64_t start,
			      unsigned grp[VIEW_NCTL])
{
	int best = -1;

	for (int i = 0; i < s->npending; i++) {
		const struct hier_pending *p = &s->pending[i];

		/* (one whose clone made nothing seen in time is stale) */
		if (p->real == real && p->since <= start && start <= p->since + HIER_PENDING_TICKS &&
		    (best < 0 || p->since > s->pending[best].since))
			best = i;
	}
	if (best < 0)
		return false;
	memcpy(grp, s->pending[best].grp, sizeof(s->pending[best].grp));
	s->pending[best] = s->pending[--s->npending];
	return true;
}

int hier_maker(struct hier_set *s, pid_t maker, uint64_t now)
{
	struct hier_task_info ti;
	struct hier_task *t;
	struct hier_pending p;

	/* the old ones go first */
	for (int i = 0; i < s->npending;)
		if (s->pending[i].since + HIER_PENDING_TICKS < now)
			s->pending[i] = s->pending[--s->npending];
		else
			i++;
	if (s->os.task(s->os.arg, maker, &ti) || !(t = hier_resolve(s, ti.tgid, 0)))
		return -ESRCH;
	p.real = ti.ppid;
	p.since = now;
	memcpy(p.grp, t->grp, sizeof(p.grp));
	if (s->npending == HIER_MAX_PENDING) {
		int old = 0;

		for (int i = 1; i < s->npending; i++)
			if (s->pending[i].since < s->pending[old].since)
				old = i;
		s->pending[old] = s->pending[--s->npending];
	}
	s->pending[s->npending++] = p;
	return 0;
}

/* TID's entry, placed where its process's leader (a thread) or its parent
 * (a process) is when first seen, as a task inherits its creator's groups;
 * NULL once it is gone. The pointer lasts until the next insertion. */
struct hier_task *hier_resolve(struct hier_set *s, pid_t tid, int depth)
{
	struct hier_task_info ti;
	struct hier_task *t, *from = NULL;
	unsigned grp[VIEW_NCTL] = { 0 };

	if (tid <= 0 || s->os.task(s->os.arg, tid, &ti))
		return NULL;
	t = hier_find(s, tid);
	if (t && t->start == ti.start)
		return t;
	if (ti.tgid == tid && hier_take_pending(s, ti.ppid, ti.start, grp)) {
		/* made with CLONE_PARENT: where its maker was */
	} else if (depth < 64) {
		if (ti.tgid != tid)
			from = hier_resolve(s, ti.tgid, depth + 1);
		else if (ti.ppid > 0)
			from = hier_resolve(s, ti.ppid, depth + 1);
		if (from)
			memcpy(grp, from->grp, sizeof(grp));
	}
	for (int h = 0; h < VIEW_NCTL; h++)
		if (!hier_group(s, h, grp[h]))
			grp[h] = 0;
	if (!(t = hier_insert(s, tid)))
		return NULL;
	t->tgid = ti.tgid;
	t->start = ti.start;
	memcpy(t->grp, grp, sizeof(grp));
	return t;
}

struct hier_group *hier_group_of(struct hier_set *s, int h, pid_t tid)
{
	struct hier_task *t;
	struct hier_group *g;

	if (!hier_is_standin(h))
		return NULL;
	t = hier_resolve(s, tid, 0);
	g = t ? hier_group(s, h, t->grp[h]) : NULL;
	return g ? g : s->t[h].byid[0];
}

static int hier_cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Every task now, each placed, the entries of those gone dropped: the
 * sorted ids into *OUT (malloc'd), their count or a negative errno. */
long hier_snapshot(struct hier_set *s, pid_t **out)
{
	pid_t *ids = malloc(HIER_MAX_TASKS * sizeof(*ids));
	long n = ids ? s->os.tasks(s->os.arg, ids, HIER_MAX_TASKS) : -ENOMEM;
	size_t keep = 0;

	if (n < 0) {
		free(ids);
		return n;
	}
	for (size_t k = 0; k < s->ntasks; k++)
		s->tasks[k].seen = false;
	for (long i = 0; i < n; i++) {
		struct hier_task *t = hier_resolve(s, ids[i], 0);

		if (t)
			t->seen = true;
	}
	for (size_t k = 0; k < s->ntasks; k++)
		if (s->tasks[k].seen)
			s->tasks[keep++] = s->tasks[k];
	if (keep != s->ntasks) {
		s->ntasks = keep;
		if (hier_reindex(s)) {
			free(ids);
			return -ENOMEM;
		}
	}
	qsort(ids, (size_t)n, sizeof(*ids), hier_cmp_pid);
	*out = ids;
	return n;
}

bool hier_below(const struct hier_group *g, const struct hier_group *top)
{
	for (; g; g = g->parent)
		if (g == top)
			return true;
	return false;
}

/* The tasks of G (with SUBTREE, of its descendants too; with PROCS,
 * leaders only), sorted, into *OUT; their count or a negative errno. */
long hier_members(struct hier_set *s, int h, const struct hier_group *g, bool subtree,
			 bool procs, pid_t **out)
{
	pid_t *ids;
	long n = hier_snapshot(s, &ids), k = 0;

	if (n < 0)
		return n;
	for (long i = 0; i < n; i++) {
		struct hier_task *t = hier_find(s, ids[i]);
		struct hier_group *tg = t ? hier_group(s, h, t->grp[h]) : NULL;

		if (!tg || (subtree ? !hier_below(tg, g) : tg != g) || (procs && t->tgid != ids[i]))
			continue;
		ids[k++] = ids[i];
	}
	*out = ids;
	return k;
}

/* ---- small parsers ---- */

/* BUF (LEN bytes, not terminated) stripped of white space into OUT. */
int hier_strip(const char *buf, size_t len, char *out, size_t size)
{
	while (len && isspace((unsigned char)*buf))
		buf++, len--;
	while (len && isspace((unsigned char)buf[len - 1]))
		len--;
	if (len >= size)
		return -EINVAL;
	memcpy(out, buf, len);
	out[len] = '\0';
	return 0;
}

int hier_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

int hier_s64(const char *s, int64_t *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtoll(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* A CPU or node list ("0-3,5") into a bit mask of up to 1,024; "" is
 * empty. */
int hier_list_parse(const char *s, uint64_t mask[16])
{
	memset(mask, 0, 16 * sizeof(uint64_t));
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s || a >= 1024)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1 || b < a || b >= 1024)
				return -EINVAL;
			s = end;
		}
		for (unsigned long i = a; i <= b; i++)
			mask[i / 64] |= 1ULL << (i % 64);
		if (*s == ',')
			s++;
		else if (*s)
			return -EINVAL;
	}
	return 0;
}

void hier_list_print(const uint64_t mask[16], char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < 1024 && n < size; i++) {
		int j = i;

		if (!(mask[i / 64] & (1ULL << (i % 64))))
			continue;
		while (j + 1 < 1024 && (mask[(j + 1) / 64] & (1ULL << ((j + 1) % 64))))
			j++;
		if (j > i)
			n += (size_t)snprintf(out + n, size - n, "%s%d-%d", n ? "," : "", i, j);
		else
			n += (size_t)snprintf(out + n, size - n, "%s%d", n ? "," : "", i);
		i = j;
	}
}

bool hier_list_subset(const uint64_t a[16], const uint64_t b[16])
{
	for (int i = 0; i < 16; i++)
		if (a[i] & ~b[i])
			return false;
	return true;
}

bool hier_list_empty(const uint64_t a[16])
{
	for (int i = 0; i < 16; i++)
		if (a[i])
			return false;
	return true;
}

/* ---- values ---- */

static const char *hier_dflt(const struct hier_set *s, int h, const struct hier_group *g, int f)
{
	const char *name = s->t[h].files[f].name;

	/* cpuset's root is exclusive in both */
	if (h == VIEW_CPUSET && hier_is_root(g) &&
	    (!strcmp(name, "cpuset.cpu_exclusive") || !strcmp(name, "cpuset.mem_exclusive")))
		return "1";
	return s->t[h].files[f].dflt ? s->t[h].files[f].dflt : "";
}

const char *hier_val(const struct hier_set *s, int h, const struct hier_group *g, int f)
{
	return g->val[f] ? g->val[f] : hier_dflt(s, h, g, f);
}

int hier_keep(struct hier_group *g, int f, const char *text)
{
	char *v = strdup(text);

	if (!v)
		return -ENOMEM;
	free(g->val[f]);
	g->val[f] = v;
	return 0;
}

int hier_findex(const struct hier_set *s, int h, const char *name)
{
	for (int f = 0; f < s->t[h].nfiles; f++)
		if (!strcmp(s->t[h].files[f].name, name))
			return f;
	return -1;
}

/* cpuset.cpus or .mems of G ("" where never set) */
const char *hier_cpuset_val(const struct hier_set *s, const struct hier_group *g, bool cpus)
{
	int f = hier_findex(s, VIEW_CPUSET, cpus ? "cpuset.cpus" : "cpuset.mems");

	if (hier_is_root(g))
		return cpus ? s->cpus : s->mems;
	return g->val[f] ? g->val[f] : "";
}


/* ---- the tree's life ---- */

static const struct hier_fspec *const hier_tables[VIEW_NCTL] = {
	[VIEW_CPUSET] = hier_cpuset, [VIEW_CPU] = hier_cpu, [VIEW_DEVICES] = hier_devices,
	[VIEW_FREEZER] = hier_freezer, [VIEW_NET] = hier_net, [VIEW_BLKIO] = hier_blkio,
	[VIEW_PERF_EVENT] = hier_core, [VIEW_PIDS] = hier_pids, [VIEW_RDMA] = hier_rdma,
	[VIEW_SYSTEMD] = hier_core,
};

/* hugetlb's table: the core files, then each size's */
static void hier_huge_table(struct hier_set *s, const unsigned *huge_kb, int nhuge)
{
	int n = 0;

	for (const struct hier_fspec *f = hier_core; f->name; f++)
		s->huge[n++] = *f;
	for (int i = 0; i < nhuge && i < HIER_MAX_HUGE; i++) {
		char size[16];

		if (huge_kb[i] >= 1024 * 1024)
			snprintf(size, sizeof(size), "%uGB", huge_kb[i] / (1024 * 1024));
		else if (huge_kb[i] >= 1024)
			snprintf(size, sizeof(size), "%uMB", huge_kb[i] / 1024);
		else
			snprintf(size, sizeof(size), "%uKB", huge_kb[i]);
		for (size_t k = 0; k < HIER_NHUGE_EACH; k++) {
			int j = i * HIER_NHUGE_EACH + (int)k;

			snprintf(s->huge_names[j], sizeof(s->huge_names[j]), "hugetlb.%s.%s", size,
				 hier_huge_each[k].name);
			s->huge_bytes[n] = (uint64_t)huge_kb[i] * 1024;
			s->huge[n] = hier_huge_each[k];
			s->huge[n++].name = s->huge_names[j];
		}
	}
	s->huge[n].name = NULL;
}

struct hier_attr *hier_attr(struct hier_group *g, int file)
{
	return file >= -1 && file < HIER_MAX_FILES ? &g->attr[file + 1] : NULL;
}

static struct hier_group *hier_group_new(struct hier_set *s, int h, struct hier_group *parent,
					 const char *name, uid_t uid, gid_t gid)
{
	struct hier_tree *t = &s->t[h];
	struct hier_group *g;
	size_t id = t->cap;

	/* round the table, so a removed group's id (its inode number) is not
	 * soon someone else's */
	for (size_t k = 0; k < t->cap; k++)
		if (!t->byid[(t->next + k) % t->cap]) {
			id = (t->next + k) % t->cap;
			break;
		}
	if (id == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct hier_group **n = realloc(t->byid, cap * sizeof(*n));

		if (!n)
			return NULL;
		memset(n + t->cap, 0, (cap - t->cap) * sizeof(*n));
		t->byid = n;
		t->cap = cap;
	}
	if (!(g = calloc(1, sizeof(*g))))
		return NULL;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->id = (unsigned)id;
	g->parent = parent;
	g->dev.allow = true;
	g->attr[0] = (struct hier_attr){ 0755, uid, gid };
	for (int f = 0; f < t->nfiles && f < HIER_MAX_FILES; f++)
		g->attr[f + 1] = (struct hier_attr){ t->files[f].mode, uid, gid };
	t->byid[id] = g;
	t->next = id + 1;
	t->count++;
	return g;
}

static void hier_group_free(struct hier_set *s, int h, struct hier_group *g)
{
	for (size_t i = 0; i < g->nkids; i++)
		hier_group_free(s, h, g->kids[i]);
	for (int f = 0; f < HIER_MAX_FILES; f++)
		free(g->val[f]);
	hier_devs_clean(&g->dev);
	free(g->kids);
	s->t[h].byid[g->id] = NULL;
	s->t[h].count--;
	free(g);
}

struct hier_set *hier_new(const struct hier_os *os, const char *online_cpus,
			  const char *online_mems, const unsigned *huge_kb, int nhuge,
			  uid_t owner, gid_t group)
{
	struct hier_set *s = calloc(1, sizeof(*s));
	uint64_t mask[16];

	if (!s)
		return NULL;
	s->os = *os;
	if (hier_list_parse(online_cpus, mask))
		hier_list_parse("0", mask);
	hier_list_print(mask, s->cpus, sizeof(s->cpus));
	for (int i = 0; i < 1024; i++)
		s->ncpus += !!(mask[i / 64] & (1ULL << (i % 64)));
	if (hier_list_parse(online_mems, mask))
		hier_list_parse("0", mask);
	hier_list_print(mask, s->mems, sizeof(s->mems));
	hier_huge_table(s, huge_kb, nhuge);
	for (int h = 0; h < VIEW_NCTL; h++) {
		if (!hier_is_standin(h))
			continue;
		s->t[h].files = h == VIEW_HUGETLB ? s->huge : hier_tables[h];
		while (s->t[h].files[s->t[h].nfiles].name)
			s->t[h].nfiles++;
		if (!hier_group_new(s, h, NULL, "", owner, group)) {
			hier_free(s);
			return NULL;
		}
	}
	return s;
}

void hier_free(struct hier_set *s)
{
	if (!s)
		return;
	for (int h = 0; h < VIEW_NCTL; h++) {
		if (s->t[h].cap && s->t[h].byid[0])
			hier_group_free(s, h, s->t[h].byid[0]);
		free(s->t[h].byid);
	}
	free(s->tasks);
	free(s->index);
	free(s);
}

/* What a new group takes from its parent, as the kernel's css_online
 * handlers and cgroup_create do. */
static int hier_inherit(struct hier_set *s, int h, struct hier_group *g)
{
	const struct hier_group *p = g->parent;
	int f, rc = 0;

	/* cgroup.clone_children and notify_on_release are inherited */
	if ((f = hier_findex(s, h, "cgroup.clone_children")) >= 0 && p->val[f])
		rc = hier_keep(g, f, p->val[f]);
	if (!rc && (f = hier_findex(s, h, "notify_on_release")) >= 0 && p->val[f])
		rc = hier_keep(g, f, p->val[f]);
	if (rc)
		return rc;
	switch (h) {
	case VIEW_DEVICES:
		return hier_devs_copy(&g->dev, &p->dev);
	case VIEW_NET:
		f = hier_findex(s, h, "net_cls.classid");
		return p->val[f] ? hier_keep(g, f, p->val[f]) : 0;
	case VIEW_CPUSET:
		/* with clone_children, the parent's CPUs and nodes */
		if (strcmp(hier_val(s, h, p, hier_findex(s, h, "cgroup.clone_children")), "1"))
			return 0;
		if ((rc = hier_keep(g, hier_findex(s, h, "cpuset.cpus"), hier_cpuset_val(s, p, true))))
			return rc;
		return hier_keep(g, hier_findex(s, h, "cpuset.mems"), hier_cpuset_val(s, p, false));
	default:
		return 0;
	}
}

#define HIER_MAX_GROUPS 16384   /* per hierarchy */

int hier_mkdir(struct hier_set *s, int h, struct hier_group *parent, const char *name,
	       const struct hier_caller *who, struct hier_group **out)
{
	struct hier_group *g, **kids;
	int rc;

	if (!hier_is_standin(h))
		return -ENOENT;
	if (!*name || strlen(name) > HIER_NAME_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	/* a newline would make /proc/PID/cgroup unparsable */
	if (strchr(name, '\n'))
		return -EINVAL;
	if (hier_child(s, h, parent, name) || hier_file_index(s, h, parent, name) >= 0)
		return -EEXIST;
	if (s->t[h].count >= HIER_MAX_GROUPS)
		return -ENOSPC;
	if (parent->nkids == parent->capkids) {
		size_t cap = parent->capkids ? parent->capkids * 2 : 4;

		if (!(kids = realloc(parent->kids, cap * sizeof(*kids))))
			return -ENOMEM;
		parent->kids = kids;
		parent->capkids = cap;
	}
	if (!(g = hier_group_new(s, h, parent, name, who->uid, who->gid)))
		return -ENOMEM;
	parent->kids[parent->nkids++] = g;
	if ((rc = hier_inherit(s, h, g))) {
		parent->nkids--;
		hier_group_free(s, h, g);
		return rc;
	}
	if (out)
		*out = g;
	return 0;
}

int hier_rmdir(struct hier_set *s, int h, struct hier_group *parent, const char *name)
{
	struct hier_group *g = hier_is_standin(h) ? hier_child(s, h, parent, name) : NULL;
	pid_t *ids;
	long n;

	if (!g)
		return hier_is_standin(h) && hier_file_index(s, h, parent, name) >= 0 ? -ENOTDIR
										 : -ENOENT;
	if (g->nkids)
		return -EBUSY;
	if ((n = hier_members(s, h, g, false, false, &ids)) < 0)
		return (int)n;
	free(ids);
	if (n > 0)
		return -EBUSY;
	/* a pending CLONE_PARENT's maker was there: its child starts at
	 * the root (an id handed out again names another group) */
	for (int i = 0; i < s->npending; i++)
		if (s->pending[i].grp[h] == g->id)
			s->pending[i].grp[h] = 0;
	for (size_t i = 0; i < parent->nkids; i++)
		if (parent->kids[i] == g) {
			memmove(parent->kids + i, parent->kids + i + 1,
				(parent->nkids - i - 1) * sizeof(*parent->kids));
			parent->nkids--;
			break;
		}
	hier_group_free(s, h, g);
	return 0;
}
