/* engine_fixture.h: a small engine for unit tests (1 GiB, 2 CPUs, 2 nodes). */
#ifndef MEMCGFS_TEST_ENGINE_FIXTURE_H
#define MEMCGFS_TEST_ENGINE_FIXTURE_H

#include "engine/memcg.h"

static inline struct mcg_engine *fixture_engine(unsigned version)
{
	struct mcg_config cfg = {
		.mem_pages = 262144, .swap_pages = 0, .nodes = 2, .cpus = 2, .vm_swappiness = 60,
	};

	prof_init(&cfg.prof, version);
	return mcg_engine_new(&cfg);
}

#endif
