#!/usr/bin/python3
# perm_probe.py: the worker of t_perm_matrix.sh. Run as one test user on
# one group directory, it tries every operation of the permission matrix on
# every entry of that directory and prints one line per cell:
#   FILE<TAB>OP<TAB>RESULT<TAB>CHANGED<TAB>DETAIL
# FILE is "." for the directory itself, RESULT is OK or the errno name, and
# CHANGED is 1 when the state visible through the mount (value, mode, owner,
# ACLs, xattr names, the directory listing, where the processes of the test
# are) differs between before the operation and after it (after undoing
# what an allowed operation did, where that can be undone). The probe
# decides nothing: t_perm_matrix.sh holds the expectations.
#   perm_probe.py probe          (settings in the environment, see below)
#   perm_probe.py snapshot DIR   (root: the metadata and settings of DIR)
# Every operation is the system call the matching tool makes (cat, echo >,
# : >, truncate -s 0, chmod, chown, setfattr, mkdir, rmdir, mv); setfacl
# and evctl are run as themselves. Standard library only.
import errno
import os
import subprocess
import sys

ACL_A = "system.posix_acl_access"
ACL_D = "system.posix_acl_default"
FILE_OPS = ("r", "w", "otrunc", "truncate", "chmod", "chown", "xuser", "xtrusted")
# Files whose value is a process list of the whole system (the root's):
# their state is where our processes are, not the text.
PROC_LISTS = ("tasks", "cgroup.procs")


def ename(e):
    # one name per value: ENOTSUP is EOPNOTSUPP on Linux, as in the contract
    if e.errno == errno.EOPNOTSUPP:
        return "EOPNOTSUPP"
    return errno.errorcode.get(e.errno, str(e.errno))


def attempt(fn):
    try:
        fn()
        return "OK"
    except OSError as e:
        return ename(e)


def getx(p, name):
    try:
        return os.getxattr(p, name, follow_symlinks=False)
    except OSError as e:
        return "E" + ename(e)


def read_value(p, dir_fd=None):
    """The whole content of file p (relative to dir_fd if given), or where
    it failed: "open:ERRNO" or "read:ERRNO"."""
    try:
        fd = os.open(p, os.O_RDONLY, dir_fd=dir_fd)
    except OSError as e:
        return "open:" + ename(e)
    try:
        out = b""
        while True:
            b = os.read(fd, 65536)
            if not b:
                return out
            out += b
    except OSError as e:
        return "read:" + ename(e)
    finally:
        os.close(fd)


def members(path):
    v = read_value(path)
    return set(v.decode().split()) if isinstance(v, bytes) else set()


class Probe:
    def __init__(self):
        env = os.environ
        self.mnt = env["PP_MNT"]
        self.dir = env["PP_DIR"]                  # absolute path of the group
        self.is_root = os.path.realpath(self.dir) == os.path.realpath(self.mnt)
        self.park = env["PP_PARK"]                # where the test's processes live
        self.me = env["PP_ACTOR"]
        self.own = env["PP_OWNPID"]               # the actor's own process
        self.fuser = env["PP_FUSERPID"]           # another test user's process
        self.froot = env["PP_FROOTPID"]           # root's process
        self.evctl = env["PP_EVCTL"]
        self.setfacl_uid = env["PP_SETFACL_UID"]
        self.values = {}
        with open(env["PP_VALUES"]) as f:         # FILE VALUE RESTORE
            for line in f:
                w = line.split()
                if len(w) == 3 and not w[0].startswith("#"):
                    self.values[w[0]] = (w[1], w[2])
        self.myuid = os.geteuid()
        self.out = []
        self.last = {}        # entry -> its state after the last cell on it
        self.dfd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)

    def path(self, f):
        return self.dir if f == "." else os.path.join(self.dir, f)

    def emit(self, f, op, res, changed, detail=""):
        self.out.append("%s\t%s\t%s\t%d\t%s" % (f, op, res, 1 if changed else 0, detail))

    # ---- state -------------------------------------------------------------
    def where(self):
        """Which of our processes are in the park, and in this directory."""
        park = members(os.path.join(self.park, "tasks"))
        here = members(os.path.join(self.dir, "tasks"))
        return tuple((p in park, p in here) for p in (self.own, self.fuser, self.froot))

    def listing(self):
        try:
            return tuple(sorted(os.listdir(self.dfd)))
        except OSError as e:
            return "E" + ename(e)

    def value(self, f):
        return read_value(f, dir_fd=self.dfd)

    def state(self, f):
        p = self.path(f)
        try:
            s = os.lstat(f, dir_fd=self.dfd) if f != "." else os.fstat(self.dfd)
            st = (s.st_mode, s.st_uid, s.st_gid)
        except OSError as e:
            st = ("E" + ename(e),)
        try:
            xl = tuple(sorted(os.listxattr(p, follow_symlinks=False)))
        except OSError as e:
            xl = ("E" + ename(e),)
        parts = {"stat": st, "acl": getx(p, ACL_A), "xattrs": xl}
        parts["listing"] = self.listing()
        if f == ".":
            parts["dacl"] = getx(p, ACL_D)
        elif f in PROC_LISTS:
            parts["where"] = self.where()
            if not self.is_root:
                parts["value"] = self.value(f)
        else:
            parts["value"] = self.value(f)
        return parts

    def before(self, f):
        return self.last[f] if f in self.last else self.state(f)

    def after(self, f):
        self.last[f] = self.state(f)
        return self.last[f]

    @staticmethod
    def diff(a, b):
        return ",".join(k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))

    def cell(self, f, op, action, undo=None, effect=None):
        """Run one operation: state before, the operation, the undo of an
        allowed one, state after. effect: what an allowed operation is
        meant to change, applied to the state before."""
        before = self.before(f)
        res = attempt(action)
        detail = ""
        if res == "OK" and effect:
            before = effect(dict(before))
        if res == "OK" and undo:
            u = attempt(undo)
            if u != "OK":
                detail = "undo:" + u
        d = self.diff(before, self.after(f))
        if d:
            detail = (detail + " " if detail else "") + "changed:" + d
        self.emit(f, op, res, bool(d), detail)
        return res

    # ---- operations ----------------------------------------------------------
    def write(self, p, data):
        fd = os.open(p, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def register(self, control, args):
        """cgroup.event_control registration as a client does it."""
        efd = os.eventfd(0, os.EFD_NONBLOCK)
        try:
            try:
                cfd = os.open(os.path.join(self.dir, control), os.O_RDONLY)
            except OSError as e:
                raise OSError(e.errno, "control file")
            try:
                self.write(os.path.join(self.dir, "cgroup.event_control"),
                           ("%d %d %s" % (efd, cfd, args)).encode())
            finally:
                os.close(cfd)
        finally:
            os.close(efd)

    def op_write(self, f):
        p = self.path(f)
        value, restore = self.values.get(f, ("0", "-"))
        orig = read_value(p)
        if value == "EVENT":
            return self.cell(f, "w", lambda: self.register("memory.usage_in_bytes", "1M"))
        if value == "PID":
            data = self.own.encode()
        elif value == "=":
            data = orig.strip() if isinstance(orig, bytes) else b"0"
        else:
            data = value.encode()
        undo = None
        if restore == "=" and isinstance(orig, bytes):
            undo = lambda: self.write(p, orig)
        elif restore not in ("-", "="):
            undo = lambda: self.write(p, restore.encode())
        effect = None
        if f.endswith(".max_usage_in_bytes"):
            # any write resets a watermark to the usage of the moment,
            # which a child's mkdir and rmdir move (§11.5: its structures
            # are the parent's kernel memory, charged through the stock)
            usage = f.replace(".max_usage_in_bytes", ".usage_in_bytes")

            def effect(st):
                st["value"] = self.value(usage)
                return st
        return self.cell(f, "w", lambda: self.write(p, data), undo, effect)

    def file_ops(self, f):
        p = self.path(f)
        if f != ".":
            self.cell(f, "r", lambda: self.read_all(p))
            if f not in PROC_LISTS:
                self.op_write(f)
            self.cell(f, "otrunc", lambda: os.close(os.open(p, os.O_WRONLY | os.O_TRUNC)))
            self.cell(f, "truncate", lambda: os.truncate(p, 0))
        else:
            self.cell(f, "r", lambda: os.listdir(p))
        try:
            s = os.lstat(p)
            mode, uid = s.st_mode & 0o7777, s.st_uid
        except OSError:
            mode, uid = 0o644, 0
        self.cell(f, "chmod", lambda: os.chmod(p, mode ^ 0o004), lambda: os.chmod(p, mode))
        target = 0 if uid == self.myuid else self.myuid
        self.cell(f, "chown", lambda: os.chown(p, target, -1), lambda: os.chown(p, uid, -1))
        self.cell(f, "xuser", lambda: os.setxattr(p, "user.perm_probe", b"1"),
                  lambda: os.removexattr(p, "user.perm_probe"))
        self.cell(f, "xtrusted", lambda: os.setxattr(p, "trusted.perm_probe", b"1"),
                  lambda: os.removexattr(p, "trusted.perm_probe"))

    @staticmethod
    def read_all(p):
        fd = os.open(p, os.O_RDONLY)
        try:
            while os.read(fd, 65536):
                pass
        finally:
            os.close(fd)

    def acl_batch(self, files):
        """One setfacl -m for every entry, as a user would run it; each
        entry's outcome from its error line, then the allowed ones undone."""
        before = {f: self.before(f) for f in files}
        raw = {f: (getx(self.path(f), ACL_A), os.lstat(self.path(f)).st_mode & 0o7777)
               for f in files}
        paths = [self.path(f) for f in files]
        r = subprocess.run(["setfacl", "-m", "u:%s:rwx" % self.setfacl_uid, "--"] + paths,
                           capture_output=True, text=True)
        msgs = {os.strerror(n): name for n, name in errno.errorcode.items()}
        msgs[os.strerror(errno.EOPNOTSUPP)] = "EOPNOTSUPP"
        errs = {}
        for line in r.stderr.splitlines():
            # setfacl: PATH: MESSAGE
            if line.startswith("setfacl: "):
                rest = line[len("setfacl: "):]
                path, _, msg = rest.rpartition(": ")
                errs[path] = msgs.get(msg, msg.replace(" ", "_"))
        for f in files:
            p = self.path(f)
            res = errs.get(p, "OK")
            detail = ""
            if res == "OK":
                acl, mode = raw[f]
                if isinstance(acl, bytes):
                    u = attempt(lambda: os.setxattr(p, ACL_A, acl))
                else:
                    u = attempt(lambda: os.removexattr(p, ACL_A))
                u2 = attempt(lambda: os.chmod(p, mode))
                if u != "OK" or u2 != "OK":
                    detail = "undo:%s/%s" % (u, u2)
            d = self.diff(before[f], self.after(f))
            if d:
                detail = (detail + " " if detail else "") + "changed:" + d
            self.emit(f, "acl", res, bool(d), detail)

    def dir_ops(self):
        d = self.dir
        mine, mine2 = os.path.join(d, "pm_" + self.me), os.path.join(d, "pn_" + self.me)
        victim, moved = os.path.join(d, "pv"), os.path.join(d, "pv_" + self.me)

        def cleanup():
            os.rename(mine, mine2)
            os.rmdir(mine2)
        self.cell(".", "mkdir", lambda: os.mkdir(mine, 0o755), cleanup)
        self.cell(".", "rename", lambda: os.rename(victim, moved), lambda: os.rename(moved, victim))
        self.cell(".", "rmdir", lambda: os.rmdir(victim))

    def event(self):
        f = "cgroup.event_control"

        def ev():
            r = subprocess.run([self.evctl, self.dir, "memory.oom_control", ""],
                               capture_output=True, text=True)
            res = r.stdout.strip().split(":")[-1]
            if res != "OK":
                raise OSError(getattr(errno, res, errno.EIO), res)
        self.cell(f, "event", ev)

    def tasks_ops(self):
        for f in PROC_LISTS:
            p = self.path(f)
            self.cell(f, "fuser", lambda: self.write(p, self.fuser.encode()))
            self.cell(f, "froot", lambda: self.write(p, self.froot.encode()))
        for f in PROC_LISTS:
            self.op_write(f)

    def run(self):
        files = sorted(e for e in os.listdir(self.dir)
                       if os.path.isfile(os.path.join(self.dir, e)))
        for f in files + ["."]:
            self.file_ops(f)
        self.acl_batch(files + ["."])
        self.dir_ops()
        self.last.clear()     # an allowed rmdir changed the listing
        if "cgroup.event_control" in files:
            self.event()
        self.tasks_ops()
        sys.stdout.write("".join(line + "\n" for line in self.out))


def snapshot(d):
    """As root: what no batch may leave changed. Metadata of every entry and
    the values of the settings files (the counters and process lists move on
    their own; the probe checks those per operation)."""
    skip = ("usage_in_bytes", "failcnt", "stat", "numa_stat", "slabinfo", "tasks", "procs",
            "force_empty", "event_control", "pressure_level")
    for e in sorted(os.listdir(d)) + ["."]:
        p = os.path.join(d, e)
        s = os.lstat(p)
        line = [e, oct(s.st_mode), str(s.st_uid), str(s.st_gid), repr(getx(p, ACL_A)),
                repr(tuple(sorted(os.listxattr(p, follow_symlinks=False))))]
        if e == ".":
            line.append(repr(getx(p, ACL_D)))
        elif os.path.isfile(p) and not e.endswith(skip):
            line.append(repr(read_value(p)))
        print(" ".join(line))


if __name__ == "__main__":
    if sys.argv[1:2] == ["snapshot"]:
        snapshot(sys.argv[2])
    else:
        Probe().run()
