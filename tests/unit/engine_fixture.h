/* engine_fixture.h: a small engine for unit tests (1 GiB, 2 CPUs, 2 nodes),
 * group creation and the invariant check that every engine test uses.
 * These are white-box tests of the engine: they see its internals. */
#ifndef MEMCGFS_TEST_ENGINE_FIXTURE_H
#define MEMCGFS_TEST_ENGINE_FIXTURE_H

#include <check.h>

#include "engine/check.h"
#include "engine/engine.h"
#include "engine/internal.h"

/* The invariant checker must find nothing to report. */
#define CHECK_OK(e) do {                                                    \
	char m_[256];                                                       \
	ck_assert_msg(check_invariants((e), m_, sizeof(m_)) == 0, "%s", m_); \
} while (0)

/* A new group that the test holds a reference on. */
static inline struct mcg_group *fixture_group(struct mcg_engine *e, struct mcg_group *parent,
					      const char *name)
{
	struct mcg_group *g = NULL;

	ck_assert_int_eq(mcg_create(e, parent, name, NULL, NULL, &g), 0);
	return g;
}

static inline struct mcg_engine *fixture_engine(unsigned version)
{
	struct mcg_machine cfg = {
		.mem_pages = 262144, .swap_pages = 0, .nodes = 2, .cpus = 2, .vm_swappiness = 60,
	};

	prof_init(&cfg.prof, version);
	return mcg_engine_new(&cfg, NULL, NULL);
}

#endif
