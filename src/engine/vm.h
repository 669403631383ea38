/* vm.h: virtual memory of simulated tasks and files. An object (a task's
 * address space or a file's page cache) owns regions of virtual pages; each
 * virtual page slot is empty, resident (a page), swapped (a swap slot) or a
 * shadow (an evicted file page, for refault detection). A page's owner
 * field is its virtual page number, so reclaim finds the slot in O(1).
 * Owns objects, regions, slots and freeing; faults, swap-in and refaults
 * are vm_fault.c's (above the charge path). Never picks pages to reclaim
 * and never decides OOM victims. */
#ifndef MEMCGFS_VM_H
#define MEMCGFS_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
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

int vm_init(struct mcg_engine *e);
void vm_destroy(struct mcg_engine *e);

/* OOM kill: o is dead from now on; its pages and slots are freed at once,
 * its regions stay (a fault may be in flight) until vm_object_free. */
void vm_object_reap(struct vm_object *o);
/* o's group, referenced. */
struct mcg_group *vm_object_group(struct vm_object *o);
/* For the OOM killer's walk over all objects. */
pthread_mutex_t *vm_space_lock(struct vm_space *vs);
struct vm_object *vm_space_objects(struct vm_space *vs);

/* The engine's evict hook for its own objects (mcg_engine.evict). */
bool vm_evict(uint32_t vpage, uint32_t page, uint32_t slot, void *engine);

/* The engine's migrate hook (mcg_engine.migrate): the slot that holds
 * page old (its owner is vpage) takes page nw, a copy (pgstate_migrate)
 * made under the object's lock. false: the slot no longer holds old (its
 * owner let it go), or the object is a real process's. */
bool vm_migrate(uint32_t vpage, uint32_t old, uint32_t nw, void *engine);

/* Pages and swap slots of o: the OOM killer's badness. */
long vm_object_footprint(struct vm_object *o);
/* File pages evicted so far: the clock a shadow's distance is read on. */
uint32_t vm_evictions(struct mcg_engine *e);

#endif
