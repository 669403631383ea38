/* names.h: the name index of the group tree: (parent, name) -> the live
 * child of that name, as kernfs finds a directory's entry by its hashed
 * name in a tree instead of walking the directory. A lookup, mkdir's
 * EEXIST check and rename's cost the same in a directory of 65,534 groups
 * as in one of two. Holds only live (not removed) groups; the caller holds
 * the engine's tree_lock (for reading to find, for writing to change).
 * Never takes a lock, never allocates on the find path, owns no group. */
#ifndef MEMCG_NAMES_H
#define MEMCG_NAMES_H

struct mcg_engine;
struct mcg_group;

/* 0, or -ENOMEM. */
int names_init(struct mcg_engine *e);
void names_destroy(struct mcg_engine *e);
/* The live child of parent called name, or NULL. */
struct mcg_group *names_find(struct mcg_engine *e, const struct mcg_group *parent,
			     const char *name);
/* g (named, with its parent set) enters the index; it must not be in it.
 * Growing the index can fail, which only makes finds slower: never an
 * error. */
void names_add(struct mcg_engine *e, struct mcg_group *g);
/* g leaves the index (before its name changes or it is removed). */
void names_del(struct mcg_engine *e, struct mcg_group *g);
/* Groups in the index (the invariant checker's). */
unsigned names_count(const struct mcg_engine *e);

#endif
