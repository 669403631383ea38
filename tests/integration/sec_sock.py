#!/usr/bin/env python3
"""sec_sock.py: speaks the simulated-task protocol by hand, the way a
hostile or careless client would, for t_security.sh.

  sec_sock.py MNT hog-hello-hog GROUP MIB1 MIB2
                                       allocate MIB1 MiB of real memory (and
                                       read GROUP's usage), connect, say hello
                                       (print the answer), then allocate MIB2
                                       MiB more and sleep
  sec_sock.py MNT connect-join-hog GROUP MIB
                                       connect and say hello in the root, join
                                       GROUP through the mount, then allocate
                                       MIB MiB of real memory and sleep
  sec_sock.py MNT conns N              N processes connect at once and print
                                       their answers
  sec_sock.py MNT files N              declare N named files, print the count
                                       that succeeded and the first failure
  sec_sock.py MNT orphan               connect, fork; the parent exits; the
                                       child then declares memory on the
                                       inherited socket and prints the answer
                                       ("EOF" when the daemon closed it)
  sec_sock.py MNT declare SIZE         print the answer to 'alloc anon x SIZE'
"""
import os
import select
import socket
import sys
import time


def sock_path(mnt):
    """the mount's socket, as its status attribute names it"""
    for line in os.getxattr(mnt, "user.memcgfs.status").decode().splitlines():
        key, _, value = line.partition(" ")
        if key == "socket":
            return value
    raise OSError("no socket line in %s's status" % mnt)


def connect(mnt):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path(mnt))
    return s


def ask(s, line):
    try:
        s.sendall((line + "\n").encode())
    except OSError:
        pass                          # a refusal may still be there to read
    buf = b""
    while not buf.endswith(b"\n"):
        try:
            c = s.recv(1)
        except OSError:
            c = b""
        if not c:
            return "EOF" if not buf else buf.decode()
        buf += c
    return buf.decode().strip()


def hog(mib):
    b = bytearray(mib << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    print("ready", flush=True)
    time.sleep(60)


def main():
    mnt, mode = sys.argv[1], sys.argv[2]
    if mode == "hog-hello-hog":
        # a process with real memory in its group (a read of the group's
        # usage makes the daemon sample it) tries to opt out, then grows
        group, first = sys.argv[3], int(sys.argv[4])
        b = bytearray(first << 20)
        for i in range(0, len(b), 4096):
            b[i] = 1
        with open(os.path.join(mnt, group.lstrip("/"), "memory.usage_in_bytes")) as f:
            f.read()
        s = connect(mnt)
        print(ask(s, "hello"), flush=True)
        hog(int(sys.argv[5]))
    elif mode == "connect-join-hog":
        s = connect(mnt)
        print(ask(s, "hello"), flush=True)
        with open(os.path.join(mnt, sys.argv[3].lstrip("/"), "cgroup.procs"), "w") as f:
            f.write("0")
        hog(int(sys.argv[4]))
    elif mode == "conns":
        # one process a connection (a process is one task), all held open
        # until every one has its answer: no connection closes early
        n = int(sys.argv[3])
        done_r, done_w = os.pipe()
        go_r, go_w = os.pipe()
        kids = []
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                os.close(go_w)
                s = connect(mnt)
                # one write(2) a line: the children share the pipe
                os.write(1, (ask(s, "hello") + "\n").encode())
                os.write(done_w, b"x")
                os.read(go_r, 1)     # EOF: the parent has all the answers
                os._exit(0)
            kids.append(pid)
        got = 0
        while got < n:
            got += len(os.read(done_r, n))
        os.close(go_w)
        for pid in kids:
            os.waitpid(pid, 0)
    elif mode == "files":
        s = connect(mnt)
        ok, first = 0, ""
        for i in range(int(sys.argv[3])):
            a = ask(s, "file f%d 4K" % i)
            if a == "ok":
                ok += 1
            elif not first:
                first = a
        print(ok, first)
    elif mode == "orphan":
        s = connect(mnt)
        ask(s, "hello")
        parent = os.pidfd_open(os.getpid())
        if os.fork() == 0:
            # the parent's pidfd turns readable once it has exited, as the
            # daemon's does: only then is the socket an orphan's
            select.select([parent], [], [])
            print(ask(s, "alloc anon x 1M"), flush=True)
            os._exit(0)
        os._exit(0)
    elif mode == "declare":
        s = connect(mnt)
        print(ask(s, "alloc anon x " + sys.argv[3]))


main()
