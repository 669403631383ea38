/* release.c: release_agent and the release-notification worker. The agent
 * is spawned as the daemon's user (root) with HOME=/ and the kernel's PATH,
 * one at a time, from a worker thread; callers only queue. Never blocks the
 * caller on the agent and never runs it with an engine lock held. */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fs/release.h"

struct release_item {
	char *path;
	struct release_item *next;
};

struct release_runner {
	struct cgfs *fs;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct release_item *head, **tail;
	bool stop;
	pthread_t thread;
};

int release_agent_read(struct cgfs_req *r, int unused, struct cgfs_out *o)
{
	pthread_mutex_lock(&r->fs->agent_lock);
	cgfs_printf(o, "%s\n", r->fs->release_agent);
	pthread_mutex_unlock(&r->fs->agent_lock);
	return 0;
}

int release_agent_write(struct cgfs_req *r, int unused, const struct gram_value *v)
{
	/* The opener's capabilities count (§3.19), recorded at open. */
	if (prof_has(r->fs->prof, PF_AGENT_NEEDS_CAP) && !r->fh->agent_cap)
		return -EPERM;
	pthread_mutex_lock(&r->fs->agent_lock);
	strcpy(r->fs->release_agent, v->str);   /* both are 4096 bytes */
	pthread_mutex_unlock(&r->fs->agent_lock);
	return 0;
}

static void release_run(struct release_runner *rr, const char *path)
{
	char agent[sizeof(rr->fs->release_agent)];
	char *argv[3], *envp[] = { "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL };
	pid_t pid;

	pthread_mutex_lock(&rr->fs->agent_lock);
	strcpy(agent, rr->fs->release_agent);
	pthread_mutex_unlock(&rr->fs->agent_lock);
	if (!agent[0])
		return;
	argv[0] = agent;
	argv[1] = (char *)path;
	argv[2] = NULL;
	if (posix_spawn(&pid, agent, NULL, NULL, argv, envp) == 0)
		waitpid(pid, NULL, 0);
}

static void *release_main(void *arg)
{
	struct release_runner *rr = arg;

	pthread_mutex_lock(&rr->lock);
	for (;;) {
		struct release_item *it;

		while (!rr->head && !rr->stop)
			pthread_cond_wait(&rr->cond, &rr->lock);
		if (!rr->head)
			break;
		it = rr->head;
		rr->head = it->next;
		if (!rr->head)
			rr->tail = &rr->head;
		pthread_mutex_unlock(&rr->lock);
		release_run(rr, it->path);
		free(it->path);
		free(it);
		pthread_mutex_lock(&rr->lock);
	}
	pthread_mutex_unlock(&rr->lock);
	return NULL;
}

void release_notify(const char *path, void *arg)
{
	struct cgfs *fs = arg;
	struct release_runner *rr = fs->rel;
	struct release_item *it = NULL;

	if (!rr || !(it = calloc(1, sizeof(*it))) || !(it->path = strdup(path))) {
		free(it);
		return;
	}
	pthread_mutex_lock(&rr->lock);
	*rr->tail = it;
	rr->tail = &it->next;
	pthread_cond_signal(&rr->cond);
	pthread_mutex_unlock(&rr->lock);
}

struct release_runner *release_new(struct cgfs *fs)
{
	struct release_runner *rr = calloc(1, sizeof(*rr));

	if (!rr)
		return NULL;
	rr->fs = fs;
	rr->tail = &rr->head;
	pthread_mutex_init(&rr->lock, NULL);
	pthread_cond_init(&rr->cond, NULL);
	if (pthread_create(&rr->thread, NULL, release_main, rr)) {
		free(rr);
		return NULL;
	}
	return rr;
}

void release_free(struct release_runner *rr)
{
	if (!rr)
		return;
	pthread_mutex_lock(&rr->lock);
	rr->stop = true;
	pthread_cond_signal(&rr->cond);
	pthread_mutex_unlock(&rr->lock);
	pthread_join(rr->thread, NULL);
	while (rr->head) {
		struct release_item *it = rr->head;

		rr->head = it->next;
		free(it->path);
		free(it);
	}
	pthread_mutex_destroy(&rr->lock);
	pthread_cond_destroy(&rr->cond);
	free(rr);
}
