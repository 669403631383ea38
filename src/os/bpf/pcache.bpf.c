// SPDX-License-Identifier: GPL-2.0
/* pcache.bpf.c: the page-cache tracer. Tells the daemon, through a ring
 * buffer, of every folio a tracked process brings into the page cache
 * (by read(2), write(2) and readahead, or by a page fault of a mapping,
 * said apart), tmpfs folios (memfd, SysV shm) as they reach the LRU, and
 * of what later happens to
 * those folios: dirtied, cleaned, removed; and of a tracked process whose
 * resident pages reached what the daemon armed for it (a limit near).
 * Owns the table of tracked processes (filled by the daemon, grown at
 * fork, pruned at exit), the alarms and the table of inodes whose folios
 * it follows. Never writes kernel memory. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "os/pcache_event.h"

#define PF_IO_WORKER 0x00000010       /* (a macro of the kernel's, not in BTF) */

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/* tgid -> 1 (the daemon's) or 2 (a fork of a tracked process) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tracked SEC(".maps");

/* tgid -> the resident pages (its mm's anon, file and shmem counters) at
 * which the daemon wants to hear of it, set by the daemon for processes
 * in groups with a limit; 0 once sent (one event per arming) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} alarms SEC(".maps");

/* inodes a tracked process added folios of: their folios' dirtying and
 * removal, and the end of their writeback, are reported (the daemon
 * ignores what it did not charge). Least recently added to go first.
 * The value is the last tracked process that added one (and its parent):
 * a tmpfs folio another task's LRU batch flush reports is that one's. */
struct pcache_inode {
	__u64 ino;
	__u32 dev, pad;
};

struct pcache_owner {
	__u32 tgid, ptgid;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1 << 18);
	__type(key, struct pcache_inode);
	__type(value, struct pcache_owner);
} inodes SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PCACHE_LOST_NR);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &why);

	if (n)
		*n += 1;
}

/* The fields of a folio whose layout the kernels this runs on differ in,
 * as CO-RE flavours (the name after "___" is dropped when the loader
 * matches them with the running kernel's BTF, and a field that is not
 * there, or is there with another kind of type, does not exist for
 * bpf_core_field_exists): none depends on the vmlinux.h of the machine it
 * was built on, so one object loads on Debian 12's 6.1, on 6.12 and on
 * today's kernels.
 *   flags     unsigned long until 6.17, then memdesc_flags_t (a struct
 *             holding the word)
 *   order     _folio_order (a byte) until 6.3, then the low byte of
 *             _flags_1
 *   mapcount  a large folio's whole mappings: _total_mapcount until 6.1,
 *             then _large_mapcount */
typedef struct {
	unsigned long word;
} memcgfs_memdesc_flags;

struct folio___ulong_flags {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct folio___memdesc_flags {
	memcgfs_memdesc_flags flags;
} __attribute__((preserve_access_index));

struct folio___order_byte {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

struct folio___flags_1 {
	unsigned long _flags_1;
} __attribute__((preserve_access_index));

struct folio___total_mapcount {
	atomic_t _total_mapcount;
} __attribute__((preserve_access_index));

struct folio___large_mapcount {
	atomic_t _large_mapcount;
} __attribute__((preserve_access_index));

/* A folio's flags word. */
static __always_inline unsigned long folio_flags(struct folio *f)
{
	unsigned long flags = 0;

	if (bpf_core_field_exists(struct folio___ulong_flags, flags))
		bpf_probe_read_kernel(&flags, sizeof(flags),
				      (void *)f + bpf_core_field_offset(struct folio___ulong_flags, flags));
	else
		bpf_probe_read_kernel(&flags, sizeof(flags),
				      (void *)f + bpf_core_field_offset(struct folio___memdesc_flags, flags));
	return flags;
}

static __always_inline __u32 folio_pages(struct folio *f, unsigned long flags)
{
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(struct folio___order_byte, _folio_order))
		return 1u << (BPF_CORE_READ((struct folio___order_byte *)f, _folio_order) & 0x1f);
	return 1u << (BPF_CORE_READ((struct folio___flags_1 *)f, _flags_1) & 0x1f);
}

/* The buffer heads a folio carries (PG_private on a block device's or a
 * block filesystem's folio): one per block. */
static __always_inline __u32 folio_buffers(struct folio *f, unsigned long flags, __u32 nr)
{
	unsigned blkbits;

	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_private))))
		return 0;
	blkbits = f->mapping->host->i_blkbits;
	if (blkbits < 9 || blkbits > 12)
		return 0;
	return nr << (12 - blkbits);
}

/* Does some page table map the folio (its mapcount, kept from -1)? */
static __always_inline bool folio_mapped(struct folio *f)
{
	int n = f->_mapcount.counter;

	if (n >= 0 || folio_pages(f, folio_flags(f)) == 1)
		return n >= 0;
	if (bpf_core_field_exists(struct folio___large_mapcount, _large_mapcount))
		n = BPF_CORE_READ((struct folio___large_mapcount *)f, _large_mapcount.counter);
	else
		n = BPF_CORE_READ((struct folio___total_mapcount *)f, _total_mapcount.counter);
	return n >= 0;
}

/* Did a page fault bring the current task into the kernel (rather than a
 * system call)? Its user registers say (x86-64): a system call's hold
 * its number and -ENOSYS as its result while it runs, a fault's the
 * user's rax. io_uring's workers (threads of the process, no user entry)
 * do system calls' work. A fault inside a system call (copy_to_user into
 * a mapping) counts as the call's: the sampler leaves out of a mapping
 * what the events charged. */
static __always_inline bool in_fault(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	if (t->flags & PF_IO_WORKER)
		return false;
	return !(regs && (long)regs->ax == -38 && (long)regs->orig_ax >= 0);
}

/* The reader is woken once PCACHE_WAKE bytes wait, not at every event (a
 * wakeup per page cost the writer more than the event): the daemon reads
 * what is queued before every read of a usage or statistics file, at every
 * exit, and every 100 ms. */
#define PCACHE_WAKE (64 << 10)

static __always_inline void submit(struct pcache_event *e)
{
	/* (this record, with its 8-byte header, is counted in already) */
	__u64 waiting = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 before = waiting - sizeof(*e) - 8;

	bpf_ringbuf_submit(e, waiting / PCACHE_WAKE != before / PCACHE_WAKE ? BPF_RB_FORCE_WAKEUP :
									   BPF_RB_NO_WAKEUP);
}

/* A blank record of op in the ring, or NULL (counted lost). */
static __always_inline struct pcache_event *reserve(__u32 op)
{
	struct pcache_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_lost(PCACHE_LOST_RING);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->op = op;
	return e;
}

static __always_inline struct pcache_inode inode_of(struct folio *folio)
{
	struct inode *host = folio->mapping->host;
	struct pcache_inode ik = { .ino = host->i_ino, .dev = host->i_sb->s_dev };

	return ik;
}

static __always_inline int send(struct folio *f, const struct pcache_inode *ik, __u32 op,
				 __u32 tgid, __u32 ptgid, __u32 shmem, __u32 fault)
{
	struct pcache_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	unsigned long flags = folio_flags(f);

	if (!e) {
		count_lost(PCACHE_LOST_RING);
		return -1;
	}
	e->op = op;
	e->tgid = tgid;
	e->ptgid = ptgid;
	e->cpu = bpf_get_smp_processor_id();
	e->dev = ik->dev;
	e->ino = ik->ino;
	e->index = f->index;
	e->nr = folio_pages(f, flags);
	e->shmem = shmem;
	e->fault = fault;
	e->pad = 0;
	e->bh = op == PCACHE_DIRTY ? folio_buffers(f, flags, e->nr) : 0;
	submit(e);
	return 0;
}

/* A folio a tracked process added. One of tmpfs a fault added is left
 * to the sampler (its shmem counts); a file's is reported as the
 * fault's, which the daemon does not charge but lets the sampler charge
 * when it finds it mapped. */
static __always_inline void added(struct folio *folio, __u32 shmem)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pcache_owner me = { .tgid = id >> 32 }, *o;
	struct pcache_inode ik;
	bool fault;

	if (!bpf_map_lookup_elem(&tracked, &me.tgid))
		return;
	fault = in_fault();
	if (fault && shmem)
		return;
	me.ptgid = bpf_get_current_task_btf()->real_parent->tgid;
	ik = inode_of(folio);
	/* the inode first: its removals are reported from the add on (a
	 * lookup marks an entry used, and costs less than an update) */
	if (!(o = bpf_map_lookup_elem(&inodes, &ik)))
		bpf_map_update_elem(&inodes, &ik, &me, BPF_ANY);
	else if (o->tgid != me.tgid)
		*o = me;
	send(folio, &ik, PCACHE_ADD, me.tgid, me.ptgid, shmem, fault);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(pcache_add, struct folio *folio)
{
	added(folio, 0);
	return 0;
}

/* tmpfs adds its folios to the page cache without that tracepoint (a
 * memfd or tmpfs file written, a SysV segment faulted): they are seen as
 * they reach the LRU, which a CPU's batch may delay by up to 31 folios,
 * in the context of whoever fills or drains the batch. A folio a task
 * that is not tracked moves there (another process on that CPU filled
 * the batch, a kworker drained it) is the inode's last tracked adder's,
 * a write (a fault's would be mapped by then). */
#define TMPFS_MAGIC 0x01021994

SEC("tp_btf/mm_lru_insertion")
int BPF_PROG(pcache_lru, struct folio *folio)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct pcache_owner *o;
	struct pcache_inode ik;
	unsigned long mapping;

	mapping = (unsigned long)BPF_CORE_READ(folio, mapping);   /* (a number: its low bit) */
	if (!mapping || (mapping & 1))        /* anon (or KSM, movable) */
		return 0;
	if (folio->mapping->host->i_sb->s_magic != TMPFS_MAGIC)
		return 0;
	/* mapped already: a fault brought it in (a SysV segment, a mapped
	 * memfd) and its batch drained later; the sampler counts it */
	if (folio_mapped(folio))
		return 0;
	if (bpf_map_lookup_elem(&tracked, &tgid)) {
		added(folio, 1);
		return 0;
	}
	ik = inode_of(folio);
	if ((o = bpf_map_lookup_elem(&inodes, &ik)) && bpf_map_lookup_elem(&tracked, &o->tgid))
		send(folio, &ik, PCACHE_ADD, o->tgid, o->ptgid, 1, 0);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(pcache_del, struct folio *folio)
{
	struct pcache_inode ik = inode_of(folio);

	if (bpf_map_lookup_elem(&inodes, &ik))
		send(folio, &ik, PCACHE_DEL, 0, 0, 0, 0);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(pcache_dirty, struct folio *folio, struct address_space *mapping)
{
	struct pcache_inode ik = inode_of(folio);

	if (bpf_map_lookup_elem(&inodes, &ik))
		send(folio, &ik, PCACHE_DIRTY, 0, 0, 0, 0);
	return 0;
}

/* Writeback of the inode is over: its pages are clean (but those dirtied
 * again meanwhile, which the daemon sees dirtied after this). */
SEC("tp_btf/sb_clear_inode_writeback")
int BPF_PROG(pcache_written, struct inode *inode)
{
	struct pcache_inode key = { .dev = inode->i_sb->s_dev, .ino = inode->i_ino };
	struct pcache_event *e;

	if (!bpf_map_lookup_elem(&inodes, &key) || !(e = reserve(PCACHE_WRITTEN)))
		return 0;
	e->dev = key.dev;
	e->ino = key.ino;
	submit(e);
	return 0;
}

/* A process's mm counter moved (every fault that maps a page, every
 * unmap): with an alarm armed and reached, the daemon is told at once.
 * Only the process's own tasks are looked at (another's work on its mm,
 * an unmap by the OOM reaper, only lowers it or is seen at the next
 * sample). The counters read are the shared parts of per-CPU counters:
 * short by at most a batch per CPU. MM_FILEPAGES, MM_ANONPAGES and
 * MM_SHMEMPAGES are 0, 1 and 3 since Linux 4.5 (an enum without a name:
 * no relocation for it). */
/* An mm's counters: atomic longs in one struct until 6.1, per-CPU
 * counters from 6.2 (CO-RE flavours, as the folio's above). */
struct mm_rss_stat___atomic {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___rss_atomic {
	struct mm_rss_stat___atomic rss_stat;
} __attribute__((preserve_access_index));

struct percpu_counter___shared {
	s64 count;
} __attribute__((preserve_access_index));

struct mm_struct___rss_percpu {
	struct percpu_counter___shared rss_stat[4];
} __attribute__((preserve_access_index));

/* (I a constant: an index the relocation carries, with the kernel's
 * element size, not a run-time offset computed from this flavour's) */
#define MM_COUNTER(mm, I)                                                                     \
	(bpf_core_field_exists(struct mm_struct___rss_percpu, rss_stat) ?                     \
		 BPF_CORE_READ((struct mm_struct___rss_percpu *)(mm), rss_stat[I].count) :    \
		 BPF_CORE_READ((struct mm_struct___rss_atomic *)(mm), rss_stat.count[I].counter))

SEC("tp_btf/rss_stat")
int BPF_PROG(pcache_rss, struct mm_struct *mm, int member)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *at = bpf_map_lookup_elem(&alarms, &tgid);
	struct pcache_event *e;
	__s64 total;

	if (!at || !*at || bpf_get_current_task_btf()->mm != mm)
		return 0;
	total = MM_COUNTER(mm, 0) + MM_COUNTER(mm, 1) + MM_COUNTER(mm, 3);
	if (total < 0 || (__u64)total < *at)
		return 0;
	*at = 0;
	if (!(e = reserve(PCACHE_ALARM)))
		return 0;
	e->tgid = tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->index = (__u64)total;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pcache_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, real = child->real_parent->tgid;
	__u8 inherited = 2;
	struct pcache_event *e;

	if (ctgid != ptgid && bpf_map_lookup_elem(&tracked, &ptgid))
		bpf_map_update_elem(&tracked, &ctgid, &inherited, BPF_NOEXIST);
	/* a new process whose maker (parent here: the forking task) is not
	 * its real parent, as clone with CLONE_PARENT makes runc's init: the
	 * kernel put it in its maker's cgroups, the process events name the
	 * real parent */
	if (child->pid == child->tgid && real != ptgid && (e = reserve(PCACHE_MAKER))) {
		e->tgid = ctgid;
		e->ptgid = ptgid;
		e->index = real;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pcache_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (p->pid == p->tgid) {
		bpf_map_delete_elem(&tracked, &tgid);
		bpf_map_delete_elem(&alarms, &tgid);
	}
	return 0;
}
