/* fuzz_write.c: libFuzzer harness for one write(2) to a control file, in
 * process through cgfs_file_write, then a read back and the invariant
 * checker. Owns an engine per profile and a /tmp directory for event fds.
 * Never attaches or signals a real process (tasks writers carry a PID that
 * cannot exist), never runs a release agent, writes nowhere else. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/bgreclaim.h"
#include "engine/check.h"
#include "engine/engine.h"
#include "engine/internal.h"   /* (white-box: the engine's state between inputs) */
#include "engine/vm.h"
#include "fs/cgfiles.h"
#include "fs/event.h"
#include "fs/node.h"

/* Above PID_MAX_LIMIT (2^22): /proc has no such task, so the tasks files
 * stop at their first lookup (ESRCH) and nothing real is touched. */
#define FW_NOPID 0x3ffffff0

/* Fixed fd numbers a write to cgroup.event_control can name (the seeds
 * do): our eventfd, the four event files of the root and of the child,
 * a control file that takes no events, and a file that is no eventfd. */
enum {
	FW_FD_EVENT = 900,
	FW_FD_ROOT = 901,           /* .. 904, in fw_ctl order */
	FW_FD_CHILD = 905,          /* .. 908 */
	FW_FD_STAT = 909,
	FW_FD_NULL = 910,
};

static const char *const fw_ctl[] = {
	"memory.usage_in_bytes", "memory.oom_control", "memory.pressure_level",
	"memory.memsw.usage_in_bytes",
};
#define FW_NCTL (sizeof(fw_ctl) / sizeof(fw_ctl[0]))

#define FW_ANON_PAGES 48
#define FW_FILE_PAGES 48

#define FW_FAIL(...) do {                                                   \
	fprintf(stderr, "fuzz_write: " __VA_ARGS__);                        \
	fputc('\n', stderr);                                                \
	abort();                                                            \
} while (0)

struct fw_env {
	struct cgfs fs;
	struct mcg_group *child;     /* referenced */
	bool child_hierarchy;        /* its use_hierarchy at creation */
	struct vm_object *task;      /* a simulated task of the child */
	struct vm_region *anon, *file;
};

static const unsigned fw_versions[] = {
	PROF_KV(4, 19), PROF_KV(5, 10), PROF_KV(6, 12), PROF_KV(6, 18),
};
#define FW_NPROF (sizeof(fw_versions) / sizeof(fw_versions[0]))

static struct fw_env *fw_envs[FW_NPROF];
static char fw_dir[64];
static uint64_t fw_now;

/* Simulated time: writeback completes without sleeping. */
static uint64_t fw_clock(void *arg)
{
	return fw_now += 1000000;
}

static void fw_sleep(uint64_t ns, void *arg)
{
	/* simulated: a writeback wait passes no time */
}

/* The OOM killer's word to a victim's owner: the engine reaps the victim
 * itself, and this one is no process. */
static void fw_kill(uint32_t id, struct mcg_group *over, struct mcg_group *vg, void *arg)
{
}

static bool fw_interrupted(void *arg)
{
	return true;
}

static int fw_child_init(struct mcg_group *g, void *arg)
{
	return node_init_child(arg, g, 0, 0, 0755, 022);
}

static void fw_path(char *buf, size_t size, bool child, const char *name)
{
	snprintf(buf, size, "%s%s/%s", fw_dir, child ? "/c" : "", name);
}

/* Files at the paths a mount at fw_dir would have, on the fixed fds. */
static void fw_make_fds(void)
{
	char path[256];
	int fd;

	snprintf(fw_dir, sizeof(fw_dir), "/tmp/memcgfs-fuzz-XXXXXX");
	if (!mkdtemp(fw_dir))
		FW_FAIL("mkdtemp: %s", strerror(errno));
	fw_path(path, sizeof(path), false, "c");
	if (mkdir(path, 0700))
		FW_FAIL("mkdir %s: %s", path, strerror(errno));
	for (int child = 0; child <= 1; child++)
		for (size_t i = 0; i < FW_NCTL; i++) {
			fw_path(path, sizeof(path), child, fw_ctl[i]);
			fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			if (fd < 0 || dup2(fd, (child ? FW_FD_CHILD : FW_FD_ROOT) + (int)i) < 0)
				FW_FAIL("%s: %s", path, strerror(errno));
			close(fd);
		}
	fw_path(path, sizeof(path), true, "memory.stat");
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 || dup2(fd, FW_FD_STAT) < 0)
		FW_FAIL("%s: %s", path, strerror(errno));
	close(fd);
	if ((fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 || dup2(fd, FW_FD_EVENT) < 0)
		FW_FAIL("eventfd: %s", strerror(errno));
	close(fd);
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || dup2(fd, FW_FD_NULL) < 0)
		FW_FAIL("/dev/null: %s", strerror(errno));
	close(fd);
}

static void fw_remove_dir(void)
{
	char path[256];

	if (!fw_dir[0])
		return;
	for (int child = 0; child <= 1; child++)
		for (size_t i = 0; i < FW_NCTL; i++) {
			fw_path(path, sizeof(path), child, fw_ctl[i]);
			unlink(path);
		}
	fw_path(path, sizeof(path), true, "memory.stat");
	unlink(path);
	fw_path(path, sizeof(path), false, "c");
	rmdir(path);
	rmdir(fw_dir);
}

static struct fw_env *fw_env_new(unsigned version)
{
	struct fw_env *env = calloc(1, sizeof(*env));
	struct mcg_machine cfg = {
		.mem_pages = 2048, .swap_pages = 512, .nodes = 2, .cpus = 2, .vm_swappiness = 60,
		.watermarks = true,
	};
	/* one thread, no workers (background reclaim by bgr_step), simulated time */
	static const struct mcg_env_ops env_ops = { .now = fw_clock, .sleep = fw_sleep };
	static const struct mcg_owner_ops owner_ops = {
		.oom_event = event_oom, .usage_event = event_usage, .pressure_event = event_pressure,
		.kill = fw_kill, .free = node_free_group,
	};
	struct cgfs *fs;

	if (!env)
		abort();
	fs = &env->fs;
	prof_init(&cfg.prof, version);
	cgfs_init(fs);
	snprintf(fs->mountpoint, sizeof(fs->mountpoint), "%s", fw_dir);
	fs->events = event_new();
	fs->eng = mcg_engine_new(&cfg, &(struct mcg_env){ &env_ops, NULL },
				 &(struct mcg_owner){ &owner_ops, fs });
	if (!fs->events || !fs->eng)
		FW_FAIL("engine %u", version);
	fs->prof = &fs->eng->m.prof;
	if (node_init_root(fs, fs->eng->root, 0, 0) ||
	    mcg_create(fs->eng, fs->eng->root, "c", fw_child_init, fs, &env->child))
		FW_FAIL("groups of %u", version);
	env->child_hierarchy = atomic_load(&env->child->use_hierarchy);
	return env;
}

static void fw_env_free(struct fw_env *env)
{
	struct event_registry *er = env->fs.events;

	/* as the daemon: registrations first, background reclaim stopped */
	bgr_destroy(env->fs.eng);
	env->fs.events = NULL;
	event_free(er);
	if (env->task)
		vm_object_free(env->task);
	mcg_put(env->child);
	mcg_engine_free(env->fs.eng);
	cgfs_destroy(&env->fs);
	free(env);
}

static void fw_exit(void)
{
	for (size_t i = 0; i < FW_NPROF; i++)
		if (fw_envs[i])
			fw_env_free(fw_envs[i]);
	fw_remove_dir();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fw_make_fds();
	atexit(fw_exit);
	return 0;
}

/* Every setting a write may have changed goes back to its default, and
 * the child's task has its pages again: each input starts alike. */
static void fw_reset(struct fw_env *env)
{
	struct mcg_group *c = env->child;
	enum vm_fault f;

	mcg_set_oom_control(c, 0);
	mcg_set_limit(c, MCG_MEMSW, PC_MAX, NULL, NULL);
	mcg_set_limit(c, MCG_MEM, PC_MAX, NULL, NULL);
	mcg_set_limit(c, MCG_KMEM, PC_MAX, NULL, NULL);   /* -524 on some profiles */
	pc_set_max(&c->cnt[MCG_TCP], PC_MAX);
	bgr_set_wmark(c, BGR_HIGH, 0, true);
	bgr_set_wmark(c, BGR_LOW, 0, true);
	for (struct mcg_group *g = c; g; g = g->parent) {
		atomic_store(&g->soft_limit, PC_MAX);
		atomic_store(&g->move_charge, 0);
		atomic_store(&g->notify_on_release, false);
		atomic_store(&g->clone_children, false);
		mcg_set_swappiness(g, 60);
	}
	atomic_store(&c->use_hierarchy, env->child_hierarchy);
	env->fs.release_agent[0] = '\0';
	if (env->task && atomic_load(&env->task->dead)) {
		vm_object_free(env->task);       /* an OOM victim */
		env->task = NULL;
	}
	if (!env->task) {
		env->task = vm_object_new(env->fs.eng, c, true, 1);
		if (!env->task || vm_region_new(env->task, PK_ANON, FW_ANON_PAGES, &env->anon) ||
		    vm_region_new(env->task, PK_FILE, FW_FILE_PAGES, &env->file))
			FW_FAIL("task");
	}
	for (uint32_t i = 0; i < FW_ANON_PAGES; i++)
		vm_touch(env->anon, i, i & 1, true, &f);
	for (uint32_t i = 0; i < FW_FILE_PAGES; i++)
		vm_touch(env->file, i, i & 1, i & 1, &f);
}

/* Row n of cgfs_files[] (modulo), or the next one shown in this directory:
 * seeds name rows by their place in the table. */
static const struct cgfs_file *fw_row(const struct cgfs *fs, unsigned n, bool root)
{
	for (size_t k = 0; k < cgfs_nfiles; k++) {
		const struct cgfs_file *f = &cgfs_files[(n + k) % cgfs_nfiles];

		if (cgfs_file_present(fs, f, root))
			return f;
	}
	FW_FAIL("no file in a %s directory", root ? "root" : "child");
}

/* Byte 0: bits 0-1 profile, 2 child (else root), 3-4 credentials, 5 the
 * event writer is this process (else no such PID), 6 the writer is
 * interrupted, 7 extension files hidden. Byte 1: the row. Then the data. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const struct { uid_t uid, fh_uid; bool cap; } creds[] = {
		{ 0, 0, true }, { 0, 0, false }, { 65534, 0, false }, { 65534, 65534, false },
	};
	struct fw_env *env;
	const struct cgfs_file *f;
	struct mcg_group *g;
	struct cgfs_fh fh;
	struct cgfs_req r;
	struct cgfs_out o = { 0 };
	const char *buf = (const char *)data + 2;
	size_t n = len - 2, max;
	uint64_t due, drained;
	char msg[512];
	unsigned b0, cr;
	int err;

	if (len < 2)
		return 0;
	b0 = data[0];
	cr = (b0 >> 3) & 3;
	if (!(env = fw_envs[b0 & 3]))
		env = fw_envs[b0 & 3] = fw_env_new(fw_versions[b0 & 3]);
	env->fs.watermarks = !(b0 & 0x80);
	fw_reset(env);
	g = b0 & 4 ? env->child : env->fs.eng->root;
	f = fw_row(&env->fs, data[1], mcg_is_root(g));

	fh = (struct cgfs_fh){
		.g = g, .row = (int)(f - cgfs_files), .uid = creds[cr].fh_uid,
		.gid = creds[cr].fh_uid, .pid = FW_NOPID, .agent_cap = creds[cr].cap,
	};
	r = (struct cgfs_req){
		.fs = &env->fs, .g = g, .fh = &fh, .uid = creds[cr].uid, .gid = creds[cr].uid,
		.pid = f->grammar == G_EVENT && (b0 & 0x20) ? gettid() : FW_NOPID,
		.interrupted = b0 & 0x40 ? fw_interrupted : NULL,
	};

	/* the generic rules of §2.3 hold for every row */
	max = f->max_write ? f->max_write : 4096;
	err = cgfs_file_write(&r, f, buf, n);
	if (err > 0 || err < -4095)
		FW_FAIL("%s: write returned %d", f->name, err);
	if (n > max && err != -E2BIG)
		FW_FAIL("%s: %zu bytes gave %d, not E2BIG", f->name, n, err);
	if (n == 0 && err)
		FW_FAIL("%s: an empty write gave %d", f->name, err);
	if (!f->write && n && n <= max && err != -EINVAL)
		FW_FAIL("%s: a write without handler gave %d", f->name, err);

	/* §2.2: text that ends with a newline, or nothing */
	r.pid = FW_NOPID;
	err = cgfs_file_read(&r, f, &o);
	if (err > 0 || err < -4095 || (!f->read && err != -EINVAL))
		FW_FAIL("%s: read returned %d", f->name, err);
	if (!err && o.len && (o.buf[o.len - 1] != '\n' || memchr(o.buf, '\0', o.len)))
		FW_FAIL("%s: read %zu bytes not ending in a newline", f->name, o.len);
	cgfs_out_free(&o);

	/* registrations end with the input (their eventfd is ours) */
	event_group_removed(&env->fs, env->child);
	event_group_removed(&env->fs, env->fs.eng->root);
	if (read(FW_FD_EVENT, &drained, sizeof(drained)) < 0 && errno != EAGAIN)
		FW_FAIL("eventfd read: %s", strerror(errno));
	bgr_step(env->fs.eng, &due);
	if (check_invariants(env->fs.eng, msg, sizeof(msg)))
		FW_FAIL("invariants after %s (profile %u): %s", f->name, fw_versions[b0 & 3], msg);
	return 0;
}
