#!/usr/bin/env python3
# crash_client.py MODE MNT STOPFILE: one sequential client of t_crash.sh,
# looping until STOPFILE exists; it makes STOPFILE.up.PID after its first
# successful call, and STOPFILE.after.PID after its first one once
# STOPFILE.restarted exists. MODE: read (open+read+close the root's
# memory.stat), stat (the root's usage file), write (the root's
# memory.swappiness), mkdir (mkdir then rmdir of a fresh child). Prints one
# line: MODE OKS LAST_OK ERRORS, ERRORS as op:ERRNO=count,... or "-".
import errno
import os
import sys

mode, mnt, stop = sys.argv[1:4]
errs = {}
oks = 0
last_ok = False
n = 0
marked = set()


def call(op, fn):
    global oks, last_ok
    try:
        fn()
    except OSError as e:
        key = "%s:%s" % (op, errno.errorcode.get(e.errno, str(e.errno)))
        errs[key] = errs.get(key, 0) + 1
        last_ok = False
        return False
    oks += 1
    last_ok = True
    mark("up")
    if os.path.exists(stop + ".restarted"):
        mark("after")
    return True


def mark(what):
    path = "%s.%s.%d" % (stop, what, os.getpid())
    if path not in marked:
        open(path, "w").close()
        marked.add(path)


def read_stat():
    with open(mnt + "/memory.stat", "rb") as f:
        f.read()


def write_swappiness():
    fd = os.open(mnt + "/memory.swappiness", os.O_WRONLY)
    try:
        os.write(fd, b"60")
    finally:
        os.close(fd)


while not os.path.exists(stop):
    n += 1
    if mode == "read":
        call("read", read_stat)
    elif mode == "stat":
        call("stat", lambda: os.stat(mnt + "/memory.usage_in_bytes"))
    elif mode == "write":
        call("write", write_swappiness)
    elif mode == "mkdir":
        d = "%s/c.%d.%d" % (mnt, os.getpid(), n)
        if call("mkdir", lambda: os.mkdir(d)):
            call("rmdir", lambda: os.rmdir(d))
print(mode, oks, "yes" if last_ok else "no",
      ",".join("%s=%d" % kv for kv in sorted(errs.items())) or "-")
