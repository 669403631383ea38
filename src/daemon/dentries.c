/* dentries.c: the names of groups the kernel may keep, in shared memory
 * that outlives the worker that wrote them (dentries.h). Owns the table's
 * layout and its slot locks; never tells the kernel anything itself and
 * never allocates (a worker about to reply writes in place). */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "daemon/dentries.h"

struct dentries_slot {
	_Atomic uint32_t seq;         /* odd while a writer holds the slot */
	uint32_t gen;
	uint64_t parent;              /* 0: empty */
	uint16_t len;
	char name[DENTRIES_NAME_MAX + 1];
};

struct dentries {
	/* the slots ever written, so that a look reads only their pages of
	 * the memfd (a read of a hole would fill it) */
	_Atomic uint64_t used[DENTRIES_SLOTS / 64];
	struct dentries_slot slot[DENTRIES_SLOTS];
};

size_t dentries_bytes(void)
{
	return sizeof(struct dentries);
}

struct dentries *dentries_map(int fd)
{
	void *p = mmap(NULL, sizeof(struct dentries), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

void dentries_unmap(struct dentries *d)
{
	if (d)
		munmap(d, sizeof(*d));
}

/* The slot of ID held (its seq made odd): NULL for an id out of range. */
static struct dentries_slot *dentries_hold(struct dentries *d, unsigned id)
{
	struct dentries_slot *s;
	uint32_t seq;

	if (id >= DENTRIES_SLOTS)
		return NULL;
	s = &d->slot[id];
	for (;;) {
		seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
		if (!(seq & 1) && atomic_compare_exchange_weak_explicit(&s->seq, &seq, seq + 1,
									memory_order_acquire,
									memory_order_relaxed))
			return s;
	}
}

static void dentries_release(struct dentries_slot *s)
{
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
}

void dentries_note(struct dentries *d, unsigned id, unsigned gen, uint64_t parent, const char *name)
{
	size_t len = strlen(name);
	struct dentries_slot *s;

	if (!d || len > DENTRIES_NAME_MAX || !(s = dentries_hold(d, id)))
		return;
	atomic_fetch_or_explicit(&d->used[id / 64], 1ull << (id % 64), memory_order_relaxed);
	if (s->parent != parent || s->gen != gen || s->len != len || memcmp(s->name, name, len)) {
		s->gen = gen;
		s->parent = parent;
		s->len = (uint16_t)len;
		memcpy(s->name, name, len);
		s->name[len] = '\0';
	}
	dentries_release(s);
}

void dentries_drop(struct dentries *d, unsigned id, unsigned gen, uint64_t parent, const char *name)
{
	size_t len = strlen(name);
	struct dentries_slot *s;

	if (!d || id >= DENTRIES_SLOTS ||
	    !(atomic_load_explicit(&d->used[id / 64], memory_order_relaxed) & (1ull << (id % 64))) ||
	    !(s = dentries_hold(d, id)))
		return;
	if (s->parent == parent && s->gen == gen && s->len == len && !memcmp(s->name, name, len))
		s->parent = 0;
	dentries_release(s);
}

void dentries_take(struct dentries *d,
		   bool (*fn)(void *arg, unsigned id, unsigned gen, uint64_t parent, const char *name),
		   void *arg)
{
	if (!d)
		return;
	for (unsigned id = 0; id < DENTRIES_SLOTS; id++) {
		struct dentries_slot *s = &d->slot[id];

		if (!(atomic_load_explicit(&d->used[id / 64], memory_order_relaxed) & (1ull << (id % 64))))
			continue;

		/* (a dead writer's odd seq is made even again) */
		if (atomic_load_explicit(&s->seq, memory_order_relaxed) & 1)
			atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
		if (!s->parent)
			continue;
		if (s->len > DENTRIES_NAME_MAX)
			s->len = DENTRIES_NAME_MAX;
		s->name[s->len] = '\0';
		if (!fn(arg, id, s->gen, s->parent, s->name))
			s->parent = 0;
	}
}
