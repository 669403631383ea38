/* vm_fault.h: touching a simulated task's virtual pages: hits, and
 * faults that charge a new page (a new one, a swap-in, a refault). Never
 * picks pages to reclaim, never decides OOM victims. */
#ifndef MEMCGFS_VM_FAULT_H
#define MEMCGFS_VM_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/vm.h"

/* What a touch did, for statistics and tests. */
enum vm_fault {
	VM_HIT,        /* already resident */
	VM_MINOR,      /* new page (anon zero page, or file page in cache) */
	VM_MAJOR,      /* read in: swap-in, or a file page not in cache */
	VM_REFAULT,    /* a major fault that hit a shadow: it was evicted recently */
};

/* Access virtual page i of r from simulated CPU cpu: fault it in if needed
 * (charging r's object's group, or for file pages the toucher's), mark it
 * referenced, dirty on write. 0 with *fault set, or -ENOMEM. */
int vm_touch(struct vm_region *r, uint32_t i, unsigned cpu, bool write, enum vm_fault *fault);
/* The same for task who, r being any region (a file's own: read(2) or
 * write(2) through the page cache, no mapping): charged to who's group,
 * as who's fault (its mode; -EFAULT once who is dead). */
int vm_touch_by(struct vm_object *who, struct vm_region *r, uint32_t i, unsigned cpu, bool write,
		enum vm_fault *fault);

#endif
