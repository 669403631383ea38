/* workload.h: the workload language shared by replayed scenarios and
 * simulated tasks (docs/replay.md): parsing one operation, and executing
 * the memory operations (alloc, map, touch, free, mlock) of a task on its
 * virtual memory. Owns neither scheduling nor time: callers decide when
 * an operation runs and what sleep, repeat, fork and exit mean. */
#ifndef MEMCGFS_WORKLOAD_H
#define MEMCGFS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define WL_NAME        32
#define WL_MAX_REGIONS 64
#define WL_NS_MS       1000000ull

struct mcg_engine;
struct vm_object;
struct vm_region;

enum wl_code { WL_ALLOC, WL_MAP, WL_TOUCH, WL_FREE, WL_MLOCK, WL_MUNLOCK, WL_SLEEP, WL_REPEAT,
	       WL_END, WL_EXIT, WL_FORK, WL_COMPUTE };
enum wl_pattern { WL_SEQ, WL_RANDOM, WL_HOT };

struct wl_op {
	enum wl_code code;
	char a[WL_NAME], b[WL_NAME];
	enum page_kind kind;
	long pages, off, count;
	enum wl_pattern pattern;
	unsigned hot_p, hot_q;
	bool write;
	uint64_t ns;
	int line;
	int match;                    /* repeat <-> end, set by the caller */
};

struct wl_region {
	char name[WL_NAME];
	struct vm_region *r;
};

struct wl_costs {
	uint64_t touch, fault, major; /* ns per page touched, minor, major fault */
	/* Told of each read from the disk a fault makes (page i of region r:
	 * a file page not in the cache, unless a write brings it in, or a
	 * refault: a file page evicted before, or a swap-in); true ends the touch's
	 * step after that page, so the caller can make the task wait for the
	 * read before it goes on. NULL: nobody is told. */
	bool (*major_io)(void *arg, const struct vm_region *r, uint32_t i);
	void *io_arg;
};

/* One task's memory state as the language sees it. */
struct wl_task {
	struct vm_object *obj;
	unsigned cpu;
	uint64_t *rng;                /* xorshift state, shared or private */
	struct wl_region reg[WL_MAX_REGIONS];
	int nreg;
	long done;                    /* pages done of the current touch */
	/* the named file's page-cache region, or NULL */
	struct vm_region *(*file)(void *arg, const char *name);
	void *file_arg;
};

enum wl_result {
	WL_DONE,        /* the operation finished */
	WL_AGAIN,       /* a touch reached max_pages: call again to go on */
	WL_STALL,       /* a charge failed (an OOM wait): retry later */
	WL_KILLED,      /* the OOM killer took the task */
};

/* Parse argv (an operation and its arguments). 0, or -EINVAL with msg. */
int wl_parse(char **argv, int argc, struct wl_op *op, char *msg, size_t len);
/* Run a memory operation (alloc, map, touch, free, mlock, munlock). A
 * touch stops after max_pages pages (WL_AGAIN). *cost grows by the
 * simulated time spent. Returns an enum wl_result, or -errno with msg. */
int wl_exec(struct wl_task *t, const struct wl_op *op, long max_pages, const struct wl_costs *c,
	    uint64_t *cost, char *msg, size_t len);
/* Free the task's regions (not the object). */
void wl_release(struct wl_task *t);

uint64_t wl_rand(uint64_t *state);
/* "64M" -> bytes: the control files' size syntax and silent wrap
 * (util/size.h: "0x10k", "010" octal, suffixes k to E), starting with a
 * digit; -1 on garbage or above LLONG_MAX. */
long long wl_size(const char *s);
long wl_pages(const char *s);       /* The words of a line of the language (replay's scenarios, the
 * simulated-task protocol): split in place on blanks, at most max of them
 * into argv (the rest is left out). Their count. */
int wl_split(char *line, char **argv, int max);
/* rounded up */
int wl_time(const char *s, uint64_t *ns);
const char *wl_arg(char **argv, int argc, const char *key);

#endif
