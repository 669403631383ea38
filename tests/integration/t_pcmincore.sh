#!/bin/bash
# t_pcmincore.sh: t_pcscan.sh's tests with -o page_cache=mincore, the scan
# of open files as it runs on a kernel without cachestat(2) (Debian 12's
# 6.1): residency from mincore(2) over a read-only mapping of each file
# (a write-only one reopened for reading by the daemon), dirty unknown.
PCSCAN_WAY=mincore exec bash "$(dirname "$0")/t_pcscan.sh"
