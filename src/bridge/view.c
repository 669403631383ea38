/* view.c: the texts memcgfs-run answers in place of the kernel's
 * mountinfo, mounts, cgroup and /proc/cgroups, and which paths name them.
 * Owns only string rules: never reads a file, never touches a process
 * (the supervisor does both and hands the real text here). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "bridge/view.h"

#define VIEW_NAMES(systemd)                                                          \
	[VIEW_CPUSET] = "cpuset", [VIEW_CPU] = "cpu,cpuacct", [VIEW_MEMORY] = "memory",    \
	[VIEW_DEVICES] = "devices", [VIEW_FREEZER] = "freezer",                            \
	[VIEW_NET] = "net_cls,net_prio", [VIEW_BLKIO] = "blkio",                           \
	[VIEW_PERF_EVENT] = "perf_event", [VIEW_HUGETLB] = "hugetlb", [VIEW_PIDS] = "pids", \
	[VIEW_RDMA] = "rdma", [VIEW_SYSTEMD] = systemd

const char *const view_ctl_name[VIEW_NCTL] = { VIEW_NAMES("systemd") };
const char *const view_ctl_field[VIEW_NCTL] = { VIEW_NAMES("name=systemd") };
const char *const view_ctl_opts[VIEW_NCTL] = { VIEW_NAMES("xattr,name=systemd") };
const char *const view_links[VIEW_NLINKS][2] = {
	{ "cpu", "cpu,cpuacct" }, { "cpuacct", "cpu,cpuacct" },
	{ "net_cls", "net_cls,net_prio" }, { "net_prio", "net_cls,net_prio" },
};

/* Room for N more bytes and the terminating NUL. */
static int view_buf_grow(struct view_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->len + n + 1 <= b->cap)
		return 0;
	while (cap < b->len + n + 1)
		cap *= 2;
	if (!(p = realloc(b->p, cap)))
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int view_buf_add(struct view_buf *b, const char *s, size_t n)
{
	if (view_buf_grow(b, n))
		return -ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int view_buf_printf(struct view_buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	int n;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || view_buf_grow(b, (size_t)n)) {
		va_end(ap2);
		return n < 0 ? -EINVAL : -ENOMEM;
	}
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b->len += (size_t)n;
	return 0;
}

void view_buf_free(struct view_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- paths ---- */

static const char *const view_names[] = { "mounts", "mountinfo", "cgroup", "cgroups", "mtab" };

bool view_maybe(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(view_names) / sizeof(view_names[0]); i++)
		if (!strcmp(base, view_names[i]))
			return true;
	return false;
}

int view_join(const char *base, const char *path, char *out, size_t size)
{
	size_t len = 0;
	const char *parts[2] = { path[0] == '/' ? "" : base, path };

	if (size < 2)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (int k = 0; k < 2; k++) {
		const char *p = parts[k];

		while (*p) {
			const char *e;
			size_t n;

			while (*p == '/')
				p++;
			if (!*p)
				break;
			e = strchr(p, '/');
			n = e ? (size_t)(e - p) : strlen(p);
			if (n == 1 && p[0] == '.') {
				/* nothing */
			} else if (n == 2 && p[0] == '.' && p[1] == '.') {
				while (len > 0 && out[len - 1] != '/')
					len--;
				if (len > 0)
					len--;  /* the slash before the dropped name */
				out[len] = '\0';
			} else {
				if (len + 1 + n + 1 > size)
					return -ENAMETOOLONG;
				out[len++] = '/';
				memcpy(out + len, p, n);
				len += n;
				out[len] = '\0';
			}
			p += n;
		}
	}
	if (len == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

/* A decimal id without sign or leading zero; 0 if S is none. */
static pid_t view_num(const char *s, size_t n)
{
	long v = 0;

	if (n == 0 || n > 9 || s[0] == '0')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return (pid_t)v;
}

static enum view_kind view_file_kind(const char *name)
{
	if (!strcmp(name, "mounts"))
		return VIEW_MOUNTS;
	if (!strcmp(name, "mountinfo"))
		return VIEW_MOUNTINFO;
	if (!strcmp(name, "cgroup"))
		return VIEW_CGROUP;
	return VIEW_NONE;
}

struct view_req view_classify(const char *abs)
{
	struct view_req r = { 0 };
	const char *p, *slash;
	size_t n;

	if (!strcmp(abs, "/proc/mounts"))
		return (struct view_req){ VIEW_MOUNTS, VIEW_WHO_SELF, 0 };
	if (!strcmp(abs, "/proc/cgroups"))
		return (struct view_req){ VIEW_CGROUPS, VIEW_WHO_SELF, 0 };
	if (!strcmp(abs, "/etc/mtab"))
		return (struct view_req){ VIEW_MTAB, VIEW_WHO_SELF, 0 };
	if (strncmp(abs, "/proc/", 6))
		return r;
	p = abs + 6;
	if (!(slash = strchr(p, '/')))
		return r;
	n = (size_t)(slash - p);
	if (n == 4 && !strncmp(p, "self", 4)) {
		r.who = VIEW_WHO_SELF;
	} else if (n == 11 && !strncmp(p, "thread-self", 11)) {
		r.who = VIEW_WHO_THREAD_SELF;
	} else if ((r.pid = view_num(p, n))) {
		r.who = VIEW_WHO_PID;
	} else {
		return (struct view_req){ 0 };
	}
	p = slash + 1;
	if (r.who != VIEW_WHO_THREAD_SELF && !strncmp(p, "task/", 5)) {
		p += 5;
		if (!(slash = strchr(p, '/')) || !(r.pid = view_num(p, (size_t)(slash - p))))
			return (struct view_req){ 0 };
		r.who = VIEW_WHO_PID;
		p = slash + 1;
	}
	if ((r.kind = view_file_kind(p)) == VIEW_NONE)
		return (struct view_req){ 0 };
	return r;
}

/* ---- hierarchies ---- */

void view_pick_hier(struct view_ns *ns, const char *proc_cgroups, const char *self_cgroup)
{
	int top = 0;

	for (const char *l = proc_cgroups; l && *l;) {
		const char *e = strchr(l, '\n');
		char name[64];
		int h;

		if (*l != '#' && sscanf(l, "%63s %d", name, &h) == 2 && h > top)
			top = h;
		if (!e)
			break;
		l = e + 1;
	}
	/* named hierarchies (name=systemd) are only in a process's list */
	for (const char *l = self_cgroup; l && *l;) {
		const char *e = strchr(l, '\n');
		int h;

		if (sscanf(l, "%d:", &h) == 1 && h > top)
			top = h;
		if (!e)
			break;
		l = e + 1;
	}
	for (int c = 0; c < VIEW_NCTL; c++)
		ns->hier[c] = top + 1 + c;
}

int view_ctl_of(const struct view_ns *ns, int mount_id)
{
	unsigned n = ns->nbound < VIEW_MAX_BOUND ? ns->nbound : VIEW_MAX_BOUND;

	if (mount_id <= 0)
		return -1;
	for (int c = 0; c < VIEW_NCTL; c++)
		if (ns->ctl_id[c] == mount_id)
			return c;
	for (unsigned i = 0; i < n; i++)
		if (ns->bound_id[i] == mount_id)
			return ns->bound_ctl[i];
	return -1;
}

int view_ctl_of_dev(const struct view_ns *ns, unsigned long long dev)
{
	for (int c = 0; dev && c < VIEW_NCTL; c++)
		if (ns->ctl_id[c] > 0 && ns->dev[c] == dev)
			return c;
	return -1;
}

void view_add_bound(struct view_ns *ns, int mount_id, int ctl)
{
	unsigned i = ns->nbound++ % VIEW_MAX_BOUND;

	ns->bound_id[i] = mount_id;
	ns->bound_ctl[i] = ctl;
}

static bool view_hidden(const struct view_ns *ns, int mount_id)
{
	for (int i = 0; i < ns->nhidden; i++)
		if (ns->hidden[i] == mount_id)
			return true;
	return false;
}

/* ---- mountinfo and mounts ---- */

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] -
 * FSTYPE SOURCE SUPEROPTS". Fields never hold a space (the kernel
 * escapes it as \040). */
struct view_mi {
	int id;
	unsigned long long dev;
	const char *mp, *opts;
	size_t mp_len, opts_len;
	size_t sep;  /* offset of " - " */
};

/* The N-th space-separated field of LINE (LEN bytes), 0-based. */
static const char *view_field(const char *line, size_t len, int n, size_t *flen)
{
	size_t i = 0;

	for (int k = 0; k < n; k++) {
		while (i < len && line[i] != ' ')
			i++;
		while (i < len && line[i] == ' ')
			i++;
	}
	if (i >= len)
		return NULL;
	*flen = 0;
	while (i + *flen < len && line[i + *flen] != ' ')
		(*flen)++;
	return line + i;
}

static int view_mi_parse(const char *line, size_t len, struct view_mi *m)
{
	size_t n;
	const char *f = view_field(line, len, 0, &n), *sep;

	if (!f || !(m->id = (int)view_num(f, n)))
		return -EINVAL;
	{
		unsigned maj, min;
		char d[32];

		f = view_field(line, len, 2, &n);
		if (!f || n >= sizeof(d))
			return -EINVAL;
		memcpy(d, f, n);
		d[n] = '\0';
		m->dev = sscanf(d, "%u:%u", &maj, &min) == 2 ? makedev(maj, min) : 0;
	}
	if (!(m->mp = view_field(line, len, 4, &m->mp_len)))
		return -EINVAL;
	if (!(m->opts = view_field(line, len, 5, &m->opts_len)))
		return -EINVAL;
	sep = memmem(m->opts + m->opts_len, len - (size_t)(m->opts + m->opts_len - line), " - ", 3);
	if (!sep)
		return -EINVAL;
	m->sep = (size_t)(sep - line);
	return 0;
}

/* Is this listing the wrapper's namespace (does it hold the top tmpfs)? */
static bool view_is_ours(const struct view_ns *ns, const char *mountinfo)
{
	for (const char *l = mountinfo; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		struct view_mi m;

		if (!view_mi_parse(l, len, &m) && m.id == ns->top_id)
			return true;
		if (!e)
			break;
		l = e + 1;
	}
	return false;
}

/* Which hierarchy line M is: by mount id in the wrapper's namespace
 * (OURS), by superblock below /sys/fs/cgroup in another. */
static int view_ctl_line(const struct view_ns *ns, const struct view_mi *m, bool ours)
{
	size_t top = strlen(VIEW_CGROUP_TOP);

	if (ours)
		return view_ctl_of(ns, m->id);
	if (m->mp_len < top || memcmp(m->mp, VIEW_CGROUP_TOP, top) ||
	    (m->mp_len > top && m->mp[top] != '/'))
		return -1;
	return view_ctl_of_dev(ns, m->dev);
}

/* PATH as mountinfo shows it (octal escapes of space, tab, newline and
 * backslash) into OUT: 0, or -ENAMETOOLONG. */
static int view_escape(const char *path, char *out, size_t size)
{
	size_t n = 0;

	for (; *path; path++) {
		if (n + 5 > size)
			return -ENAMETOOLONG;
		if (strchr(" \t\n\\", *path))
			n += (size_t)snprintf(out + n, size - n, "\\%03o", (unsigned char)*path);
		else
			out[n++] = *path;
	}
	out[n] = '\0';
	return 0;
}

/* Line l's fields up to its separator (m), the root field (the fourth)
 * of a memory hierarchy seen from ns->root. */
/* What hierarchy C's groups are seen from: ROOTS[c] (a cgroup
 * namespace's root), else, without ROOTS, --group-as-root's for memory;
 * NULL for the hierarchy's own root. */
static const char *view_base(const struct view_ns *ns, const char *const roots[VIEW_NCTL], int c)
{
	if (roots)
		return roots[c];
	return c == VIEW_MEMORY && ns->root[0] ? ns->root : NULL;
}

static int view_mi_head(const struct view_ns *ns, const char *l, size_t len, const struct view_mi *m,
			int c, const char *const roots[VIEW_NCTL], struct view_buf *out)
{
	char root[4096], rel[4096], esc[4 * 4096];
	const char *f, *base = view_base(ns, roots, c);
	size_t flen;
	int rc;

	if (!base || !(f = view_field(l, len, 3, &flen)) || flen >= sizeof(root))
		return view_buf_add(out, l, m->sep);
	memcpy(root, f, flen);
	root[flen] = '\0';
	/* (mountinfo escapes space, tab, newline and backslash: the group
	 * is compared as it would show there) */
	if (view_escape(base, esc, sizeof(esc)) || view_relative(esc, root, rel, sizeof(rel)))
		return view_buf_add(out, l, m->sep);
	if ((rc = view_buf_add(out, l, (size_t)(f - l))) || (rc = view_buf_add(out, rel, strlen(rel))))
		return rc;
	return view_buf_add(out, f + flen, m->sep - (size_t)(f + flen - l));
}

int view_mountinfo(const struct view_ns *ns, const char *real, const char *const roots[VIEW_NCTL],
		   struct view_buf *out)
{
	bool ours = view_is_ours(ns, real);

	for (const char *l = real; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		struct view_mi m;
		bool parsed = !view_mi_parse(l, len, &m);
		int rc = 0, c = parsed ? view_ctl_line(ns, &m, ours) : -1;

		if (parsed && ours && view_hidden(ns, m.id)) {
			/* left out: below our /sys/fs/cgroup */
		} else if (c >= 0) {
			if (!(rc = view_mi_head(ns, l, len, &m, c, roots, out)))
				rc = view_buf_printf(out, " - cgroup cgroup rw,%s\n", view_ctl_opts[c]);
		} else {
			rc = view_buf_add(out, l, len + (e ? 1 : 0));
		}
		if (rc)
			return rc;
		if (!e)
			break;
		l = e + 1;
	}
	return 0;
}

/* The lines of TEXT as (start, length) pairs; the count, or -ENOMEM. */
static long view_lines(const char *text, const char ***starts, size_t **lens)
{
	long n = 0, cap = 64;
	const char **s = malloc((size_t)cap * sizeof(*s));
	size_t *l = malloc((size_t)cap * sizeof(*l));

	if (!s || !l)
		goto nomem;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');

		if (n == cap) {
			const char **s2 = realloc(s, (size_t)cap * 2 * sizeof(*s));
			size_t *l2;

			if (!s2)
				goto nomem;
			s = s2;
			if (!(l2 = realloc(l, (size_t)cap * 2 * sizeof(*l))))
				goto nomem;
			l = l2;
			cap *= 2;
		}
		s[n] = p;
		l[n++] = e ? (size_t)(e - p) : strlen(p);
		if (!e)
			break;
		p = e + 1;
	}
	*starts = s;
	*lens = l;
	return n;
nomem:
	free(s);
	free(l);
	return -ENOMEM;
}

int view_mounts(const struct view_ns *ns, const char *real_mounts, const char *real_mountinfo,
		struct view_buf *out)
{
	const char **ms = NULL, **is = NULL;
	size_t *ml = NULL, *il = NULL;
	long nm, ni;
	int rc = 0;
	bool ours = view_is_ours(ns, real_mountinfo);

	nm = view_lines(real_mounts, &ms, &ml);
	ni = view_lines(real_mountinfo, &is, &il);
	if (nm < 0 || ni < 0) {
		rc = -ENOMEM;
		goto out;
	}
	if (nm != ni) {
		rc = -EAGAIN;
		goto out;
	}
	/* both files walk the namespace's mounts in the same order: line i
	 * of one is line i of the other, which the mount points confirm */
	for (long i = 0; i < nm && !rc; i++) {
		struct view_mi m;
		const char *mp;
		size_t mp_len;
		int c;

		if (view_mi_parse(is[i], il[i], &m) ||
		    !(mp = view_field(ms[i], ml[i], 1, &mp_len)) || mp_len != m.mp_len ||
		    memcmp(mp, m.mp, mp_len)) {
			rc = -EAGAIN;
			break;
		}
		if (ours && view_hidden(ns, m.id))
			continue;
		if ((c = view_ctl_line(ns, &m, ours)) >= 0)
			rc = view_buf_printf(out, "cgroup %.*s cgroup %.*s,%s 0 0\n", (int)m.mp_len,
					     m.mp, (int)m.opts_len, m.opts, view_ctl_opts[c]);
		else if (!(rc = view_buf_add(out, ms[i], ml[i])))
			rc = view_buf_add(out, "\n", 1);
	}
out:
	free(ms);
	free(ml);
	free(is);
	free(il);
	return rc;
}

/* ---- cgroup and /proc/cgroups ---- */

/* Does a comma-separated list of /proc/PID/cgroup name a controller (or
 * the named hierarchy) of the view? */
static bool view_names_ours(const char *list, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && list[j] != ',')
			j++;
		for (int c = 0; c < VIEW_NCTL; c++)
			for (const char *f = view_ctl_field[c]; *f;) {
				size_t n = strcspn(f, ",");

				if (n == j - i && !memcmp(list + i, f, n))
					return true;
				f += n + (f[n] == ',');
			}
		i = j + 1;
	}
	return false;
}

int view_relative(const char *root, const char *path, char *out, size_t size)
{
	size_t i = 0, k = 0, n = 0;
	int ups = 0;

	/* the longest common prefix of whole components */
	for (;; i++) {
		bool re = root[i] == '\0' || root[i] == '/', pe = path[i] == '\0' || path[i] == '/';

		if (re && pe)
			k = i;
		if (root[i] != path[i] || root[i] == '\0')
			break;
	}
	for (const char *r = root + k; *r; r++)   /* root's components past it */
		if (*r == '/' && r[1] && r[1] != '/')
			ups++;
	if (size == 0)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (int u = 0; u < ups; u++) {
		if (n + 3 >= size)
			return -ENAMETOOLONG;
		memcpy(out + n, "/..", 4);
		n += 3;
	}
	if (path[k] && strcmp(path + k, "/")) {
		if (n + strlen(path + k) >= size)
			return -ENAMETOOLONG;
		strcpy(out + n, path + k);
		n += strlen(path + k);
	}
	if (n == 0) {
		if (size < 2)
			return -ENAMETOOLONG;
		strcpy(out, "/");
	}
	return 0;
}

int view_cgroup(const struct view_ns *ns, const char *real, const char *const groups[VIEW_NCTL],
		const char *const roots[VIEW_NCTL], struct view_buf *out)
{
	char rel[4096];
	int rc = 0;

	/* ours have the largest ids, and the kernel lists the largest first */
	for (int c = VIEW_NCTL - 1; c >= 0 && !rc; c--) {
		const char *g = groups[c] ? groups[c] : "/", *base = view_base(ns, roots, c);

		if (ns->ctl_id[c] <= 0)
			continue;
		if (base && !view_relative(base, g, rel, sizeof(rel)))
			g = rel;
		rc = view_buf_printf(out, "%d:%s:%s\n", ns->hier[c], view_ctl_field[c], g);
	}
	for (const char *l = real; *l && !rc;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *c1 = memchr(l, ':', len), *c2;

		c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - l)) : NULL;
		/* the host's other v1 hierarchies are not mounted here
		 * (nor listed in /proc/cgroups): only the v2 line and named
		 * hierarchies the view has not stay */
		if (!c2 || (!view_names_ours(c1 + 1, (size_t)(c2 - c1 - 1)) &&
			    (*l == '0' || (c2 - c1 > 5 && !memcmp(c1 + 1, "name=", 5))))) {
			rc = view_buf_add(out, l, len);
			if (!rc)
				rc = view_buf_add(out, "\n", 1);
		}
		if (!e)
			break;
		l = e + 1;
	}
	return rc;
}

/* The hierarchy controller NAME (N bytes) is in, -1 if none of the
 * view's. */
static int view_ctl_of_name(const char *name, size_t n)
{
	for (int c = 0; c < VIEW_NCTL; c++)
		for (const char *f = view_ctl_field[c]; *f;) {
			size_t k = strcspn(f, ",");

			if (k == n && !memcmp(name, f, n) && strncmp(f, "name=", 5))
				return c;
			f += k + (f[k] == ',');
		}
	return -1;
}

int view_proc_cgroups(const struct view_ns *ns, const char *real, const long ngroups[VIEW_NCTL],
		      struct view_buf *out)
{
	int rc = 0;

	/* the kernel's rows, in its order, for the controllers mounted here
	 * (libcgroup's lssubsys -am stops at the first it finds listed but
	 * not mounted) */
	for (const char *l = real; *l && !rc;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l), n = strcspn(l, " \t\n");
		int c = *l == '#' ? -1 : view_ctl_of_name(l, n);

		if (c >= 0 && ns->ctl_id[c] > 0)
			rc = view_buf_printf(out, "%.*s\t%d\t%ld\t1\n", (int)n, l, ns->hier[c],
					     ngroups[c] > 0 ? ngroups[c] : 1);
		else if (*l == '#' && !(rc = view_buf_add(out, l, len)))
			rc = view_buf_add(out, "\n", 1);
		if (!e)
			break;
		l = e + 1;
	}
	if (!rc && ns->ctl_id[VIEW_MEMORY] > 0 && !strstr(out->p ? out->p : "", "\nmemory\t"))
		rc = view_buf_printf(out, "memory\t%d\t%ld\t1\n", ns->hier[VIEW_MEMORY],
				     ngroups[VIEW_MEMORY] > 0 ? ngroups[VIEW_MEMORY] : 1);
	return rc;
}
