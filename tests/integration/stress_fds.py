#!/usr/bin/env python3
"""stress_fds.py: the file-descriptor worker of t_stress.sh.

    stress_fds.py MNT END_MS SEED OUT GROUP...

Until END_MS (milliseconds of the epoch; at least 100 operations) it holds
up to 24 control files of the GROUPs (and the root) open across their
groups' rmdir, re-reads them with pread at offset 0, fstats and polls
them, writes through held write handles, lists the directories, and
registers usage-threshold and OOM events (cgroup.event_control) whose
eventfds it closes again later. Every outcome is counted as
"KIND RESULT COUNT" lines in OUT (RESULT: OK or the errno name), followed
by "#ops N" and "#timeouts N" (an operation that took 5 s or more).
t_stress.sh decides which results are allowed; a hung operation is ended
by the timeout that t_stress.sh wraps around this whole worker.
"""
import errno
import os
import random
import select
import sys
import time

mnt, end_ms, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
groups = [""] + sys.argv[5:]
rnd = random.Random(seed)
READ = ["memory.usage_in_bytes", "memory.stat", "memory.numa_stat", "tasks", "cgroup.procs",
        "memory.oom_control", "memory.limit_in_bytes", "memory.memsw.usage_in_bytes",
        "memory.kmem.usage_in_bytes", "memory.max_usage_in_bytes", "memory.failcnt",
        "memory.use_hierarchy", "memory.move_charge_at_immigrate", "memory.swappiness",
        "memory.high_watermark_in_bytes", "memory.low_watermark_in_bytes"]
WRITE = [("memory.soft_limit_in_bytes", b"64M"), ("memory.max_usage_in_bytes", b"0"),
         ("memory.failcnt", b"0"), ("memory.swappiness", b"30")]
res = {}
ops = 0
slow = 0
held = []      # (kind, fd, data): kind "r" or "w"
regs = []      # eventfds of registrations
deadline = time.monotonic() + (end_ms / 1000.0 - time.time())


def rec(kind, r):
    res[(kind, r)] = res.get((kind, r), 0) + 1


def timed(kind, fn):
    global ops, slow
    t0 = time.monotonic()
    r, v = "OK", None
    try:
        v = fn()
    except OSError as e:
        r = errno.errorcode.get(e.errno, "E%d" % e.errno)
    if time.monotonic() - t0 >= 5:
        slow += 1
        r = "TIMEOUT"
    ops += 1
    rec(kind, r)
    return r, v


def gdir(g):
    return mnt + ("/" + g if g else "")


def close_fd(fd):
    try:
        os.close(fd)
    except OSError as e:
        rec("py_close", errno.errorcode.get(e.errno, "E%d" % e.errno))


def hold():
    if len(held) >= 24:
        close_fd(held.pop(rnd.randrange(len(held)))[1])
    g = rnd.choice(groups)
    if rnd.random() < 0.3 and g:
        name, data = rnd.choice(WRITE)
        r, fd = timed("py_open", lambda: os.open(gdir(g) + "/" + name, os.O_WRONLY))
        if r == "OK":
            held.append(("w", fd, data))
    else:
        name = rnd.choice(READ)
        r, fd = timed("py_open", lambda: os.open(gdir(g) + "/" + name, os.O_RDONLY))
        if r == "OK":
            held.append(("r", fd, None))


def use_held():
    if not held:
        return
    kind, fd, data = rnd.choice(held)
    what = rnd.random()
    if what < 0.15:
        timed("py_fstat", lambda: os.fstat(fd))
    elif what < 0.25:
        def p():
            po = select.poll()
            po.register(fd, select.POLLIN | select.POLLPRI)
            return po.poll(0)
        timed("py_poll", p)
    elif kind == "r":
        timed("py_pread", lambda: os.pread(fd, 65536, 0))
    else:
        timed("py_write", lambda: os.write(fd, data))


def listdir():
    timed("py_listdir", lambda: os.listdir(gdir(rnd.choice(groups))))


def register():
    if len(regs) >= 8:
        close_fd(regs.pop(0))
    g = rnd.choice(groups)
    ctl_name, args = rnd.choice([("memory.usage_in_bytes", " %dM" % rnd.choice([1, 4, 16])),
                                 ("memory.memsw.usage_in_bytes", " 8M"),
                                 ("memory.oom_control", "")])
    fds = []
    try:
        r, cfd = timed("py_open", lambda: os.open(gdir(g) + "/" + ctl_name, os.O_RDONLY))
        if r != "OK":
            return
        fds.append(cfd)
        r, ctl = timed("py_open", lambda: os.open(gdir(g) + "/cgroup.event_control", os.O_WRONLY))
        if r != "OK":
            return
        fds.append(ctl)
        efd = os.eventfd(0)
        line = ("%d %d%s" % (efd, cfd, args)).encode()
        r, _ = timed("py_event", lambda: os.write(ctl, line))
        if r == "OK":
            regs.append(efd)
        else:
            os.close(efd)
    finally:
        for fd in fds:
            close_fd(fd)


def drain():
    """Read the counters of the eventfds that fired (non-blocking)."""
    for efd in regs:
        try:
            if select.select([efd], [], [], 0)[0]:
                os.eventfd_read(efd)
        except OSError:
            pass


actions = [(0.25, hold), (0.45, use_held), (0.12, listdir), (0.12, register), (0.06, drain)]
n = 0
# the first 100 whatever the clock says (a loaded machine may start this
# worker late), then until the deadline, at most 200000
while n < 100 or (time.monotonic() < deadline and n < 200000):
    n += 1
    x, acc = rnd.random(), 0.0
    for w, fn in actions:
        acc += w
        if x < acc:
            fn()
            break
for _, fd, _ in held:
    close_fd(fd)
for efd in regs:
    close_fd(efd)
with open(out, "w") as f:
    for (kind, r), c in sorted(res.items()):
        f.write("%s %s %d\n" % (kind, r, c))
    f.write("#ops %d\n#timeouts %d\n" % (ops, slow))
