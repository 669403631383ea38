/* vm_fixture.h: the small engine (16 MiB, one node, one CPU, no stock),
 * the group maker and the page writers of the engine's page-level suites
 * (vm, swap, oom, writeback, reclaim, move). White-box tests: they see the
 * engine's insides. */
#ifndef MEMCGFS_TEST_VM_FIXTURE_H
#define MEMCGFS_TEST_VM_FIXTURE_H

#include <stdatomic.h>

#include "engine/vm.h"
#include "engine_fixture.h"

/* The small engine, with owner own (NULL: none). */
static inline struct mcg_engine *vm_engine_owned(long swap, const struct mcg_owner *own)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .swap_pages = swap, .nodes = 1, .cpus = 1, .vm_swappiness = 60,
		.no_stock = true,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, own);
}

static inline struct mcg_engine *vm_engine(long swap)
{
	return vm_engine_owned(swap, NULL);
}

static inline struct mcg_group *mk(struct mcg_engine *e, const char *name, long limit)
{
	struct mcg_group *g = fixture_group(e, e->root, name);

	if (limit)
		ck_assert_int_eq(mcg_set_limit(g, MCG_MEM, limit, NULL, NULL), 0);
	return g;
}

/* Pages from..to-1 of r written, each fault succeeding. */
static inline void fill_range(struct vm_region *r, uint32_t from, uint32_t to)
{
	enum vm_fault f;

	for (uint32_t i = from; i < to; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, true, &f), 0);
}

static inline void fill(struct vm_region *r, uint32_t n)
{
	fill_range(r, 0, n);
}

/* One page written by a thread of its own (vm_toucher_main): the fault's
 * result, and whether it has returned. */
struct vm_toucher {
	struct vm_region *r;
	uint32_t page;
	int err;
	atomic_bool done;
};

static inline void *vm_toucher_main(void *arg)
{
	struct vm_toucher *w = arg;
	enum vm_fault f;

	w->err = vm_touch(w->r, w->page, 0, true, &f);
	atomic_store(&w->done, true);
	return NULL;
}

#endif
