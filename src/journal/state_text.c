/* state_text.c: the state file's text (docs/reliability.md, the format):
 * rendering a hierarchy into it and parsing and replaying one, through the
 * rows' own write handlers and node.c's metadata calls. Owns the format
 * only; never opens a file, never validates a setting itself (the handlers
 * do), and never replays a record it could not parse. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fs/acl.h"
#include "fs/cgfiles.h"
#include "fs/node.h"
#include "journal/state.h"
#include "journal/state_text.h"
#include "os/proc.h"

#define STATE_MAGIC "memcgfs-state"

/* ---- small pieces: checksum, escaping, errors --------------------------- */

static uint32_t state_crc_table[256];

static void state_crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		state_crc_table[i] = c;
	}
}

uint32_t state_crc32(const char *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t c = 0xffffffffu;

	pthread_once(&once, state_crc_init);
	for (size_t i = 0; i < n; i++)
		c = state_crc_table[(c ^ (unsigned char)p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* A field with space, control bytes, backslash and bytes above 0x7e as
 * \ooo (as /proc/self/mountinfo escapes), so a record is one line. */
static void state_put_escaped(struct cgfs_out *o, const char *s)
{
	while (*s) {
		size_t run = 0;

		while (s[run] && (unsigned char)s[run] > ' ' && s[run] != '\\' &&
		       (unsigned char)s[run] < 0x7f)
			run++;
		if (run)
			cgfs_printf(o, "%.*s", (int)run, s);
		s += run;
		if (*s)
			cgfs_printf(o, "\\%03o", (unsigned char)*s++);
	}
}

/* Undo state_put_escaped in place; -EINVAL for a bad escape. */
static int state_unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s != '\\') {
			*d++ = *s;
			continue;
		}
		if (s[1] < '0' || s[1] > '3' || s[2] < '0' || s[2] > '7' || s[3] < '0' || s[3] > '7')
			return -EINVAL;
		*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
		s += 3;
	}
	*d = '\0';
	return 0;
}

/* ---- ACLs as text: getfacl's short numeric form ------------------------- */

static const struct { uint16_t tag; const char *name; } state_acl_tags[] = {
	{ ACL_TAG_USER_OBJ, "user" }, { ACL_TAG_USER, "user" },
	{ ACL_TAG_GROUP_OBJ, "group" }, { ACL_TAG_GROUP, "group" },
	{ ACL_TAG_MASK, "mask" }, { ACL_TAG_OTHER, "other" },
};

static void state_put_acl(struct cgfs_out *o, const char *key, const struct acl *a)
{
	cgfs_printf(o, " %s=", key);
	for (size_t i = 0; i < a->n; i++) {
		const struct acl_entry *e = &a->e[i];
		const char *name = "?";
		bool named = e->tag == ACL_TAG_USER || e->tag == ACL_TAG_GROUP;

		for (size_t t = 0; t < sizeof(state_acl_tags) / sizeof(state_acl_tags[0]); t++)
			if (state_acl_tags[t].tag == e->tag)
				name = state_acl_tags[t].name;
		cgfs_printf(o, "%s%s:", i ? "," : "", name);
		if (named)
			cgfs_printf(o, "%u", e->id);
		cgfs_printf(o, ":%c%c%c", e->perm & 4 ? 'r' : '-', e->perm & 2 ? 'w' : '-',
			    e->perm & 1 ? 'x' : '-');
	}
}

/* "user::rw-,user:1000:r--,..." into the xattr form (buf, *len), checked
 * by acl_parse as a setxattr would be. -EINVAL. */
static int state_parse_acl(char *text, char *buf, size_t size, size_t *len)
{
	struct acl a = { 0 }, check;
	char *save = NULL;
	int n;

	for (char *ent = strtok_r(text, ",", &save); ent; ent = strtok_r(NULL, ",", &save)) {
		char *id = strchr(ent, ':'), *perm = id ? strchr(id + 1, ':') : NULL;
		struct acl_entry *e = &a.e[a.n];
		bool named;

		if (!perm || a.n == ACL_MAX_ENTRIES || strlen(perm + 1) != 3)
			return -EINVAL;
		*id++ = '\0';
		*perm++ = '\0';
		named = *id != '\0';
		e->tag = 0;
		for (size_t t = 0; t < sizeof(state_acl_tags) / sizeof(state_acl_tags[0]); t++) {
			uint16_t tag = state_acl_tags[t].tag;

			if (!strcmp(ent, state_acl_tags[t].name) &&
			    named == (tag == ACL_TAG_USER || tag == ACL_TAG_GROUP))
				e->tag = tag;
		}
		if (!e->tag || (named && strspn(id, "0123456789") != strlen(id)))
			return -EINVAL;
		e->id = named ? (uint32_t)strtoul(id, NULL, 10) : 0;
		for (int b = 0; b < 3; b++) {
			if (perm[b] == "rwx"[b])
				e->perm |= (uint16_t)(4 >> b);
			else if (perm[b] != '-')
				return -EINVAL;
		}
		a.n++;
	}
	if ((n = acl_serialize(&a, buf, size)) < 0)
		return -EINVAL;
	*len = (size_t)n;
	return acl_parse(buf, *len, &check);
}

/* ---- writing ------------------------------------------------------------ */

struct state_walk {
	struct mcg_group **g;         /* referenced */
	char **path;
	size_t n, cap;
	char *cur;                    /* the path at the current depth */
	size_t *len;                  /* its length at each depth */
	unsigned depth_cap;
	int err;
};

/* mcg_walk's callback, under tree_lock: names are stable here. */
static void state_walk_one(struct mcg_group *g, unsigned depth, void *arg)
{
	struct state_walk *w = arg;
	size_t base, nlen;

	if (w->err)
		return;
	if (w->n == w->cap || depth + 1 >= w->depth_cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		unsigned dcap = w->depth_cap ? w->depth_cap * 2 : 16;
		void *a = realloc(w->g, cap * sizeof(*w->g)), *b;

		if (a)
			w->g = a;
		b = realloc(w->path, cap * sizeof(*w->path));
		if (b)
			w->path = b;
		if (!a || !b) {
			w->err = -ENOMEM;
			return;
		}
		w->cap = cap;
		if (!(a = realloc(w->len, dcap * sizeof(*w->len)))) {
			w->err = -ENOMEM;
			return;
		}
		w->len = a;
		w->depth_cap = dcap;
	}
	base = depth ? w->len[depth - 1] : 0;
	nlen = depth ? strlen(mcg_name(g)) : 0;
	{
		char *c = realloc(w->cur, base + nlen + 2);

		if (!c) {
			w->err = -ENOMEM;
			return;
		}
		w->cur = c;
	}
	if (depth) {
		w->cur[base] = '/';
		memcpy(w->cur + base + 1, mcg_name(g), nlen);
		w->len[depth] = base + 1 + nlen;
	} else {
		w->len[0] = 0;
	}
	w->cur[depth ? w->len[depth] : 0] = '\0';
	if (!(w->path[w->n] = strdup(depth ? w->cur : "/"))) {
		w->err = -ENOMEM;
		return;
	}
	mcg_get(g);
	w->g[w->n++] = g;
}

static void state_walk_free(struct state_walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		mcg_put(w->g[i]);
		free(w->path[i]);
	}
	free(w->g);
	free(w->path);
	free(w->cur);
	free(w->len);
}

/* A kept value as its write handler takes it: the read, one newline off. */
static int state_keep_value(struct cgfs_req *r, const struct cgfs_file *f, struct cgfs_out *o)
{
	int err = f->keep_read ? f->keep_read(r, f->priv, o) : cgfs_file_read(r, f, o);

	if (!err && o->err)
		err = o->err;
	if (!err && o->len && o->buf[o->len - 1] == '\n')
		o->buf[--o->len] = '\0';
	if (!err && !o->buf)
		cgfs_printf(o, "%s", "");
	return err ? err : o->err;
}

/* A kept value rendered in place at the end of o, escaped where it must
 * be (a release_agent with a space, say: values rarely need it). */
static int state_put_value(struct cgfs_req *r, const struct cgfs_file *f, struct cgfs_out *o)
{
	size_t at = o->len;
	int err = state_keep_value(r, f, o);
	char *raw;

	if (err)
		return err;
	for (size_t i = at; i < o->len; i++) {
		unsigned char c = (unsigned char)o->buf[i];

		if (c > ' ' && c != '\\' && c < 0x7f)
			continue;
		if (!(raw = strndup(o->buf + at, o->len - at)))
			return -ENOMEM;
		o->len = at;
		state_put_escaped(o, raw);
		free(raw);
		break;
	}
	return o->err;
}

static bool state_is_value(const struct cgfs_file *f)
{
	return f->keep >= CGK_BEFORE_CHILDREN && f->keep <= CGK_AFTER_LIMITS;
}

static const struct cgfs_fh state_fh = { .agent_cap = true };

void state_req(struct cgfs_req *r, struct cgfs *fs, struct mcg_group *g)
{
	*r = (struct cgfs_req){ .fs = fs, .g = g, .fh = &state_fh, .pid = getpid() };
}

/* An ACL xattr of a node, as struct acl; false when it has none. */
static bool state_node_acl(struct cgfs *fs, struct mcg_group *g, int row, const char *name,
			   struct acl *a)
{
	char buf[8 + ACL_MAX_ENTRIES * 8];
	int n = node_getxattr(fs, g, row, name, buf, sizeof(buf));

	return n > 0 && acl_parse(buf, (size_t)n, a) == 0;
}

/* One node's record; a file with its row's mode, no ACL and the group's
 * usual owner (the files record) is not recorded. */
static void state_put_node(struct cgfs *fs, struct cgfs_out *o, struct mcg_group *g, int row,
			   const struct stat *st, uid_t uid, gid_t gid)
{
	struct acl acc, def;
	bool has_acc, has_def = false;

	has_acc = state_node_acl(fs, g, row, ACL_XATTR_ACCESS, &acc);
	if (row < 0)
		has_def = state_node_acl(fs, g, row, ACL_XATTR_DEFAULT, &def);
	if (row >= 0 && !has_acc && (st->st_mode & 07777) == cgfs_file_mode(fs, &cgfs_files[row]) &&
	    st->st_uid == uid && st->st_gid == gid)
		return;
	cgfs_printf(o, "node %s %04o %u %u", row < 0 ? "-" : cgfs_files[row].name,
		    (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid, (unsigned)st->st_gid);
	if (has_acc)
		state_put_acl(o, "access", &acc);
	if (has_def)
		state_put_acl(o, "default", &def);
	cgfs_printf(o, "\n");
}

static void state_put_tasks(struct cgfs *fs, struct cgfs_out *o, struct mcg_group *g)
{
	pid_t *ids = NULL;
	long n = task_list(fs->eng, g, false, &ids);

	for (long i = 0; i < n; i++) {
		unsigned long long start;

		if (proc_start_time(ids[i], &start) == 0)
			cgfs_printf(o, "task %d %llu\n", (int)ids[i], start);
	}
	if (n >= 0)
		free(ids);
}

/* The files record (the owner most of the group's files have) and the
 * records of the files that differ from it or from their row. */
static void state_put_files(struct cgfs *fs, struct cgfs_out *o, struct mcg_group *g,
			    struct stat *st)
{
	bool root = mcg_is_root(g);
	size_t best = SIZE_MAX, best_n = 0;

	/* (a node not shown here has st_nlink 0) */
	for (size_t k = 0; k < cgfs_nfiles; k++) {
		st[k].st_nlink = 0;
		if (cgfs_file_present(fs, &cgfs_files[k], root))
			node_getattr(fs, g, (int)k, &st[k]);
	}
	for (size_t k = 0; k < cgfs_nfiles; k++) {
		size_t n = 0;

		for (size_t j = k; j < cgfs_nfiles && st[k].st_nlink; j++)
			n += st[j].st_nlink && st[j].st_uid == st[k].st_uid && st[j].st_gid == st[k].st_gid;
		if (n > best_n) {
			best_n = n;
			best = k;
		}
	}
	cgfs_printf(o, "files %u %u\n", (unsigned)st[best].st_uid, (unsigned)st[best].st_gid);
	for (size_t k = 0; k < cgfs_nfiles; k++)
		if (st[k].st_nlink)
			state_put_node(fs, o, g, (int)k, &st[k], st[best].st_uid, st[best].st_gid);
}

/* One group's records: its group line (with its parent's id in a journal
 * frame, parent >= 0), its kept values, its directory's and files' nodes,
 * its member tasks. files is scratch of cgfs_nfiles entries. */
static int state_put_group(struct cgfs *fs, struct cgfs_out *o, struct mcg_group *g,
			   const char *path, long parent, struct stat *files)
{
	bool root = mcg_is_root(g);
	struct cgfs_req r;
	struct stat dir;
	size_t mark = o->len;
	int err = 0;

	/* a group an rmdir takes away meanwhile is left out, whole: its
	 * files answer ENODEV from then on, and it is gone anyway */
	if (mcg_removed(g))
		return 0;
	state_req(&r, fs, g);
	cgfs_printf(o, "group ");
	state_put_escaped(o, path);
	cgfs_printf(o, " %u %u", mcg_id(g), mcg_gen(g));
	if (parent >= 0)
		cgfs_printf(o, " %ld", parent);
	cgfs_printf(o, "\n");
	for (size_t k = 0; k < cgfs_nfiles && !err; k++) {
		const struct cgfs_file *f = &cgfs_files[k];

		if (!state_is_value(f) || !cgfs_file_present(fs, f, root))
			continue;
		cgfs_printf(o, "set %s ", f->name);
		err = state_put_value(&r, f, o);
		cgfs_printf(o, "\n");
	}
	if (err == -ENODEV && mcg_removed(g)) {
		o->len = mark;
		return 0;
	}
	node_getattr(fs, g, -1, &dir);
	state_put_node(fs, o, g, -1, &dir, 0, 0);
	state_put_files(fs, o, g, files);
	if (!root)
		state_put_tasks(fs, o, g);
	return err;
}

/* The closing record of text that starts at o->buf + from: its lines and
 * their CRC-32, as "KEY LINES CRC". */
static int state_put_seal(struct cgfs_out *o, size_t from, const char *key)
{
	size_t lines = 0;

	if (o->err)
		return o->err;
	for (const char *p = o->buf + from, *end = o->buf + o->len;
	     (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	cgfs_printf(o, "%s %zu %08x\n", key, lines, state_crc32(o->buf + from, o->len - from));
	return o->err;
}

static void state_put_ids(struct cgfs *fs, struct cgfs_out *o)
{
	unsigned next_id, gen_floor;

	mcg_ids_get(fs->eng, &next_id, &gen_floor);
	cgfs_printf(o, "ids %u %u\n", next_id, gen_floor);
}

int state_render(struct cgfs *fs, struct cgfs_out *o)
{
	struct stat *files = calloc(cgfs_nfiles, sizeof(*files));
	struct state_walk w = { 0 };

	cgfs_printf(o, STATE_MAGIC " %d\n# memcgfs %s; one record a line, docs/reliability.md\n",
		    STATE_FORMAT, MEMCGFS_VERSION);
	cgfs_printf(o, "profile %u.%u watermarks %d\n", fs->prof->version / 1000,
		    fs->prof->version % 1000, fs->watermarks ? 1 : 0);
	state_put_ids(fs, o);
	if (!files)
		return -ENOMEM;
	mcg_walk(fs->eng, state_walk_one, &w);
	for (size_t i = 0; i < w.n && !w.err; i++)
		w.err = state_put_group(fs, o, w.g[i], w.path[i], -1, files);
	state_walk_free(&w);
	free(files);
	if (w.err)
		return w.err;
	return state_put_seal(o, 0, "end");
}

static unsigned state_group_depth(const struct mcg_group *g)
{
	unsigned n = 0;

	while ((g = mcg_parent(g)))
		n++;
	return n;
}

struct state_frame_ent {
	struct mcg_group *g;
	unsigned depth;
	bool removed;                 /* (read once: an rmdir may race the sort) */
	size_t at;                    /* its place in the list given */
};

/* Removals first, the deepest first (a parent goes after its children);
 * then the live groups, parents first; else in the order given. */
static int state_frame_cmp(const void *pa, const void *pb)
{
	const struct state_frame_ent *a = pa, *b = pb;
	bool ra = a->removed, rb = b->removed;

	if (ra != rb)
		return ra ? -1 : 1;
	if (a->depth != b->depth)
		return (a->depth < b->depth) == !ra ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

int state_render_frame(struct cgfs *fs, struct mcg_group *const *g, size_t n, struct cgfs_out *o)
{
	struct state_frame_ent *ent = calloc(n ? n : 1, sizeof(*ent));
	struct stat *files = calloc(cgfs_nfiles, sizeof(*files));
	size_t from = o->len, cap = 256;
	char *path = malloc(cap);
	int err = 0;

	if (!ent || !files || !path) {
		free(ent);
		free(files);
		free(path);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ent[i] = (struct state_frame_ent){ g[i], state_group_depth(g[i]), mcg_removed(g[i]), i };
	qsort(ent, n, sizeof(*ent), state_frame_cmp);
	state_put_ids(fs, o);
	for (size_t i = 0; i < n && !err; i++) {
		struct mcg_group *x = ent[i].g;
		int k;

		if (ent[i].removed) {
			cgfs_printf(o, "remove %u %u\n", mcg_id(x), mcg_gen(x));
			continue;
		}
		while ((k = mcg_path(fs->eng, x, path, cap)) == -ENAMETOOLONG) {
			char *p = realloc(path, cap *= 2);

			if (!p) {
				k = -ENOMEM;
				break;
			}
			path = p;
		}
		if (k < 0)
			err = k;
		else
			err = state_put_group(fs, o, x, path, mcg_parent(x) ? mcg_id(mcg_parent(x)) : 0,
					      files);
	}
	free(ent);
	free(files);
	free(path);
	return err ? err : state_put_seal(o, from, "commit");
}

/* ---- reading ------------------------------------------------------------ */

/* Records from SR_SET on belong to the group record before them (its
 * block); SR_REMOVE is a journal frame's only. */
enum state_kind { SR_PROFILE, SR_IDS, SR_GROUP, SR_REMOVE, SR_SET, SR_NODE, SR_FILES, SR_TASK };

struct state_rec {
	enum state_kind kind;
	size_t line, off;             /* where it starts, for messages */
	size_t group;                 /* SET, NODE, TASK: its group's record */
	char *a;                      /* GROUP: path; SET, NODE: file ("-": dir) */
	char *b;                      /* SET: value */
	unsigned long long n[4];      /* GROUP: id, gen, parent id (in a journal
				       * frame); REMOVE: id, gen; NODE: mode, uid,
				       * gid; TASK: tid, start; IDS; PROFILE */
	char *acc, *def;              /* NODE: xattr forms, or NULL */
	size_t acc_len, def_len;
	struct mcg_group *g;          /* GROUP: once created, referenced */
};

struct state_doc {
	char *text;                   /* a copy, NUL-terminated, cut into fields */
	struct state_rec *r;
	size_t n;
	size_t nsnap;                 /* r[0..nsnap): the snapshot; then the
				       * journal's frames, in order */
	unsigned version;             /* the file's format */
	bool journal;                 /* parsing a frame */
	size_t torn;                  /* the bytes of a torn last frame, ignored */
	const char *name;
	char *msg;
	size_t msglen;
};

static int state_fail(struct state_doc *d, size_t line, size_t off, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int state_fail(struct state_doc *d, size_t line, size_t off, int err, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(d->msg, d->msglen, "%s: line %zu, byte %zu: ", d->name, line, off);

	va_start(ap, fmt);
	if (k >= 0 && (size_t)k < d->msglen)
		vsnprintf(d->msg + k, d->msglen - (size_t)k, fmt, ap);
	va_end(ap);
	return err;
}

static void state_doc_free(struct state_doc *d)
{
	/* (r has a slot more than there are lines: the one a refused record
	 * was parsed into is freed too) */
	for (size_t i = 0; d->r && i <= d->n; i++) {
		if (d->r[i].g)
			mcg_put(d->r[i].g);
		free(d->r[i].acc);
		free(d->r[i].def);
	}
	free(d->r);
	free(d->text);
}

/* A decimal field into *v, no larger than max. */
static bool state_num(const char *s, unsigned long long max, int base, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	*v = strtoull(s, &end, base);
	return !*end && !errno && *v <= max;
}

/* The fields of one line, split at single spaces (at most max). */
static size_t state_fields(char *line, char **f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		f[n++] = line;
		if (!(line = strchr(line, ' ')))
			break;
		*line++ = '\0';
	}
	return n;
}

static int state_parse_line(struct state_doc *d, char *line, size_t ln, size_t off,
			    size_t *group)
{
	struct state_rec *r = &d->r[d->n];
	char *f[8];
	size_t nf;
	const char *kind;

	memset(r, 0, sizeof(*r));
	r->line = ln;
	r->off = off;
	r->group = *group;
	if (!strncmp(line, "set ", 4)) {
		/* set NAME VALUE: the value is the rest (escaped; may be empty) */
		char *sp = strchr(line + 4, ' ');

		if (!sp)
			return state_fail(d, ln, off, -EINVAL, "set record without a value");
		*sp = '\0';
		r->kind = SR_SET;
		r->a = line + 4;
		r->b = sp + 1;
		if (*group == SIZE_MAX)
			return state_fail(d, ln, off, -EINVAL, "set record before any group");
		if (state_unescape(r->b))
			return state_fail(d, ln, off + (size_t)(r->b - line), -EINVAL, "bad escape");
		d->n++;
		return 0;
	}
	nf = state_fields(line, f, 8);
	kind = f[0];
	if (!strcmp(kind, "profile") && nf == 4 && !strcmp(f[2], "watermarks")) {
		unsigned maj, min;
		char c;

		if (sscanf(f[1], "%u.%u%c", &maj, &min, &c) != 2 || (strcmp(f[3], "0") && strcmp(f[3], "1")))
			return state_fail(d, ln, off, -EINVAL, "bad profile record");
		r->kind = SR_PROFILE;
		r->n[0] = PROF_KV(maj, min);
		r->n[1] = f[3][0] == '1';
	} else if (!strcmp(kind, "ids") && nf == 3) {
		r->kind = SR_IDS;
		*group = SIZE_MAX;
		if (!state_num(f[1], MCG_ID_MAX, 10, &r->n[0]) || !r->n[0] ||
		    !state_num(f[2], UINT32_MAX, 10, &r->n[1]))
			return state_fail(d, ln, off, -EINVAL, "bad ids record");
	} else if (!strcmp(kind, "group") && (nf == 4 || (nf == 5 && d->journal))) {
		r->kind = SR_GROUP;
		r->a = f[1];
		if (state_unescape(r->a) || r->a[0] != '/')
			return state_fail(d, ln, off + 6, -EINVAL, "bad group path");
		if (!state_num(f[2], MCG_ID_MAX, 10, &r->n[0]) || !r->n[0] ||
		    !state_num(f[3], UINT32_MAX - 1, 10, &r->n[1]))
			return state_fail(d, ln, off + (size_t)(f[2] - line), -EINVAL, "bad group id");
		if (nf == 5 && !state_num(f[4], MCG_ID_MAX, 10, &r->n[2]))
			return state_fail(d, ln, off + (size_t)(f[4] - line), -EINVAL, "bad parent id");
		*group = d->n;
	} else if (!strcmp(kind, "remove") && nf == 3 && d->journal) {
		r->kind = SR_REMOVE;
		if (!state_num(f[1], MCG_ID_MAX, 10, &r->n[0]) || !r->n[0] ||
		    !state_num(f[2], UINT32_MAX - 1, 10, &r->n[1]))
			return state_fail(d, ln, off + 7, -EINVAL, "bad remove record");
		*group = SIZE_MAX;
	} else if (!strcmp(kind, "node") && nf >= 5 && nf <= 7) {
		r->kind = SR_NODE;
		r->a = f[1];
		if (!state_num(f[2], 07777, 8, &r->n[0]) || !state_num(f[3], UINT32_MAX - 1, 10, &r->n[1]) ||
		    !state_num(f[4], UINT32_MAX - 1, 10, &r->n[2]))
			return state_fail(d, ln, off + (size_t)(f[2] - line), -EINVAL,
					  "bad mode, uid or gid");
		for (size_t i = 5; i < nf; i++) {
			bool acc = !strncmp(f[i], "access=", 7);
			char **slot = acc ? &r->acc : &r->def;
			size_t *len = acc ? &r->acc_len : &r->def_len;

			if ((!acc && strncmp(f[i], "default=", 8)) || *slot ||
			    !(*slot = malloc(8 + ACL_MAX_ENTRIES * 8)) ||
			    state_parse_acl(f[i] + (acc ? 7 : 8), *slot, 8 + ACL_MAX_ENTRIES * 8, len))
				return state_fail(d, ln, off + (size_t)(f[i] - line), -EINVAL, "bad ACL");
		}
	} else if (!strcmp(kind, "files") && nf == 3) {
		r->kind = SR_FILES;
		if (!state_num(f[1], UINT32_MAX - 1, 10, &r->n[1]) ||
		    !state_num(f[2], UINT32_MAX - 1, 10, &r->n[2]))
			return state_fail(d, ln, off + 6, -EINVAL, "bad uid or gid");
	} else if (!strcmp(kind, "task") && nf == 3) {
		r->kind = SR_TASK;
		if (!state_num(f[1], INT32_MAX, 10, &r->n[0]) || !r->n[0] ||
		    !state_num(f[2], UINT64_MAX, 10, &r->n[1]))
			return state_fail(d, ln, off + 5, -EINVAL, "bad task record");
	} else {
		return state_fail(d, ln, off, -EINVAL, "unknown record \"%.32s\"", kind);
	}
	if (r->kind >= SR_SET && *group == SIZE_MAX)
		return state_fail(d, ln, off, -EINVAL, "%s record before any group", kind);
	d->n++;
	return 0;
}

/* The journal after the snapshot (format 2, from byte off, line ln + 1):
 * frames, each some records and then "commit LINES CRC" of them. A frame
 * without a sound commit record that nothing follows is the torn tail of
 * an append a crash cut short, never acknowledged (the reply waits for
 * the fdatasync): ignored. Damage that a frame follows is refused. */
static int state_parse_journal(struct state_doc *d, const char *text, size_t len, size_t off,
			       size_t ln)
{
	while (off < len) {
		size_t start = off, start_ln = ln + 1, lines = 0, at = off, end, group = SIZE_MAX;
		unsigned long long count, crc;
		const char *nl = NULL;
		char *f[3];
		bool sound;

		/* its commit record: the first line that starts so */
		while (at < len && (nl = memchr(text + at, '\n', len - at)) &&
		       strncmp(text + at, "commit ", 7)) {
			lines++;
			at = (size_t)(nl - text) + 1;
		}
		if (at >= len || !nl) {
			d->torn = len - start;
			return 0;
		}
		end = (size_t)(nl - text) + 1;
		d->text[end - 1] = '\0';
		sound = state_fields(d->text + at, f, 3) == 3 && state_num(f[1], SIZE_MAX, 10, &count) &&
			state_num(f[2], UINT32_MAX, 16, &crc) && count == lines &&
			crc == state_crc32(text + start, at - start) && !memchr(text + start, '\0', end - start);
		if (!sound && end == len) {
			d->torn = len - start;
			return 0;
		}
		if (!sound)
			return state_fail(d, start_ln, start, -EBADMSG,
					  "checksum mismatch: the journal frame of the %zu bytes up to its "
					  "commit record at byte %zu was changed or damaged", at - start, at);
		d->journal = true;
		for (size_t o = start, l = start_ln; o < at; l++) {
			char *p = d->text + o, *q = memchr(p, '\n', at - o);
			int err = 0;

			*q = '\0';
			if (*p != '#' && *p)
				err = state_parse_line(d, p, l, o, &group);
			if (err)
				return err;
			o += (size_t)(q - p) + 1;
		}
		ln = start_ln + lines;
		off = end;
	}
	return 0;
}

/* Split and check the whole text: the version line first, the snapshot's
 * end record with the line count and checksum of everything before it,
 * then (format 2) the journal's frames. */
static int state_parse(struct state_doc *d, const char *text, size_t len)
{
	size_t off = 0, ln = 0, lines = 0, group = SIZE_MAX;
	char *p;

	if (!(d->text = malloc(len + 1)))
		return -ENOMEM;
	memcpy(d->text, text, len);
	d->text[len] = '\0';
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (!(d->r = calloc(lines + 1, sizeof(*d->r))))
		return -ENOMEM;
	p = d->text;
	while (off < len) {
		char *nl = memchr(p, '\n', len - off), *nul;
		size_t at = off;

		ln++;
		if ((nul = memchr(p, '\0', nl ? (size_t)(nl - p) : len - off)))
			return state_fail(d, ln, at + (size_t)(nul - p), -EINVAL, "a NUL byte");
		if (!nl)
			return state_fail(d, ln, len, -EINVAL, "truncated: the file ends inside a record");
		*nl = '\0';
		off += (size_t)(nl - p) + 1;
		if (ln == 1) {
			unsigned long long v;

			if (strncmp(p, STATE_MAGIC " ", sizeof(STATE_MAGIC)) ||
			    !state_num(p + sizeof(STATE_MAGIC), UINT32_MAX, 10, &v))
				return state_fail(d, 1, 0, -EINVAL, "not a memcgfs state file");
			if (v > STATE_FORMAT)
				return state_fail(d, 1, sizeof(STATE_MAGIC), -EPROTONOSUPPORT,
						  "format %llu is newer than this memcgfs reads (%d)",
						  v, STATE_FORMAT);
			d->version = (unsigned)v;
		} else if (!strncmp(p, "end ", 4)) {
			unsigned long long count, crc;
			char *f[3];

			if (state_fields(p, f, 3) != 3 || !state_num(f[1], SIZE_MAX, 10, &count) ||
			    !state_num(f[2], UINT32_MAX, 16, &crc))
				return state_fail(d, ln, at, -EINVAL, "bad end record");
			if (count != ln - 1 || crc != state_crc32(text, at))
				return state_fail(d, ln, at, -EBADMSG,
						  "checksum mismatch: the %zu bytes before the end record "
						  "were changed or damaged", at);
			d->nsnap = d->n;
			if (off != len && d->version < 2)
				return state_fail(d, ln + 1, off, -EINVAL, "data after the end record");
			return state_parse_journal(d, text, len, off, ln);
		} else if (*p != '#' && *p) {
			int err = state_parse_line(d, p, ln, at, &group);

			if (err)
				return err;
		}
		p = nl + 1;
	}
	return state_fail(d, ln + 1, len, -EINVAL, "truncated: no end record");
}

/* ---- replaying ---------------------------------------------------------- */

static int state_mkdir_init(struct mcg_group *g, void *arg)
{
	return node_init_child(arg, g, 0, 0, 0755, 0);
}

static int state_make_group(struct state_doc *d, struct cgfs *fs, struct state_rec *r)
{
	struct mcg_group *parent;
	char *slash = strrchr(r->a, '/');
	int row, err;

	if (!strcmp(r->a, "/")) {
		if (r->n[0] != mcg_id(fs->eng->root) || r->n[1] != mcg_gen(fs->eng->root))
			return state_fail(d, r->line, r->off, -EINVAL, "the root's id is %u",
					  mcg_id(fs->eng->root));
		mcg_get(fs->eng->root);
		r->g = fs->eng->root;
		return 0;
	}
	*slash = '\0';
	err = node_resolve(fs, slash == r->a ? "/" : r->a, &parent, &row);
	*slash = '/';
	if (!err && row >= 0) {
		mcg_put(parent);
		err = -ENOTDIR;
	}
	if (err)
		return state_fail(d, r->line, r->off, err, "the parent of %s: %s", r->a, strerror(-err));
	err = mcg_create_as(fs->eng, parent, slash + 1, (unsigned)r->n[0], (unsigned)r->n[1],
			    state_mkdir_init, fs, &r->g);
	mcg_put(parent);
	if (err)
		return state_fail(d, r->line, r->off, err, "mkdir %s (id %llu): %s", r->a, r->n[0],
				  strerror(-err));
	return 0;
}

/* One kept value through its row's write handler, unless it reads so already. */
static int state_apply_set(struct state_doc *d, struct cgfs *fs, struct state_rec *r)
{
	struct mcg_group *g = d->r[r->group].g;
	int row = cgfs_file_lookup(fs, r->a, mcg_is_root(g));
	struct cgfs_out cur = { 0 };
	struct cgfs_req req;
	int err;

	if (row < 0 || !state_is_value(&cgfs_files[row]))
		return state_fail(d, r->line, r->off, -EINVAL, "%s is no kept file here", r->a);
	state_req(&req, fs, g);
	err = state_keep_value(&req, &cgfs_files[row], &cur);
	if (!err && strcmp(cur.buf, r->b))
		err = cgfs_file_write(&req, &cgfs_files[row], r->b, strlen(r->b));
	cgfs_out_free(&cur);
	if (err)
		return state_fail(d, r->line, r->off, err, "%s %s: %s", r->a, r->b, strerror(-err));
	return 0;
}

/* A node's mode, owner and ACLs as recorded (or, for a file not recorded,
 * its row's mode and the owner of the files record), through node.c's
 * calls. */
static int state_apply_node(struct cgfs *fs, struct mcg_group *g, int row, const struct state_rec *r,
			    const struct state_rec *owner)
{
	mode_t mode = r ? (mode_t)r->n[0] : cgfs_file_mode(fs, &cgfs_files[row]);
	uid_t uid = (uid_t)(r ? r : owner)->n[1];
	gid_t gid = (gid_t)(r ? r : owner)->n[2];
	int err = 0;

	if (r && r->acc)
		err = node_setxattr(fs, g, row, ACL_XATTR_ACCESS, r->acc, r->acc_len, 0);
	else
		node_removexattr(fs, g, row, ACL_XATTR_ACCESS);
	if (row < 0 && !err && r && r->def)
		err = node_setxattr(fs, g, row, ACL_XATTR_DEFAULT, r->def, r->def_len, 0);
	else if (row < 0 && !err)
		node_removexattr(fs, g, row, ACL_XATTR_DEFAULT);
	if (!err)
		err = node_chmod(fs, g, row, mode);
	if (!err)
		err = node_chown(fs, g, row, uid, gid);
	return err;
}

static int state_apply_nodes(struct state_doc *d, struct cgfs *fs, size_t gi)
{
	struct mcg_group *g = d->r[gi].g;
	const struct state_rec *dir_rec = NULL, *owner = NULL, **files;
	int err = 0;

	if (!(files = calloc(cgfs_nfiles, sizeof(*files))))
		return -ENOMEM;
	for (size_t i = gi + 1; i < d->n && d->r[i].kind >= SR_SET; i++) {
		struct state_rec *r = &d->r[i];
		int row = -1;

		if (r->kind == SR_FILES)
			owner = r;
		if (r->kind != SR_NODE)
			continue;
		if (!strcmp(r->a, "-")) {
			dir_rec = r;
		} else if ((row = cgfs_file_lookup(fs, r->a, mcg_is_root(g))) >= 0) {
			files[row] = r;
		} else {
			free(files);
			return state_fail(d, r->line, r->off, -EINVAL, "no file %s here", r->a);
		}
		if (r->def && row >= 0) {
			free(files);
			return state_fail(d, r->line, r->off, -EINVAL, "a default ACL on a file");
		}
	}
	if (!dir_rec || !owner) {
		free(files);
		return state_fail(d, d->r[gi].line, d->r[gi].off, -EINVAL,
				  "group %s has no %s record", d->r[gi].a, dir_rec ? "files" : "node");
	}
	if ((err = state_apply_node(fs, g, -1, dir_rec, NULL))) {
		free(files);
		return state_fail(d, dir_rec->line, dir_rec->off, err, "%s", strerror(-err));
	}
	for (size_t k = 0; k < cgfs_nfiles && !err; k++)
		if (cgfs_file_present(fs, &cgfs_files[k], mcg_is_root(g)) &&
		    (err = state_apply_node(fs, g, (int)k, files[k], owner)))
			err = state_fail(d, files[k] ? files[k]->line : d->r[gi].line,
					 files[k] ? files[k]->off : d->r[gi].off, err, "%s: %s",
					 cgfs_files[k].name, strerror(-err));
	free(files);
	return err;
}

static size_t state_depth(const char *path)
{
	size_t n = 0;

	for (; *path; path++)
		n += *path == '/';
	return path[-1] == '/' ? 0 : n;    /* "/" is the root's */
}

/* Shallower groups first; among one depth, the later in the file first:
 * a new group goes to the head of its parent's list, so its siblings end
 * up in the order the walk recorded them (readdir's order comes back). */
static int state_group_cmp(const void *pa, const void *pb, void *arg)
{
	const struct state_doc *d = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	size_t da = state_depth(d->r[a].a), db = state_depth(d->r[b].a);

	if (da != db)
		return da < db ? -1 : 1;
	return a < b ? 1 : a > b ? -1 : 0;
}

/* Each group, with the use_hierarchy it had, before any of its children
 * exists. */
static int state_make_groups(struct state_doc *d, struct cgfs *fs)
{
	size_t *order, n = 0;
	int err = 0;

	if (!(order = malloc((d->n + 1) * sizeof(*order))))
		return -ENOMEM;
	for (size_t i = 0; i < d->nsnap; i++)
		if (d->r[i].kind == SR_GROUP)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), state_group_cmp, d);
	for (size_t k = 0; k < n && !err; k++) {
		size_t gi = order[k];

		err = state_make_group(d, fs, &d->r[gi]);
		for (size_t i = gi + 1; i < d->n && d->r[i].kind >= SR_SET && !err; i++) {
			struct state_rec *r = &d->r[i];
			int row = r->kind == SR_SET ? cgfs_file_lookup(fs, r->a, mcg_is_root(d->r[gi].g)) : -1;

			if (row >= 0 && cgfs_files[row].keep == CGK_BEFORE_CHILDREN)
				err = state_apply_set(d, fs, r);
		}
	}
	free(order);
	return err;
}

/* The groups (with use_hierarchy before their children), then the other
 * kept values, phase by phase (the limits before the watermarks they
 * bound), then every node's metadata. */
static int state_apply(struct state_doc *d, struct cgfs *fs)
{
	bool profile = false, ids = false;
	int err = 0;

	for (size_t i = 0; i < d->nsnap; i++) {
		struct state_rec *r = &d->r[i];

		if (r->kind == SR_PROFILE) {
			if (r->n[0] != fs->prof->version || r->n[1] != fs->watermarks)
				return state_fail(d, r->line, r->off, -EINVAL,
						  "written under kernel=%llu.%llu%s; this daemon runs "
						  "kernel=%u.%u%s (give the same options, or -o fresh)",
						  r->n[0] / 1000, r->n[0] % 1000,
						  r->n[1] ? "" : ",nowatermarks", fs->prof->version / 1000,
						  fs->prof->version % 1000, fs->watermarks ? "" : ",nowatermarks");
			profile = true;
		} else if (r->kind == SR_IDS) {
			if (!profile || ids)
				return state_fail(d, r->line, r->off, -EINVAL, "ids record out of place");
			mcg_ids_restore(fs->eng, (unsigned)r->n[0], (unsigned)r->n[1]);
			ids = true;
		} else if (r->kind == SR_GROUP) {
			bool after_ids = i > 0 && d->r[i - 1].kind == SR_IDS;

			if (!ids)
				return state_fail(d, r->line, r->off, -EINVAL, "group before profile and ids");
			/* the root right after the ids, and only there */
			if (after_ids != !strcmp(r->a, "/"))
				return state_fail(d, r->line, r->off, -EINVAL, "the root group must come first");
		}
	}
	if (!ids)
		return state_fail(d, 1, 0, -EINVAL, "no profile and ids records");
	err = state_make_groups(d, fs);
	for (int phase = CGK_SETTING; phase <= CGK_AFTER_LIMITS && !err; phase++)
		for (size_t i = 0; i < d->nsnap && !err; i++) {
			struct state_rec *r = &d->r[i];
			int row;

			if (r->kind != SR_SET)
				continue;
			row = cgfs_file_lookup(fs, r->a, mcg_is_root(d->r[r->group].g));
			if (row < 0 || cgfs_files[row].keep == (enum cgfs_keep)phase)
				err = state_apply_set(d, fs, r);
		}
	for (size_t i = 0; i < d->nsnap && !err; i++)
		if (d->r[i].kind == SR_GROUP)
			err = state_apply_nodes(d, fs, i);
	return err;
}

/* A journal frame's group record: the group with its id and generation
 * found (renamed if its name changed) or created under its parent's id. */
static int state_replay_find(struct state_doc *d, struct cgfs *fs, struct state_rec *r)
{
	const char *name = strrchr(r->a, '/') + 1;
	struct mcg_group *g, *parent;
	int err = 0;

	if (!strcmp(r->a, "/"))
		return state_make_group(d, fs, r);
	g = mcg_by_id(fs->eng, (unsigned)r->n[0]);

	if (g && (mcg_gen(g) != r->n[1] || mcg_removed(g))) {
		mcg_put(g);
		return state_fail(d, r->line, r->off, -EINVAL, "id %llu is another group's", r->n[0]);
	}
	if (g) {
		r->g = g;
		if (mcg_is_root(g) || !strcmp(mcg_name(g), name))
			return 0;
		if (mcg_id(mcg_parent(g)) != r->n[2])
			return state_fail(d, r->line, r->off, -EINVAL, "%s moved to another parent", r->a);
		if ((err = mcg_rename(fs->eng, g, name)))
			return state_fail(d, r->line, r->off, err, "rename to %s: %s", r->a, strerror(-err));
		return 0;
	}
	if (!(parent = mcg_by_id(fs->eng, (unsigned)r->n[2])) || !*name)
		err = -ENOENT;
	else
		err = mcg_create_as(fs->eng, parent, name, (unsigned)r->n[0], (unsigned)r->n[1],
				    state_mkdir_init, fs, &r->g);
	if (parent)
		mcg_put(parent);
	if (err)
		return state_fail(d, r->line, r->off, err, "mkdir %s (id %llu): %s", r->a, r->n[0],
				  strerror(-err));
	return 0;
}

/* A journal block's kept values, phase by phase; a value refused because
 * of another (a limit above the memsw one it is about to replace) is
 * tried again after the others, until nothing more goes in. */
static int state_replay_sets(struct state_doc *d, struct cgfs *fs, size_t gi)
{
	bool root = mcg_is_root(d->r[gi].g);
	int err = 0;

	for (int done = 0, left = 1; left;) {
		int before = done;

		left = 0;
		for (int phase = CGK_BEFORE_CHILDREN; phase <= CGK_AFTER_LIMITS; phase++)
			for (size_t i = gi + 1; i < d->n && d->r[i].kind >= SR_SET; i++) {
				struct state_rec *r = &d->r[i];
				int row;

				/* (n[3]: in already) */
				if (r->kind != SR_SET || r->n[3])
					continue;
				row = cgfs_file_lookup(fs, r->a, root);
				if (row >= 0 && cgfs_files[row].keep != (enum cgfs_keep)phase)
					continue;
				if (!(err = state_apply_set(d, fs, r))) {
					r->n[3] = 1;
					done++;
				} else {
					left++;
				}
			}
		if (left && done == before)
			return err;
	}
	return 0;
}

/* The journal's frames, in order, on the hierarchy of the snapshot: a
 * group record brings its group to what its block says, a remove record
 * removes one (an id it never saw: created and removed between two
 * appends, nothing to do); the last ids record moves the id cursor. */
static int state_replay(struct state_doc *d, struct cgfs *fs)
{
	const struct state_rec *ids = NULL;
	int err = 0;

	for (size_t i = d->nsnap; i < d->n && !err; i++) {
		struct state_rec *r = &d->r[i];
		struct mcg_group *g;

		if (r->kind == SR_IDS) {
			ids = r;
		} else if (r->kind == SR_REMOVE) {
			g = mcg_by_id(fs->eng, (unsigned)r->n[0]);
			if (g && mcg_gen(g) == r->n[1] && !mcg_removed(g) && (err = mcg_remove(fs->eng, g)))
				err = state_fail(d, r->line, r->off, err, "rmdir of id %llu: %s", r->n[0],
						 strerror(-err));
			if (g)
				mcg_put(g);
		} else if (r->kind == SR_GROUP) {
			if (!(err = state_replay_find(d, fs, r)) && !(err = state_replay_sets(d, fs, i)))
				err = state_apply_nodes(d, fs, i);
		}
	}
	if (!err && ids && (err = mcg_ids_restore(fs->eng, (unsigned)ids->n[0], (unsigned)ids->n[1])))
		err = state_fail(d, ids->line, ids->off, err, "bad ids record");
	return err;
}

static int state_load_doc(struct cgfs *fs, struct state_doc *d, const char *text, size_t len)
{
	int err = state_parse(d, text, len);

	if (!err)
		err = state_apply(d, fs);
	return err ? err : state_replay(d, fs);
}

/* The group records whose blocks say who is in their group now: each
 * group's last (a later block of a group replaces its members). */
static int state_live_blocks(struct state_doc *d, bool **out)
{
	size_t *last = malloc((MCG_ID_MAX + 1) * sizeof(*last));
	bool *live = calloc(d->n + 1, sizeof(*live));

	if (!last || !live) {
		free(last);
		free(live);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n; i++)
		if (d->r[i].kind == SR_GROUP && d->r[i].g)
			last[mcg_id(d->r[i].g)] = i;
	for (size_t i = 0; i < d->n; i++)
		live[i] = d->r[i].kind == SR_GROUP && d->r[i].g && last[mcg_id(d->r[i].g)] == i &&
			  !mcg_removed(d->r[i].g);
	free(last);
	*out = live;
	return 0;
}

int state_text_load(struct cgfs *fs, const char *name, const char *text, size_t len,
		    struct state_task **tasks, size_t *ntasks, char *msg, size_t msglen)
{
	struct state_doc d = { .name = name, .msg = msg, .msglen = msglen };
	int err = state_load_doc(fs, &d, text, len);
	bool *live = NULL;

	*tasks = NULL;
	*ntasks = 0;
	if (!err)
		err = state_live_blocks(&d, &live);
	for (size_t i = 0; i < d.n && !err; i++) {
		struct state_rec *r = &d.r[i];
		struct state_task *t;

		if (r->kind != SR_TASK || !live[r->group])
			continue;
		if (!(t = realloc(*tasks, (*ntasks + 1) * sizeof(*t)))) {
			err = -ENOMEM;
			break;
		}
		*tasks = t;
		t += (*ntasks)++;
		t->g = d.r[r->group].g;
		mcg_get(t->g);
		t->tid = (pid_t)r->n[0];
		t->start = r->n[1];
	}
	free(live);
	state_doc_free(&d);
	if (err) {
		state_text_tasks_free(*tasks, *ntasks);
		*tasks = NULL;
		*ntasks = 0;
	}
	return err;
}

void state_text_tasks_free(struct state_task *tasks, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mcg_put(tasks[i].g);
	free(tasks);
}

int state_load_text(struct cgfs *fs, const char *name, const char *text, size_t len,
		    unsigned *tasks, char *msg, size_t msglen)
{
	struct state_task *t;
	size_t n;
	int err = state_text_load(fs, name, text, len, &t, &n, msg, msglen);

	if (tasks)
		*tasks = err ? 0 : (unsigned)n;
	if (!err)
		state_text_tasks_free(t, n);
	return err;
}
