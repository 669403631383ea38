/* pcache.c: loads the page-cache tracer (bpf/pcache.bpf.c, compiled into
 * the skeleton pcache.skel.h at build time) and hands its events over.
 * Owns the skeleton, the ring buffer and the lock that serialises reading
 * it; never interprets an event. Built without MEMCGFS_BPF, every call
 * says the tracer is not there. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "os/pcache.h"

#ifdef MEMCGFS_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include "pcache.skel.h"

struct pcache {
	struct pcache_bpf *skel;
	struct ring_buffer *rb;
	pthread_mutex_t lock;         /* rb's consumer side; a leaf but for fn's locks */
	pcache_fn fn;
	void *arg;
};

static int pcache_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;                     /* the daemon logs the outcome itself */
}

static int pcache_event_cb(void *ctx, void *data, size_t size)
{
	struct pcache *pc = ctx;

	if (size >= sizeof(struct pcache_event))
		pc->fn(pc->arg, data);
	return 0;
}

static int pcache_load(struct pcache_bpf **out)
{
	struct pcache_bpf *s;
	int err;

	if (!(s = pcache_bpf__open()))
		return errno ? -errno : -ENOMEM;
	if ((err = pcache_bpf__load(s)) || (err = pcache_bpf__attach(s))) {
		pcache_bpf__destroy(s);
		return err < 0 ? err : -EINVAL;
	}
	*out = s;
	return 0;
}

int pcache_open(pcache_fn fn, void *arg, struct pcache **out)
{
	struct pcache *pc;
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return -ENOSYS;
	if (!(pc = calloc(1, sizeof(*pc))))
		return -ENOMEM;
	if (!getenv("MEMCGFS_BPF_DEBUG"))
		libbpf_set_print(pcache_print);
	pc->fn = fn;
	pc->arg = arg;
	err = pcache_load(&pc->skel);
	if (!err && !(pc->rb = ring_buffer__new(bpf_map__fd(pc->skel->maps.events),
						pcache_event_cb, pc, NULL))) {
		err = errno ? -errno : -ENOMEM;
		pcache_bpf__destroy(pc->skel);
	}
	if (err) {
		free(pc);
		return err;
	}
	pthread_mutex_init(&pc->lock, NULL);
	*out = pc;
	return 0;
}

void pcache_close(struct pcache *pc)
{
	if (!pc)
		return;
	ring_buffer__free(pc->rb);
	pcache_bpf__destroy(pc->skel);
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}

int pcache_track(struct pcache *pc, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 v = 1;

	return bpf_map__update_elem(pc->skel->maps.tracked, &key, sizeof(key), &v, sizeof(v), BPF_ANY);
}

int pcache_alarm(struct pcache *pc, pid_t tgid, uint64_t pages)
{
	__u32 key = (__u32)tgid;
	__u64 v = pages;
	int err;

	if (pages)
		return bpf_map__update_elem(pc->skel->maps.alarms, &key, sizeof(key), &v, sizeof(v),
					    BPF_ANY);
	err = bpf_map__delete_elem(pc->skel->maps.alarms, &key, sizeof(key), 0);
	return err == -ENOENT ? 0 : err;
}

int pcache_fd(const struct pcache *pc)
{
	return ring_buffer__epoll_fd(pc->rb);
}

long pcache_consume(struct pcache *pc)
{
	int n;

	pthread_mutex_lock(&pc->lock);
	n = ring_buffer__consume(pc->rb);
	pthread_mutex_unlock(&pc->lock);
	return n;
}

void pcache_lost(struct pcache *pc, uint64_t lost[PCACHE_LOST_NR])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	for (int i = 0; i < PCACHE_LOST_NR; i++)
		lost[i] = 0;
	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return;
	for (__u32 k = 0; k < PCACHE_LOST_NR; k++)
		if (bpf_map__lookup_elem(pc->skel->maps.lost, &k, sizeof(k), v,
					 (size_t)ncpu * sizeof(*v), 0) == 0)
			for (int c = 0; c < ncpu; c++)
				lost[k] += v[c];
	free(v);
}

#else /* !MEMCGFS_BPF */

int pcache_open(pcache_fn fn, void *arg, struct pcache **out)
{
	(void)fn;
	(void)arg;
	(void)out;
	return -ENOSYS;
}

void pcache_close(struct pcache *pc)
{
	(void)pc;
}

int pcache_track(struct pcache *pc, pid_t tgid)
{
	(void)pc;
	(void)tgid;
	return -ENOSYS;
}

int pcache_alarm(struct pcache *pc, pid_t tgid, uint64_t pages)
{
	(void)pc;
	(void)tgid;
	(void)pages;
	return -ENOSYS;
}

int pcache_fd(const struct pcache *pc)
{
	(void)pc;
	return -1;
}

long pcache_consume(struct pcache *pc)
{
	(void)pc;
	return -ENOSYS;
}

void pcache_lost(struct pcache *pc, uint64_t lost[PCACHE_LOST_NR])
{
	(void)pc;
	for (int i = 0; i < PCACHE_LOST_NR; i++)
		lost[i] = 0;
}

#endif
