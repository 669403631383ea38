/* check.h: the engine's invariant checker, for tests. Owns no state; must
 * only run at a quiescent moment (no charge in flight, no open batch). */
#ifndef MEMCGFS_CHECK_H
#define MEMCGFS_CHECK_H

#include <stddef.h>

struct mcg_engine;

/* 0 when every group's counters, statistics and LRU sizes agree with the
 * pages, swap slots and stocks it owns, every parent's usage is its own
 * plus its linked children's, and the soft-limit order holds every group
 * over its soft limit (check_soft_order). Otherwise -1 and a description
 * in msg. */
int check_invariants(struct mcg_engine *e, char *msg, size_t len);
/* The soft-limit order alone (for tests that charge counters without
 * pages): a heap, every member's key bounding its excess, every linked
 * group over its soft limit a member. 0, or -1 and msg. */
int check_soft_order(struct mcg_engine *e, char *msg, size_t len);
/* The checkers' way out: the description into msg, and -1. */
int check_fail(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
