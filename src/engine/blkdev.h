/* blkdev.h: the machine's one block device in simulated time (issue 22,
 * item 1): a disk that serves requests one at a time in the order they
 * come (a seek unless a request follows the previous one, then the
 * transfer), and a request queue of nr_requests per direction, as the
 * block layer of 2.6.x bounds each request list. Its public face
 * (blk_submit, blk_congested, blk_congestion_wait, blk_counts) is in
 * engine.h. Owns the device's queue state and counters; never touches a
 * page, never sleeps (the caller waits what blk_submit returns). */
#ifndef MEMCGFS_BLKDEV_H
#define MEMCGFS_BLKDEV_H

struct mcg_engine;

/* With m.disk_seek_ns or m.disk_pages_per_s: the device. 0 or -ENOMEM
 * (-EINVAL for a queue depth out of range). */
int blk_init(struct mcg_engine *e);
void blk_destroy(struct mcg_engine *e);

#endif
