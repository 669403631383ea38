/* test_writeback.c: the writeback device: dirty pages written before
 * clean ones go, the wait in limit reclaim, rotation or immediate reclaim
 * at completion, the immediate list, no wait in global reclaim, per-node
 * dirty limits. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/charge.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/lru.h"
#include "engine/move.h"
#include "engine/oom.h"
#include "engine/reclaim.h"
#include "engine/swap.h"
#include "engine/vm.h"
#include "engine/writeback.h"
#include "vm_fixture.h"
#include "suites.h"

START_TEST(test_dirty_pages_written_back_first)
{
	struct mcg_engine *e = vm_engine(0);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *file = vm_object_new(e, a, false, 100);
	struct vm_region *fr;

	ck_assert_int_eq(vm_region_new(file, PK_FILE, 40, &fr), 0);
	fill(fr, 40);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 40);
	/* a limit below usage: dirty pages are cleaned, then reclaimed */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 10, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 10);
	ck_assert_int_le(stat_local(a, STAT_DIRTY), 10);
	CHECK_OK(e);
	vm_object_free(file);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST


static uint64_t wb_test_now, wb_test_slept;

static uint64_t wb_test_clock(void *arg)
{
	return wb_test_now;
}

/* simulated time: a writeback wait is counted, not slept */
static void wb_test_sleep(uint64_t ns, void *arg)
{
	wb_test_slept += ns;
}

static const struct mcg_env_ops wb_test_env_ops = { .now = wb_test_clock, .sleep = wb_test_sleep };

/* The small machine (4096 pages, one node and CPU, no stock) with what
 * cfg adds (the disk, swap, a policy), in the test's simulated time from
 * 1 s. */
static struct mcg_engine *wb_sim_engine(struct mcg_machine cfg)
{
	struct mcg_engine *e;

	cfg.mem_pages = cfg.mem_pages ? cfg.mem_pages : 4096;
	cfg.nodes = cfg.nodes ? cfg.nodes : 1;
	cfg.cpus = 1;
	cfg.vm_swappiness = 60;
	cfg.no_stock = true;
	prof_init(&cfg.prof, PROF_DEFAULT);
	wb_test_now = 1000000000;
	e = mcg_engine_new(&cfg, &(struct mcg_env){ &wb_test_env_ops, NULL }, NULL);
	ck_assert_ptr_nonnull(e);
	return e;
}

/* ... with the writeback device's own bandwidth and latency (1000 pages a
 * second, 2 ms), reclaiming at writeback's end (immediate) or not. */
static struct mcg_engine *wb_engine(bool immediate)
{
	return wb_sim_engine((struct mcg_machine){ .wb_pages_per_s = 1000, .wb_latency_ns = 2000000,
						   .immediate_reclaim = immediate });
}

static void dirty_file(struct mcg_engine *e, struct mcg_group *a, struct vm_object **fo, int n)
{
	struct vm_region *fr;
	enum vm_fault f;

	*fo = vm_object_new(e, a, false, 100);
	ck_assert_int_eq(vm_region_new(*fo, PK_FILE, (uint32_t)n, &fr), 0);
	for (uint32_t i = 0; i < (uint32_t)n; i++)
		ck_assert_int_eq(vm_touch(fr, i, 0, true, &f), 0);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), n);
}

START_TEST(test_writeback_wait_in_limit_reclaim)
{
	struct mcg_engine *e = wb_engine(false);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *fo;
	long inflight, done, rotated, immediate;

	dirty_file(e, a, &fo, 40);
	wb_test_slept = 0;
	/* the shrink queues the dirty pages, then waits for them: in
	 * simulated time, so the wait shows as stall, not as sleep */
	ck_assert_int_eq(mcg_set_limit(a, MCG_MEM, 10, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&a->cnt[MCG_MEM]), 10);
	wb_counts(e, &inflight, &done, &rotated, &immediate);
	ck_assert_int_ge(done, 30);
	ck_assert_uint_gt(wb_test_slept, 2000000);             /* at least the latency */
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), inflight);
	CHECK_OK(e);
	vm_object_free(fo);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_writeback_rotate_or_immediate)
{
	for (int imm = 0; imm <= 1; imm++) {
		struct mcg_engine *e = wb_engine(imm);
		struct mcg_group *a = mk(e, "a", 0);
		struct vm_object *fo;
		long inflight, done, rotated, immediate;

		dirty_file(e, a, &fo, 40);
		/* background reclaim does not wait: it only queues */
		ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 0);
		ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 40);
		ck_assert_int_eq(stat_local(a, STAT_DIRTY), 0);
		wb_counts(e, &inflight, &done, &rotated, &immediate);
		ck_assert_int_eq(inflight, 40);
		wb_test_now += 1000000;                             /* not yet: latency 2ms */
		reclaim_wb_complete(e);
		wb_counts(e, &inflight, &done, &rotated, &immediate);
		ck_assert_int_eq(done, 0);
		wb_test_now += 100000000;                           /* 40 pages at 1000/s */
		reclaim_wb_complete(e);
		wb_counts(e, &inflight, &done, &rotated, &immediate);
		ck_assert_int_eq(done, 40);
		ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
		if (imm) {
			/* reclaimed the moment they were clean */
			ck_assert_int_eq(immediate, 40);
			ck_assert_int_eq(stat_local(a, STAT_CACHE), 0);
		} else {
			/* rotated to the tail, clean, for the next reclaim */
			ck_assert_int_eq(rotated, 40);
			ck_assert_int_eq(stat_local(a, STAT_CACHE), 40);
			ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 40);
		}
		CHECK_OK(e);
		vm_object_free(fo);
		mcg_put(a);
		mcg_engine_free(e);
	}
}
END_TEST

/* Seed topic 4's immediate list: a page reclaim marked, under writeback,
 * waits on the list, where reclaim never looks; at its writeback end it
 * goes to the inactive tail and the next reclaim takes it. Nothing is ever
 * stranded there (rescued stays 0). */
START_TEST(test_writeback_immediate_list)
{
	struct mcg_engine *e;
	struct mcg_machine cfg = {
		.wb_pages_per_s = 1000, .wb_latency_ns = 2000000, .immediate_list = true,
	};
	struct mcg_group *a;
	struct vm_object *fo;
	struct mcg_reclaim_counts rc;
	long inflight, done, rotated, immediate, marked, listed, rescued, scanned;

	e = wb_sim_engine(cfg);
	a = mk(e, "a", 0);
	dirty_file(e, a, &fo, 40);
	ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 0);
	ck_assert_int_eq(stat_lru_local(a, LRU_IMMEDIATE, -1), 40);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_FILE, -1) + stat_lru_local(a, LRU_ACTIVE_FILE, -1), 0);
	wb_immediate_counts(e, &marked, &listed, &rescued);
	ck_assert_int_eq(listed, 40);
	ck_assert_int_eq(marked, 40);
	CHECK_OK(e);
	/* under writeback and on the list: a second reclaim scans nothing */
	mcg_reclaim_counts(a, &rc);
	scanned = rc.scanned[1];
	ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 0);
	mcg_reclaim_counts(a, &rc);
	ck_assert_int_eq(rc.scanned[1], scanned);
	wb_test_now += 200000000;
	reclaim_wb_complete(e);
	wb_counts(e, &inflight, &done, &rotated, &immediate);
	ck_assert_int_eq(done, 40);
	ck_assert_int_eq(rotated, 40);
	ck_assert_int_eq(stat_lru_local(a, LRU_IMMEDIATE, -1), 0);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
	CHECK_OK(e);
	ck_assert_int_eq(reclaim_subtree(a, 40, false, RECLAIM_BACKGROUND), 40);
	wb_immediate_counts(e, &marked, &listed, &rescued);
	ck_assert_int_eq(rescued, 0);
	CHECK_OK(e);
	vm_object_free(fo);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* The machine's reclaim (from the root, the machine full) never waits for
 * writeback, as the kernel's global reclaim does not: it marks the dirty
 * pages, hands them to the device and takes the clean ones. */
START_TEST(test_global_reclaim_does_not_wait)
{
	struct mcg_engine *e = wb_engine(false);
	struct mcg_group *a = mk(e, "a", 0);
	struct vm_object *fo, *co;
	struct vm_region *cr;
	enum vm_fault f;

	dirty_file(e, a, &fo, 2048);
	co = vm_object_new(e, a, false, 101);
	ck_assert_int_eq(vm_region_new(co, PK_FILE, 4096, &cr), 0);
	wb_test_slept = 0;
	/* 4096 clean pages more than the machine has room for: every
	 * charge past the first 2048 reclaims from the root */
	for (uint32_t i = 0; i < 4096; i++)
		ck_assert_int_eq(vm_touch(cr, i, 0, false, &f), 0);
	ck_assert_uint_eq(wb_test_slept, 0);
	ck_assert_int_gt(stat_local(a, STAT_WRITEBACK), 0);
	CHECK_OK(e);
	vm_object_free(co);
	vm_object_free(fo);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* With the machine's disk, swap-out goes through the swap cache (issue 22,
 * item 3): a reclaimed anon page is written to its slot's place on the
 * disk and stays charged, in the swap cache, under writeback, until the
 * write completes; only a later scan frees it. Reclaim that does not wait
 * (background) gets nothing back before the disk wrote it; limit reclaim
 * waits for it (legacy memcg) and gets it. */
START_TEST(test_swap_out_through_swap_cache)
{
	struct mcg_machine cfg = {
		.swap_pages = 4096, .disk_seek_ns = 1000000, .disk_xfer_ns = 1000000,
	};
	struct mcg_engine *e;
	struct mcg_group *a, *b;
	struct vm_object *o, *ob;
	struct vm_region *r, *rb;
	long got, writing;
	struct blk_counts bc;
	enum vm_fault f;

	e = wb_sim_engine(cfg);
	a = mk(e, "a", 0);
	o = vm_object_new(e, a, true, 1);
	ck_assert_int_eq(vm_region_new(o, PK_ANON, 64, &r), 0);
	fill(r, 64);
	wb_test_slept = 0;
	/* background reclaim: the pages go to the disk, none comes back */
	got = reclaim_subtree(a, 32, true, RECLAIM_BACKGROUND);
	ck_assert_int_eq(got, 0);
	writing = stat_local(a, STAT_WRITEBACK);
	ck_assert_int_gt(writing, 0);
	ck_assert_int_eq(stat_local(a, STAT_SWAPCACHED), writing);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 64);
	ck_assert_int_eq(swap_outs(e), writing);
	ck_assert_uint_eq(wb_test_slept, 0);
	blk_counts(e, &bc);
	ck_assert_int_eq(bc.writes, writing);
	/* consecutive slots: one seek, merged into few requests */
	ck_assert_int_lt(bc.requests, writing);
	CHECK_OK(e);
	/* still in flight: a second pass frees nothing either */
	ck_assert_int_eq(reclaim_subtree(a, 32, true, RECLAIM_BACKGROUND), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64);
	/* the disk wrote them: clean, still charged, at the inactive tail */
	wb_test_now += 1000000000;
	reclaim_wb_complete(e);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64);
	ck_assert_int_ge(stat_local(a, STAT_SWAPCACHED), writing);
	/* now a scan frees them without writing again */
	got = reclaim_subtree(a, writing, true, RECLAIM_BACKGROUND);
	ck_assert_int_eq(got, writing);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64 - writing);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 64);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), writing);
	ck_assert_int_eq(swap_outs(e), writing + stat_local(a, STAT_WRITEBACK));
	CHECK_OK(e);
	/* and a page that went comes back from swap */
	for (uint32_t i = 0; i < 64; i++)
		ck_assert_int_eq(vm_touch(r, i, 0, false, &f), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64);
	CHECK_OK(e);
	/* limit reclaim of pages never written waits for the writes it
	 * starts: the memory comes back after at least one write's time */
	b = mk(e, "b", 0);
	ob = vm_object_new(e, b, true, 2);
	ck_assert_int_eq(vm_region_new(ob, PK_ANON, 64, &rb), 0);
	fill(rb, 64);
	wb_test_slept = 0;
	ck_assert_int_eq(mcg_set_limit(b, MCG_MEM, 8, NULL, NULL), 0);
	ck_assert_int_le(pc_usage(&b->cnt[MCG_MEM]), 8);
	ck_assert_uint_ge(wb_test_slept, 2000000);
	ck_assert_int_eq(pc_usage(&b->cnt[MCG_MEMSW]), 64);
	CHECK_OK(e);
	vm_object_free(ob);
	mcg_put(b);
	vm_object_free(o);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* The immediate policy with the machine's disk: an anon page whose swap
 * write completes goes to its slot at once (a swap entry, its memsw kept),
 * not dropped as if it were clean page cache, and faults back in as a
 * swap-in. */
START_TEST(test_swap_write_immediate_reclaim)
{
	struct mcg_machine cfg = {
		.swap_pages = 4096, .disk_seek_ns = 1000000, .disk_xfer_ns = 1000000,
		.immediate_reclaim = true,
	};
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *o;
	struct vm_region *r;
	long writing, inflight, done, rotated, immediate;
	enum vm_fault f;
	int swapins = 0;

	e = wb_sim_engine(cfg);
	a = mk(e, "a", 0);
	o = vm_object_new(e, a, true, 1);
	ck_assert_int_eq(vm_region_new(o, PK_ANON, 64, &r), 0);
	fill(r, 64);
	ck_assert_int_eq(reclaim_subtree(a, 32, true, RECLAIM_BACKGROUND), 0);
	writing = stat_local(a, STAT_WRITEBACK);
	ck_assert_int_gt(writing, 0);
	wb_test_now += 1000000000;
	reclaim_wb_complete(e);
	wb_counts(e, &inflight, &done, &rotated, &immediate);
	ck_assert_int_eq(immediate, writing);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64 - writing);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEMSW]), 64);
	ck_assert_int_eq(stat_local(a, STAT_SWAP), writing);
	CHECK_OK(e);
	for (uint32_t i = 0; i < 64; i++) {
		ck_assert_int_eq(vm_touch(r, i, 0, false, &f), 0);
		swapins += f == VM_MAJOR || f == VM_REFAULT;
	}
	ck_assert_int_eq(swapins, writing);
	ck_assert_int_eq(stat_local(a, STAT_REFAULT_FILE), 0);
	ck_assert_int_eq(pc_usage(&a->cnt[MCG_MEM]), 64);
	CHECK_OK(e);
	vm_object_free(o);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* A page moved to another group while under writeback (move charge at
 * immigrate, file pages) ends its writeback there: clean, rotated, then
 * reclaimable, not left under writeback for good. */
START_TEST(test_writeback_end_after_move)
{
	struct mcg_engine *e = wb_engine(false);
	struct mcg_group *a = mk(e, "a", 0), *b = mk(e, "b", 0);
	struct vm_object *t = vm_object_new(e, a, true, 1);
	struct vm_object *file = vm_object_new(e, e->root, false, 2);
	struct vm_region *fr, *m;
	struct move_stats st;
	long writing;

	ck_assert_int_eq(vm_region_new(file, PK_FILE, 40, &fr), 0);
	ck_assert_int_eq(vm_map_file(t, fr, 0, 40, &m), 0);
	fill(m, 40);                                  /* dirty, a's */
	ck_assert_int_eq(reclaim_subtree(a, 40, true, RECLAIM_BACKGROUND), 0);
	writing = stat_local(a, STAT_WRITEBACK);
	ck_assert_int_gt(writing, 0);
	ck_assert_int_eq(move_charges(t, b, MOVE_FILE, &st), 0);
	ck_assert_int_eq(st.pages, 40);
	ck_assert_int_eq(stat_local(b, STAT_WRITEBACK), writing);
	wb_test_now += 10000000000ull;
	reclaim_wb_complete(e);
	ck_assert_int_eq(stat_local(b, STAT_WRITEBACK), 0);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
	ck_assert_int_ge(reclaim_subtree(b, writing, true, RECLAIM_BACKGROUND), writing);
	CHECK_OK(e);
	vm_object_free(t);
	vm_object_free(file);
	mcg_put(a);
	mcg_put(b);
	mcg_engine_free(e);
}
END_TEST

/* may_write_to_queue (the older eras): with the write queue congested,
 * direct reclaim leaves dirty pages for later and writes none, while a
 * background reclaimer (kswapd's PF_SWAPWRITE) still writes them; today's
 * direct reclaim writes (there is no such skip). */
START_TEST(test_congested_queue_skipped_by_direct_reclaim)
{
	for (int era = 0; era < 2; era++) {
		struct mcg_machine cfg = {
			.disk_seek_ns = 1000000000, .nr_requests = 4,
			.era = era ? MCG_ERA_2_6_24 : MCG_ERA_TODAY,
		};
		struct mcg_engine *e;
		struct mcg_group *a;
		struct vm_object *fo;
		struct blk_counts bc;
		struct blk_io io;

		e = wb_sim_engine(cfg);
		a = mk(e, "a", 0);
		dirty_file(e, a, &fo, 40);
		/* four writes of a second each: the queue of 4 is congested */
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(blk_submit(e, wb_test_now, BLK_WRITE, BLK_POS_NONE, 1, &io), 0);
		ck_assert(blk_congested(e, wb_test_now, BLK_WRITE));
		reclaim_subtree(a, 32, true, RECLAIM_DIRECT);
		blk_counts(e, &bc);
		if (era) {
			ck_assert_int_eq(bc.writes, 4);          /* none of a's */
			ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
			ck_assert_int_eq(stat_local(a, STAT_DIRTY), 40);
			/* the background reclaimer writes to it all the same */
			reclaim_subtree(a, 8, true, RECLAIM_BACKGROUND);
			blk_counts(e, &bc);
		}
		ck_assert_int_gt(bc.writes, 4);
		ck_assert_int_lt(stat_local(a, STAT_DIRTY), 40);
		CHECK_OK(e);
		vm_object_free(fo);
		mcg_put(a);
		mcg_engine_free(e);
	}
}
END_TEST

/* 3.2 (issue 22, item 5): direct reclaim writes no file page; it marks
 * the dirty pages it meets PG_reclaim, keeps them, and wakes the flusher
 * for what it scanned once past 1.5 times its want; the flusher writes
 * them, they rotate to the tail when written, and the next reclaim frees
 * them. 2.6.39's direct reclaim writes them itself. */
START_TEST(test_era_3_2_leaves_dirty_to_flusher)
{
	for (int era = 0; era < 2; era++) {
		struct mcg_machine cfg = {
			.disk_seek_ns = 1000000, .disk_xfer_ns = 1000000,
			.era = era ? MCG_ERA_3_2 : MCG_ERA_2_6_39,
		};
		struct mcg_engine *e = wb_sim_engine(cfg);
		struct mcg_group *a = mk(e, "a", 0);
		struct mcg_flusher_counts fc;
		struct vm_object *fo;
		struct blk_counts bc;
		long got;

		dirty_file(e, a, &fo, 64);
		got = reclaim_subtree(a, 32, true, RECLAIM_DIRECT);
		blk_counts(e, &bc);
		ck_assert_int_eq(got, 0);                 /* all dirty: nothing clean */
		if (!era) {
			ck_assert_int_eq(bc.writes, 64);      /* written by reclaim */
			ck_assert_int_eq(atomic_load(&e->fl_kick), 0);
		} else {
			ck_assert_int_eq(bc.writes, 0);
			ck_assert_int_eq(stat_local(a, STAT_DIRTY), 64);
			ck_assert_int_gt(atomic_load(&e->fl_kick), 48);
			ck_assert_uint_le(mcg_flusher_due(e), wb_test_now);   /* woken */
			mcg_flusher_step(e);
			mcg_flusher_counts(e, &fc);
			ck_assert_int_eq(fc.kick_written, 64);
			ck_assert_int_ge(fc.kicked, 64);
			ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 64);
			ck_assert_uint_gt(mcg_flusher_due(e), wb_test_now);   /* taken */
		}
		/* once the disk has written them, marked, they are at the
		 * tail and reclaim frees them */
		wb_test_now += 1000000000;
		ck_assert_int_eq(reclaim_subtree(a, 32, true, RECLAIM_DIRECT), 32);
		CHECK_OK(e);
		vm_object_free(fo);
		mcg_put(a);
		mcg_engine_free(e);
	}
}
END_TEST

/* The flusher (issue 22, item 4): a file's dirty pages are written once
 * they are 30 s old (kupdate, every 5 s), not before while the dirty pages
 * are under the background threshold (10 % of dirtyable memory); a page
 * dirtied again while its write is in flight is not forgotten; written
 * pages keep their place on the LRU (only reclaim's rotate); shmem is
 * never dirty; over the background threshold, young pages are written
 * too, down to it. The disk takes a second a page. */
START_TEST(test_flusher_expiry_and_background)
{
	struct mcg_machine cfg = {
		.disk_seek_ns = 1000000, .disk_xfer_ns = 1000000000,
	};
	uint64_t t0 = 1000000000, s = 1000000000;
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *t, *file, *clean, *big;
	struct vm_region *fr, *m, *cr, *cm, *br, *bm, *sr;
	struct mcg_flusher_counts fc;
	uint32_t tail_before;
	enum vm_fault f;

	e = wb_sim_engine(cfg);
	ck_assert_uint_eq(mcg_flusher_due(e), t0 + 5 * s);
	a = mk(e, "a", 0);
	t = vm_object_new(e, a, true, 1);
	file = vm_object_new(e, a, false, 2);
	clean = vm_object_new(e, a, false, 3);
	ck_assert_int_eq(vm_region_new(file, PK_FILE, 40, &fr), 0);
	ck_assert_int_eq(vm_map_file(t, fr, 0, 40, &m), 0);
	ck_assert_int_eq(vm_region_new(clean, PK_FILE, 10, &cr), 0);
	ck_assert_int_eq(vm_map_file(t, cr, 0, 10, &cm), 0);
	fill(m, 40);                                    /* 40 dirty pages at t0 */
	for (uint32_t i = 0; i < 10; i++)               /* then 10 clean ones */
		ck_assert_int_eq(vm_touch(cm, i, 0, false, &f), 0);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 40);
	tail_before = a->lruvec[0].list[LRU_INACTIVE_FILE].tail;   /* dirty page 0 */
	/* 10 s old, 40 pages under the threshold: nothing written */
	wb_test_now = t0 + 10 * s;
	mcg_flusher_step(e);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 40);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 0);
	/* 31 s old: all written, and where they were */
	wb_test_now = t0 + 31 * s;
	mcg_flusher_step(e);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 0);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 40);
	ck_assert_uint_eq(a->lruvec[0].list[LRU_INACTIVE_FILE].tail, tail_before);
	mcg_flusher_counts(e, &fc);
	ck_assert_int_eq(fc.written, 40);
	ck_assert_int_eq(fc.bg_thresh, fc.thresh / 2);
	ck_assert_int_gt(fc.bg_thresh, 40);
	/* the last page written again while its write is in flight (until
	 * t0 + 71 s): the next pass cannot start it and must not forget it */
	ck_assert_int_eq(vm_touch(m, 39, 0, true, &f), 0);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 1);
	wb_test_now = t0 + 36 * s;
	mcg_flusher_step(e);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 1);
	wb_test_now = t0 + 76 * s;
	mcg_flusher_step(e);                            /* written again */
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 0);
	ck_assert_int_eq(stat_local(a, STAT_WRITEBACK), 1);
	ck_assert_uint_eq(a->lruvec[0].list[LRU_INACTIVE_FILE].tail, tail_before);
	CHECK_OK(e);
	/* shmem written is never accounted dirty */
	ck_assert_int_eq(vm_region_new(t, PK_SHMEM, 8, &sr), 0);
	fill(sr, 8);
	ck_assert_int_eq(stat_local(a, STAT_SHMEM), 8);
	ck_assert_int_eq(stat_local(a, STAT_DIRTY), 0);
	/* a young file dirtying more than the background threshold: written
	 * down to it at the next pass */
	big = vm_object_new(e, a, false, 4);
	ck_assert_int_eq(vm_region_new(big, PK_FILE, 1024, &br), 0);
	ck_assert_int_eq(vm_map_file(t, br, 0, 1024, &bm), 0);
	fill(bm, 1024);
	mcg_flusher_counts(e, &fc);
	ck_assert_int_gt(1024, fc.bg_thresh);
	ck_assert_uint_le(mcg_flusher_due(e), wb_test_now);   /* wanted now */
	mcg_flusher_step(e);
	mcg_flusher_counts(e, &fc);
	ck_assert_int_le(stat_local(a, STAT_DIRTY), fc.bg_thresh);
	ck_assert_int_ge(stat_local(a, STAT_WRITEBACK), 1024 - fc.bg_thresh);
	CHECK_OK(e);
	vm_object_free(t);
	vm_object_free(file);
	vm_object_free(clean);
	vm_object_free(big);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

/* Per-node dirty limits (seed 4.4): written page cache goes to the first
 * node under 20 % dirty, then the next; clean pages keep to the toucher's
 * node. */
START_TEST(test_node_dirty_limits)
{
	struct mcg_machine cfg = {
		.mem_pages = 4096, .nodes = 2, .cpus = 1, .vm_swappiness = 60, .no_stock = true,
		.node_dirty_ratio = 20,
	};
	struct mcg_engine *e;
	struct mcg_group *a;
	struct vm_object *fo;

	prof_init(&cfg.prof, PROF_DEFAULT);
	e = mcg_engine_new(&cfg, NULL, NULL);
	a = mk(e, "a", 0);
	dirty_file(e, a, &fo, 800);
	/* 20 % of 2048 is 409.6: node 0 takes 410, node 1 the rest */
	ck_assert_int_eq(atomic_load(&e->node_dirty[0]), 410);
	ck_assert_int_eq(atomic_load(&e->node_dirty[1]), 390);
	ck_assert_int_eq(stat_lru_local(a, LRU_INACTIVE_FILE, 0), 410);
	CHECK_OK(e);
	vm_object_free(fo);
	ck_assert_int_eq(atomic_load(&e->node_dirty[0]), 0);
	ck_assert_int_eq(atomic_load(&e->node_dirty[1]), 0);
	mcg_put(a);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(writeback)
{
	Suite *s = suite_create("writeback");
	TCase *tc = tcase_create("writeback");

	tcase_add_test(tc, test_dirty_pages_written_back_first);
	tcase_add_test(tc, test_writeback_wait_in_limit_reclaim);
	tcase_add_test(tc, test_writeback_rotate_or_immediate);
	tcase_add_test(tc, test_writeback_immediate_list);
	tcase_add_test(tc, test_global_reclaim_does_not_wait);
	tcase_add_test(tc, test_node_dirty_limits);
	tcase_add_test(tc, test_swap_out_through_swap_cache);
	tcase_add_test(tc, test_swap_write_immediate_reclaim);
	tcase_add_test(tc, test_writeback_end_after_move);
	tcase_add_test(tc, test_congested_queue_skipped_by_direct_reclaim);
	tcase_add_test(tc, test_flusher_expiry_and_background);
	tcase_add_test(tc, test_era_3_2_leaves_dirty_to_flusher);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
