/* test_blk.c: the machine's block device (blkdev.c, issue 22) in
 * isolation: the queue's geometry (2.6.x's congestion thresholds), seeks
 * and sequential transfers on one disk, long submissions cut into
 * requests, the back merge behind other requests, a full queue holding its submitter until a request is freed,
 * and congestion_wait ending at the completion that lifts congestion (or
 * the first one, or its timeout). Times are the test's, in ns. */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "engine/engine.h"
#include "suites.h"

#define MS 1000000ull
#define US 1000ull

static struct mcg_engine *bt_engine(uint64_t seek, uint64_t xfer, unsigned nr)
{
	struct mcg_machine m = {
		.mem_pages = 1024, .cpus = 1, .no_stock = true,
		.disk_seek_ns = seek, .disk_xfer_ns = xfer, .nr_requests = nr,
	};
	struct mcg_engine *e;

	prof_init(&m.prof, PROF_DEFAULT);
	e = mcg_engine_new(&m, NULL, NULL);
	ck_assert_ptr_nonnull(e);
	return e;
}

static struct blk_counts bt_counts(struct mcg_engine *e)
{
	struct blk_counts c;

	blk_counts(e, &c);
	return c;
}

static struct blk_io bt_submit(struct mcg_engine *e, uint64_t now, enum blk_dir dir, uint64_t pos,
			       long pages)
{
	struct blk_io io;

	ck_assert_int_eq(blk_submit(e, now, dir, pos, pages, &io), 0);
	return io;
}

START_TEST(test_blk_geometry)
{
	/* blk_queue_congestion_threshold: on nr - nr/8 + 1 (at most nr),
	 * off nr - nr/8 - nr/16 - 1 (at least 1); BLKDEV_MIN_RQ 4 */
	static const struct { unsigned asked, nr, on, off; } cases[] = {
		{ 0, 128, 113, 103 }, { 128, 128, 113, 103 }, { 16, 16, 15, 12 },
		{ 4, 4, 4, 3 }, { 1, 4, 4, 3 }, { 8, 8, 8, 6 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mcg_engine *e = bt_engine(MS, 0, cases[i].asked);
		struct blk_counts c = bt_counts(e);

		ck_assert_uint_eq(c.nr_requests, cases[i].nr);
		ck_assert_uint_eq(c.congestion_on, cases[i].on);
		ck_assert_uint_eq(c.congestion_off, cases[i].off);
		mcg_engine_free(e);
	}
}
END_TEST

START_TEST(test_blk_no_device)
{
	struct mcg_engine *e = bt_engine(0, 0, 0);
	struct mcg_machine m = { .mem_pages = 1024, .cpus = 1, .disk_seek_ns = MS,
				 .nr_requests = BLK_NR_REQUESTS_MAX + 1 };
	struct blk_io io;

	ck_assert_int_eq(blk_submit(e, 0, BLK_READ, 0, 1, &io), -ENODEV);
	ck_assert(!blk_congested(e, 0, BLK_WRITE));
	ck_assert_uint_eq(blk_congestion_wait(e, 5 * MS, BLK_CONGESTION_WAIT_NS),
			  5 * MS + BLK_CONGESTION_WAIT_NS);
	ck_assert_uint_eq(bt_counts(e).nr_requests, 0);
	mcg_engine_free(e);
	/* a queue deeper than the engine takes is no machine */
	prof_init(&m.prof, PROF_DEFAULT);
	ck_assert_ptr_null(mcg_engine_new(&m, NULL, NULL));
	e = bt_engine(MS, US, 0);
	ck_assert_int_eq(blk_submit(e, 0, BLK_READ, 0, 0, &io), -EINVAL);
	ck_assert_int_eq(blk_submit(e, 0, (enum blk_dir)7, 0, 1, &io), -EINVAL);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_blk_seek_and_sequence)
{
	struct mcg_engine *e = bt_engine(8 * MS, 100 * US, 0);
	struct blk_io io;

	io = bt_submit(e, 0, BLK_READ, 0, 1);          /* a seek and a page */
	ck_assert_uint_eq(io.go, 0);
	ck_assert_uint_eq(io.done, 8 * MS + 100 * US);
	io = bt_submit(e, 0, BLK_READ, 1, 1);          /* follows: no seek, after it */
	ck_assert_uint_eq(io.done, 8 * MS + 200 * US);
	io = bt_submit(e, 20 * MS, BLK_READ, 10, 1);   /* elsewhere, the disk idle */
	ck_assert_uint_eq(io.done, 28 * MS + 100 * US);
	/* a write that follows nothing: one seek, cut into requests of 128
	 * pages that follow each other; then a read anywhere seeks again */
	io = bt_submit(e, 30 * MS, BLK_WRITE, BLK_POS_NONE, 300);
	ck_assert_uint_eq(io.done, 38 * MS + 300 * 100 * US);
	io = bt_submit(e, 30 * MS, BLK_READ, 11, 1);
	ck_assert_uint_eq(io.done, 68 * MS + 8 * MS + 100 * US);
	struct blk_counts c = bt_counts(e);
	ck_assert_int_eq(c.reads, 4);
	ck_assert_int_eq(c.writes, 300);
	ck_assert_int_eq(c.requests, 4 + 3);
	ck_assert_int_eq(c.seq, 1 + 2);
	ck_assert_uint_eq(c.busy_ns, 4 * 8 * MS + 304 * 100 * US);
	ck_assert_int_eq(c.full_waits, 0);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_blk_merge_behind_other_requests)
{
	/* a write that continues the newest write request merges into it
	 * while it waits, though a read was queued behind it: no seek, the
	 * transfer added at the disk's end */
	struct mcg_engine *e = bt_engine(8 * MS, 100 * US, 0);
	struct blk_io io;

	bt_submit(e, 0, BLK_READ, 0, 1);                     /* the disk busy to 8.1 */
	io = bt_submit(e, 0, BLK_WRITE, 100, 1);              /* waits: 8.1 + 8.1 */
	ck_assert_uint_eq(io.done, 16 * MS + 200 * US);
	io = bt_submit(e, 0, BLK_READ, 5000, 1);              /* behind it: 24.3 */
	ck_assert_uint_eq(io.done, 24 * MS + 300 * US);
	io = bt_submit(e, 0, BLK_WRITE, 101, 1);              /* merged */
	ck_assert_uint_eq(io.done, 24 * MS + 400 * US);
	io = bt_submit(e, 0, BLK_WRITE, 102, 1);              /* merged again */
	ck_assert_uint_eq(io.done, 24 * MS + 500 * US);
	struct blk_counts c = bt_counts(e);
	ck_assert_int_eq(c.merges, 2);
	ck_assert_int_eq(c.requests, 3);
	ck_assert_int_eq(c.writes, 3);
	ck_assert_uint_eq(c.busy_ns, 3 * 8 * MS + 5 * 100 * US);
	/* the disk's last request is still the read, whose page 5000 it
	 * served last: a read of 5001, once all is done, pays no seek,
	 * however the merged write pages came */
	io = bt_submit(e, 30 * MS, BLK_READ, 5001, 1);
	ck_assert_uint_eq(io.done, 30 * MS + 100 * US);
	/* the next write page is a request of its own (the write request
	 * is long done), and a seek: the disk's last access was a read */
	io = bt_submit(e, 40 * MS, BLK_WRITE, 103, 1);
	ck_assert_uint_eq(io.done, 48 * MS + 100 * US);
	c = bt_counts(e);
	ck_assert_int_eq(c.merges, 2);
	ck_assert_int_eq(c.requests, 5);
	ck_assert_int_eq(c.seq, 1);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_blk_full_queue_blocks_submitter)
{
	/* 4 requests a direction; each write its own place: 1 ms each */
	struct mcg_engine *e = bt_engine(MS, 0, 4);
	struct blk_io io;

	for (unsigned i = 0; i < 4; i++) {
		io = bt_submit(e, 0, BLK_WRITE, BLK_POS_NONE, 1);
		ck_assert_uint_eq(io.go, 0);            /* room: the writer goes on */
		ck_assert_uint_eq(io.done, (i + 1) * MS);
	}
	ck_assert(blk_congested(e, 0, BLK_WRITE));
	ck_assert(!blk_congested(e, 0, BLK_READ));
	/* the fifth waits for the first to be freed, at 1 ms */
	io = bt_submit(e, 0, BLK_WRITE, BLK_POS_NONE, 1);
	ck_assert_uint_eq(io.go, 1 * MS);
	ck_assert_uint_eq(io.done, 5 * MS);
	/* a read has requests of its own: it does not wait for one, but the
	 * disk serves it after the writes before it */
	io = bt_submit(e, 0, BLK_READ, 0, 1);
	ck_assert_uint_eq(io.go, 0);
	ck_assert_uint_eq(io.done, 6 * MS);
	/* a long write waits for a request for each of its parts */
	io = bt_submit(e, 0, BLK_WRITE, BLK_POS_NONE, 3 * BLK_MAX_REQ_PAGES);
	ck_assert_uint_eq(io.go, 4 * MS);
	struct blk_counts c = bt_counts(e);
	ck_assert_int_eq(c.full_waits, 1 + 3);
	ck_assert_uint_eq(c.full_wait_ns, 1 * MS + (2 + 1 + 1) * MS);   /* 0->1; 0->2->3->4 */
	/* after everything completed, the queue is empty again */
	ck_assert(!blk_congested(e, io.done, BLK_WRITE));
	io = bt_submit(e, 100 * MS, BLK_WRITE, BLK_POS_NONE, 1);
	ck_assert_uint_eq(io.go, 100 * MS);
	mcg_engine_free(e);
}
END_TEST

START_TEST(test_blk_congestion_wait)
{
	/* 16 requests: congested from 15 in flight, lifted below 12 */
	struct mcg_engine *e = bt_engine(MS, 0, 16);
	struct blk_counts c;

	/* nothing written: the nap lasts its timeout */
	ck_assert_uint_eq(blk_congestion_wait(e, 0, BLK_CONGESTION_WAIT_NS), BLK_CONGESTION_WAIT_NS);
	/* a read completes, no write: no wake either */
	bt_submit(e, 0, BLK_READ, 0, 1);
	ck_assert_uint_eq(blk_congestion_wait(e, 0, BLK_CONGESTION_WAIT_NS), BLK_CONGESTION_WAIT_NS);
	/* 16 writes from 1 ms: done at 2, 3, ..., 17 ms */
	for (unsigned i = 0; i < 16; i++)
		bt_submit(e, MS, BLK_WRITE, BLK_POS_NONE, 1);
	ck_assert(blk_congested(e, MS, BLK_WRITE));
	/* 16 in flight: the 5th completion (6 ms) leaves 11, below off */
	ck_assert_uint_eq(blk_congestion_wait(e, MS, BLK_CONGESTION_WAIT_NS), 6 * MS);
	/* at 5.5 ms 12 are in flight: neither on nor below off; the next
	 * completion (6 ms) lifts it */
	ck_assert(!blk_congested(e, 5 * MS + MS / 2, BLK_WRITE));
	ck_assert_uint_eq(blk_congestion_wait(e, 5 * MS + MS / 2, BLK_CONGESTION_WAIT_NS), 6 * MS);
	/* uncongested, writes in flight: the first completion ends the nap */
	ck_assert_uint_eq(blk_congestion_wait(e, 10 * MS + MS / 2, BLK_CONGESTION_WAIT_NS), 11 * MS);
	/* a nap shorter than the wait for a completion lasts its timeout */
	ck_assert_uint_eq(blk_congestion_wait(e, 10 * MS + MS / 2, MS / 4), 10 * MS + 3 * MS / 4);
	c = bt_counts(e);
	ck_assert_int_eq(c.naps, 6);
	ck_assert_int_eq(c.naps_early, 3);
	ck_assert_uint_eq(c.nap_ns, 2 * BLK_CONGESTION_WAIT_NS + 5 * MS + MS / 2 + MS / 2 + MS / 4);
	mcg_engine_free(e);
}
END_TEST

UNIT_SUITE(blk)
{
	Suite *s = suite_create("blk");
	TCase *tc = tcase_create("device");

	tcase_add_test(tc, test_blk_geometry);
	tcase_add_test(tc, test_blk_no_device);
	tcase_add_test(tc, test_blk_seek_and_sequence);
	tcase_add_test(tc, test_blk_merge_behind_other_requests);
	tcase_add_test(tc, test_blk_full_queue_blocks_submitter);
	tcase_add_test(tc, test_blk_congestion_wait);
	suite_add_tcase(s, tc);
	return s;
}
