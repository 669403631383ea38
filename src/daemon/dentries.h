/* dentries.h: the names of groups the kernel may keep as dentries, in
 * memory that outlives a worker (a memfd the supervisor made, mapped by
 * every worker of the connection), so that a new worker can make the
 * kernel drop the ones a dead worker left stale where the kernel cannot
 * be told to drop them all (FUSE_NOTIFY_INC_EPOCH, before Linux 6.16).
 * One slot a group id: the last name a reply gave the kernel for that
 * id's directory (its parent's inode number, the id's generation). Knows
 * nothing of FUSE or the engine. */
#ifndef MEMCGFS_DENTRIES_H
#define MEMCGFS_DENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DENTRIES_SLOTS    65536       /* group ids 0 .. 65535 */
#define DENTRIES_NAME_MAX 255

struct dentries;

/* The bytes the memory must have. */
size_t dentries_bytes(void);

/* The table in memfd FD (DENTRIES_SLOTS slots, zero at first), mapped
 * shared; NULL with errno set. */
struct dentries *dentries_map(int fd);
void dentries_unmap(struct dentries *d);

/* A reply is about to give the kernel NAME in directory PARENT for group
 * ID (generation GEN): recorded first, so that a death before the reply
 * leaves it recorded. A name longer than DENTRIES_NAME_MAX is not kept
 * (the kernel refuses such names). */
void dentries_note(struct dentries *d, unsigned id, unsigned gen, uint64_t parent, const char *name);

/* The kernel dropped group ID's NAME in PARENT (a removal answered): the
 * slot is cleared if it still holds it. */
void dentries_drop(struct dentries *d, unsigned id, unsigned gen, uint64_t parent, const char *name);

/* Every recorded name passed to fn, its slot cleared unless fn returns
 * true (still the kernel's and right: kept) (a new worker, before any
 * request is served: nothing writes meanwhile). A slot a dead worker was
 * writing is passed as it stands. */
void dentries_take(struct dentries *d,
		   bool (*fn)(void *arg, unsigned id, unsigned gen, uint64_t parent, const char *name),
		   void *arg);

#endif
