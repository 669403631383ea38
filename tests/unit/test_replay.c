/* test_replay.c: scenarios run deterministically; kills (a group's OOM
 * and the machine's), OOM waits, timed limit changes and errors with line
 * numbers. */
#include <check.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "suites.h"

/* Run text; the timeline (or the errors) in a malloc'ed string. */
static char *run(const char *text, int *ret)
{
	char *buf = NULL, *ebuf = NULL;
	size_t len = 0, elen = 0;
	FILE *out = open_memstream(&buf, &len), *err = open_memstream(&ebuf, &elen);

	*ret = replay_run(text, out, err);
	fclose(out);
	fclose(err);
	if (*ret) {
		free(buf);
		return ebuf;
	}
	free(ebuf);
	return buf;
}

/* Run format fmt with its one %s as arg; ok: it must succeed (else fail). */
static char *run_with(const char *fmt, const char *arg, bool ok)
{
	char text[1024];
	int ret;
	char *out;

	snprintf(text, sizeof(text), fmt, arg);
	out = run(text, &ret);
	if (ok)
		ck_assert_msg(ret == 0, "%s", out);
	else
		ck_assert_int_ne(ret, 0);
	return out;
}

/* The value of key on the last line that starts with pat (a format with
 * the group path in it). */
static long last_value(const char *out, const char *fmt, const char *path, const char *key)
{
	char pat[300], kpat[64];
	const char *p = out, *line = NULL, *k;

	snprintf(pat, sizeof(pat), fmt, path);
	while ((p = strstr(p, pat)))
		line = p++;
	ck_assert_ptr_nonnull(line);
	snprintf(kpat, sizeof(kpat), " %s=", key);
	k = strstr(line, kpat);
	ck_assert_ptr_nonnull(k);
	return strtol(k + strlen(kpat), NULL, 10);
}

/* The value of key on the last timeline line of group path. */
static long value(const char *out, const char *path, const char *key)
{
	return last_value(out, " %s usage=", path, key);
}

/* The number after the first key in out (-1 without one). */
static long field(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static const char *scenario =
	"seed 7\n"
	"machine memory=64M swap=16M cpus=2\n"
	"group /a limit=4M\n"
	"file f 8M\n"
	"task t1 group=/a cpu=0\n"
	"task t2 group=/a cpu=1 start=1ms\n"
	"print every=1ms\n"
	"t1 alloc anon heap 3M\n"
	"t1 map f m\n"
	"t1 repeat 2\n"
	"t1 touch m hot=70/30 count=1500\n"
	"t1 touch heap random count=800 write\n"
	"t1 end\n"
	"t2 alloc anon heap 2M\n"
	"t2 touch heap seq write\n"
	"t2 touch heap random count=500\n";

/* The disk (issue 22): swap-out goes through the swap cache, so a task
 * filling a machine half its size ends no earlier than the disk took to
 * write what had to go (4,096 pages at 1,024 a second), and the machine's
 * direct reclaim naps for the writes (congestion_wait) instead of sending
 * more pages: each page is written once. Random writeback fills the
 * request queue: a queue of 4 holds the writer more often and longer than
 * one of 128 (the disk's work is the same); nr_requests=0 is refused. */
START_TEST(test_disk_swap_cache_and_queue)
{
	static const char *swapper =
		"machine memory=16M swap=64M disk_seek=8ms disk_rate=4M\n"
		"group /a\n"
		"task t group=/a\n"
		"t alloc anon heap 32M\n"
		"t touch heap seq write\n"
		"t exit\n";
	static const char *writer =
		"machine memory=64M disk_seek=8ms disk_rate=4M nr_requests=%s\n"
		"group /a limit=2M\n"
		"file f 8M\n"
		"task t group=/a\n"
		"t touch f random count=4096 write\n"
		"t exit\n";
	int ret;
	char *out, *deep, *shallow;
	long written;

	out = run(swapper, &ret);
	ck_assert_int_eq(ret, 0);
	written = field(out, "swap_writes=");
	ck_assert_int_ge(written, 4096);
	ck_assert_int_lt(written, 4096 + 128);          /* no over-reclaim */
	ck_assert_int_eq(field(out, " marked="), written);
	/* the 4,096 pages that had to go, 1e9 / 1024 ns each */
	ck_assert_int_ge(field(out, "task t exited end="), 4096 * 976562L / 1000);
	free(out);
	deep = run_with(writer, "128", true);
	shallow = run_with(writer, "4", true);
	ck_assert_ptr_nonnull(strstr(deep, " nr_requests=128 full_waits="));
	ck_assert_ptr_nonnull(strstr(shallow, " nr_requests=4 full_waits="));
	ck_assert_int_gt(field(shallow, "full_waits="), field(deep, "full_waits="));
	ck_assert_int_gt(field(shallow, "full_wait_us="), field(deep, "full_wait_us="));
	ck_assert_int_le(field(shallow, "full_wait_us="), field(shallow, "io_wait_us="));
	ck_assert_int_eq(field(shallow, "busy_us="), field(deep, "busy_us="));
	free(deep);
	free(shallow);
	out = run_with(writer, "0", false);
	ck_assert_ptr_nonnull(strstr(out, "bad nr_requests 0"));
	free(out);
}
END_TEST

/* The eras' waits (issue 22, item 5), a group swapping past its limit on
 * a disk: today's memcg reclaim waits for the pages it sent to swap and
 * never naps; 2.6.24's never waits for them but naps (congestion_wait in
 * its charge and reclaim loops), all its waiting naps; 2.6.39's neither
 * waits nor naps (wait_iff_congested: the merged swap writes never
 * congest the queue), its reclaim scanning on over the pages being
 * written until they are, which takes the scanning's time. Each ends,
 * no earlier than the disk wrote the 2,048 pages that had to go. */
START_TEST(test_eras_waits)
{
	static const char *text =
		"machine memory=64M swap=64M disk_seek=8ms disk_rate=4M era=%s\n"
		"cost scan=200ns\n"
		"group /a limit=8M\n"
		"task t group=/a\n"
		"t alloc anon heap 16M\n"
		"t touch heap seq write\n"
		"t exit\n";
	int ret;
	char *today, *old, *mid, *out;

	today = run_with(text, "today", true);
	old = run_with(text, "2.6.24", true);
	mid = run_with(text, "2.6.39", true);
	ck_assert_int_eq(field(today, " naps="), 0);
	ck_assert_int_gt(field(today, "io_wait_us="), 0);
	ck_assert_int_gt(field(old, " naps="), 0);
	ck_assert_int_eq(field(old, "nap_us="), field(old, "io_wait_us="));
	ck_assert_int_eq(field(mid, " naps="), 0);
	ck_assert_int_eq(field(mid, "io_wait_us="), 0);
	ck_assert_int_gt(value(mid, "/a", "scan_direct"), 10 * value(today, "/a", "scan_direct"));
	ck_assert_ptr_nonnull(strstr(today, "task t exited"));
	ck_assert_ptr_nonnull(strstr(old, "task t exited"));
	ck_assert_ptr_nonnull(strstr(mid, "task t exited"));
	ck_assert_int_ge(field(today, "task t exited end="), 2048 * 976562L / 1000);
	ck_assert_int_ge(field(old, "task t exited end="), 2048 * 976562L / 1000);
	ck_assert_int_ge(field(mid, "task t exited end="), 2048 * 976562L / 1000);
	free(today);
	free(old);
	free(mid);
	out = run("machine era=2.6.11\n", &ret);
	ck_assert_int_ne(ret, 0);
	ck_assert_ptr_nonnull(strstr(out, "era=today|2.6.24|2.6.39|3.2"));
	free(out);
}
END_TEST

/* balance_dirty_pages (issue 22, item 4): a task writing 64M of a new file
 * on a 256M machine with a 4 MB/s disk. Today's (3.2 on) pauses it, with
 * no I/O of its own, once the dirty pages pass the setpoint (the middle of
 * the 10 % and 20 % thresholds), so it cannot end before the disk wrote
 * what was over the setpoint; 2.6.24's (thresholds 5 % and 10 %) makes it
 * write chunks itself and nap, so it cannot end before the disk wrote what
 * was over 10 %. Without a disk there is no flusher and no throttle. */
START_TEST(test_dirty_throttle)
{
	static const char *text =
		"machine memory=256M disk_seek=8ms disk_rate=4M era=%s\n"
		"group /a\n"
		"file f 64M\n"
		"task t group=/a\n"
		"t touch f seq write\n"
		"t exit\n";
	int ret;
	char *today, *old, *none;
	long setpoint, limit;

	today = run_with(text, "today", true);
	old = run_with(text, "2.6.24", true);
	none = run("machine memory=256M\ngroup /a\nfile f 64M\ntask t group=/a\n"
		   "t touch f seq write\nt exit\n", &ret);
	ck_assert_int_eq(ret, 0);
	setpoint = (field(today, "bg_thresh=") + field(today, " thresh=")) / 2;
	ck_assert_int_gt(field(today, "pause_us="), 0);
	ck_assert_int_eq(field(today, "throttle_written="), 0);
	ck_assert_int_ge(field(today, "task t exited end="), (16384 - setpoint) * 976562L / 1000);
	limit = field(old, " thresh=");
	ck_assert_int_eq(limit, field(today, " thresh=") / 2);
	ck_assert_int_gt(field(old, "throttle_written="), 0);
	ck_assert_int_gt(field(old, " naps="), 0);
	ck_assert_int_ge(field(old, "task t exited end="), (16384 - limit) * 976562L / 1000);
	ck_assert_ptr_null(strstr(none, "flusher "));
	ck_assert_int_lt(field(none, "task t exited end="), field(today, "task t exited end=") / 4);
	free(today);
	free(old);
	free(none);
}
END_TEST

/* The machine's nodes of unequal size, the disk and the LRU locks: a read
 * through the page cache (touch FILE) is charged to the reader's group
 * and, in order, costs one seek and then the transfers; the end block
 * gives each node and the disk. */
START_TEST(test_nodes_disk_and_file_reads)
{
	static const char *text =
		"machine memory=64M node_mem=48M,16M cpus=2 cpu_model=1 disk_seek=8ms disk_rate=4M"
		" lru_lock=1\n"
		"cost touch=0ns fault=0ns major=0ns scan=200ns\n"
		"group /a\n"
		"file f 1M\n"
		"task r group=/a\n"
		"r touch f seq\n";
	int ret;
	char *out = run(text, &ret);

	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(value(out, "/a", "cache"), 1 << 20);
	ck_assert_ptr_nonnull(strstr(out, "node 0 size=50331648 "));
	ck_assert_ptr_nonnull(strstr(out, "node 1 size=16777216 "));
	ck_assert_ptr_nonnull(strstr(out, "disk reads=256 seq_reads=255 "));
	/* one seek of 8 ms and 256 pages at 1024 pages/s (976562 ns each) */
	ck_assert_ptr_nonnull(strstr(out, "end t=257999us"));
	ck_assert_ptr_nonnull(strstr(out, "task r exited end=257999us"));
	free(out);
	out = run("machine memory=64M node_mem=48M,8M\n", &ret);
	ck_assert_int_ne(ret, 0);
	ck_assert_ptr_nonnull(strstr(out, "node_mem must give each of the nodes"));
	free(out);
	out = run("machine zones=sideways\n", &ret);
	ck_assert_int_ne(ret, 0);
	ck_assert_ptr_nonnull(strstr(out, "zones=off|fixed|batching|accumulate"));
	free(out);
	/* zones: watermarks on each node's line, kswapd's counts */
	out = run("machine memory=64M node_mem=48M,16M swap=128M zones=batching\n"
		  "group /a\ntask t group=/a\nt alloc anon x 70M\nt touch x seq write\nt exit\n",
		  &ret);
	ck_assert_int_eq(ret, 0);
	ck_assert_ptr_nonnull(strstr(out, " min=192 low=384 high=576 batch=24 "));
	ck_assert_ptr_nonnull(strstr(out, " min=64 low=128 high=192 batch=8 "));
	ck_assert_ptr_nonnull(strstr(out, "zones allocstall="));
	free(out);
}
END_TEST

START_TEST(test_identical_reruns)
{
	int r1, r2;
	char *a = run(scenario, &r1), *b = run(scenario, &r2);

	ck_assert_int_eq(r1, 0);
	ck_assert_int_eq(r2, 0);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "t=1ms / usage="));
	ck_assert_ptr_nonnull(strstr(a, "task t1 exited"));
	ck_assert_ptr_nonnull(strstr(a, "task t2 exited"));
	/* 5M of anon + 8M of file through a 4M limit with swap */
	ck_assert_int_le(value(a, "/a", "max_usage"), 4 << 20);
	ck_assert_int_gt(value(a, "/a", "failcnt"), 0);
	ck_assert_int_gt(value(a, "/a", "steal_direct"), 0);
	ck_assert_int_gt(value(a, "/a", "pgmajfault"), 0);
	/* the tasks' anon memory went with them; the page cache stays */
	ck_assert_int_eq(value(a, "/a", "rss"), 0);
	ck_assert_int_eq(value(a, "/a", "swap"), 0);
	ck_assert_int_ge(value(a, "/a", "usage"), value(a, "/a", "cache"));
	ck_assert_int_gt(value(a, "/a", "cache"), 0);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_seed_changes_randomness)
{
	int r;
	char *a = run(scenario, &r), *text = strdup(scenario), *b;

	memcpy(strstr(text, "seed 7"), "seed 8", 6);
	b = run(text, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_ne(a, b);
	free(a);
	free(b);
	free(text);
}
END_TEST

START_TEST(test_oom_kill_in_replay)
{
	int r;
	char *out = run("machine memory=64M\n"
			"group /g limit=8M\n"
			"task small group=/g\n"
			"task hog group=/g\n"
			"small alloc anon a 1M\n"
			"small touch a seq write\n"
			"small sleep 10ms\n"
			"small touch a seq\n"
			"hog alloc anon a 16M\n"
			"hog touch a seq write\n", &r);

	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(out, "task hog killed"));
	ck_assert_ptr_nonnull(strstr(out, "task small exited"));
	ck_assert_int_eq(value(out, "/g", "oom_kill"), 1);
	free(out);
}
END_TEST

/* No limit anywhere and no swap: when the machine runs out, its OOM
 * killer takes the largest task of the machine (in another group), and
 * the task that ran out goes on (it used to retry its fault every
 * millisecond until a task exited). */
START_TEST(test_machine_oom_in_replay)
{
	int r;
	char *out = run("machine memory=8M\n"
			"group /a\n"
			"group /b\n"
			"task big group=/a\n"
			"task late group=/b\n"
			"big alloc anon a 6M\n"
			"big touch a seq write\n"
			"big sleep 100ms\n"
			"big touch a seq\n"
			"late sleep 10ms\n"
			"late alloc anon b 4M\n"
			"late touch b seq write\n", &r);

	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(out, "task big killed"));
	ck_assert_ptr_nonnull(strstr(out, "task late exited"));
	ck_assert_int_eq(value(out, "/a", "oom_kill"), 1);
	ck_assert_int_eq(value(out, "/b", "oom_kill"), 0);
	free(out);
}
END_TEST

/* A machine full of page cache that is dirty or under writeback is not
 * out of memory: the writer waits for its writes (without a disk, with
 * one today, with one in 3.2's era where only the flusher writes) and is
 * never killed. */
START_TEST(test_machine_oom_spares_writeback)
{
	static const char *machines[] = {
		"machine memory=16M",
		"machine memory=16M disk_seek=8ms disk_rate=40M",
		"machine memory=16M disk_seek=8ms disk_rate=40M era=3.2",
	};

	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		int r;
		char text[512];
		char *out;

		snprintf(text, sizeof(text), "%s\ngroup /a\nfile f 64M\ntask t group=/a\n"
			 "t touch f seq write\nt exit\n", machines[i]);
		out = run(text, &r);
		ck_assert_msg(r == 0, "%s: %s", machines[i], out);
		ck_assert_msg(strstr(out, "task t exited"), "%s: %s", machines[i], out);
		ck_assert_int_eq(value(out, "/a", "oom_kill"), 0);
		free(out);
	}
}
END_TEST

START_TEST(test_oom_wait_and_timed_limit)
{
	int r;
	char *out = run("machine memory=64M\n"
			"group /g limit=4M oom_kill_disable=1\n"
			"task t group=/g\n"
			"at 20ms group /g limit=16M\n"
			"t alloc anon a 8M\n"
			"t touch a seq write\n", &r);

	ck_assert_int_eq(r, 0);
	/* it waited (no kill) until the limit was raised, then finished */
	ck_assert_ptr_nonnull(strstr(out, "task t exited"));
	ck_assert_int_eq(value(out, "/g", "oom_kill"), 0);
	ck_assert_ptr_null(strstr(out, "stalls=0"));
	free(out);
}
END_TEST

START_TEST(test_errors_name_the_line)
{
	int r;
	char *e;

	e = run("machine memory=64M\n\ngroup /g\ntask t group=/nope\n", &r);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_nonnull(strstr(e, "line 4"));
	free(e);
	e = run("group /g\ntask t group=/g\nt touch missing seq\n", &r);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_nonnull(strstr(e, "no region missing"));
	free(e);
	e = run("group /g\ntask t group=/g\nt end\n", &r);
	ck_assert_ptr_nonnull(strstr(e, "end without repeat"));
	free(e);
	e = run("group /g\nmachine memory=1G\n", &r);
	ck_assert_ptr_nonnull(strstr(e, "machine must come first"));
	free(e);
	e = run("group /a/b\n", &r);
	ck_assert_ptr_nonnull(strstr(e, "parent of /a/b"));
	free(e);
}
END_TEST

/* Today's era with a disk keeps each node's dirty page cache under 20 %
 * of it (3.3's per-node dirty limits): a writer on node 0's CPU spills
 * written pages to node 1; 3.2's era, or dirty_ratio=0, does not */
START_TEST(test_node_dirty_limits_by_era)
{
	static const char *const fmt =
		"machine memory=64M node_mem=48M,16M cpus=2 disk_seek=8ms disk_rate=4M%s\n"
		"cost touch=0ns fault=0ns major=0ns\n"
		"group /a\n"
		"file f 16M\n"
		"task w group=/a cpu=0\n"
		"w touch f seq write\n"
		"w exit\n";
	static const char *const node1_untouched = "node 1 size=16777216 free=16777216 ";
	char *today = run_with(fmt, "", true), *old = run_with(fmt, " era=3.2", true),
	     *off = run_with(fmt, " dirty_ratio=0", true);

	ck_assert_ptr_nonnull(strstr(today, "node 1 size=16777216 free="));
	ck_assert_ptr_null(strstr(today, node1_untouched));
	ck_assert_ptr_nonnull(strstr(old, node1_untouched));
	ck_assert_ptr_nonnull(strstr(off, node1_untouched));
	free(today);
	free(old);
	free(off);
}
END_TEST

/* thp=always: a task's 2M faults are huge pages, counted on the end
 * block's thp line, and the huge fault costs 512 faults' time (as the
 * base pages' faults would); thp takes always or never */
START_TEST(test_thp_in_replay)
{
	static const char *const fmt = "machine memory=64M cpus=1 thp=%s\n"
				       "cost touch=0ns fault=1us migrate=1us\n"
				       "group /a\n"
				       "task t group=/a\n"
				       "t alloc anon h 8M\n"
				       "t touch h seq write\n"
				       "t exit\n";
	char *huge = run_with(fmt, "always", true), *base = run_with(fmt, "never", true), *e;
	int r;

	ck_assert_ptr_nonnull(strstr(huge, "\nthp fault_alloc=4 fault_fallback=0 "));
	ck_assert_ptr_null(strstr(base, "\nthp "));
	ck_assert_ptr_nonnull(strstr(huge, "end t=2048us\n"));
	ck_assert_ptr_nonnull(strstr(base, "end t=2048us\n"));
	free(huge);
	free(base);
	e = run("machine memory=64M thp=sometimes\n", &r);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_nonnull(strstr(e, "thp=always|never"));
	free(e);
}
END_TEST

/* The value of key on the last extension line ("  PATH scan_bg=...") of
 * group path. */
static long ext_value(const char *out, const char *path, const char *key)
{
	return last_value(out, "  %s scan_bg=", path, key);
}

/* Eight jobs whose heaps and page cache outgrow their group. */
static char *pressure(const char *machine, const char *marks, int *ret)
{
	char text[4096];
	int n = snprintf(text, sizeof(text),
			 "seed 3\n"
			 "machine memory=256M swap=64M cpus=4 %s\n"
			 "cost scan=200ns swapout=20us\n"
			 "group /g limit=24M%s\n"
			 "file f 16M\n", machine, marks);

	for (int j = 0; j < 8; j++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "task j%d group=/g\n", j);
	for (int j = 0; j < 8; j++)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "j%d repeat 3\n"
			      "j%d alloc anon h 2M\n"
			      "j%d touch h seq write\n"
			      "j%d map f m\n"
			      "j%d touch m random count=400\n"
			      "j%d compute 3ms\n"
			      "j%d free m\n"
			      "j%d free h\n"
			      "j%d end\n", j, j, j, j, j, j, j, j, j);
	return run(text, ret);
}

START_TEST(test_background_reclaim_in_simulated_time)
{
	int ret;
	char *plain = pressure("cpu_model=1", "", &ret), *wm, *again;

	ck_assert_int_eq(ret, 0);
	wm = pressure("cpu_model=1 watermarks=1 throttle=1", " high=20M low=16M", &ret);
	ck_assert_int_eq(ret, 0);
	/* without watermarks every page is found by direct reclaim */
	ck_assert_int_gt(value(plain, "/g", "scan_direct"), 0);
	ck_assert_int_eq(ext_value(plain, "/g", "scan_bg"), 0);
	ck_assert_int_gt(ext_value(plain, "/g", "allocstall"), 0);
	/* with them the simulated reclaimer does most of it, and charges
	 * stall far less often */
	ck_assert_int_gt(ext_value(wm, "/g", "scan_bg"), value(wm, "/g", "scan_direct"));
	ck_assert_int_gt(ext_value(wm, "/g", "bg_runs"), 0);
	ck_assert_int_lt(ext_value(wm, "/g", "allocstall"), ext_value(plain, "/g", "allocstall") / 2);
	/* still deterministic, throttle waits included */
	again = pressure("cpu_model=1 watermarks=1 throttle=1", " high=20M low=16M", &ret);
	ck_assert_str_eq(wm, again);
	ck_assert_ptr_nonnull(strstr(wm, " throttled="));
	free(plain);
	free(wm);
	free(again);
}
END_TEST

START_TEST(test_cpu_model_shares_cpus)
{
	const char *fmt = "machine memory=64M cpus=2 cpu_model=%d\n"
			  "task a group=/\ntask b group=/\ntask c group=/\ntask d group=/\n"
			  "a compute 10ms\nb compute 10ms\nc compute 10ms\nd compute 10ms\n";
	char text[512];
	char *out;
	int ret;

	/* four tasks of 10 ms on two CPUs take 20 ms; without the model,
	 * every task has a CPU of its own */
	snprintf(text, sizeof(text), fmt, 1);
	out = run(text, &ret);
	ck_assert_int_eq(ret, 0);
	ck_assert_ptr_nonnull(strstr(out, "end t=20ms\n"));
	free(out);
	snprintf(text, sizeof(text), fmt, 0);
	out = run(text, &ret);
	ck_assert_int_eq(ret, 0);
	ck_assert_ptr_nonnull(strstr(out, "end t=10ms\n"));
	free(out);
}
END_TEST

UNIT_SUITE(replay)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("scenarios");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_identical_reruns);
	tcase_add_test(tc, test_seed_changes_randomness);
	tcase_add_test(tc, test_oom_kill_in_replay);
	tcase_add_test(tc, test_machine_oom_in_replay);
	tcase_add_test(tc, test_machine_oom_spares_writeback);
	tcase_add_test(tc, test_oom_wait_and_timed_limit);
	tcase_add_test(tc, test_errors_name_the_line);
	tcase_add_test(tc, test_background_reclaim_in_simulated_time);
	tcase_add_test(tc, test_cpu_model_shares_cpus);
	tcase_add_test(tc, test_nodes_disk_and_file_reads);
	tcase_add_test(tc, test_disk_swap_cache_and_queue);
	tcase_add_test(tc, test_eras_waits);
	tcase_add_test(tc, test_dirty_throttle);
	tcase_add_test(tc, test_thp_in_replay);
	tcase_add_test(tc, test_node_dirty_limits_by_era);
	suite_add_tcase(s, tc);
	return s;
}
