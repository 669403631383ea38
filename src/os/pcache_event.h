/* pcache_event.h: what the page-cache tracer (bpf/pcache.bpf.c) tells the
 * daemon through its ring buffer, one record per folio; shared by the BPF
 * program and os/pcache.c, so it holds plain fixed-size fields only. */
#ifndef MEMCGFS_PCACHE_EVENT_H
#define MEMCGFS_PCACHE_EVENT_H

enum pcache_op {
	PCACHE_ADD = 1,      /* a tracked process brought the folio into the
			      * cache (a tmpfs folio: onto the LRU), by a
			      * system call or (fault) by a page fault */
	PCACHE_DEL,          /* a folio of an inode reported left the cache */
	PCACHE_DIRTY,        /* ... was dirtied (it counts as dirty page cache) */
	PCACHE_WRITTEN,      /* the inode's writeback ended: its pages are clean
			      * (index and nr 0) */
	PCACHE_ALARM,        /* process tgid's resident pages (anon, file and
			      * shmem, index) reached what the daemon armed
			      * (pcache_alarm); disarmed until armed again */
	PCACHE_MAKER,        /* new process tgid was made by process ptgid,
			      * which is not its real parent (index): clone
			      * with CLONE_PARENT (any process, not only the
			      * tracked) */
};

/* Counters the program keeps (an array map): events it could not send. */
enum pcache_lost {
	PCACHE_LOST_RING,    /* the ring buffer was full */
	PCACHE_LOST_NR,
};

struct pcache_event {
	__u32 op;            /* enum pcache_op */
	__u32 tgid;          /* PCACHE_ADD: the process that added it ... */
	__u32 ptgid;         /* ... its parent's */
	__u32 cpu;           /* ... the CPU it ran on */
	__u32 dev;           /* the file's device, the kernel's encoding */
	__u32 nr;            /* pages in the folio */
	__u32 shmem;         /* PCACHE_ADD: a folio of tmpfs (memfd, SysV shm) */
	__u32 bh;            /* PCACHE_DIRTY: buffer heads attached to it */
	__u32 fault;         /* PCACHE_ADD: by a page fault (of a file mapping) */
	__u32 pad;
	__u64 ino;
	__u64 index;         /* the folio's first page in the file */
};

#endif
