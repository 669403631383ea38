/* mirror_smaps.c: what a real process has mapped, from /proc/PID/smaps: a
 * pure parser of its text, the tmpfs-like mounts whose files count as
 * shmem, and one read of a process into a sample. Never charges, never
 * signals. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "source/mirror_int.h"

static long mirror_kb_pages(const char *p)
{
	return strtol(p, NULL, 10) / (PC_PAGE_SIZE / 1024);
}

long mirror_parse_smaps(const char *text, bool (*is_tmpfs)(unsigned long dev, void *arg),
			void *arg, void (*fn)(const struct mirror_vma *v, void *arg), void *fn_arg)
{
	struct mirror_vma cur = { 0 };
	bool have = false;
	long count = 0;

	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pathpos = 0;

		if ((isdigit((unsigned char)*line) || (*line >= 'a' && *line <= 'f')) &&
		    sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &pathpos) == 7) {
			const char *path = line + pathpos;

			if (have) {
				fn(&cur, fn_arg);
				count++;
			}
			cur = (struct mirror_vma){ .start = start, .end = end,
						   .off = off / (unsigned long)PC_PAGE_SIZE,
						   .dev = makedev(maj, min), .ino = ino };
			/* (a SysV segment's inode number is its shmid, which
			 * may be 0: the first segment made on a machine) */
			cur.shmem = !strncmp(path, "/SYSV", 5) ||
				    (ino && ((maj == 0 && min == 1) || !strncmp(path, "/memfd:", 7) ||
					     !strncmp(path, "/dev/zero", 9) ||
					     (is_tmpfs && is_tmpfs(cur.dev, arg))));
			have = true;
		} else if (have && !strncmp(line, "Rss:", 4)) {
			cur.rss = mirror_kb_pages(line + 4);
		} else if (have && !strncmp(line, "Anonymous:", 10)) {
			cur.anon = mirror_kb_pages(line + 10);
		} else if (have && !strncmp(line, "Locked:", 7)) {
			cur.locked = mirror_kb_pages(line + 7);
		} else if (have && !strncmp(line, "Shared_Clean:", 13)) {
			cur.shared += mirror_kb_pages(line + 13);
		} else if (have && !strncmp(line, "Shared_Dirty:", 13)) {
			cur.dirty += mirror_kb_pages(line + 13);
			cur.shared += mirror_kb_pages(line + 13);
		} else if (have && !strncmp(line, "Private_Dirty:", 14)) {
			cur.dirty += mirror_kb_pages(line + 14);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (have) {
		fn(&cur, fn_arg);
		count++;
	}
	return count;
}

void mirror_load_tmpfs(struct mirror *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	m->ntmpfs = 0;
	m->tmpfs_loaded = mirror_now(m);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && m->ntmpfs < 64) {
		unsigned maj, min;
		char *sep = strstr(line, " - ");
		char type[32];

		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || !sep ||
		    sscanf(sep + 3, "%31s", type) != 1)
			continue;
		if (!strcmp(type, "tmpfs") || !strcmp(type, "devtmpfs") || !strcmp(type, "ramfs"))
			m->tmpfs[m->ntmpfs++] = makedev(maj, min);
	}
	fclose(f);
}

static bool mirror_is_tmpfs(unsigned long dev, void *arg)
{
	struct mirror *m = arg;
	bool found = false;

	if (major(dev) != 0)
		return false;
	pthread_mutex_lock(&m->files_lock);
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (unsigned i = 0; i < m->ntmpfs && !found; i++)
			found = m->tmpfs[i] == dev;
		if (!found && pass == 0 && mirror_now(m) - m->tmpfs_loaded > 1000000000ull)
			mirror_load_tmpfs(m);    /* a mount we have not seen yet? */
		else
			break;
	}
	pthread_mutex_unlock(&m->files_lock);
	return found;
}

static void mirror_sample_vma(const struct mirror_vma *v, void *arg)
{
	struct mirror_sample *s = arg;
	long rest = v->rss - v->anon;
	long locked = v->locked < v->anon ? v->locked : v->anon;

	/* mlocked anon is unevictable: a ledger of its own */
	s->anon += v->anon - locked;
	s->locked += locked;
	/* anon pages another process maps too (a fork's, before either
	 * wrote): the frames are looked at (mirror_shared.c) */
	/* (a sparse mapping, mostly unbacked, such as a sanitizer's shadow of
	 * terabytes, is not walked: its pagemap is 8 bytes a virtual page,
	 * and its shared pages count in every process that has them) */
	if (!v->shmem && v->anon > 0 && v->shared > 0 &&
	    (v->end - v->start) / PC_PAGE_SIZE <= MIRROR_COW_SPARSE * (unsigned long)v->rss + 1024) {
		if (s->ncow == s->capcow) {
			size_t cap = s->capcow ? 2 * s->capcow : 8;
			struct mirror_range *nr = realloc(s->cow, cap * sizeof(*nr));

			if (nr) {
				s->cow = nr;
				s->capcow = cap;
			}
		}
		if (s->ncow < s->capcow)
			s->cow[s->ncow++] = (struct mirror_range){ v->start, v->end };
	}
	if ((!v->ino && !v->shmem) || rest <= 0)
		return;                   /* [vdso] and the like are not charged */
	if (v->shmem) {
		/* tmpfs pages the kernel's events charged already (written
		 * before they were mapped) are not charged twice */
		rest -= mirror_pcache_held(s->m, v->dev, v->ino, v->off,
					   (v->end - v->start) / PC_PAGE_SIZE);
		s->shmem += rest > 0 ? rest : 0;
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		struct mirror_vma *nv = realloc(s->files, cap * sizeof(*nv));

		if (!nv)
			return;
		s->files = nv;
		s->cap = cap;
	}
	s->files[s->n] = *v;
	s->files[s->n].rss = rest;
	s->files[s->n].dirty = v->dirty > v->anon ? v->dirty - v->anon : 0;
	s->n++;
}

/* -ESRCH when the process is gone (a zombie has no mappings). */
int mirror_read(struct mirror *m, pid_t tgid, struct mirror_sample *s)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	s->anon = s->shmem = s->locked = 0;
	s->n = s->ncow = 0;
	s->m = m;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -ESRCH;
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			char *nb = realloc(buf, cap + 262144);

			if (!nb) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap += 262144;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf || len == 0) {
		free(buf);
		return -ESRCH;
	}
	buf[len] = '\0';
	mirror_parse_smaps(buf, mirror_is_tmpfs, m, mirror_sample_vma, s);
	free(buf);
	return 0;
}
