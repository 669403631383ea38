/* construct.c: building and tearing down an engine: its machine, environment
 * and owner, every module's state in dependency order, the root
 * group. Owns no policy; never does I/O. */
#include <stdlib.h>

#include "engine/bgreclaim.h"
#include "engine/blkdev.h"
#include "engine/charge.h"
#include "engine/compaction.h"
#include "engine/engine.h"
#include "engine/flusher.h"
#include "engine/internal.h"
#include "engine/move.h"
#include "engine/names.h"
#include "engine/oom.h"
#include "engine/oom_wait.h"
#include "engine/rstat.h"
#include "engine/softlimit.h"
#include "engine/swap.h"
#include "engine/task.h"
#include "engine/vm.h"
#include "engine/writeback.h"
#include "engine/zone.h"

static const struct mcg_owner_ops engine_no_owner;

struct mcg_engine *mcg_engine_new(const struct mcg_machine *m, const struct mcg_env *env,
				  const struct mcg_owner *owner)
{
	struct mcg_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->m = *m;
	if (e->m.nodes == 0)
		e->m.nodes = 1;
	if (e->m.cpus == 0)
		e->m.cpus = 1;
	e->env = env ? *env : env_real;
	e->own = owner && owner->ops ? *owner : (struct mcg_owner){ &engine_no_owner, NULL };
	/* the engine's own objects own the pages */
	e->evict = vm_evict;
	e->evict_arg = e;
	e->migrate = vm_migrate;
	atomic_init(&e->vm_swappiness, m->vm_swappiness);
	pthread_rwlock_init(&e->tree_lock, NULL);
	pthread_mutex_init(&e->id_lock, NULL);
	e->next_id = 1;
	e->by_id = calloc(MCG_ID_CHUNKS, sizeof(*e->by_id));    /* no chunk yet */
	e->by_id_live = calloc(MCG_ID_CHUNKS, sizeof(*e->by_id_live));
	e->tasks = task_table_new();
	if (e->m.mem_pages >= (long)VM_MAX_PAGES || e->m.swap_pages >= (long)VM_MAX_PAGES ||
	    page_pool_init(&e->pages, e->m.mem_pages, e->m.nodes, e->m.node_pages) || uncharge_init(e) || charge_core_init(e) ||
	    swap_init(e, e->m.swap_pages) || vm_init(e) || oom_init(e) || move_init(e) || wb_init(e) ||
	    bgr_init(e) || soft_init(e) || rstat_init(e) || names_init(e) || zone_init(e) ||
	    blk_init(e) || flusher_init(e) || compact_init(e)) {
		mcg_engine_free(e);
		return NULL;
	}
	e->root = e->by_id && e->by_id_live ? mcg_alloc(e, NULL, "") : NULL;
	if (!e->root || !e->tasks) {
		mcg_engine_free(e);
		return NULL;
	}
	if (mcg_id_assign(e, e->root)) {
		mcg_engine_free(e);
		return NULL;
	}
	e->nr_groups = 1;
	return e;
}

void mcg_engine_free(struct mcg_engine *e)
{
	if (!e)
		return;
	uncharge_frees_stop(e);        /* removed groups' structures go now */
	mcg_kswapd_stop(e);            /* kswapd and the workers reclaim: */
	bgr_destroy(e);                /* stop them first */
	vm_destroy(e);                 /* tasks' and files' pages first */
	oom_destroy(e);
	move_destroy(e);
	wb_destroy(e);
	task_table_free(e->tasks);     /* it holds references on groups */
	charge_core_destroy(e);        /* so do the stocks */
	uncharge_destroy(e);
	e->tearing_down = true;        /* the whole tree goes, refs or not */
	if (e->root)
		mcg_free_subtree(e->root);
	page_pool_destroy(&e->pages);
	swap_destroy(e);
	rstat_destroy(e);
	soft_destroy(e);               /* after the tree: it holds no reference */
	names_destroy(e);              /* (nor does the name index) */
	zone_destroy(e);
	flusher_destroy(e);
	blk_destroy(e);
	compact_destroy(e);
	pthread_rwlock_destroy(&e->tree_lock);
	pthread_mutex_destroy(&e->id_lock);
	for (unsigned c = 0; e->by_id && c < MCG_ID_CHUNKS; c++)
		free(e->by_id[c]);
	free(e->by_id);
	free(e->by_id_live);
	free(e);
}

