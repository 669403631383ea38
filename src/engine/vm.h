/* vm.h: virtual memory of simulated tasks and files. An object (a task's
 * address space or a file's page cache) owns regions of virtual pages; each
 * virtual page slot is empty, resident (a page), swapped (a swap slot) or a
 * shadow (an evicted file page, for refault detection). A page's owner
 * field is its virtual page number, so reclaim finds the slot in O(1).
 * Owns objects, regions, slots and freeing; faults, swap-in and refaults
 * are vm_fault.h's (above the charge path). Never picks pages to reclaim
 * and never decides OOM victims. */
#ifndef MEMCGFS_VM_H
#define MEMCGFS_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/page.h"

#define VM_CHUNK_SHIFT 8                     /* 256 virtual pages per chunk */
#define VM_CHUNK       (1u << VM_CHUNK_SHIFT)
#define VM_MAX_PAGES   (1u << 30)            /* page indexes and slots fit 30 bits */


struct mcg_engine;
struct mcg_group;
struct vm_region;
struct charge_mode;
struct charge_batch;
struct vm_space;

/* A task's address space or a file. Its lock guards its regions' slots. */
struct vm_object {
	struct mcg_engine *eng;
	pthread_mutex_t lock;
	struct mcg_group *g;          /* the group it charges (referenced) */
	bool is_task;
	bool real;                    /* stand-ins for a real process's memory:
				       * its anon and shmem cannot go to the
				       * simulated swap (the real pages stay) */
	atomic_bool unkillable;       /* never an OOM victim (PID 1,
				       * oom_score_adj -1000, enforce=none) */
	atomic_uint evicted;          /* pages reclaim took from this object:
				       * the mirror pages out real ranges */
	atomic_bool dead;             /* killed or being torn down: no faults */
	atomic_int refs;              /* the owner's, plus OOM's while it looks */
	uint32_t id;                  /* caller's number (a task id) */
	struct vm_region *regions;
	struct vm_object *next, *prev; /* the engine's list of objects */
	atomic_long resident;         /* pages mapped by its regions */
	atomic_long swapped;
	struct charge_mode *mode;     /* how its faults charge (NULL: the
				       * default); the owner's, set once */
};

struct vm_region {
	struct vm_object *obj;
	enum page_kind kind;
	uint32_t vbase;               /* first virtual page number */
	uint32_t npages;
	uint32_t nchunks;
	_Atomic uint32_t *slot;       /* [npages] */
	struct vm_region *next;       /* in obj->regions */
	struct vm_region *file;       /* a task's file mapping: the file's region */
	uint32_t file_off;
};


int vm_init(struct mcg_engine *e);
void vm_destroy(struct mcg_engine *e);

struct vm_object *vm_object_new(struct mcg_engine *e, struct mcg_group *g, bool is_task, uint32_t id);
/* A file of the page cache: an object owned by no task whose one region of
 * pages file pages is charged to whoever touches a page first. 0 and both
 * set, or -ENOMEM with nothing made. */
int vm_file_new(struct mcg_engine *e, uint32_t pages, struct vm_object **obj, struct vm_region **r);
/* The owner is done with o: frees every region (pages, slots, shadows)
 * and drops the owner's reference. No fault of o may be in flight, and no
 * mapping of o's file regions may remain. */
void vm_object_free(struct vm_object *o);
/* OOM kill: o is dead from now on; its pages and slots are freed at once,
 * its regions stay (a fault may be in flight) until vm_object_free. */
void vm_object_reap(struct vm_object *o);
void vm_object_pin(struct vm_object *o);
void vm_object_unpin(struct vm_object *o);
/* o's group, referenced. */
struct mcg_group *vm_object_group(struct vm_object *o);
/* For the OOM killer's walk over all objects. */
pthread_mutex_t *vm_space_lock(struct vm_space *vs);
struct vm_object *vm_space_objects(struct vm_space *vs);
/* How o's faults charge under oom_kill_disable (charge.h; NULL: wait).
 * Set before o charges anything; mode stays the owner's, and the owner
 * serialises o's faults when the mode has an out field to read. */
void vm_object_set_mode(struct vm_object *o, struct charge_mode *mode);
/* Charge future faults to g (a task moved groups). */
void vm_object_set_group(struct vm_object *o, struct mcg_group *g);

/* A region of npages of kind in o. -ENOMEM, -EINVAL. */
int vm_region_new(struct vm_object *o, enum page_kind kind, uint32_t npages, struct vm_region **out);
/* A task's mapping of [off, off + npages) of a file's region. */
int vm_map_file(struct vm_object *task, struct vm_region *file, uint32_t off, uint32_t npages,
		struct vm_region **out);
void vm_region_free(struct vm_region *r);

/* Drop virtual page i (munmap of one page, or truncate for a file), its
 * uncharge gathered into b (charge.h; NULL: at once). */
void vm_discard(struct vm_region *r, uint32_t i, struct charge_batch *b);
/* Page i of r is in memory now (not empty, not swapped out). A racy read:
 * a concurrent fault or eviction may change it the next moment. */
bool vm_resident(const struct vm_region *r, uint32_t i);
/* mlock/munlock a resident page. */
void vm_mlock(struct vm_region *r, uint32_t i, bool lock);
/* Make a resident page unevictable (PG_UNEVICTABLE) or evictable again:
 * reclaim passes it by. For stand-ins of real pages the real kernel would
 * not page out for us (the mirror's pageout back-off). */
void vm_pin(struct vm_region *r, uint32_t i, bool pin);

/* The engine's evict hook for its own objects (mcg_engine.evict). */
bool vm_evict(uint32_t vpage, uint32_t page, uint32_t slot, void *engine);

/* Pages and swap slots of o: the OOM killer's badness. */
long vm_object_footprint(struct vm_object *o);
/* File pages evicted so far: the clock a shadow's distance is read on. */
uint32_t vm_evictions(struct mcg_engine *e);

#endif
