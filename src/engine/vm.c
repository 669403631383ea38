/* vm.c: virtual pages of simulated tasks and files: objects, regions,
 * slots, freeing, and eviction for reclaim (vm_evict). Lock order: the
 * space's lock (the objects list; the OOM walk and vm_evict take an
 * object's lock under it), then an object's lock, then (inside an
 * uncharge) lruvec, swap and tree locks. Faults are vm_fault.c's, which
 * hold no object lock while charging a new page: charging may reclaim, and
 * reclaim calls vm_evict, which takes object locks. Never scans LRUs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/charge_core.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/page_state.h"
#include "engine/swap.h"
#include "engine/vm.h"

#define VM_CHUNKS (VM_MAX_PAGES >> VM_CHUNK_SHIFT)

struct vm_run {
	uint32_t start, len;          /* in chunks */
};

struct vm_space {
	pthread_mutex_t lock;         /* runs, objects list */
	struct vm_region *_Atomic *chunk;   /* [VM_CHUNKS]: region of each chunk */
	struct vm_run *free;          /* free chunk runs, sorted by start */
	size_t nfree, capfree;
	struct vm_object *objects;
	atomic_uint evictions;        /* file evictions: the shadow clock */
};

int vm_init(struct mcg_engine *e)
{
	struct vm_space *vs = calloc(1, sizeof(*vs));

	if (!vs)
		return -ENOMEM;
	vs->chunk = mmap(NULL, VM_CHUNKS * sizeof(*vs->chunk), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	vs->free = malloc(16 * sizeof(*vs->free));
	if (vs->chunk == MAP_FAILED || !vs->free) {
		if (vs->chunk != MAP_FAILED)
			munmap(vs->chunk, VM_CHUNKS * sizeof(*vs->chunk));
		free(vs->free);
		free(vs);
		return -ENOMEM;
	}
	pthread_mutex_init(&vs->lock, NULL);
	vs->capfree = 16;
	vs->nfree = 1;
	vs->free[0] = (struct vm_run){ 0, VM_CHUNKS };
	e->vm = vs;
	return 0;
}

void vm_destroy(struct mcg_engine *e)
{
	struct vm_space *vs = e->vm;

	if (!vs)
		return;
	while (vs->objects)
		vm_object_free(vs->objects);
	munmap(vs->chunk, VM_CHUNKS * sizeof(*vs->chunk));
	pthread_mutex_destroy(&vs->lock);
	free(vs->free);
	free(vs);
	e->vm = NULL;
}

/* First fit in the free runs. Caller holds vs->lock. */
static int vm_runs_take(struct vm_space *vs, uint32_t n, uint32_t *start)
{
	for (size_t i = 0; i < vs->nfree; i++)
		if (vs->free[i].len >= n) {
			*start = vs->free[i].start;
			vs->free[i].start += n;
			vs->free[i].len -= n;
			if (!vs->free[i].len) {
				memmove(&vs->free[i], &vs->free[i + 1], (vs->nfree - i - 1) * sizeof(*vs->free));
				vs->nfree--;
			}
			return 0;
		}
	return -ENOMEM;
}

/* Give back a run, merging with its neighbours. Caller holds vs->lock. */
static void vm_runs_give(struct vm_space *vs, uint32_t start, uint32_t n)
{
	size_t i = 0;

	while (i < vs->nfree && vs->free[i].start < start)
		i++;
	if (i > 0 && vs->free[i - 1].start + vs->free[i - 1].len == start) {
		vs->free[i - 1].len += n;
		if (i < vs->nfree && start + n == vs->free[i].start) {
			vs->free[i - 1].len += vs->free[i].len;
			memmove(&vs->free[i], &vs->free[i + 1], (vs->nfree - i - 1) * sizeof(*vs->free));
			vs->nfree--;
		}
		return;
	}
	if (i < vs->nfree && start + n == vs->free[i].start) {
		vs->free[i].start = start;
		vs->free[i].len += n;
		return;
	}
	if (vs->nfree == vs->capfree) {
		struct vm_run *nf = realloc(vs->free, 2 * vs->capfree * sizeof(*nf));

		if (!nf)
			return;           /* the run is lost to reuse, nothing worse */
		vs->free = nf;
		vs->capfree *= 2;
	}
	memmove(&vs->free[i + 1], &vs->free[i], (vs->nfree - i) * sizeof(*vs->free));
	vs->free[i] = (struct vm_run){ start, n };
	vs->nfree++;
}

struct vm_object *vm_object_new(struct mcg_engine *e, struct mcg_group *g, bool is_task, uint32_t id)
{
	struct vm_object *o = calloc(1, sizeof(*o));
	struct vm_space *vs = e->vm;

	if (!o)
		return NULL;
	o->eng = e;
	atomic_init(&o->refs, 1);
	pthread_mutex_init(&o->lock, NULL);
	mcg_get(g);
	o->g = g;
	o->is_task = is_task;
	o->id = id;
	pthread_mutex_lock(&vs->lock);
	o->next = vs->objects;
	if (o->next)
		o->next->prev = o;
	vs->objects = o;
	pthread_mutex_unlock(&vs->lock);
	return o;
}

static int vm_file_new_kind(struct mcg_engine *e, enum page_kind kind, uint32_t pages,
			    struct vm_object **obj, struct vm_region **r)
{
	struct vm_object *o = vm_object_new(e, e->root, false, 0);

	if (!o)
		return -ENOMEM;
	if (vm_region_new(o, kind, pages, r)) {
		vm_object_free(o);
		return -ENOMEM;
	}
	*obj = o;
	return 0;
}

int vm_file_new(struct mcg_engine *e, uint32_t pages, struct vm_object **obj, struct vm_region **r)
{
	return vm_file_new_kind(e, PK_FILE, pages, obj, r);
}

int vm_shmem_file_new(struct mcg_engine *e, uint32_t pages, struct vm_object **obj,
		      struct vm_region **r)
{
	return vm_file_new_kind(e, PK_SHMEM, pages, obj, r);
}

void vm_object_set_mode(struct vm_object *o, struct charge_mode *mode)
{
	o->mode = mode;
}

void vm_object_set_group(struct vm_object *o, struct mcg_group *g)
{
	struct mcg_group *old;

	mcg_get(g);
	pthread_mutex_lock(&o->lock);
	old = o->g;
	o->g = g;
	pthread_mutex_unlock(&o->lock);
	mcg_put(old);
}

static int vm_region_add(struct vm_object *o, enum page_kind kind, uint32_t npages, bool slots,
			 struct vm_region **out)
{
	struct vm_space *vs = o->eng->vm;
	struct vm_region *r;

	if (npages == 0 || npages > VM_MAX_PAGES / 2)
		return -EINVAL;
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	r->obj = o;
	r->kind = kind;
	r->npages = npages;
	r->nchunks = (npages + VM_CHUNK - 1) >> VM_CHUNK_SHIFT;
	if (slots) {
		if (!(r->slot = malloc(npages * sizeof(*r->slot)))) {
			free(r);
			return -ENOMEM;
		}
		memset(r->slot, 0xff, npages * sizeof(*r->slot));     /* VM_EMPTY */
	}
	pthread_mutex_lock(&vs->lock);
	if (vm_runs_take(vs, r->nchunks, &r->vbase)) {
		pthread_mutex_unlock(&vs->lock);
		free(r->slot);
		free(r);
		return -ENOMEM;
	}
	for (uint32_t c = 0; c < r->nchunks; c++)
		atomic_store_explicit(&vs->chunk[r->vbase + c], r, memory_order_release);
	pthread_mutex_unlock(&vs->lock);
	r->vbase <<= VM_CHUNK_SHIFT;
	pthread_mutex_lock(&o->lock);
	r->next = o->regions;
	o->regions = r;
	pthread_mutex_unlock(&o->lock);
	*out = r;
	return 0;
}

int vm_region_new(struct vm_object *o, enum page_kind kind, uint32_t npages, struct vm_region **out)
{
	if (kind != PK_ANON && kind != PK_FILE && kind != PK_SHMEM)
		return -EINVAL;
	return vm_region_add(o, kind, npages, true, out);
}

int vm_map_file(struct vm_object *task, struct vm_region *file, uint32_t off, uint32_t npages,
		struct vm_region **out)
{
	int err;

	if (off > file->npages || npages > file->npages - off)
		return -EINVAL;
	/* A mapping has no slots of its own: its pages are the file's. It
	 * still takes virtual pages, so that it has an address. */
	if ((err = vm_region_add(task, file->kind, npages, false, out)))
		return err;
	(*out)->file = file;
	(*out)->file_off = off;
	return 0;
}

/* Drop whatever slot i of r holds, its page freed into b (NULL: at once).
 * Caller holds r->obj->lock. */
static void vm_slot_drop(struct vm_region *r, uint32_t i, struct charge_batch *b)
{
	struct mcg_engine *e = r->obj->eng;
	uint32_t v = atomic_exchange(&r->slot[i], VM_EMPTY);

	if (v == VM_EMPTY)
		return;
	switch (v & VM_TAG_MASK) {
	case VM_TAG_PAGE:
		charge_free_page(e, v, b);
		atomic_fetch_sub(&r->obj->resident, 1);
		break;
	case VM_TAG_SWAP:
		swap_release(e, v & ~VM_TAG_MASK);
		atomic_fetch_sub(&r->obj->swapped, 1);
		break;
	}
}

void vm_region_free(struct vm_region *r)
{
	struct vm_object *o = r->obj;
	struct vm_space *vs = o->eng->vm;
	struct vm_region **pp;

	pthread_mutex_lock(&o->lock);
	for (pp = &o->regions; *pp != r; pp = &(*pp)->next)
		;
	*pp = r->next;
	if (r->slot) {
		struct charge_batch b;

		charge_batch_begin(&b, o->eng);
		for (uint32_t i = 0; i < r->npages; i++)
			vm_slot_drop(r, i, &b);
		charge_batch_end(&b);
	}
	pthread_mutex_unlock(&o->lock);
	pthread_mutex_lock(&vs->lock);
	for (uint32_t c = 0; c < r->nchunks; c++)
		atomic_store(&vs->chunk[(r->vbase >> VM_CHUNK_SHIFT) + c], NULL);
	vm_runs_give(vs, r->vbase >> VM_CHUNK_SHIFT, r->nchunks);
	pthread_mutex_unlock(&vs->lock);
	free(r->slot);
	free(r);
}

pthread_mutex_t *vm_space_lock(struct vm_space *vs)
{
	return &vs->lock;
}

struct vm_object *vm_space_objects(struct vm_space *vs)
{
	return vs->objects;
}

void vm_object_pin(struct vm_object *o)
{
	atomic_fetch_add(&o->refs, 1);
}

void vm_object_unpin(struct vm_object *o)
{
	if (atomic_fetch_sub(&o->refs, 1) != 1)
		return;
	mcg_put(o->g);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

struct mcg_group *vm_object_group(struct vm_object *o)
{
	struct mcg_group *g;

	pthread_mutex_lock(&o->lock);
	g = o->g;
	mcg_get(g);
	pthread_mutex_unlock(&o->lock);
	return g;
}

void vm_object_reap(struct vm_object *o)
{
	struct charge_batch b;

	pthread_mutex_lock(&o->lock);
	atomic_store(&o->dead, true);
	charge_batch_begin(&b, o->eng);
	for (struct vm_region *r = o->regions; r; r = r->next)
		if (r->slot)
			for (uint32_t i = 0; i < r->npages; i++)
				vm_slot_drop(r, i, &b);
	charge_batch_end(&b);
	pthread_mutex_unlock(&o->lock);
}

void vm_object_free(struct vm_object *o)
{
	struct vm_space *vs = o->eng->vm;

	vm_object_reap(o);
	while (o->regions)
		vm_region_free(o->regions);
	pthread_mutex_lock(&vs->lock);
	if (o->prev)
		o->prev->next = o->next;
	else
		vs->objects = o->next;
	if (o->next)
		o->next->prev = o->prev;
	o->next = o->prev = NULL;
	pthread_mutex_unlock(&vs->lock);
	vm_object_unpin(o);
}

bool vm_resident(const struct vm_region *r, uint32_t i)
{
	uint32_t v = atomic_load(&r->slot[i]);

	return v != VM_EMPTY && (v & VM_TAG_MASK) == VM_TAG_PAGE;
}

void vm_discard(struct vm_region *r, uint32_t i, struct charge_batch *b)
{
	struct vm_region *t = r->file ? r->file : r;

	if (i >= r->npages)
		return;
	pthread_mutex_lock(&t->obj->lock);
	vm_slot_drop(t, r->file ? r->file_off + i : i, b);
	pthread_mutex_unlock(&t->obj->lock);
}

/* Set or clear flag of page i of r if it is resident. */
static void vm_page_flag(struct vm_region *r, uint32_t i, uint8_t flag, bool on)
{
	struct vm_region *t = r->file ? r->file : r;
	uint32_t v;

	if (i >= r->npages)
		return;
	pthread_mutex_lock(&t->obj->lock);
	v = atomic_load(&t->slot[r->file ? r->file_off + i : i]);
	if (v != VM_EMPTY && (v & VM_TAG_MASK) == VM_TAG_PAGE)
		pgstate_flags(t->obj->eng, v, on ? flag : 0, on ? 0 : flag);
	pthread_mutex_unlock(&t->obj->lock);
}

void vm_mlock(struct vm_region *r, uint32_t i, bool lock)
{
	vm_page_flag(r, i, PG_MLOCKED, lock);
}

void vm_set_mapped(struct vm_region *r, uint32_t i, bool mapped)
{
	vm_page_flag(r, i, PG_MAPPED, mapped);
}

void vm_set_dirty(struct vm_region *r, uint32_t i, bool dirty)
{
	vm_page_flag(r, i, PG_DIRTY, dirty);
}

void vm_region_set_mapped(struct vm_region *r)
{
	r->mapped = true;
}

void vm_pin(struct vm_region *r, uint32_t i, bool pin)
{
	vm_page_flag(r, i, PG_UNEVICTABLE, pin);
}

/* The slot that holds page, whose owner is vpage, with the space's lock
 * and its object's (*o) held, or NULL with neither: the region is gone,
 * the object dead or a real process's (unless real_ok), or the slot holds
 * something else. An isolated page does not keep its region alive: its
 * owner may be freeing it right now. Freeing a region or an object needs
 * the space lock to finish, so holding it keeps both valid (space lock,
 * then object lock: the OOM walk's order too). */
static _Atomic uint32_t *vm_owner_lock(struct vm_space *vs, uint32_t vpage, uint32_t page,
				       bool real_ok, struct vm_object **o)
{
	struct vm_region *r;

	if ((vpage >> VM_CHUNK_SHIFT) >= VM_CHUNKS)
		return NULL;
	pthread_mutex_lock(&vs->lock);
	r = atomic_load_explicit(&vs->chunk[vpage >> VM_CHUNK_SHIFT], memory_order_acquire);
	if (!r || !r->slot || (r->obj->real && !real_ok)) {
		pthread_mutex_unlock(&vs->lock);
		return NULL;
	}
	*o = r->obj;
	pthread_mutex_lock(&(*o)->lock);
	if (!atomic_load(&(*o)->dead) && vpage >= r->vbase && vpage - r->vbase < r->npages &&
	    atomic_load(&r->slot[vpage - r->vbase]) == page)
		return &r->slot[vpage - r->vbase];
	pthread_mutex_unlock(&(*o)->lock);
	pthread_mutex_unlock(&vs->lock);
	return NULL;
}

static void vm_owner_unlock(struct vm_space *vs, struct vm_object *o)
{
	pthread_mutex_unlock(&o->lock);
	pthread_mutex_unlock(&vs->lock);
}

bool vm_evict(uint32_t vpage, uint32_t page, uint32_t slot, void *engine)
{
	struct mcg_engine *e = engine;
	struct vm_space *vs = e->vm;
	/* a real process's anon page is not in our swap */
	struct vm_object *o;
	_Atomic uint32_t *at = vm_owner_lock(vs, vpage, page, slot == SWAP_NONE, &o);
	uint32_t nv;

	if (!at)
		return false;
	if (slot != SWAP_NONE) {
		nv = VM_TAG_SWAP | slot;
		atomic_fetch_add(&o->swapped, 1);
	} else {
		nv = VM_TAG_SHADOW | (atomic_fetch_add(&vs->evictions, 1) & ~VM_TAG_MASK);
	}
	atomic_store(at, nv);
	atomic_fetch_sub(&o->resident, 1);
	atomic_fetch_add(&o->evicted, 1);
	vm_owner_unlock(vs, o);
	return true;
}

bool vm_migrate(uint32_t vpage, uint32_t old, uint32_t nw, void *engine)
{
	struct mcg_engine *e = engine;
	struct vm_object *o;
	_Atomic uint32_t *at = vm_owner_lock(e->vm, vpage, old, false, &o);

	if (!at)
		return false;
	pgstate_migrate(e, old, nw);
	atomic_store(at, nw);
	vm_owner_unlock(e->vm, o);
	return true;
}

uint32_t vm_evictions(struct mcg_engine *e)
{
	return atomic_load(&e->vm->evictions);
}

long vm_object_footprint(struct vm_object *o)
{
	return atomic_load(&o->resident) + atomic_load(&o->swapped);
}
