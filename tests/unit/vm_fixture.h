/* vm_fixture.h: the small engine (16 MiB, one node, one CPU, no stock)
 * and group maker of the engine's page-level suites (vm, swap, oom,
 * writeback, reclaim). White-box tests: they see the engine's insides. */
#ifndef MEMCGFS_TEST_VM_FIXTURE_H
#define MEMCGFS_TEST_VM_FIXTURE_H

#include "engine_fixture.h"

static inline struct mcg_engine *vm_engine(long swap)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .swap_pages = swap, .nodes = 1, .cpus = 1, .vm_swappiness = 60,
		.no_stock = true,
	};

	prof_init(&cfg.prof, PROF_DEFAULT);
	return mcg_engine_new(&cfg, NULL, NULL);
}

static inline struct mcg_group *mk(struct mcg_engine *e, const char *name, long limit)
{
	struct mcg_group *g = fixture_group(e, e->root, name);

	if (limit)
		ck_assert_int_eq(mcg_set_limit(g, MCG_MEM, limit, NULL, NULL), 0);
	return g;
}

#endif
