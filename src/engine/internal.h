/* internal.h: what only the engine's own modules may call. No file outside
 * src/engine/ includes it (docs/design.md); the floors above use the
 * modules' public headers. */
#ifndef MEMCGFS_ENGINE_INTERNAL_H
#define MEMCGFS_ENGINE_INTERNAL_H

struct mcg_engine;
struct mcg_group;

/* memcg.c: a new group under parent (NULL: the root), not yet linked nor
 * numbered; NULL without memory. */
struct mcg_group *mcg_alloc(struct mcg_engine *e, struct mcg_group *parent, const char *name);
/* memcg.c: give g the next free id (the caller checked there is one). */
void mcg_id_assign(struct mcg_engine *e, struct mcg_group *g);
/* memcg.c: free g and everything below it, references or not (teardown). */
void mcg_free_subtree(struct mcg_group *g);

#endif
