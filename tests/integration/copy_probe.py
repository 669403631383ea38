#!/usr/bin/env python3
"""copy_probe.py FILE...: for each FILE, what sendfile(2) and splice(2)
into a pipe give, against read(2), as lines "NAME: ok" or "NAME: ...what
differed". Then, on the longest FILE, the cases a supervisor answering
those calls must get right: an offset pointer (the file's own offset does
not move), a full blocking pipe (the call waits until the reader drains
it, then passes the text), a full non-blocking pipe (EAGAIN, nothing of the
file taken), a pipe with no reader (EPIPE), and outputs it does not
write for the caller (a socket, a file of /proc, a regular file: EINVAL,
on which callers read instead). Used by t_run.sh inside
memcgfs-run, where these calls are answered for the view's files."""
import errno
import fcntl
import os
import select
import signal
import socket
import sys
import threading


def read_all(path):
    with open(path, 'rb', buffering=0) as f:
        return f.read()


def drain(r):
    out = b''
    while True:
        try:
            b = os.read(r, 65536)
        except BlockingIOError:
            return out
        if not b:
            return out
        out += b


def via(kind, path):
    """The text of PATH through sendfile or splice into a pipe."""
    fd = os.open(path, os.O_RDONLY)
    r, w = os.pipe()
    fcntl.fcntl(r, fcntl.F_SETFL, os.O_NONBLOCK)
    got = b''
    try:
        while True:
            n = (os.sendfile(w, fd, None, 65536) if kind == 'sendfile'
                 else os.splice(fd, w, 65536))
            if n == 0:
                break
            got += drain(r)
    finally:
        os.close(fd)
        os.close(w)
    got += drain(r)
    os.close(r)
    return got


def check(name, cond, what):
    print(f"{name}: {'ok' if cond else what}")


def full_pipe():
    """A pipe whose write end is full; the bytes it holds."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
    filler = 0
    try:
        while True:
            filler += os.write(w, b'x' * 4096)
    except BlockingIOError:
        pass
    return r, w, filler


def sendfile_errno(out, fd, count=65536):
    try:
        os.sendfile(out, fd, None, count)
        return 0
    except OSError as e:
        return e.errno


def special(path):
    want = read_all(path)
    fd = os.open(path, os.O_RDONLY)
    # an offset pointer: the text from there, the file's offset unmoved
    r, w = os.pipe()
    n = os.sendfile(w, fd, 3, 65536)
    got = os.read(r, 65536)
    rest = os.read(fd, 65536)
    check('offset', got == want[3:] and n == len(want) - 3 and rest == want,
          f"got {got[:40]!r} ({n}), then read {rest[:40]!r}")
    for x in (r, w):
        os.close(x)
    # a full blocking pipe: the call waits for the reader
    os.lseek(fd, 0, os.SEEK_SET)
    r, w, filler = full_pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, 0)
    res = {}
    t = threading.Thread(target=lambda: res.setdefault('n', os.sendfile(w, fd, None, 65536)))
    t.start()
    t.join(0.5)
    waited = t.is_alive()
    got = b''
    while len(got) < filler + len(want) and select.select([r], [], [], 5)[0]:
        got += os.read(r, 65536)
    t.join(10)
    check('full pipe', waited and res.get('n') == len(want) and got[filler:] == want,
          f"waited {waited}, returned {res.get('n')}, text {got[filler:filler + 40]!r}")
    for x in (r, w):
        os.close(x)
    # a full non-blocking pipe: EAGAIN, and the file's text all still there
    os.lseek(fd, 0, os.SEEK_SET)
    r, w, _ = full_pipe()
    err = sendfile_errno(w, fd)
    rest = os.read(fd, 65536)
    check('full non-blocking pipe', err == errno.EAGAIN and rest == want,
          f"errno {err}, then read {rest[:40]!r}")
    for x in (r, w):
        os.close(x)
    # no reader: EPIPE (Python ignores SIGPIPE)
    os.lseek(fd, 0, os.SEEK_SET)
    r, w = os.pipe()
    os.close(r)
    err = sendfile_errno(w, fd)
    check('no reader', err == errno.EPIPE, f"errno {err}")
    os.close(w)
    # outputs the supervisor may not write for the caller: a socket (it
    # would be named the sender), a file of /proc (checked as written):
    # EINVAL, as from a file the kernel cannot splice from, and nothing
    # written
    a, b = socket.socketpair()
    err = sendfile_errno(a.fileno(), fd)
    check('socket', err == errno.EINVAL, f"errno {err}")
    a.close()
    b.close()
    before = open('/proc/self/comm').read()
    c = os.open('/proc/self/comm', os.O_WRONLY)
    err = sendfile_errno(c, fd, 15)
    os.close(c)
    after = open('/proc/self/comm').read()
    check('/proc file', err == errno.EINVAL and after == before,
          f"errno {err}, comm {before!r} -> {after!r}")
    # a regular file (its limits and quotas are the writer's): EINVAL,
    # nothing written, the text still to be read
    with open(os.environ.get('TMPDIR', '/tmp') + f'/copy_probe.{os.getpid()}', 'wb+') as f:
        os.unlink(f.name)
        err = sendfile_errno(f.fileno(), fd)
        size = os.fstat(f.fileno()).st_size
    rest = os.read(fd, 65536)
    check('regular file', err == errno.EINVAL and size == 0 and rest == want,
          f"errno {err}, {size} bytes written, then read {rest[:40]!r}")
    os.close(fd)


def main():
    signal.alarm(60)   # (a call that never returns fails the probe)
    for path in sys.argv[1:]:
        want = read_all(path)
        for kind in ('sendfile', 'splice'):
            got = via(kind, path)
            check(f"{kind} {path}", got == want,
                  f"{len(got)} bytes {got[:40]!r}, read(2) gave {len(want)} {want[:40]!r}")
    special(max(sys.argv[1:], key=lambda p: len(read_all(p))))


main()
