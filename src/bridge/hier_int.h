/* hier_int.h: what the stand-in hierarchies' modules share (hier.c, the
 * tree and members; hier_file.c, the files' texts and writes). Not for
 * outside them. */
#ifndef MEMCGFS_BRIDGE_HIER_INT_H
#define MEMCGFS_BRIDGE_HIER_INT_H

#include "bridge/hier.h"
#include "bridge/hier_dev.h"

enum hier_kind {
	HK_TEXT,       /* any text, kept */
	HK_BOOL,       /* a u64, kept as 0 or 1 */
	HK_U64, HK_S64,
	HK_RO,         /* a fixed text */
	HK_WONLY,      /* write-only, anything accepted (reset_stats) */
	HK_TASKS, HK_PROCS,
	HK_CPUS, HK_MEMS, HK_ECPUS, HK_EMEMS,
	HK_DEV_ALLOW, HK_DEV_DENY, HK_DEV_LIST,
	HK_FRZ_STATE, HK_FRZ_SELF, HK_FRZ_PARENT,
	HK_PIDS_MAX, HK_PIDS_CUR, HK_PIDS_PEAK,
	HK_PERIOD, HK_QUOTA, HK_SHARES,
	HK_ZERO,       /* a counter that only 0 may be written to (a reset) */
	HK_PERCPU,     /* one 0 per CPU */
	HK_USAGE_ALL,
	HK_DEVLIMIT,   /* MAJ:MIN VALUE lines (blkio.throttle.*) */
	HK_PRIOIDX, HK_IFPRIOMAP,
	HK_HUGE_LIMIT,
};

enum { HW_ALL, HW_ROOT, HW_NOT_ROOT };

struct hier_fspec {
	const char *name;
	unsigned short mode;
	unsigned char kind, where;
	const char *dflt;
};

#define HIER_MAX_HUGE 3
#define HIER_NHUGE_EACH 9

struct hier_group {
	struct hier_group *parent, **kids;
	size_t nkids, capkids;
	char name[HIER_NAME_MAX + 1];
	unsigned id;
	char *val[HIER_MAX_FILES];   /* kept texts (NULL: the default) */
	struct hier_devs dev;        /* devices */
	bool freeze_self;            /* freezer: FROZEN written here */
	long pids_peak;
	struct hier_attr attr[HIER_MAX_FILES + 1];   /* [0] the directory */
};

struct hier_tree {
	const struct hier_fspec *files;
	int nfiles;
	struct hier_group **byid;
	size_t cap, next;   /* ids are handed out round the table */
	long count;
};

struct hier_task {
	pid_t tid;
	pid_t tgid;              /* its process */
	uint64_t start;
	unsigned grp[VIEW_NCTL];
	bool seen;               /* in the last full listing */
};

/* a CLONE_PARENT about to happen (hier_maker) */
struct hier_pending {
	pid_t real;              /* the new process's real parent */
	uint64_t since;          /* start times from then on */
	unsigned grp[VIEW_NCTL]; /* the maker's groups */
};
#define HIER_MAX_PENDING 16
#define HIER_PENDING_TICKS 1000   /* 10 s at USER_HZ 100 */

struct hier_set {
	struct hier_os os;
	struct hier_pending pending[HIER_MAX_PENDING];
	int npending;
	struct hier_tree t[VIEW_NCTL];
	char cpus[HIER_LIST_MAX], mems[HIER_LIST_MAX];
	int ncpus;
	struct hier_fspec huge[HIER_MAX_HUGE * HIER_NHUGE_EACH + 8];
	char huge_names[HIER_MAX_HUGE * HIER_NHUGE_EACH][48];
	uint64_t huge_bytes[HIER_MAX_HUGE * HIER_NHUGE_EACH + 8];  /* per file: its page size */
	struct hier_task *tasks;
	size_t ntasks, captasks;
	int *index;                           /* tasks by tid, open addressing */
	size_t nindex;
};

/* hier.c */
bool hier_is_root(const struct hier_group *g);
bool hier_below(const struct hier_group *g, const struct hier_group *top);
struct hier_task *hier_find(struct hier_set *s, pid_t tid);
struct hier_task *hier_resolve(struct hier_set *s, pid_t tid, int depth);
long hier_snapshot(struct hier_set *s, pid_t **out);
long hier_members(struct hier_set *s, int h, const struct hier_group *g, bool subtree,
		  bool procs, pid_t **out);
int hier_strip(const char *buf, size_t len, char *out, size_t size);
int hier_u64(const char *s, uint64_t *v);
int hier_s64(const char *s, int64_t *v);
int hier_list_parse(const char *s, uint64_t mask[16]);
void hier_list_print(const uint64_t mask[16], char *out, size_t size);
bool hier_list_subset(const uint64_t a[16], const uint64_t b[16]);
bool hier_list_empty(const uint64_t a[16]);
const char *hier_val(const struct hier_set *s, int h, const struct hier_group *g, int f);
int hier_keep(struct hier_group *g, int f, const char *text);
int hier_findex(const struct hier_set *s, int h, const char *name);
const char *hier_cpuset_val(const struct hier_set *s, const struct hier_group *g, bool cpus);

#endif
