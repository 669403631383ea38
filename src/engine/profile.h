/* profile.h: kernel behaviour profiles. One table keyed by the version rows
 * of the contract's §7; a profile is "every row up to X.Y". Owns nothing
 * else: code asks prof_has(p, feature) and never compares versions itself. */
#ifndef MEMCGFS_PROFILE_H
#define MEMCGFS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#define PROF_KV(maj, min) ((unsigned)(maj) * 1000u + (unsigned)(min))
#define PROF_DEFAULT      PROF_KV(6, 12)
#define PROF_OLDEST       PROF_KV(4, 19)
#define PROF_NEWEST       PROF_KV(6, 18)

/* Each feature is switched on by exactly one row of the table in profile.c;
 * PF_NONE (0) is none, never on. */
enum prof_feature {
	PF_NONE,
	PF_SWAPPINESS_200,      /* 5.8: swappiness maximum 100 -> 200 */
	PF_SLABINFO_EMPTY,      /* 5.9: memory.kmem.slabinfo reads empty */
	PF_RETRIES_16,          /* 5.9: MAX_RECLAIM_RETRIES 5 -> 16 */
	PF_MKDIR_KMEM,          /* 5.9: a child's structures charged to its parent */
	PF_KMEM_REPARENT,       /* 5.9: a removed group's kernel memory goes to its parent */
	PF_HIERARCHY_ONLY,      /* 5.11: use_hierarchy fixed at 1 */
	PF_KMEM_LIMIT_524,      /* 5.16: kmem.limit_in_bytes writes -> ENOTSUPP */
	PF_OPEN_CREDS,          /* 5.16: tasks/procs check the opener's creds */
	PF_AGENT_NEEDS_CAP,     /* 5.17: release_agent needs CAP_SYS_ADMIN */
	PF_BATCH_64,            /* 6.1: MEMCG_CHARGE_BATCH 32 -> 64 */
	PF_REFAULT_STATS,       /* 6.1: workingset_refault_* and swapcached */
	PF_ROOT_USAGE_GLOBAL,   /* 6.4: root usage from global counters */
	PF_KMEM_LIMIT_IGNORED,  /* 6.6: kmem.limit_in_bytes accepted, ignored */
	PF_DEPRECATION_WARN,    /* 6.11: one-time deprecation warnings */
	PF_ID_EXHAUST_EBUSY,    /* 6.12: memcg ID exhaustion ENOSPC -> EBUSY */
	PF_NO_MOVE_CHARGE,      /* 6.13: move_charge_at_immigrate only 0 */
	PF_FAILCNT_MEM_ONLY,    /* 6.15: only the memory failcnt counts */
	PF_EVENTCTL_0200,       /* 6.18: cgroup.event_control not world-writable */
	PF__COUNT
};

struct prof {
	unsigned version;            /* PROF_KV(major, minor) */
	uint64_t features;           /* bit per enum prof_feature */
};

/* Parse "X.Y" into a profile, or a release as uname -r prints it ("X.Y.Z"
 * with a suffix after '-' or '+'). -EINVAL for garbage or an unsupported
 * version (outside PROF_OLDEST..PROF_NEWEST). */
int prof_parse(const char *s, struct prof *out);
void prof_init(struct prof *p, unsigned version);

static inline bool prof_has(const struct prof *p, enum prof_feature f)
{
	return (p->features >> f) & 1u;
}

/* Derived numbers, each from one feature. */
unsigned prof_charge_batch(const struct prof *p);
unsigned prof_reclaim_retries(const struct prof *p);
unsigned prof_swappiness_max(const struct prof *p);

/* The version row that switches f on, for documentation and tests. */
unsigned prof_feature_version(enum prof_feature f);
const char *prof_feature_name(enum prof_feature f);

#endif
