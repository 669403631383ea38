/* hier_dev.h: a devices group's rules as the kernel's device cgroup keeps
 * them (security/device_cgroup.c's facts): a default behaviour and a
 * list of exceptions, the grammar of devices.allow and devices.deny, the
 * checks against the parent and the text of devices.list. Pure: no I/O,
 * no tree (hier.c walks the groups). */
#ifndef MEMCGFS_BRIDGE_HIER_DEV_H
#define MEMCGFS_BRIDGE_HIER_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIER_DEV_ANY UINT32_MAX   /* "*" as a major or minor */
#define HIER_DEV_R 1u
#define HIER_DEV_W 2u
#define HIER_DEV_M 4u

struct hier_dev {
	char type;               /* 'b' or 'c' */
	uint32_t major, minor;
	unsigned access;
};

struct hier_devs {
	bool allow;              /* default behaviour: allow (else deny) */
	struct hier_dev *ex;
	size_t n;
};

/* A written rule (white space stripped): *ALL for "a..." (the whole
 * behaviour), else OUT. 0 or -EINVAL. */
int hier_dev_parse(const char *s, struct hier_dev *out, bool *all);
int hier_devs_copy(struct hier_devs *dst, const struct hier_devs *src);
void hier_devs_clean(struct hier_devs *d);
/* Adds E's access to the exception of the same device (appended if none). */
int hier_devs_add(struct hier_devs *d, const struct hier_dev *e);
/* Takes E's access away from the exception of the same device. */
void hier_devs_rm(struct hier_devs *d, const struct hier_dev *e);
/* Whether PARENT (NULL at the root) lets a group whose behaviour is
 * CHILD_ALLOW take the exception E (the kernel's parent_has_perm). */
bool hier_devs_parent_has(const struct hier_devs *parent, bool child_allow,
			  const struct hier_dev *e);
/* Whether PARENT lets an allowing group drop the exception E. */
bool hier_devs_parent_allows_removal(const struct hier_devs *parent, bool child_allow,
				     const struct hier_dev *e);
/* devices.list, malloc'd into *OUT. */
int hier_devs_list(const struct hier_devs *d, char **out, size_t *len);

#endif
