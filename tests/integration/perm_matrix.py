#!/usr/bin/python3
# perm_matrix.py: turns the cells of t_perm_matrix.sh into the markdown
# matrix of docs/security.md. Input lines (tab-separated):
#   PROFILE DIR CLASS FILE ACTOR OP RESULT
# A cell is "yes" when an operation of the column succeeded on a file of the
# class ("some" when the files of the class disagree), "—" when the column
# does not apply; values that differ between profiles name the profiles.
import sys

classed, profiles, dirs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
labels = dict(zip(["root", "own", "del", "grp"], sys.argv[4:8]))
COLS = ["r", "w", "trunc", "chmod", "chown", "acl", "xattr", "mkdir", "rmdir", "rename",
        "tasks(foreign)", "event", "sim -g"]
COL_OF = {"r": "r", "w": "w", "otrunc": "trunc", "truncate": "trunc", "chmod": "chmod",
          "chown": "chown", "acl": "acl", "xuser": "xattr", "xtrusted": "xattr",
          "mkdir": "mkdir", "rmdir": "rmdir", "rename": "rename", "fuser": "tasks(foreign)",
          "froot": "tasks(foreign)", "event": "event", "sim": "sim -g"}
CLASSES = ["(directory)", "tasks, cgroup.procs", "read-write (0644)",
           "ACL-granted (watermarks, soft limit)", "read-only (0444)", "memory.pressure_level",
           "memory.force_empty", "cgroup.event_control", "release_agent"]

allowed = {}       # (prof, dir, class, actor, col) -> {file: any op allowed}
actors = []
for line in open(classed):
    prof, d, cl, f, a, op, res = line.rstrip("\n").split("\t")
    if a not in actors:
        actors.append(a)
    k = (prof, d, cl, a, COL_OF[op])
    files = allowed.setdefault(k, {})
    files[f] = files.get(f, False) or res == "OK"


def ranges(ps):
    """Profiles as runs of the profile list: 4.19–6.12, 6.18."""
    idx = sorted(profiles.index(p) for p in ps)
    runs, start = [], idx[0]
    for i, j in zip(idx, idx[1:] + [None]):
        if j != i + 1:
            runs.append(profiles[start] if start == i else profiles[start] + "–" + profiles[i])
            start = j
    return ", ".join(runs)


def cell(d, cl, a, c):
    by_prof = {}
    for p in profiles:
        files = allowed.get((p, d, cl, a, c))
        if files is None:
            continue
        vals = set(files.values())
        by_prof[p] = "some" if len(vals) > 1 else ("yes" if vals.pop() else "no")
    if not by_prof:
        return "—"
    vals = sorted(set(by_prof.values()), key=["yes", "some", "no"].index)
    if len(vals) == 1:
        return vals[0]
    return " / ".join("%s (%s)" % (v, ranges([p for p in by_prof if by_prof[p] == v]))
                      for v in vals)


print("| dir | file | actor | " + " | ".join(COLS) + " |")
print("|" + "---|" * (3 + len(COLS)))
for d in dirs:
    for cl in CLASSES:
        if not any(k[1] == d and k[2] == cl for k in allowed):
            continue
        rows = {}
        for a in actors:
            row = tuple(cell(d, cl, a, c) for c in COLS)
            rows.setdefault(row, []).append(a)
        for row, who in rows.items():
            print("| %s | %s | %s | %s |" % (labels.get(d, d), cl, ", ".join(who), " | ".join(row)))
