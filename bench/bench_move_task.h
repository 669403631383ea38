/* bench_move_task.h: the task seed B2 moves, shared by bench_move (the
 * engine's wall-clock cost) and bench_b2model (the 2009 versions' modelled
 * cost): a fresh engine with groups 00 and 01 under the root, and a task
 * of pages private anon pages in the source of case c (0: root -> 00, 1:
 * 00 -> 01, 2: 00 limited to half the task, half of it then in swap, ->
 * 01), not yet faulted in. Header-only: each benchmark is one program. */
#ifndef MEMCGFS_BENCH_MOVE_TASK_H
#define MEMCGFS_BENCH_MOVE_TASK_H

#include "engine/engine.h"

struct move_task {
	struct mcg_engine *e;
	struct mcg_group *g00, *g01;
	struct vm_object *t;
	struct vm_region *r;
	long pages;
	int c;
};

static inline void move_task_free(struct move_task *m);

/* 0, or -1 with whatever was made freed */
static inline int move_task_new(struct move_task *m, int c, long pages)
{
	struct mcg_machine cfg = {
		.mem_pages = 3 * 262144L, .swap_pages = c == 2 ? pages : 0, .nodes = 1, .cpus = 1,
		.vm_swappiness = 60,
	};

	*m = (struct move_task){ .pages = pages, .c = c };
	prof_init(&cfg.prof, PROF_DEFAULT);
	if (!(m->e = mcg_engine_new(&cfg, NULL, NULL)))
		return -1;
	if (mcg_create(m->e, m->e->root, "00", NULL, NULL, &m->g00) ||
	    mcg_create(m->e, m->e->root, "01", NULL, NULL, &m->g01) ||
	    (c == 2 && mcg_set_limit(m->g00, MCG_MEM, pages / 2, NULL, NULL)) ||
	    !(m->t = vm_object_new(m->e, c == 0 ? m->e->root : m->g00, true, 1)) ||
	    vm_region_new(m->t, PK_ANON, (uint32_t)pages, &m->r)) {
		move_task_free(m);
		return -1;
	}
	return 0;
}

/* Every page written once: 0 or -1. */
static inline int move_task_fault(struct move_task *m)
{
	for (uint32_t i = 0; i < (uint32_t)m->pages; i++) {
		enum vm_fault f;

		if (vm_touch(m->r, i, 0, true, &f))
			return -1;
	}
	return 0;
}

/* The group the case moves the task to. */
static inline struct mcg_group *move_task_dst(const struct move_task *m)
{
	return m->c == 0 ? m->g00 : m->g01;
}

static inline void move_task_free(struct move_task *m)
{
	if (m->t)
		vm_object_free(m->t);
	if (m->g00)
		mcg_put(m->g00);
	if (m->g01)
		mcg_put(m->g01);
	if (m->e)
		mcg_engine_free(m->e);
	*m = (struct move_task){ 0 };
}

#endif
