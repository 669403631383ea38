/* memhog: a tiny real process for the mirroring tests. It allocates and
 * touches anon memory (at a given rate), maps and reads a file, runs extra
 * threads, prints its progress ("anon N" per MiB, then "ready") to stdout,
 * and then waits until a signal ends it.
 *
 *   memhog [-a MIB] [-r MIB_PER_S] [-t THREADS] [-f FILE] [-F] [-m MIB [-p]]
 *          [-s MIB] [-l MIB] [-R FILE [-K]] [-W FILE -w MIB] [-M MIB]
 *     -a  anon MiB to allocate and touch
 *     -s  a SysV shared memory segment of MIB, attached, marked for
 *         removal at its last detach, and every page written
 *     -l  anon MiB mlocked (and so faulted in)
 *     -c  with -a: fork a child that writes the first MIB of the anon
 *         memory (copy-on-write: the rest stays shared), then print
 *         "cow MIB PID" (the child's, which dies with its parent)
 *     -r  pace the allocation (default: as fast as it can)
 *     -t  threads in all (the extra ones just wait)
 *     -f  map FILE shared and read every page of it
 *     -F  with -f: read the file again and again (a hot working set)
 *     -R  read FILE with read(2), start to end (page cache, no mapping)
 *     -K  with -R: keep FILE open afterwards (until the signal)
 *     -W  write -w MIB into FILE (made or truncated) with write(2), no
 *         fsync: dirty page cache
 *     -M  a memfd of MIB written with write(2) and kept open, never mapped
 *     -m  on each SIGUSR1, allocate and touch MIB more in a mapping of
 *         its own, then print "more N" (N mappings so made); on SIGUSR2
 *         unmap the newest of them, then print "less N"
 *     -p  with -m: PAGES (of 4 KiB) instead of MIB
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void *memhog_idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A mapping of mib MiB, every page touched; NULL when it cannot be had. */
static char *memhog_anon(size_t bytes)
{
	char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (a == MAP_FAILED)
		return NULL;
	for (size_t off = 0; off < bytes; off += 4096)
		a[off] = 1;
	return a;
}

/* read(2) all of file (left open with keep): its size, or -1. */
static long memhog_read(const char *file, bool keep)
{
	static char buf[1 << 16];
	int fd = open(file, O_RDONLY);
	long total = 0;
	ssize_t n;

	if (fd < 0) {
		perror(file);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (!keep)
		close(fd);
	return n < 0 ? -1 : total;
}

/* write(2) mib MiB into fd, left open (a memfd lives as long as it);
 * 0 or -1. */
static int memhog_write(int fd, long mib)
{
	static char buf[1 << 16];

	if (fd < 0) {
		perror("open");
		return -1;
	}
	memset(buf, 'w', sizeof(buf));
	for (long i = 0; i < (mib << 20) / (long)sizeof(buf); i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			return -1;
		}
	return 0;
}

static double memhog_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long anon_mib = 0, threads = 1, more_mib = 0, shm_mib = 0, lock_mib = 0, cow_mib = 0;
	char *anon = NULL;
	char *more[64];
	int nmore = 0, sig;
	bool more_pages = false;
	size_t more_bytes;
	sigset_t usr;
	double rate = 0;
	const char *file = NULL;
	bool again = false;
	const char *rfile = NULL, *wfile = NULL;
	bool keep = false;
	long write_mib = 32, memfd_mib = 0;
	volatile unsigned long sum = 0;
	char *fmap = NULL;
	size_t flen = 0;
	int c;

	while ((c = getopt(argc, argv, "a:r:t:f:Fm:ps:l:c:R:KW:w:M:")) != -1) {
		switch (c) {
		case 'a': anon_mib = atol(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 't': threads = atol(optarg); break;
		case 'f': file = optarg; break;
		case 'F': again = true; break;
		case 'm': more_mib = atol(optarg); break;
		case 'p': more_pages = true; break;
		case 's': shm_mib = atol(optarg); break;
		case 'l': lock_mib = atol(optarg); break;
		case 'c': cow_mib = atol(optarg); break;
		case 'R': rfile = optarg; break;
		case 'K': keep = true; break;
		case 'W': wfile = optarg; break;
		case 'w': write_mib = atol(optarg); break;
		case 'M': memfd_mib = atol(optarg); break;
		default:
			fprintf(stderr, "usage: memhog [-a MIB] [-r MIB_PER_S] [-t N] [-f FILE] [-F] [-m MIB [-p]] [-s MIB] [-l MIB] [-c MIB] [-R FILE [-K]] [-W FILE -w MIB] [-M MIB]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* SIGUSR1 and SIGUSR2 are taken by sigwait below, in order, none
	 * lost while it allocates (blocked in every thread) */
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	if (more_mib > 0)
		pthread_sigmask(SIG_BLOCK, &usr, NULL);
	for (long i = 1; i < threads; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, memhog_idle, NULL))
			return 1;
	}

	if (file) {
		int fd = open(file, O_RDONLY);
		struct stat st;

		if (fd < 0 || fstat(fd, &st)) {
			perror(file);
			return 1;
		}
		flen = (size_t)st.st_size;
		fmap = mmap(NULL, flen, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (fmap == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (size_t off = 0; off < flen; off += 4096)
			sum += (unsigned char)fmap[off];
		printf("file %zu\n", flen >> 20);
	}
	if (anon_mib > 0) {
		/* one reservation, touched a MiB at a time: one mapping */
		char *a = mmap(NULL, (size_t)anon_mib << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		double start = memhog_now();

		if (a == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		anon = a;
		for (long m = 0; m < anon_mib; m++) {
			for (size_t off = 0; off < (1u << 20); off += 4096)
				a[((size_t)m << 20) + off] = (char)(m + 1);
			printf("anon %ld\n", m + 1);
			if (rate > 0) {
				double due = start + (double)(m + 1) / rate, now = memhog_now();

				if (due > now)
					usleep((useconds_t)((due - now) * 1e6));
			}
		}
	}
	if (cow_mib > 0 && anon) {
		int pfd[2];
		char x = 0;
		pid_t child;

		if (pipe(pfd) || (child = fork()) < 0) {
			perror("fork");
			return 1;
		}
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (size_t off = 0; off < ((size_t)cow_mib << 20); off += 4096)
				anon[off] = 2;
			if (write(pfd[1], &x, 1) != 1)
				return 1;
			for (;;)
				pause();
		}
		if (read(pfd[0], &x, 1) != 1)
			return 1;
		printf("cow %ld %d\n", cow_mib, (int)child);
	}
	if (shm_mib > 0) {
		int id = shmget(IPC_PRIVATE, (size_t)shm_mib << 20, IPC_CREAT | 0600);
		char *a = id < 0 ? (char *)-1 : shmat(id, NULL, 0);

		if (a == (char *)-1) {
			perror("shm");
			return 1;
		}
		shmctl(id, IPC_RMID, NULL);   /* (goes with its last detach) */
		for (size_t off = 0; off < ((size_t)shm_mib << 20); off += 4096)
			a[off] = 1;
		printf("shm %ld\n", shm_mib);
	}
	if (lock_mib > 0) {
		char *a = mmap(NULL, (size_t)lock_mib << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (a == MAP_FAILED || mlock(a, (size_t)lock_mib << 20)) {
			perror("mlock");
			return 1;
		}
		printf("locked %ld\n", lock_mib);
	}
	if (rfile) {
		long n = memhog_read(rfile, keep);

		if (n < 0)
			return 1;
		printf("read %ld\n", n >> 20);
	}
	if (wfile && memhog_write(open(wfile, O_WRONLY | O_CREAT | O_TRUNC, 0600), write_mib))
		return 1;
	if (wfile)
		printf("wrote %ld\n", write_mib);
	if (memfd_mib > 0 && memhog_write(memfd_create("memhog", MFD_CLOEXEC), memfd_mib))
		return 1;
	if (memfd_mib > 0)
		printf("memfd %ld\n", memfd_mib);
	printf("ready\n");
	do {
		for (size_t off = 0; fmap && again && off < flen; off += 4096)
			sum += (unsigned char)fmap[off];
		if (again)
			usleep(20000);
	} while (again);
	(void)sum;
	more_bytes = (size_t)more_mib << (more_pages ? 12 : 20);
	while (more_mib > 0 && sigwait(&usr, &sig) == 0) {
		if (sig == SIGUSR1) {
			if (nmore == 64 || !(more[nmore] = memhog_anon(more_bytes))) {
				perror("more");
				return 1;
			}
			printf("more %d\n", ++nmore);
		} else {
			if (nmore > 0)
				munmap(more[--nmore], more_bytes);
			printf("less %d\n", nmore);
		}
	}
	for (;;)
		pause();
}
