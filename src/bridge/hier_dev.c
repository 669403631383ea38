/* hier_dev.c: the devices rules (hier_dev.h). Owns one group's behaviour
 * and exception list; never walks the tree and never touches a device. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/hier_dev.h"

/* A major or minor at *P: "*" or up to 11 digits that fit in 32 bits. */
static int hier_dev_num(const char **p, uint32_t *out)
{
	const char *s = *p;
	unsigned long long v = 0;
	int n = 0;

	if (*s == '*') {
		*out = HIER_DEV_ANY;
		*p = s + 1;
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s) && n < 11) {
		v = v * 10 + (unsigned)(*s++ - '0');
		n++;
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	*p = s;
	return 0;
}

int hier_dev_parse(const char *s, struct hier_dev *out, bool *all)
{
	memset(out, 0, sizeof(*out));
	*all = false;
	switch (*s) {
	case 'a':
		*all = true;   /* (the rest is not read, as the kernel's) */
		return 0;
	case 'b':
	case 'c':
		out->type = *s;
		break;
	default:
		return -EINVAL;
	}
	s++;
	if (!isspace((unsigned char)*s))
		return -EINVAL;
	s++;
	if (hier_dev_num(&s, &out->major) || *s != ':')
		return -EINVAL;
	s++;
	if (hier_dev_num(&s, &out->minor) || !isspace((unsigned char)*s))
		return -EINVAL;
	s++;
	for (int i = 0; i < 3 && *s; i++, s++) {
		switch (*s) {
		case 'r': out->access |= HIER_DEV_R; break;
		case 'w': out->access |= HIER_DEV_W; break;
		case 'm': out->access |= HIER_DEV_M; break;
		case '\n': i = 3; break;
		default: return -EINVAL;
		}
	}
	return 0;
}

int hier_devs_copy(struct hier_devs *dst, const struct hier_devs *src)
{
	struct hier_dev *ex = NULL;

	if (src->n && !(ex = malloc(src->n * sizeof(*ex))))
		return -ENOMEM;
	if (src->n)
		memcpy(ex, src->ex, src->n * sizeof(*ex));
	free(dst->ex);
	dst->ex = ex;
	dst->n = src->n;
	dst->allow = src->allow;
	return 0;
}

void hier_devs_clean(struct hier_devs *d)
{
	free(d->ex);
	d->ex = NULL;
	d->n = 0;
}

static bool hier_dev_same(const struct hier_dev *a, const struct hier_dev *b)
{
	return a->type == b->type && a->major == b->major && a->minor == b->minor;
}

int hier_devs_add(struct hier_devs *d, const struct hier_dev *e)
{
	struct hier_dev *ex;

	for (size_t i = 0; i < d->n; i++)
		if (hier_dev_same(&d->ex[i], e)) {
			d->ex[i].access |= e->access;
			return 0;
		}
	if (!(ex = realloc(d->ex, (d->n + 1) * sizeof(*ex))))
		return -ENOMEM;
	d->ex = ex;
	d->ex[d->n++] = *e;
	return 0;
}

void hier_devs_rm(struct hier_devs *d, const struct hier_dev *e)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n; i++) {
		bool same = hier_dev_same(&d->ex[i], e);

		if (same)
			d->ex[i].access &= ~e->access;
		if (!same || d->ex[i].access)
			d->ex[k++] = d->ex[i];
	}
	d->n = k;
}

static bool hier_type_fits(char want, char have)
{
	return want == have;
}

/* An exception covers E whole: its device (or any) and all E's access. */
static bool hier_devs_match(const struct hier_devs *d, const struct hier_dev *e)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct hier_dev *x = &d->ex[i];

		if (!hier_type_fits(e->type, x->type))
			continue;
		if (x->major != HIER_DEV_ANY && x->major != e->major)
			continue;
		if (x->minor != HIER_DEV_ANY && x->minor != e->minor)
			continue;
		if (e->access & ~x->access)
			continue;
		return true;
	}
	return false;
}

/* An exception overlaps E: a device both may name and an access in both. */
static bool hier_devs_match_partial(const struct hier_devs *d, const struct hier_dev *e)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct hier_dev *x = &d->ex[i];

		if (!hier_type_fits(e->type, x->type))
			continue;
		if (x->major != HIER_DEV_ANY && e->major != HIER_DEV_ANY && x->major != e->major)
			continue;
		if (x->minor != HIER_DEV_ANY && e->minor != HIER_DEV_ANY && x->minor != e->minor)
			continue;
		if (!(e->access & x->access))
			continue;
		return true;
	}
	return false;
}

bool hier_devs_parent_has(const struct hier_devs *parent, bool child_allow,
			  const struct hier_dev *e)
{
	if (!parent)
		return true;
	if (parent->allow)
		/* an allowing child's exception denies: always fine; a
		 * denying child's allows what no exception of the parent's
		 * denies */
		return child_allow || !hier_devs_match_partial(parent, e);
	return hier_devs_match(parent, e);
}

bool hier_devs_parent_allows_removal(const struct hier_devs *parent, bool child_allow,
				     const struct hier_dev *e)
{
	if (!parent || !child_allow)
		return true;
	return !hier_devs_match_partial(parent, e);
}

static void hier_dev_num_print(uint32_t v, char *out, size_t size)
{
	if (v == HIER_DEV_ANY)
		snprintf(out, size, "*");
	else
		snprintf(out, size, "%u", v);
}

int hier_devs_list(const struct hier_devs *d, char **out, size_t *len)
{
	size_t cap = 32 + d->n * 40, n = 0;
	char *p = malloc(cap);

	if (!p)
		return -ENOMEM;
	if (d->allow) {
		n = (size_t)snprintf(p, cap, "a *:* rwm\n");
	} else {
		p[0] = '\0';
		for (size_t i = 0; i < d->n; i++) {
			const struct hier_dev *x = &d->ex[i];
			char maj[16], min[16], acc[4];
			int k = 0;

			hier_dev_num_print(x->major, maj, sizeof(maj));
			hier_dev_num_print(x->minor, min, sizeof(min));
			if (x->access & HIER_DEV_R)
				acc[k++] = 'r';
			if (x->access & HIER_DEV_W)
				acc[k++] = 'w';
			if (x->access & HIER_DEV_M)
				acc[k++] = 'm';
			acc[k] = '\0';
			n += (size_t)snprintf(p + n, cap - n, "%c %s:%s %s\n", x->type, maj, min, acc);
		}
	}
	*out = p;
	*len = n;
	return 0;
}
