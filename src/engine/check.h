/* check.h: the engine's invariant checker, for tests. Owns no state; must
 * only run at a quiescent moment (no charge in flight, no open batch). */
#ifndef MEMCGFS_CHECK_H
#define MEMCGFS_CHECK_H

#include <stddef.h>

struct mcg_engine;

/* 0 when every group's counters, statistics and LRU sizes agree with the
 * pages, swap slots and stocks it owns, every parent's usage is its own
 * plus its linked children's, and the soft-limit order holds every group
 * over its soft limit (soft_check). Otherwise -1 and a description in msg. */
int check_invariants(struct mcg_engine *e, char *msg, size_t len);
/* The checkers' way out: the description into msg, and -1. */
int check_fail(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
