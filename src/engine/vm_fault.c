/* vm_fault.c: a task's touch of a virtual page (engine.h): a hit marks
 * it referenced (dirty on write); a fault charges a new page to the group
 * of the task that brings it in (the charge path, charge.c, with reclaim
 * and OOM as the task's mode says) and fills the slot: a new page, a
 * swap-in (the page's charge replaces the slot's) or a refault (the
 * shadow's distance decides whether it was a working-set page). Above the
 * charge path; the objects, regions and slots are vm.c's. Lock order: no
 * lock is held across the charge; an object's lock, then an LRU lock
 * (pgstate). */
#include <errno.h>

#include "engine/charge.h"
#include "engine/engine.h"
#include "engine/flusher.h"
#include "engine/internal.h"
#include "engine/page_state.h"
#include "engine/swap.h"
#include "engine/vm.h"

/* The page's flags before the access. */
static uint8_t vm_accessed(struct mcg_engine *e, uint32_t idx, bool write, bool mapped)
{
	return pgstate_accessed(e, idx, (uint8_t)((write ? PG_DIRTY : 0) | (mapped ? PG_MAPPED : 0)));
}

/* Slots [base, base + n) of t are all empty. Caller holds t's object lock. */
static bool vm_range_empty(struct vm_region *t, uint32_t base, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (atomic_load_explicit(&t->slot[base + k], memory_order_relaxed) != VM_EMPTY)
			return false;
	return true;
}

/* The list a new anon page starts on for a fault on slot value v: the
 * active one up to 5.8 (2.6.24's lru_cache_add_active, for a swap-in too;
 * from 2.6.28 LRU_ACTIVE_ANON in page_add_new_anon_rmap, a swap-in
 * inactive, lru_cache_add_anon), the inactive one since 5.9 ("mm:
 * workingset: age nonresident information alongside anonymous pages"),
 * today's era. */
static uint8_t vm_new_anon_flags(const struct mcg_engine *e, uint32_t v)
{
	if (e->m.era == MCG_ERA_TODAY)
		return 0;
	return v == VM_EMPTY || e->m.era == MCG_ERA_2_6_24 ? PG_ACTIVE : 0;
}

/* A new page's flags for a fault on slot value v of t: dirty when a file
 * page is written, mapped where t is, and its list if anon. */
static uint8_t vm_new_flags(const struct mcg_engine *e, const struct vm_region *t, uint32_t v,
			    bool write)
{
	return (uint8_t)((write && t->kind == PK_FILE ? PG_DIRTY : 0) | (t->mapped ? PG_MAPPED : 0) |
			 (t->kind == PK_ANON ? vm_new_anon_flags(e, v) : 0));
}

/* With m.thp, a fault (slot value v) on page off of an anon region r,
 * not a file's: a transparent huge page for the aligned 2M around it if
 * all its slots are empty (do_huge_pmd_anonymous_page, THP "always").
 * 1: mapped (*fault VM_HUGE); 0: none (the fault falls back to a base
 * page); -EFAULT: the task died; -EBUSY: no reclaim slot (a replay's),
 * the fault comes again. Takes and drops r's object lock. */
static int vm_fault_huge(struct vm_object *who, struct vm_region *r, uint32_t off, uint32_t v,
			 unsigned cpu, enum vm_fault *fault)
{
	struct vm_object *o = r->obj;
	struct mcg_engine *e = o->eng;
	uint32_t base = off & ~(PAGE_BLOCK - 1);
	struct vm_region *t = r;
	struct mcg_group *charge_to;
	bool empty;
	long idx;

	if (v != VM_EMPTY || !e->compact || r->file || r->kind != PK_ANON ||
	    base + PAGE_BLOCK > r->npages)
		return 0;
	pthread_mutex_lock(&o->lock);
	empty = vm_range_empty(t, base, PAGE_BLOCK);
	pthread_mutex_unlock(&o->lock);
	if (!empty)
		return 0;
	charge_to = vm_object_group(who);
	idx = charge_new_huge(charge_to, cpu, cpu, PK_ANON, t->vbase + base,
			      vm_new_anon_flags(e, VM_EMPTY), who->mode);
	if (idx < 0) {
		mcg_put(charge_to);
		return idx == -EBUSY ? -EBUSY : 0;     /* (a reclaim slot: come again) */
	}
	pthread_mutex_lock(&o->lock);
	if (atomic_load(&o->dead) || atomic_load(&who->dead) || !vm_range_empty(t, base, PAGE_BLOCK)) {
		bool dead = atomic_load(&o->dead) || atomic_load(&who->dead);

		pthread_mutex_unlock(&o->lock);
		for (uint32_t k = 0; k < PAGE_BLOCK; k++)
			charge_free_page(e, (uint32_t)idx + k, NULL);
		mcg_put(charge_to);
		return dead ? -EFAULT : 0;
	}
	for (uint32_t k = 0; k < PAGE_BLOCK; k++)
		atomic_store(&t->slot[base + k], (uint32_t)idx + k);
	atomic_fetch_add(&o->resident, PAGE_BLOCK);
	pthread_mutex_unlock(&o->lock);
	stat_add(charge_to, STAT_PGFAULT, 1);
	mcg_put(charge_to);
	*fault = VM_HUGE;
	return 1;
}

int vm_touch(struct vm_region *r, uint32_t i, unsigned cpu, bool write, enum vm_fault *fault)
{
	return vm_touch_by(r->obj, r, i, cpu, write, fault);
}

int vm_touch_by(struct vm_object *who, struct vm_region *r, uint32_t i, unsigned cpu, bool write,
		enum vm_fault *fault)
{
	struct vm_region *t = r->file ? r->file : r;     /* where the slot lives */
	uint32_t off = r->file ? r->file_off + i : i;
	struct vm_object *o = t->obj;
	struct mcg_engine *e = o->eng;
	struct mcg_group *charge_to, *faulter;
	uint32_t v, distance = 0;
	long idx;

	if (i >= r->npages)
		return -EINVAL;
	if (atomic_load(&who->dead))
		return -EFAULT;
	for (;;) {
		/* A file page is charged to the group of the task that brings
		 * it in; anon and shmem pages to their owner's (the same task:
		 * r's object). Taken before the slot's object is locked. */
		charge_to = vm_object_group(who);
		faulter = charge_to;
		pthread_mutex_lock(&o->lock);
		v = atomic_load(&t->slot[off]);
		if (v != VM_EMPTY && (v & VM_TAG_MASK) == VM_TAG_PAGE) {
			/* a write makes the copy in swap stale */
			if (write && e->swap->nr_slots && t->kind != PK_FILE &&
			    pgstate_swapcache(e, v, false))
				swap_cache_drop(e, v);
			bool dirtied = !(vm_accessed(e, v, write, r->file != NULL) & PG_DIRTY) &&
				       write && t->kind == PK_FILE;

			pthread_mutex_unlock(&o->lock);
			mcg_put(charge_to);
			*fault = VM_HIT;
			if (dirtied)
				flusher_dirtied(who, o);   /* balance_dirty_pages */
			return 0;
		}
		pthread_mutex_unlock(&o->lock);
		if ((idx = vm_fault_huge(who, r, off, v, cpu, fault)) != 0) {
			mcg_put(charge_to);
			return idx > 0 ? 0 : (int)idx;
		}

		/* the faulting task's mode, not the file's */
		idx = charge_new_page(charge_to, cpu, cpu, t->kind, t->vbase + off,
				      vm_new_flags(e, t, v, write), who->mode);
		if (idx < 0) {
			mcg_put(charge_to);
			return (int)idx;
		}
		pthread_mutex_lock(&o->lock);
		if (atomic_load(&t->slot[off]) != v || atomic_load(&o->dead) ||
		    atomic_load(&who->dead)) {
			/* someone else faulted it, or the task was killed */
			bool dead = atomic_load(&o->dead) || atomic_load(&who->dead);

			pthread_mutex_unlock(&o->lock);
			charge_free_page(e, (uint32_t)idx, NULL);
			mcg_put(charge_to);
			if (dead)
				return -EFAULT;
			continue;
		}
		atomic_store(&t->slot[off], (uint32_t)idx);
		atomic_fetch_add(&o->resident, 1);
		if (v == VM_EMPTY) {
			*fault = t->kind == PK_FILE ? VM_MAJOR : VM_MINOR;
		} else if ((v & VM_TAG_MASK) == VM_TAG_SWAP) {
			/* swap-in: the page's new charge replaces the slot's; a
			 * read keeps the slot as the page's swap cache */
			if (write)
				swap_release(e, v & ~VM_TAG_MASK);
			else if (swap_cache_keep(e, v & ~VM_TAG_MASK, (uint32_t)idx))
				pgstate_swapcache(e, (uint32_t)idx, true);   /* (else released) */
			atomic_fetch_sub(&o->swapped, 1);
			stat_add(charge_to, STAT_REFAULT_ANON, 1);
			*fault = VM_REFAULT;
		} else {
			distance = (vm_evictions(e) - (v & ~VM_TAG_MASK)) & ~VM_TAG_MASK;
			stat_add(charge_to, STAT_REFAULT_FILE, 1);
			*fault = VM_REFAULT;
		}
		if (r->file || *fault == VM_REFAULT)
			vm_accessed(e, (uint32_t)idx, write, r->file != NULL);
		/* a refault within the file LRU's reach was a working-set page */
		if (distance && distance <= (uint32_t)(stat_lru_local(charge_to, LRU_ACTIVE_FILE, -1) +
							 stat_lru_local(charge_to, LRU_INACTIVE_FILE, -1)))
			pgstate_flags(e, (uint32_t)idx, PG_ACTIVE, 0);
		pthread_mutex_unlock(&o->lock);
		stat_add(faulter, STAT_PGFAULT, 1);
		if (*fault != VM_MINOR)
			stat_add(faulter, STAT_PGMAJFAULT, 1);
		mcg_put(charge_to);
		if (write && t->kind == PK_FILE)
			flusher_dirtied(who, o);      /* a new dirty page */
		return 0;
	}
}
