/* memcgfs.c: the daemon's main. Parses and checks the options, then either
 * hands the mount to the supervisor (supervisor.c: it mounts and runs the
 * workers) or, as a worker (memcgfs --worker), builds the engine for the
 * chosen kernel profile and simulated machine and runs the multithreaded
 * FUSE loop on the supervisor's connection. Owns start-up and shutdown
 * only; never serves a request. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon/dentries.h"
#include "daemon/ops.h"
#include "daemon/supervisor.h"
#include "daemon/trim.h"
#include "engine/engine.h"
#include "fs/cgfs.h"
#include "fs/event.h"
#include "fs/grammar.h"
#include "fs/node.h"
#include "fs/registry.h"
#include "fs/release.h"
#include "fs/tasks.h"
#include "journal/state.h"
#include "os/pidwatch.h"
#include "os/proc.h"
#include "os/watchdog.h"
#include "source/mirror.h"
#include "source/sim.h"
#include "util/log.h"

struct memcgfs_opts {
	char *kernel;
	char *memory;
	char *swap;
	unsigned nodes;
	unsigned cpus;
	char *zones;                  /* -o zones=fixed|batching|accumulate */
	char *min_free;               /* -o min_free=SIZE (with zones=) */
	int nowatermarks;
	char *enforce;
	char *page_cache;             /* -o page_cache=events|scan|none */
	char *acl_inherit;
	int help;
	int version;
	int remount;
	int nonopts;                  /* SOURCE MOUNTPOINT, as mount.fuse3 runs us */
	unsigned max_threads;         /* -o max_threads=N, 0: not given */
	unsigned cache_timeout;       /* -o cache_timeout=SECONDS */
	char *state;                  /* -o state=PATH */
	int nostate;
	int fresh;
	char *mountpoint;             /* the last non-option argument */
	bool worker;                  /* memcgfs --worker: the mountpoint is given apart */
};

/* FUSE worker threads at most, unless -o max_threads=N says otherwise */
#define MEMCGFS_MAX_THREADS 64
/* How long the kernel keeps names and attributes unless -o cache_timeout
 * says otherwise (s): a day; exactness comes from the invalidations, not
 * from the bound (docs/design.md, Kernel caches). */
#define MEMCGFS_CACHE_TIMEOUT 86400

#define MOPT(t, p) { t, offsetof(struct memcgfs_opts, p), 1 }
static const struct fuse_opt memcgfs_optspec[] = {
	MOPT("kernel=%s", kernel),
	MOPT("memory=%s", memory),
	MOPT("swap=%s", swap),
	MOPT("nodes=%u", nodes),
	MOPT("cpus=%u", cpus),
	MOPT("zones=%s", zones),
	MOPT("min_free=%s", min_free),
	MOPT("nowatermarks", nowatermarks),
	MOPT("enforce=%s", enforce),
	MOPT("page_cache=%s", page_cache),
	MOPT("acl_inherit=%s", acl_inherit),
	MOPT("state=%s", state),
	MOPT("nostate", nostate),
	MOPT("fresh", fresh),
	MOPT("cache_timeout=%u", cache_timeout),
	MOPT("-h", help),
	MOPT("--help", help),
	MOPT("remount", remount),
	MOPT("-V", version),
	MOPT("--version", version),
	FUSE_OPT_END
};

static void memcgfs_usage(const char *prog)
{
	printf("usage: %s [-f] [-o OPTS] MOUNTPOINT\n"
	       "       %s --version\n\n"
	       "memcgfs options (-o, comma separated):\n"
	       "    kernel=X.Y        behaviour profile (4.19 .. 6.18, default 6.12)\n"
	       "    memory=SIZE       simulated machine memory (default: MemTotal)\n"
	       "    swap=SIZE         simulated swap (default: SwapTotal)\n"
	       "    nodes=N           simulated NUMA nodes (default 1)\n"
	       "    cpus=N            simulated CPUs (default: online CPUs)\n"
	       "    zones=POLICY      each node a zone, node 0 tried first, with 2.6.3's\n"
	       "                      watermarks and a kswapd: fixed, batching or\n"
	       "                      accumulate (default off: no zone watermarks)\n"
	       "    min_free=SIZE     the zones' min_free_kbytes (default 2.6.3's)\n"
	       "    nowatermarks      hide the memcgfs extension files\n"
	       "    enforce=none      account real processes only: never signal them\n"
	       "                      or page them out (default enforce=all)\n"
	       "    page_cache=scan   charge real processes' page cache from cachestat(2)\n"
	       "                      of their open files (mincore(2) before 6.5), not\n"
	       "                      from the kernel's events (page_cache=mincore: from\n"
	       "                      mincore(2) on any kernel; none: not at all;\n"
	       "                      default events, or scan where eBPF cannot load)\n"
	       "    acl_inherit=GLOB[:GLOB...]\n"
	       "                      a default ACL reaches only the control files of\n"
	       "                      new groups that match (default: every file)\n"
	       "    state=PATH        the state file that keeps groups, settings, owners,\n"
	       "                      modes, ACLs and members across restarts (default\n"
	       "                      " STATE_DIR "/MOUNTPOINT.MNTNS.state)\n"
	       "    nostate           keep no state file\n"
	       "    fresh             start empty, replacing what the state file held\n"
	       "    cache_timeout=S   how long the kernel keeps names and attributes (s,\n"
	       "                      default 86400; 0: it asks the daemon every time)\n"
	       "default_permissions and allow_other are on by default.\n\n", prog, prog);
}

/* A /proc/meminfo field in pages, or 0. */
static long memcgfs_meminfo_pages(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long kb = 0;
	size_t klen = strlen(key);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			kb = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb / (PC_PAGE_SIZE / 1024);
}

static unsigned memcgfs_host_swappiness(void)
{
	FILE *f = fopen("/proc/sys/vm/swappiness", "r");
	unsigned v = 60;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 60;
		fclose(f);
	}
	return v;
}

static int memcgfs_size(const char *s, long *pages)
{
	return gram_bytes(s, strlen(s), pages, NULL);
}

/* Every member task costs one pidfd: take all the descriptors we may. */
static void memcgfs_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* Non-option arguments: MOUNTPOINT, or SOURCE MOUNTPOINT as mount.fuse3
 * runs a FUSE program (mount -t fuse.memcgfs, remount): the source is a
 * name only. The mountpoint goes back to libfuse after parsing; a third
 * argument is left for it to refuse. */
static int memcgfs_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct memcgfs_opts *o = data;

	/* -o max_threads=N is libfuse's, which defaults it to 10 itself: seen
	 * here, it is known to be given (and stays for libfuse) */
	if (key == FUSE_OPT_KEY_OPT && !strncmp(arg, "max_threads=", 12)) {
		o->max_threads = (unsigned)strtoul(arg + 12, NULL, 10);
		return 1;
	}
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	if (o->worker)
		return 0;             /* (the supervisor gave the mountpoint apart) */
	if (++o->nonopts > 2)
		return 1;
	free(o->mountpoint);
	return (o->mountpoint = strdup(arg)) ? 0 : -1;
}

/* mount -o remount on a live mount: the mount's flags change (ro, nosuid,
 * nodev, noexec, the atime policy); what the daemon was started with
 * stays, since a live engine cannot change its machine. */
static int memcgfs_remount(const char *path, const struct fuse_args *args)
{
	static const struct { const char *name; unsigned long set; } flags[] = {
		{ "ro", MS_RDONLY }, { "nosuid", MS_NOSUID }, { "nodev", MS_NODEV },
		{ "noexec", MS_NOEXEC }, { "noatime", MS_NOATIME }, { "nodiratime", MS_NODIRATIME },
		{ "sync", MS_SYNCHRONOUS }, { "dirsync", MS_DIRSYNC }, { "strictatime", MS_STRICTATIME },
	};
	unsigned long mf = MS_REMOUNT;
	bool relatime = true;

	for (int i = 1; i < args->argc; i++) {
		const char *a = args->argv[i];
		char *list, *save = NULL;

		if (!strcmp(a, "-o") && i + 1 < args->argc)
			a = args->argv[++i];
		else if (!strncmp(a, "-o", 2))
			a += 2;
		else
			continue;
		if (!(list = strdup(a)))
			return 1;
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
				if (!strcmp(t, flags[k].name))
					mf |= flags[k].set;
			if (!strcmp(t, "noatime") || !strcmp(t, "strictatime") || !strcmp(t, "norelatime"))
				relatime = false;
		}
		free(list);
	}
	if (relatime)
		mf |= MS_RELATIME;
	if (mount(NULL, path, NULL, mf, NULL)) {
		fprintf(stderr, "memcgfs: remount %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* Where the modules' messages go: stderr until the daemon detaches, then
 * syslog (facility daemon), as a kernel administrator looks for them. */
static void memcgfs_log_stderr(int prio, const char *line)
{
	(void)prio;
	fprintf(stderr, "memcgfs: %s\n", line);
}

static void memcgfs_log_syslog(int prio, const char *line)
{
	syslog(prio, "%s", line);
}

/* stdio is /dev/null from now on (supervisor.c detached it) */
static void memcgfs_log_detached(void)
{
	openlog("memcgfs", LOG_PID, LOG_DAEMON);
	mcg_log_set_sink(memcgfs_log_syslog);
}

/* systemd's readiness protocol (sd_notify(3), Type=notify): one datagram
 * to $NOTIFY_SOCKET, a path or, with a leading '@', an abstract name.
 * Without the variable, nothing. */
static void memcgfs_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || (len = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		mcg_log(MCG_LOG_WARNING, "NOTIFY_SOCKET %s: %s", path, strerror(errno));
	close(fd);
}

/* The state file (fs/state.h): locked and replayed before the mount
 * serves anything; an error names the file and the place and ends the
 * daemon, which never starts empty in its stead. */
static int memcgfs_state_open(const struct memcgfs_opts *o, struct cgfs *fs, bool fresh)
{
	char path[PATH_MAX], msg[1024] = "";
	int err = 0;

	if (o->state)
		snprintf(path, sizeof(path), "%s", o->state);
	else
		err = state_default_path(fs->mountpoint, path, sizeof(path));
	if (err) {
		mcg_log(MCG_LOG_ERR, "the default state file of %s: %s (give -o state=PATH "
			"or -o nostate)", fs->mountpoint, strerror(-err));
		return 1;
	}
	if ((err = state_open(fs, path, fresh, &fs->state, msg, sizeof(msg)))) {
		mcg_log(MCG_LOG_ERR, "%s", *msg ? msg : strerror(-err));
		return 1;
	}
	fs->state_file = state_path(fs->state);
	return 0;
}

/* Recorded members back in their groups, then the first write. */
static int memcgfs_state_attach(struct state *st)
{
	unsigned attached, skipped;
	int err = state_attach(st, &attached, &skipped);

	if (err) {
		mcg_log(MCG_LOG_ERR, "state file %s: %s", state_path(st), strerror(-err));
		return 1;
	}
	if (attached || skipped)
		mcg_log(MCG_LOG_NOTICE, "state file %s: %u tasks back in their groups, %u gone",
			state_path(st), attached, skipped);
	return 0;
}

/* What the engine tells the file surface: events, release, the victim of an
 * OOM (whose own source signals it), a group's end. */
static const struct mcg_owner_ops memcgfs_owner = {
	.kill = cgfs_sources_kill,
	.oom_event = event_oom,
	.usage_event = event_usage,
	.pressure_event = event_pressure,
	.release = release_notify,
	.free = node_free_group,
};

/* The sources' questions to each other (source.h), wired here so that
 * neither source names the other. */
static bool memcgfs_sim_fork_of_task(void *sim, pid_t tgid, pid_t ppid)
{
	return sim_fork_of_task(sim, tgid, ppid);
}

static int memcgfs_mirror_declare(void *mirror, pid_t tgid, int pidfd)
{
	return mirror_declare(mirror, tgid, pidfd);
}

static void memcgfs_made_by(void *fs, pid_t child, pid_t maker, pid_t real)
{
	cgfs_tasks_made_by(fs, child, maker, real);
}

/* The worker's threads and sources, once the supervisor has daemonized:
 * the watchdog first, then pidwatch, the release runner, the heap trim,
 * the mirror and the simulated-task socket (registered with the file
 * surface, the socket's first: a simulated task's kill is its own). 0, or
 * -1 when one the worker cannot do without is missing. */
static int memcgfs_sources_start(struct cgfs *fs, struct source_env *env, bool enforce,
				 enum mirror_pc_source pcs)
{
	env->eng = fs->eng;
	env->mountpoint = fs->mountpoint;
	env->watchdog = watchdog_start("/proc/self/exe");
	if (!env->watchdog)
		mcg_log(MCG_LOG_WARNING, "no watchdog: oom_kill_disable will not stop real processes");
	fs->watch = cgfs_tasks_watch(fs);
	fs->rel = release_new(fs);
	fs->trim = trim_start();
	env->fork_of_simulated = memcgfs_sim_fork_of_task;
	env->declare_simulated = memcgfs_mirror_declare;
	env->made_by = memcgfs_made_by;
	env->fs = fs;
	env->mirror = mirror_start(env, enforce, pcs);   /* before the socket admits */
	env->sim = sim_start(env);
	/* the socket's tasks first: a simulated task's kill is its own */
	if (env->sim) {
		cgfs_source_add(fs, &sim_source_ops, env->sim);
		fs->sim_socket = sim_path(env->sim);
	}
	if (env->mirror)
		cgfs_source_add(fs, &mirror_source_ops, env->mirror);
	return !fs->watch || !fs->rel || !env->mirror ? -1 : 0;
}

/* Their end, in order: no kill reaches a stopping source, no admission
 * after the socket stops, the mirror continues what it stopped. */
static void memcgfs_sources_stop(struct cgfs *fs, struct source_env *env)
{
	atomic_store(&fs->nsources, 0);        /* no kill reaches a stopping source */
	sim_stop(env->sim);                    /* no more admissions */
	fs->sim_socket = NULL;
	mirror_stop(env->mirror);              /* continues what it stopped */
	watchdog_stop(env->watchdog);
	sim_free(env->sim);
	cgfs_tasks_watch_end(fs);
	release_free(fs->rel);
	trim_stop(fs->trim);
	fs->trim = NULL;
}

/* Serving until the connection ends: 0, or 1 when the loop failed (a
 * loop ended by SIGTERM, SIGINT or SIGHUP returns the signal: a clean
 * exit). */
static int memcgfs_loop(struct fuse_session *se, const struct fuse_cmdline_opts *cl,
			const struct memcgfs_opts *o)
{
	struct fuse_loop_config *loop;
	int ret;

	if (cl->singlethread)
		return fuse_session_loop(se) < 0 ? 1 : 0;
	loop = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(loop, (unsigned)cl->clone_fd);
	/* (UINT_MAX: not given; libfuse would warn about it) */
	if (cl->max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(loop, cl->max_idle_threads);
	fuse_loop_cfg_set_max_threads(loop, o->max_threads ? o->max_threads : MEMCGFS_MAX_THREADS);
	ret = fuse_session_loop_mt(se, loop) < 0 ? 1 : 0;
	fuse_loop_cfg_destroy(loop);
	return ret;
}

/* Where the mirror's page cache comes from (-o page_cache, checked). */
static enum mirror_pc_source memcgfs_pc_source(const struct memcgfs_opts *o)
{
	if (!o->page_cache || !strcmp(o->page_cache, "events"))
		return MIRROR_PC_EVENTS;
	if (!strcmp(o->page_cache, "mincore"))
		return MIRROR_PC_MINCORE;
	return !strcmp(o->page_cache, "scan") ? MIRROR_PC_SCAN : MIRROR_PC_NONE;
}

/* The mount's device, which event_control knows its files by: from
 * mountinfo, as the supervisor found the mount (attached, it is there;
 * where it is not, event registrations are refused, and the log says). */
static void memcgfs_learn_dev(struct cgfs *fs)
{
	char dev[64];
	unsigned maj, min;

	if (sup_mounted_at(fs->mountpoint, dev, sizeof(dev)) && sscanf(dev, "%u:%u", &maj, &min) == 2)
		fs->mount_dev = makedev(maj, min);
	else
		mcg_log(MCG_LOG_WARNING, "%s: the mount's device is unknown: event registrations "
			"will be refused", fs->mountpoint);
}

/* The worker: build the engine and the sources, attach to the supervisor's
 * connection and serve until the connection ends (0) or a signal stops the
 * loop (0 too). fs->mountpoint is set; the options are checked. */
static int memcgfs_serve(struct cgfs *fs, struct mcg_machine *cfg, struct fuse_args *args,
			 const struct fuse_cmdline_opts *cl, const struct memcgfs_opts *o,
			 bool enforce, unsigned restarts)
{
	struct source_env env = { 0 };
	struct fuse_session *se;
	int ret = 1;

	memcgfs_raise_nofile();
	cgfs_init(fs);
	fs->watermarks = !o->nowatermarks;
	fs->supervisor_pid = getppid();
	fs->restarts = restarts;
	fs->cache_timeout = o->cache_timeout;
	fs->fh_tag = cgfs_fh_tag(restarts);
	fs->eng = mcg_engine_new(cfg, &env_real, &(struct mcg_owner){ &memcgfs_owner, fs });
	fs->events = event_new();
	if (fs->eng)
		fs->prof = &fs->eng->m.prof;
	if (!fs->eng || !fs->events || node_init_root(fs, fs->eng->root, getuid(), getgid())) {
		fprintf(stderr, "memcgfs: out of memory\n");
		goto out_engine;
	}
	/* the state file's groups and settings go into the engine before the
	 * first request is served; -o fresh empties it at the mount's start
	 * only, never at a restart (a crash must not wipe what it kept) */
	if (!o->nostate && memcgfs_state_open(o, fs, o->fresh && !restarts))
		goto out_engine;

	se = fuse_session_new(args, &cgfs_ops, sizeof(cgfs_ops), fs);
	if (!se)
		goto out_engine;
	{
		/* the names the kernel may keep, shared with the other workers */
		int nfd = sup_worker_names_fd();

		if (nfd >= 0) {
			fs->dentries = dentries_map(nfd);
			close(nfd);
		}
	}
	if (sup_worker_attach(se) || cgfs_ops_attached(se, fs))
		goto out_session;
	memcgfs_learn_dev(fs);
	if (!cl->foreground) {
		sup_detach_stdio();     /* attached: start-up has said its errors */
		memcgfs_log_detached();
	}
	if (fuse_set_signal_handlers(se))
		goto out_session;
	if (memcgfs_sources_start(fs, &env, enforce, memcgfs_pc_source(o)))
		goto out_signals;
	if (!env.sim)
		mcg_log(MCG_LOG_WARNING, "no simulated-task socket (%s)", strerror(errno));
	if (fs->state && memcgfs_state_attach(fs->state))
		goto out_signals;
	if (!restarts)
		mcg_log(MCG_LOG_NOTICE, "mounted %s (kernel=%u.%u%s)", fs->mountpoint,
			fs->prof->version / 1000, fs->prof->version % 1000,
			fs->watermarks ? "" : ",nowatermarks");
	else
		mcg_log(MCG_LOG_NOTICE, "worker %d serves %s again (restart %u)%s", (int)getpid(),
			fs->mountpoint, restarts, fs->state ? ", from the state file" :
			": the hierarchy starts empty (-o nostate)");
	ret = memcgfs_loop(se, cl, o);
	mcg_log(MCG_LOG_NOTICE, "unmounting %s", fs->mountpoint);
out_signals:
	memcgfs_sources_stop(fs, &env);
	fuse_remove_signal_handlers(se);
out_session:
	cgfs_ops_detached(fs);
	fuse_session_destroy(se);
	dentries_unmap(fs->dentries);
	fs->dentries = NULL;
	cgfs_ops_free_handles(fs);
out_engine:
	{
		/* registrations hold groups: they go first, and the engine's
		 * teardown must not call into them any more. Background reclaim
		 * (whose hooks read them) stops before. */
		struct event_registry *er = fs->events;

		/* the final state (only once it was live: never a half one) */
		if (state_close(fs->state))
			mcg_log(MCG_LOG_ERR, "final write of the state file failed");
		if (fs->eng) {
			mcg_kswapd_stop(fs->eng);   /* they reclaim, and reclaim */
			bgr_destroy(fs->eng);       /* fires usage events */
		}
		fs->events = NULL;
		event_free(er);
	}
	mcg_engine_free(fs->eng);
	cgfs_destroy(fs);
	return ret;
}

/* The simulated machine the options ask for (the host's memory, swap,
 * CPUs and swappiness by default), and whether to enforce: 0, or -1 with
 * the complaint printed. */
static int memcgfs_machine(const struct memcgfs_opts *o, struct mcg_machine *cfg, bool *enforce)
{
	prof_init(&cfg->prof, PROF_DEFAULT);
	if (o->kernel && prof_parse(o->kernel, &cfg->prof)) {
		fprintf(stderr, "memcgfs: unsupported kernel=%s (4.19 .. 6.18)\n", o->kernel);
		return -1;
	}
	cfg->mem_pages = memcgfs_meminfo_pages("MemTotal");
	cfg->swap_pages = memcgfs_meminfo_pages("SwapTotal");
	if ((o->memory && memcgfs_size(o->memory, &cfg->mem_pages)) ||
	    (o->swap && memcgfs_size(o->swap, &cfg->swap_pages))) {
		fprintf(stderr, "memcgfs: bad memory= or swap= size\n");
		return -1;
	}
	cfg->nodes = o->nodes ? o->nodes : 1;
	cfg->cpus = o->cpus ? o->cpus : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	cfg->vm_swappiness = memcgfs_host_swappiness();
	if (cfg->nodes > PAGE_MAX_NODES || cfg->cpus > 4096) {
		fprintf(stderr, "memcgfs: nodes= at most 64, cpus= at most 4096\n");
		return -1;
	}
	if (o->zones && mcg_zone_policy_parse(o->zones, &cfg->zones)) {
		fprintf(stderr, "memcgfs: zones= takes off, fixed, batching or accumulate\n");
		return -1;
	}
	if (o->min_free && cfg->zones == MCG_ZONES_OFF) {
		fprintf(stderr, "memcgfs: min_free= needs zones=\n");
		return -1;
	}
	if (o->min_free && (memcgfs_size(o->min_free, &cfg->min_free_pages) ||
			    cfg->min_free_pages <= 0 || cfg->min_free_pages >= cfg->mem_pages)) {
		fprintf(stderr, "memcgfs: bad min_free= size\n");
		return -1;
	}
	if (o->enforce && strcmp(o->enforce, "all") && strcmp(o->enforce, "none")) {
		fprintf(stderr, "memcgfs: enforce= takes all or none\n");
		return -1;
	}
	*enforce = !o->enforce || !strcmp(o->enforce, "all");
	if (o->page_cache && strcmp(o->page_cache, "events") && strcmp(o->page_cache, "scan") &&
	    strcmp(o->page_cache, "mincore") && strcmp(o->page_cache, "none")) {
		fprintf(stderr, "memcgfs: page_cache= takes events, scan, mincore or none\n");
		return -1;
	}
	cfg->watermarks = !o->nowatermarks;
	return 0;
}

/* Mounting (or remounting) at the mountpoint the command line names: the
 * supervisor takes it from here (sup_run). Its exit status, or 1. */
static int memcgfs_mount(struct cgfs *fs, struct fuse_args *args, const struct fuse_cmdline_opts *cl,
			 const struct memcgfs_opts *o, int argc, char *argv[])
{
	if (!realpath(cl->mountpoint, fs->mountpoint)) {
		fprintf(stderr, "memcgfs: %s: %s\n", cl->mountpoint, strerror(errno));
		return 1;
	}
	{
		struct stat st;

		if (stat(fs->mountpoint, &st) == 0 && !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "memcgfs: %s: not a directory\n", cl->mountpoint);
			return 1;
		}
	}
	if (o->remount) {
		if (!sup_mounted_at(fs->mountpoint, NULL, 0)) {
			fprintf(stderr, "memcgfs: remount %s: not a memcgfs mount\n", cl->mountpoint);
			return 1;
		}
		return memcgfs_remount(fs->mountpoint, args);
	}
	if (sup_mounted_at(fs->mountpoint, NULL, 0)) {
		fprintf(stderr, "memcgfs: %s is a memcgfs mount already (unmount it first)\n",
			cl->mountpoint);
		return 1;
	}
	{
		struct sup_params sp = {
			.args = args, .mountpoint = fs->mountpoint, .foreground = cl->foreground,
			.argc = argc, .argv = argv, .mnt_index = 0,
			.notify = memcgfs_notify, .detached = memcgfs_log_detached,
		};

		/* the worker is given the mountpoint apart: the last argument
		 * that names it is left out of its arguments */
		for (int i = argc - 1; i > 0 && o->mountpoint; i--)
			if (!strcmp(argv[i], o->mountpoint)) {
				sp.mnt_index = i;
				break;
			}
		return sup_run(&sp);
	}
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct memcgfs_opts o = { .cache_timeout = MEMCGFS_CACHE_TIMEOUT };
	struct fuse_cmdline_opts cl;
	struct mcg_machine cfg = { 0 };
	struct cgfs fs = { 0 };
	unsigned restarts = 0;
	const char *worker_mnt = NULL;
	bool enforce = true;
	int ret = 1;

	memset(&cl, 0, sizeof(cl));
	mcg_log_set_sink(memcgfs_log_stderr);
	if (argc == 2 && !strcmp(argv[1], "--watchdog"))
		return watchdog_main(3);      /* the stop watchdog (watchdog.h) */
	if (argc >= 2 && !strcmp(argv[1], "--unmount-agent"))
		return sup_agent_main(argc, argv);   /* supervisor.h */
	if (argc >= 4 && !strcmp(argv[1], "--worker")) {
		/* memcgfs --worker RESTARTS MNT ARGS...: started by the
		 * supervisor, which mounted MNT and holds its connection */
		restarts = (unsigned)strtoul(argv[2], NULL, 10);
		worker_mnt = argv[3];
		o.worker = true;
		argv[3] = argv[0];
		args = (struct fuse_args)FUSE_ARGS_INIT(argc - 3, argv + 3);
	}
	signal(SIGPIPE, SIG_IGN);         /* a peer gone is an error, not a death */
	if (fuse_opt_parse(&args, &o, memcgfs_optspec, memcgfs_opt_proc))
		goto out_args;
	if (o.version) {
		printf("memcgfs %s\nFUSE library version %s\n", MEMCGFS_VERSION, fuse_pkgversion());
		ret = 0;
		goto out_args;
	}
	if (o.help) {
		memcgfs_usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_args;
	}
	/* before libfuse resolves the mountpoint, which fails on a stale one */
	if (!o.worker && o.mountpoint && !o.remount && sup_recover_stale(o.mountpoint))
		goto out_args;
	if (o.mountpoint && fuse_opt_add_arg(&args, o.mountpoint))
		goto out_args;
	if (fuse_parse_cmdline(&args, &cl))
		goto out_args;
	if (!cl.mountpoint && !o.worker) {
		memcgfs_usage(argv[0]);
		goto out_args;
	}
	if (memcgfs_machine(&o, &cfg, &enforce))
		goto out_args;
	if (o.acl_inherit && (ret = node_set_acl_inherit(&fs, o.acl_inherit))) {
		fprintf(stderr, "memcgfs: acl_inherit=%s: %s\n", o.acl_inherit,
			ret == -EINVAL ? "a pattern names no control file" : strerror(-ret));
		ret = 1;
		goto out_args;
	}

	/* Kernel-like permission checks and a mount everyone can use. */
	fuse_opt_add_arg(&args, "-odefault_permissions,allow_other,fsname=memcgfs,subtype=memcgfs");
	if (o.worker) {
		/* the supervisor that started us is ours, never a group's member */
		proc_set_supervisor(getppid());
		/* never resolved here: a stat of our own mount would wait for us */
		snprintf(fs.mountpoint, sizeof(fs.mountpoint), "%s", worker_mnt);
		ret = memcgfs_serve(&fs, &cfg, &args, &cl, &o, enforce, restarts);
		goto out_args;
	}
	ret = memcgfs_mount(&fs, &args, &cl, &o, argc, argv);
out_args:
	free(fs.acl_inherit);
	free(cl.mountpoint);
	fuse_opt_free_args(&args);
	free(o.kernel);
	free(o.memory);
	free(o.swap);
	free(o.zones);
	free(o.min_free);
	free(o.enforce);
	free(o.page_cache);
	free(o.acl_inherit);
	free(o.state);
	free(o.mountpoint);
	return ret;
}
