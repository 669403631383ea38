/* profile.c: the version table of the contract's §7 and nothing else.
 * Every behaviour difference between kernels is a row here; no other file
 * compares kernel versions. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/profile.h"

static const struct prof_row {
	unsigned version;
	enum prof_feature feature;
	const char *name;
} prof_rows[] = {
	{ PROF_KV(5, 8),  PF_SWAPPINESS_200,     "swappiness-200" },
	{ PROF_KV(5, 9),  PF_SLABINFO_EMPTY,     "slabinfo-empty" },
	{ PROF_KV(5, 9),  PF_RETRIES_16,         "reclaim-retries-16" },
	/* §11.5, measured on 6.18; from 5.9 on, mem_cgroup_css_alloc
	 * allocates the child's structures (percpu statistics included) as
	 * kernel memory of the parent (before: unaccounted) */
	{ PROF_KV(5, 9),  PF_MKDIR_KMEM,         "mkdir-charges-parent" },
	{ PROF_KV(5, 9),  PF_KMEM_REPARENT,      "kmem-reparent" },
	{ PROF_KV(5, 11), PF_HIERARCHY_ONLY,     "hierarchy-only" },
	{ PROF_KV(5, 16), PF_KMEM_LIMIT_524,     "kmem-limit-enotsupp" },
	{ PROF_KV(5, 16), PF_OPEN_CREDS,         "open-time-creds" },
	{ PROF_KV(5, 17), PF_AGENT_NEEDS_CAP,    "release-agent-cap" },
	{ PROF_KV(6, 1),  PF_BATCH_64,           "charge-batch-64" },
	{ PROF_KV(6, 1),  PF_REFAULT_STATS,      "refault-stats" },
	{ PROF_KV(6, 4),  PF_ROOT_USAGE_GLOBAL,  "root-usage-global" },
	{ PROF_KV(6, 6),  PF_KMEM_LIMIT_IGNORED, "kmem-limit-ignored" },
	{ PROF_KV(6, 11), PF_DEPRECATION_WARN,   "deprecation-warnings" },
	{ PROF_KV(6, 12), PF_ID_EXHAUST_EBUSY,   "id-exhaustion-ebusy" },
	{ PROF_KV(6, 13), PF_NO_MOVE_CHARGE,     "no-move-charge" },
	{ PROF_KV(6, 15), PF_FAILCNT_MEM_ONLY,   "failcnt-memory-only" },
	{ PROF_KV(6, 18), PF_EVENTCTL_0200,      "event-control-0200" },
};

void prof_init(struct prof *p, unsigned version)
{
	p->version = version;
	p->features = 0;
	for (size_t i = 0; i < sizeof(prof_rows) / sizeof(prof_rows[0]); i++)
		if (prof_rows[i].version <= version)
			p->features |= 1ull << prof_rows[i].feature;
}

int prof_parse(const char *s, struct prof *out)
{
	unsigned maj, min;
	int len = 0;

	if (!s || sscanf(s, "%3u.%3u%n", &maj, &min, &len) != 2)
		return -EINVAL;
	/* a kernel release as uname -r prints it: a patch level, then a
	 * suffix after '-' or '+' ("6.18.44-fc-v973") */
	s += len;
	if (*s == '.') {
		if (!isdigit((unsigned char)s[1]))
			return -EINVAL;
		for (s++; isdigit((unsigned char)*s); s++)
			;
	}
	if (*s != '\0' && ((*s != '-' && *s != '+') || s[1] == '\0'))
		return -EINVAL;
	if (PROF_KV(maj, min) < PROF_OLDEST || PROF_KV(maj, min) > PROF_NEWEST || min >= 1000)
		return -EINVAL;
	prof_init(out, PROF_KV(maj, min));
	return 0;
}

unsigned prof_charge_batch(const struct prof *p)
{
	return prof_has(p, PF_BATCH_64) ? 64 : 32;
}

unsigned prof_reclaim_retries(const struct prof *p)
{
	return prof_has(p, PF_RETRIES_16) ? 16 : 5;
}

unsigned prof_swappiness_max(const struct prof *p)
{
	return prof_has(p, PF_SWAPPINESS_200) ? 200 : 100;
}

static const struct prof_row *prof_row_of(enum prof_feature f)
{
	for (size_t i = 0; i < sizeof(prof_rows) / sizeof(prof_rows[0]); i++)
		if (prof_rows[i].feature == f)
			return &prof_rows[i];
	return NULL;
}

unsigned prof_feature_version(enum prof_feature f)
{
	const struct prof_row *r = prof_row_of(f);

	return r ? r->version : 0;
}

const char *prof_feature_name(enum prof_feature f)
{
	const struct prof_row *r = prof_row_of(f);

	return r ? r->name : "?";
}
