/* cgfs.c: the constructor and destructor of struct cgfs (cgfs.h), the
 * state one mount shares between its FUSE operations and the file
 * surface. Owns the struct's locks only: the engine, the registries and
 * the threads are made and ended by their owners (the daemon, a test). */
#include <pthread.h>

#include "fs/cgfs.h"

void cgfs_init(struct cgfs *fs)
{
	pthread_mutex_init(&fs->meta_lock, NULL);
	pthread_mutex_init(&fs->agent_lock, NULL);
	pthread_mutex_init(&fs->attach_lock, NULL);
	pthread_mutex_init(&fs->fh_lock, NULL);
}

void cgfs_destroy(struct cgfs *fs)
{
	pthread_mutex_destroy(&fs->meta_lock);
	pthread_mutex_destroy(&fs->agent_lock);
	pthread_mutex_destroy(&fs->attach_lock);
	pthread_mutex_destroy(&fs->fh_lock);
}
