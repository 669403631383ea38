#!/bin/bash
# g_scan.sh (in a guest of the host matrix): the page cache of real
# processes without the kernel's events (-o page_cache=scan, what a daemon
# that may not load eBPF does), against the guest kernel as g_reference.sh
# compares it: a read(2) of a file kept open, a write(2) kept open, a
# memfd. On 6.12 the scan asks cachestat(2); on 6.1, which has none, it
# maps each file and asks mincore(2), which cannot tell dirty pages (dirty
# is not compared there). What the scan cannot follow is not compared
# either: a file's pages once its last holder closed it or exited (the
# kernel keeps them charged; docs/files.md).
IFS=. read -r kmaj kmin _ <<< "$(uname -r)"
G_REFERENCE_SOURCE=cachestat
(( kmaj < 6 || (kmaj == 6 && kmin < 5) )) && G_REFERENCE_SOURCE=mincore
G_REFERENCE_SKIP="exit:the scan lets a closed file's pages go"
[ $G_REFERENCE_SOURCE = mincore ] && G_REFERENCE_SKIP="$G_REFERENCE_SKIP;dirty:mincore(2) cannot tell dirty pages"
G_REFERENCE_OPTS=page_cache=scan
G_REFERENCE_ONLY="read write memfd"
. "$(dirname "$0")/g_reference.sh"
