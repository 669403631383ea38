/* workload.c: parsing and executing the workload language's memory
 * operations. Deterministic given the RNG state; never reads the clock and
 * never sleeps (an OOM wait inside the engine is the engine's business). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "source/workload.h"
#include "util/size.h"

uint64_t wl_rand(uint64_t *s)
{
	/* xorshift64*: fixed, portable, and all the randomness there is */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

long long wl_size(const char *s)
{
	unsigned long long v;

	/* the control files' syntax and overflow rule (util/size.h), but a
	 * size must start with a digit: no empty size, no bare suffix */
	if (*s < '0' || *s > '9' || size_parse(s, strlen(s), &v) || v > LLONG_MAX)
		return -1;
	return (long long)v;
}

long wl_pages(const char *s)
{
	long long b = wl_size(s);

	return b < 0 ? -1 : (long)(b / PC_PAGE_SIZE + (b % PC_PAGE_SIZE != 0));
}

int wl_time(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul;

	if (end == s)
		return -1;
	if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1000;
	else if (!strcmp(end, "ms"))
		mul = WL_NS_MS;
	else if (!strcmp(end, "s"))
		mul = 1000 * WL_NS_MS;
	else
		return -1;
	*ns = v * mul;
	return 0;
}

int wl_split(char *line, char **argv, int max)
{
	char *save = NULL, *word;
	int argc = 0;

	for (word = strtok_r(line, " \t\r", &save); word && argc < max;
	     word = strtok_r(NULL, " \t\r", &save))
		argv[argc++] = word;
	return argc;
}

const char *wl_arg(char **argv, int argc, const char *key)
{
	size_t k = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, k) && argv[i][k] == '=')
			return argv[i] + k + 1;
	return NULL;
}

static int wl_err(char *msg, size_t len, const char *text, const char *arg)
{
	snprintf(msg, len, "%s%s", text, arg ? arg : "");
	return -EINVAL;
}

int wl_parse(char **argv, int argc, struct wl_op *op, char *msg, size_t len)
{
	const char *v;

	memset(op, 0, sizeof(*op));
	op->match = -1;
	if (argc < 1)
		return wl_err(msg, len, "missing operation", NULL);
	if (!strcmp(argv[0], "alloc") && argc == 4) {
		op->code = WL_ALLOC;
		if (!strcmp(argv[1], "anon"))
			op->kind = PK_ANON;
		else if (!strcmp(argv[1], "shmem"))
			op->kind = PK_SHMEM;
		else
			return wl_err(msg, len, "alloc anon|shmem NAME SIZE", NULL);
		snprintf(op->a, WL_NAME, "%s", argv[2]);
		if ((op->pages = wl_pages(argv[3])) <= 0)
			return wl_err(msg, len, "bad size ", argv[3]);
	} else if (!strcmp(argv[0], "map") && argc >= 3) {
		op->code = WL_MAP;
		snprintf(op->a, WL_NAME, "%s", argv[1]);
		snprintf(op->b, WL_NAME, "%s", argv[2]);
		op->off = (v = wl_arg(argv, argc, "offset")) ? wl_pages(v) : 0;
		op->pages = (v = wl_arg(argv, argc, "size")) ? wl_pages(v) : 0;
		if (op->off < 0 || op->pages < 0)
			return wl_err(msg, len, "bad offset or size", NULL);
	} else if (!strcmp(argv[0], "touch") && argc >= 3) {
		op->code = WL_TOUCH;
		snprintf(op->a, WL_NAME, "%s", argv[1]);
		if (!strcmp(argv[2], "seq"))
			op->pattern = WL_SEQ;
		else if (!strcmp(argv[2], "random"))
			op->pattern = WL_RANDOM;
		else if (sscanf(argv[2], "hot=%u/%u", &op->hot_p, &op->hot_q) == 2 &&
			 op->hot_p <= 100 && op->hot_q > 0 && op->hot_q < 100)
			op->pattern = WL_HOT;
		else
			return wl_err(msg, len, "touch NAME seq|random|hot=P/Q", NULL);
		op->count = (v = wl_arg(argv, argc, "count")) ? strtol(v, NULL, 10) : 0;
		if (op->count < 0)
			return wl_err(msg, len, "bad count", NULL);
		op->off = (v = wl_arg(argv, argc, "offset")) ? wl_pages(v) : 0;
		if (op->off < 0)
			return wl_err(msg, len, "bad offset", NULL);
		for (int i = 3; i < argc; i++)
			op->write |= !strcmp(argv[i], "write");
	} else if ((!strcmp(argv[0], "free") || !strcmp(argv[0], "mlock") ||
		    !strcmp(argv[0], "munlock")) && argc == 2) {
		op->code = argv[0][0] == 'f' ? WL_FREE : argv[0][1] == 'l' ? WL_MLOCK : WL_MUNLOCK;
		snprintf(op->a, WL_NAME, "%s", argv[1]);
	} else if ((!strcmp(argv[0], "sleep") || !strcmp(argv[0], "compute")) && argc == 2) {
		op->code = argv[0][0] == 's' ? WL_SLEEP : WL_COMPUTE;
		if (wl_time(argv[1], &op->ns))
			return wl_err(msg, len, "bad time ", argv[1]);
	} else if (!strcmp(argv[0], "repeat") && argc == 2) {
		op->code = WL_REPEAT;
		if ((op->count = strtol(argv[1], NULL, 10)) < 1)
			return wl_err(msg, len, "repeat needs a count of at least 1", NULL);
	} else if (!strcmp(argv[0], "end") && argc == 1) {
		op->code = WL_END;
	} else if (!strcmp(argv[0], "exit") && argc == 1) {
		op->code = WL_EXIT;
	} else if (!strcmp(argv[0], "fork") && argc == 2) {
		op->code = WL_FORK;
		snprintf(op->a, WL_NAME, "%s", argv[1]);
	} else {
		return wl_err(msg, len, "unknown operation ", argv[0]);
	}
	return 0;
}

static struct wl_region *wl_region(struct wl_task *t, const char *name)
{
	for (int i = 0; i < t->nreg; i++)
		if (!strcmp(t->reg[i].name, name))
			return &t->reg[i];
	return NULL;
}

static int wl_add_region(struct wl_task *t, const char *name, struct vm_region *r,
			 char *msg, size_t len)
{
	if (t->nreg == WL_MAX_REGIONS || wl_region(t, name)) {
		vm_region_free(r);
		return wl_err(msg, len, "region exists or too many regions: ", name);
	}
	snprintf(t->reg[t->nreg].name, WL_NAME, "%s", name);
	t->reg[t->nreg++].r = r;
	return WL_DONE;
}

/* Which page the next touch of op hits. */
static uint32_t wl_pick(struct wl_task *t, const struct wl_op *op, uint32_t n, long done)
{
	uint32_t hot;

	switch (op->pattern) {
	case WL_SEQ:
		return (uint32_t)(done % n);
	case WL_RANDOM:
		return (uint32_t)(wl_rand(t->rng) % n);
	case WL_HOT:
	default:
		hot = n * op->hot_q / 100;
		if (hot == 0)
			hot = 1;
		if (wl_rand(t->rng) % 100 < op->hot_p || hot == n)
			return (uint32_t)(wl_rand(t->rng) % hot);
		return hot + (uint32_t)(wl_rand(t->rng) % (n - hot));
	}
}

int wl_exec(struct wl_task *t, const struct wl_op *op, long max_pages, const struct wl_costs *c,
	    uint64_t *cost, char *msg, size_t len)
{
	struct wl_region *reg = NULL, direct = { .r = NULL };
	struct vm_region *r, *file;

	if (op->code == WL_TOUCH && !wl_region(t, op->a) && t->file &&
	    (file = t->file(t->file_arg, op->a))) {
		/* a file by its name: read(2) or write(2) through the page
		 * cache, no mapping (not mapped, not referenced at first) */
		direct.r = file;
		reg = &direct;
	} else if (op->code == WL_TOUCH || op->code == WL_FREE || op->code == WL_MLOCK ||
		   op->code == WL_MUNLOCK) {
		if (!(reg = wl_region(t, op->a)))
			return wl_err(msg, len, "no region ", op->a);
	}
	switch (op->code) {
	case WL_ALLOC:
		if (vm_region_new(t->obj, op->kind, (uint32_t)op->pages, &r))
			return wl_err(msg, len, "cannot allocate ", op->a);
		return wl_add_region(t, op->a, r, msg, len);
	case WL_MAP:
		if (!t->file || !(file = t->file(t->file_arg, op->a)))
			return wl_err(msg, len, "no file ", op->a);
		if (vm_map_file(t->obj, file, (uint32_t)op->off,
				op->pages ? (uint32_t)op->pages : file->npages - (uint32_t)op->off, &r))
			return wl_err(msg, len, "bad mapping of ", op->a);
		return wl_add_region(t, op->b, r, msg, len);
	case WL_TOUCH: {
		uint32_t off = op->off < reg->r->npages ? (uint32_t)op->off : 0;
		long total = op->count ? op->count : reg->r->npages - off;

		for (long i = 0; i < max_pages && t->done < total; i++) {
			enum vm_fault f;
			uint64_t rng = *t->rng;
			uint32_t page = off + wl_pick(t, op, reg->r->npages - off, t->done);
			int err = vm_touch_by(t->obj, reg->r, page, t->cpu, op->write, &f);

			if (err == -EFAULT)
				return WL_KILLED;
			if (err) {
				*t->rng = rng;    /* the same page again next time */
				return WL_STALL;
			}
			t->done++;
			/* a huge page's fault clears its 512 pages
			 * (clear_huge_page), as 512 faults would */
			*cost += c->touch + (f == VM_MINOR ? c->fault : 0) +
				 (f == VM_HUGE ? c->fault * PAGE_BLOCK : 0) +
				 (f == VM_MAJOR || f == VM_REFAULT ? c->major : 0);
			/* a read from the disk; a write to a page that was never
			 * in the cache (a new file, as dd writes) reads nothing */
			if ((f == VM_REFAULT || (f == VM_MAJOR && !op->write)) && c->major_io &&
			    c->major_io(c->io_arg, reg->r, page))
				break;    /* the caller waits for the read first */
		}
		if (t->done < total)
			return WL_AGAIN;
		t->done = 0;
		return WL_DONE;
	}
	case WL_FREE:
		vm_region_free(reg->r);
		*reg = t->reg[--t->nreg];
		return WL_DONE;
	case WL_MLOCK:
	case WL_MUNLOCK:
		for (uint32_t i = 0; i < reg->r->npages; i++)
			vm_mlock(reg->r, i, op->code == WL_MLOCK);
		return WL_DONE;
	default:
		return wl_err(msg, len, "not a memory operation", NULL);
	}
}

void wl_release(struct wl_task *t)
{
	while (t->nreg > 0)
		vm_region_free(t->reg[--t->nreg].r);
}
