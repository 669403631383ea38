/* hier_file.c: the stand-in control files' texts and writes (hier.h):
 * each kind's grammar and checks as the kernel's handler has them, the
 * moves of tasks, freezer's stop and continue. Owns no state of its own
 * (hier.c's groups hold the values); never reads a file nor signals a
 * task but through struct hier_os. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/hier_int.h"

#define HIER_VAL_MAX 4096

/* A malloc'd copy of TEXT with a newline after it (none for ""
 * when BARE). */
static int hier_out(const char *text, bool bare, char **out, size_t *len)
{
	size_t n = strlen(text);
	bool nl = !(bare && !n);
	char *p = malloc(n + 2);

	if (!p)
		return -ENOMEM;
	memcpy(p, text, n);
	if (nl)
		p[n++] = '\n';
	p[n] = '\0';
	*out = p;
	*len = n;
	return 0;
}

static int hier_out_pids(const pid_t *ids, long n, char **out, size_t *len)
{
	char *p = malloc((size_t)n * 12 + 1);
	size_t k = 0;

	if (!p)
		return -ENOMEM;
	p[0] = '\0';
	for (long i = 0; i < n; i++)
		k += (size_t)sprintf(p + k, "%d\n", (int)ids[i]);
	*out = p;
	*len = k;
	return 0;
}

static bool hier_frozen(const struct hier_group *g)
{
	for (; g; g = g->parent)
		if (g->freeze_self)
			return true;
	return false;
}

/* freezer.state: THAWED, or FROZEN once every task below is stopped
 * (those not yet are asked again, as the kernel keeps freezing), else
 * FREEZING. */
static const char *hier_freezer_state(struct hier_set *s, struct hier_group *g)
{
	pid_t *ids;
	long n;
	bool all = true;

	if (!hier_frozen(g))
		return "THAWED";
	if ((n = hier_members(s, VIEW_FREEZER, g, true, false, &ids)) < 0)
		return "FREEZING";
	for (long i = 0; i < n; i++) {
		struct hier_task_info ti;

		if (!s->os.task(s->os.arg, ids[i], &ti) && !ti.stopped) {
			all = false;
			s->os.signal(s->os.arg, ti.tgid, SIGSTOP);
		}
	}
	free(ids);
	return all ? "FROZEN" : "FREEZING";
}

static long hier_count_below(struct hier_set *s, int h, struct hier_group *g)
{
	pid_t *ids;
	long n = hier_members(s, h, g, true, false, &ids);

	if (n >= 0)
		free(ids);
	return n;
}

static int hier_read_list(struct hier_set *s, int h, struct hier_group *g, int kind, char **out,
			  size_t *len)
{
	char buf[HIER_VAL_MAX];
	size_t k = 0;
	pid_t *ids;
	long n;
	int rc;

	switch (kind) {
	case HK_TASKS:
	case HK_PROCS:
		if ((n = hier_members(s, h, g, false, kind == HK_PROCS, &ids)) < 0)
			return (int)n;
		rc = hier_out_pids(ids, n, out, len);
		free(ids);
		return rc;
	case HK_PERCPU:
		for (int c = 0; c < s->ncpus && k + 3 < sizeof(buf); c++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "0 ");
		buf[k] = '\0';
		return hier_out(buf, false, out, len);
	case HK_USAGE_ALL:
		k = (size_t)snprintf(buf, sizeof(buf), "cpu user system");
		for (int c = 0; c < s->ncpus && k + 16 < sizeof(buf); c++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "\n%d 0 0", c);
		return hier_out(buf, false, out, len);
	default:
		return -EINVAL;
	}
}

int hier_read(struct hier_set *s, int h, struct hier_group *g, int file, char **out, size_t *len)
{
	const struct hier_fspec *f;
	char buf[64];
	long n;

	if (!hier_is_standin(h) || file < 0 || file >= s->t[h].nfiles)
		return -ENOENT;
	f = &s->t[h].files[file];
	switch (f->kind) {
	case HK_TASKS: case HK_PROCS: case HK_PERCPU: case HK_USAGE_ALL:
		return hier_read_list(s, h, g, f->kind, out, len);
	case HK_WONLY: case HK_DEV_ALLOW: case HK_DEV_DENY:
		return -EINVAL;
	case HK_CPUS: case HK_ECPUS:
		return hier_out(hier_cpuset_val(s, g, true), false, out, len);
	case HK_MEMS: case HK_EMEMS:
		return hier_out(hier_cpuset_val(s, g, false), false, out, len);
	case HK_DEV_LIST:
		return hier_devs_list(&g->dev, out, len);
	case HK_FRZ_STATE:
		return hier_out(hier_freezer_state(s, g), false, out, len);
	case HK_FRZ_SELF:
		return hier_out(g->freeze_self ? "1" : "0", false, out, len);
	case HK_FRZ_PARENT:
		return hier_out(hier_frozen(g->parent) ? "1" : "0", false, out, len);
	case HK_PIDS_CUR:
	case HK_PIDS_PEAK:
		if ((n = hier_count_below(s, h, g)) < 0)
			return (int)n;
		if (n > g->pids_peak)
			g->pids_peak = n;
		snprintf(buf, sizeof(buf), "%ld", f->kind == HK_PIDS_CUR ? n : g->pids_peak);
		return hier_out(buf, false, out, len);
	case HK_PRIOIDX:
		snprintf(buf, sizeof(buf), "%u", g->id + 1);
		return hier_out(buf, false, out, len);
	case HK_IFPRIOMAP:
		return hier_out(g->val[file] ? g->val[file] : "lo 0", false, out, len);
	case HK_DEVLIMIT:
		return hier_out(hier_val(s, h, g, file), true, out, len);
	case HK_HUGE_LIMIT:
		if (!g->val[file]) {
			/* the largest count of pages, rounded down to a
			 * whole huge page, in bytes (page size 4 KiB) */
			uint64_t pages = (uint64_t)INT64_MAX / 4096, per = s->huge_bytes[file] / 4096;

			snprintf(buf, sizeof(buf), "%" PRIu64, (pages - pages % (per ? per : 1)) * 4096);
			return hier_out(buf, false, out, len);
		}
		return hier_out(g->val[file], false, out, len);
	case HK_TEXT:
		return hier_out(hier_val(s, h, g, file), strcmp(f->name, "release_agent") != 0, out,
				len);
	case HK_RO:
		return hier_out(hier_val(s, h, g, file), true, out, len);
	default:
		return hier_out(hier_val(s, h, g, file), false, out, len);
	}
}

/* ---- writes ---- */

/* cpu's bandwidth as the kernel compares it: quota/period in 2^-20, or
 * -1 for none. */
static int64_t hier_ratio(int64_t quota, uint64_t period)
{
	if (quota < 0 || !period)
		return -1;
	return (int64_t)(((uint64_t)quota << 20) / period);
}

static void hier_bw(const struct hier_set *s, const struct hier_group *g, int64_t *quota,
		    uint64_t *period)
{
	*quota = strtoll(hier_val(s, VIEW_CPU, g, hier_findex(s, VIEW_CPU, "cpu.cfs_quota_us")),
			 NULL, 10);
	*period = strtoull(hier_val(s, VIEW_CPU, g, hier_findex(s, VIEW_CPU, "cpu.cfs_period_us")),
			   NULL, 10);
}

/* No group below G has more bandwidth than LIMIT (-1: none) allows, a
 * group without a quota of its own passing its parent's on (the kernel's
 * tg_cfs_schedulable_down, v1). */
static bool hier_bw_below(const struct hier_set *s, const struct hier_group *g, int64_t limit)
{
	for (size_t i = 0; i < g->nkids; i++) {
		int64_t q, kr;
		uint64_t p;

		hier_bw(s, g->kids[i], &q, &p);
		kr = hier_ratio(q, p);
		if (kr >= 0 && limit >= 0 && kr > limit)
			return false;
		if (!hier_bw_below(s, g->kids[i], kr >= 0 ? kr : limit))
			return false;
	}
	return true;
}

/* G's bandwidth becoming RATIO fits the nearest limit above it and every
 * one below. */
static bool hier_bw_fits(const struct hier_set *s, const struct hier_group *g, int64_t ratio)
{
	int64_t up = -1, q;
	uint64_t p;

	for (const struct hier_group *a = g->parent; a && up < 0; a = a->parent) {
		hier_bw(s, a, &q, &p);
		up = hier_ratio(q, p);
	}
	if (ratio >= 0 && up >= 0 && ratio > up)
		return false;
	return hier_bw_below(s, g, ratio >= 0 ? ratio : up);
}

static int hier_write_cpu(struct hier_set *s, struct hier_group *g, int file, int kind,
			  const char *v)
{
	int64_t quota, x;
	uint64_t period, u;
	char buf[32];

	if (hier_is_root(g))
		return -EINVAL;
	hier_bw(s, g, &quota, &period);
	if (kind == HK_SHARES) {
		if (hier_u64(v, &u))
			return -EINVAL;
		snprintf(buf, sizeof(buf), "%" PRIu64, u < 2 ? 2 : u > 262144 ? 262144 : u);
		return hier_keep(g, file, buf);
	}
	if (kind == HK_PERIOD) {
		if (hier_u64(v, &u) || u < 1000 || u > 1000000)
			return -EINVAL;
		period = u;
	} else {
		if (hier_s64(v, &x))
			return -EINVAL;
		if (x >= 0 && (x < 1000 || (uint64_t)x > (1ULL << 44) - 1))
			return -EINVAL;
		quota = x < 0 ? -1 : x;
	}
	if (!hier_bw_fits(s, g, hier_ratio(quota, period)))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%" PRId64, kind == HK_PERIOD ? (int64_t)period : quota);
	return hier_keep(g, file, buf);
}

static int hier_write_cpuset(struct hier_set *s, struct hier_group *g, int file, bool cpus,
			     const char *v)
{
	uint64_t want[16], up[16], kid[16];
	char norm[HIER_VAL_MAX];
	pid_t *ids;
	long n;

	if (hier_is_root(g))
		return -EACCES;
	if (hier_list_parse(v, want) || hier_list_parse(hier_cpuset_val(s, g->parent, cpus), up) ||
	    !hier_list_subset(want, up))
		return -EINVAL;
	for (size_t i = 0; i < g->nkids; i++)
		if (!hier_list_parse(hier_cpuset_val(s, g->kids[i], cpus), kid) &&
		    !hier_list_subset(kid, want))
			return -EBUSY;
	if (hier_list_empty(want)) {
		if ((n = hier_members(s, VIEW_CPUSET, g, false, false, &ids)) < 0)
			return (int)n;
		free(ids);
		if (n)
			return -ENOSPC;
	}
	hier_list_print(want, norm, sizeof(norm));
	return hier_keep(g, file, norm);
}

/* Signals the tasks of G's subtree after its freezing changed: stopped
 * where their group is now frozen, continued where not. */
static void hier_freezer_apply(struct hier_set *s, struct hier_group *g)
{
	pid_t *ids;
	long n = hier_members(s, VIEW_FREEZER, g, true, false, &ids);

	for (long i = 0; i < n; i++) {
		struct hier_task *t = hier_find(s, ids[i]);
		struct hier_group *tg = t ? hier_group(s, VIEW_FREEZER, t->grp[VIEW_FREEZER]) : NULL;

		if (tg)
			s->os.signal(s->os.arg, ids[i], hier_frozen(tg) ? SIGSTOP : SIGCONT);
	}
	if (n >= 0)
		free(ids);
}

static int hier_write_freezer(struct hier_set *s, struct hier_group *g, const char *v)
{
	bool was = hier_frozen(g);

	if (!strcmp(v, "FROZEN"))
		g->freeze_self = true;
	else if (!strcmp(v, "THAWED"))
		g->freeze_self = false;
	else
		return -EINVAL;
	if (hier_frozen(g) != was)
		hier_freezer_apply(s, g);
	return 0;
}

/* The kernel's propagate_exception over G's descendants, parents first:
 * where TOP and a descendant both allow, E is added to its exceptions,
 * else taken from them; then what its parent no longer has goes. */
static int hier_devices_propagate(const struct hier_group *top, struct hier_group *g,
				  const struct hier_dev *e)
{
	int rc = 0;

	for (size_t k = 0; k < g->nkids && !rc; k++) {
		struct hier_group *d = g->kids[k];

		if (top->dev.allow && d->dev.allow)
			rc = hier_devs_add(&d->dev, e);
		else
			hier_devs_rm(&d->dev, e);
		for (size_t i = 0; i < d->dev.n && !rc;) {
			struct hier_dev x = d->dev.ex[i];

			if (hier_devs_parent_has(&g->dev, d->dev.allow, &x))
				i++;
			else
				hier_devs_rm(&d->dev, &x);
		}
		if (!rc)
			rc = hier_devices_propagate(top, d, e);
	}
	return rc;
}

/* A rule of devices.allow (ALLOW) or devices.deny, as the kernel's
 * devcgroup_update_access applies it. */
static int hier_write_devices(struct hier_set *s, struct hier_group *g, bool allow, const char *v,
			      const struct hier_caller *who)
{
	const struct hier_devs *up = g->parent ? &g->parent->dev : NULL;
	struct hier_dev e;
	bool all;
	int rc = 0;

	if (!who->sys_admin)
		return -EPERM;
	if (hier_dev_parse(v, &e, &all))
		return -EINVAL;
	if (all) {
		if (g->nkids)
			return -EINVAL;
		if (allow && up && !up->allow)
			return -EPERM;
		hier_devs_clean(&g->dev);
		if (allow && up && (rc = hier_devs_copy(&g->dev, up)))
			return rc;
		g->dev.allow = allow;
		return 0;
	}
	if (allow) {
		if (g->dev.allow) {
			if (!hier_devs_parent_allows_removal(up, true, &e))
				return -EPERM;
			hier_devs_rm(&g->dev, &e);
			return 0;
		}
		if (!hier_devs_parent_has(up, false, &e))
			return -EPERM;
		return hier_devs_add(&g->dev, &e);
	}
	if (!g->dev.allow)
		hier_devs_rm(&g->dev, &e);
	else if ((rc = hier_devs_add(&g->dev, &e)))
		return rc;
	/* a new restriction reaches every descendant */
	return hier_devices_propagate(g, g, &e);
}

/* Moves TID (with PROCS, its whole process) into G. */
static int hier_write_tasks(struct hier_set *s, int h, struct hier_group *g, bool procs,
			    const char *v, const struct hier_caller *who)
{
	struct hier_task_info ti;
	pid_t *ids = NULL, *thr = NULL;
	long n, nt;
	int64_t pid;
	int rc = 0;

	if (hier_s64(v, &pid) || pid < 0 || pid > INT32_MAX)
		return -EINVAL;
	if (pid == 0)
		pid = who->pid;
	if (s->os.task(s->os.arg, (pid_t)pid, &ti))
		return -ESRCH;
	if (s->os.unmovable && s->os.unmovable(s->os.arg, ti.tgid))
		return -EINVAL;
	/* v1: the writer is root, or the task's user */
	if (who->uid != 0 && who->uid != ti.uid && who->uid != ti.suid)
		return -EACCES;
	if (h == VIEW_CPUSET && (!*hier_cpuset_val(s, g, true) || !*hier_cpuset_val(s, g, false)))
		return -ENOSPC;
	/* every task placed first: those that exist stay where they are */
	if ((n = hier_snapshot(s, &ids)) < 0)
		return (int)n;
	free(ids);
	if (!(thr = malloc(HIER_MAX_TASKS * sizeof(*thr))))
		return -ENOMEM;
	if (procs) {
		nt = s->os.threads(s->os.arg, ti.tgid, thr, HIER_MAX_TASKS);
	} else {
		thr[0] = (pid_t)pid;
		nt = 1;
	}
	for (long i = 0; i < nt && !rc; i++) {
		struct hier_task *t = hier_resolve(s, thr[i], 0);
		struct hier_group *from;

		if (!t)
			continue;
		from = hier_group(s, h, t->grp[h]);
		t->grp[h] = g->id;
		if (h == VIEW_FREEZER && from && hier_frozen(from) != hier_frozen(g))
			s->os.signal(s->os.arg, thr[i], hier_frozen(g) ? SIGSTOP : SIGCONT);
	}
	free(thr);
	return nt < 0 ? (int)nt : rc;
}

/* Replaces or adds the line starting with KEY (up to its first space) in
 * the kept text of FILE; a line whose value is "0" is dropped when
 * DROP_ZERO. */
static int hier_write_keyed(struct hier_group *g, int file, const char *v, bool drop_zero,
			    const char *dflt)
{
	const char *old = g->val[file] ? g->val[file] : dflt, *sp = strchr(v, ' ');
	size_t klen = sp ? (size_t)(sp - v) : 0;
	char out[HIER_VAL_MAX];
	size_t n = 0;
	bool done = false;

	if (!sp || !klen)
		return -EINVAL;
	out[0] = '\0';
	for (const char *l = old; *l;) {
		size_t len = strcspn(l, "\n");

		if (len > klen && !strncmp(l, v, klen) && l[klen] == ' ') {
			done = true;
			if (!(drop_zero && !strcmp(sp + 1, "0")))
				n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", n ? "\n" : "", v);
		} else if (len) {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%.*s", n ? "\n" : "", (int)len, l);
		}
		if (n >= sizeof(out))
			return -ENOSPC;
		l += len + (l[len] == '\n');
	}
	if (!done && !(drop_zero && !strcmp(sp + 1, "0")))
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", n ? "\n" : "", v);
	if (n >= sizeof(out))
		return -ENOSPC;
	return hier_keep(g, file, out);
}

/* blkio.throttle.*_device: "MAJ:MIN VALUE" (0 takes the rule away). */
static int hier_write_devlimit(struct hier_group *g, int file, const char *v)
{
	unsigned maj, min;
	uint64_t val;
	char num[32], line[64];
	int end = 0;

	if (sscanf(v, "%u:%u %31s%n", &maj, &min, num, &end) != 3 || v[end] || hier_u64(num, &val))
		return -EINVAL;
	snprintf(line, sizeof(line), "%u:%u %" PRIu64, maj, min, val);
	return hier_write_keyed(g, file, line, true, "");
}

/* hugetlb's limits: bytes with an optional K, M, G, T, P or E, or -1;
 * kept rounded down to whole huge pages. */
static int hier_write_huge(struct hier_set *s, struct hier_group *g, int file, const char *v)
{
	uint64_t per = s->huge_bytes[file], bytes, mult = 1;
	char *end, buf[32];

	if (hier_is_root(g))
		return -EINVAL;
	if (!strcmp(v, "-1")) {
		free(g->val[file]);
		g->val[file] = NULL;
		return 0;
	}
	errno = 0;
	bytes = strtoull(v, &end, 0);
	if (errno || end == v || *v == '-')
		return -EINVAL;
	switch (*end) {
	case 'E': case 'e': mult <<= 10; /* fall through */
	case 'P': case 'p': mult <<= 10; /* fall through */
	case 'T': case 't': mult <<= 10; /* fall through */
	case 'G': case 'g': mult <<= 10; /* fall through */
	case 'M': case 'm': mult <<= 10; /* fall through */
	case 'K': case 'k': mult <<= 10; end++; break;
	default: break;
	}
	if (*end || (bytes && mult > UINT64_MAX / bytes))
		return -EINVAL;
	bytes *= mult;
	if (bytes > (uint64_t)INT64_MAX)
		bytes = (uint64_t)INT64_MAX;
	snprintf(buf, sizeof(buf), "%" PRIu64, per ? bytes / per * per : bytes);
	return hier_keep(g, file, buf);
}

static int hier_write_number(struct hier_group *g, int file, const struct hier_fspec *f,
			     const char *v)
{
	uint64_t u;
	int64_t x;
	char buf[32];

	switch (f->kind) {
	case HK_BOOL:
		if (hier_u64(v, &u))
			return -EINVAL;
		return hier_keep(g, file, u ? "1" : "0");
	case HK_U64:
		if (hier_u64(v, &u))
			return -EINVAL;
		if (!strcmp(f->name, "net_cls.classid"))
			u = (uint32_t)u;
		snprintf(buf, sizeof(buf), "%" PRIu64, u);
		return hier_keep(g, file, buf);
	case HK_S64:
		if (hier_s64(v, &x))
			return -EINVAL;
		snprintf(buf, sizeof(buf), "%" PRId64, x);
		return hier_keep(g, file, buf);
	case HK_ZERO:
		/* cpuacct.usage takes only 0; hugetlb's resets take anything */
		if (!strncmp(f->name, "cpuacct.", 8) && (hier_u64(v, &u) || u))
			return -EINVAL;
		return 0;
	case HK_PIDS_MAX:
		if (!strcmp(v, "max"))
			return hier_keep(g, file, "max");
		if (hier_s64(v, &x) || x < 0 || x > 4194304)
			return -EINVAL;
		snprintf(buf, sizeof(buf), "%" PRId64, x);
		return hier_keep(g, file, buf);
	default:
		return -EINVAL;
	}
}

int hier_write(struct hier_set *s, int h, struct hier_group *g, int file, const char *buf,
	       size_t len, const struct hier_caller *who)
{
	const struct hier_fspec *f;
	char v[HIER_VAL_MAX];

	if (!hier_is_standin(h) || file < 0 || file >= s->t[h].nfiles)
		return -ENOENT;
	f = &s->t[h].files[file];
	if (!(f->mode & 0222))
		return -EACCES;
	if (hier_strip(buf, len, v, sizeof(v)))
		return -EINVAL;
	switch (f->kind) {
	case HK_TEXT:
		return hier_keep(g, file, v);
	case HK_WONLY:
		return 0;
	case HK_TASKS:
	case HK_PROCS:
		return hier_write_tasks(s, h, g, f->kind == HK_PROCS, v, who);
	case HK_CPUS:
	case HK_MEMS:
		return hier_write_cpuset(s, g, file, f->kind == HK_CPUS, v);
	case HK_DEV_ALLOW:
	case HK_DEV_DENY:
		return hier_write_devices(s, g, f->kind == HK_DEV_ALLOW, v, who);
	case HK_FRZ_STATE:
		return hier_write_freezer(s, g, v);
	case HK_PERIOD:
	case HK_QUOTA:
	case HK_SHARES:
		return hier_write_cpu(s, g, file, f->kind, v);
	case HK_DEVLIMIT:
		return hier_write_devlimit(g, file, v);
	case HK_IFPRIOMAP:
		return hier_write_keyed(g, file, v, false, "lo 0");
	case HK_HUGE_LIMIT:
		return hier_write_huge(s, g, file, v);
	default:
		return hier_write_number(g, file, f, v);
	}
}
