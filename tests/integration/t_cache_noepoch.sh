#!/bin/bash
# t_cache_noepoch.sh: t_cache.sh's tests with the daemon taking the way of
# a kernel before 6.16 (Debian 12's 6.1 and 6.12), which has no
# FUSE_NOTIFY_INC_EPOCH: the kernel keeps names and attributes all the
# same, and after a worker's restart the new worker drops the names the
# dead one left stale, from the names every worker records for the next
# (docs/design.md, Kernel caches).
MEMCGFS_TEST_NO_EPOCH=1 exec bash "$(dirname "$0")/t_cache.sh"
