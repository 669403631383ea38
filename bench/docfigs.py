#!/usr/bin/env python3
"""docfigs.py: keeps every measured figure the documentation quotes equal
to the committed benchmark run's (docs/bench/results.tsv, what `make
bench-docs` copies from a `make bench`).

Owns the figure markers of the docs: a quoted figure is written
<!--fig NAME-->VALUE<!--/fig--> (NAME as in results.tsv, VALUE a number
with the digits the text wants; the unit stays outside). --check fails,
naming file, line and figure, when a marked value is not the committed
figure rounded to the value's digits, or names a figure the run does not
have; --write rewrites every marked value from the committed figures,
keeping each one's digits. Never runs a benchmark and never touches text
outside the markers.
Usage: docfigs.py --check|--write [RESULTS]
"""
import os
import re
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DOCS = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(TOP, "docs"))
                              if f.endswith(".md"))
MARK = re.compile(r"<!--fig ([A-Za-z0-9_.%-]+)-->([^<]*)<!--/fig-->")


def load(path):
    r = {}
    with open(path) as f:
        for line in f:
            name, value, _unit = line.rstrip("\n").split("\t")
            r[name] = float(value)
    return r


def digits(text):
    return len(text.split(".")[1]) if "." in text else 0


def render(value, like):
    """value with like's decimals and thousands separators"""
    d = digits(like)
    s = "{:,.{}f}".format(value, d) if "," in like else "{:.{}f}".format(value, d)
    return s


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("--check", "--write"):
        sys.exit(__doc__.strip().splitlines()[-1])
    write = sys.argv[1] == "--write"
    results = load(sys.argv[2] if len(sys.argv) > 2 else os.path.join(TOP, "docs/bench/results.tsv"))
    bad = 0
    marks = 0
    for doc in DOCS:
        path = os.path.join(TOP, doc)
        with open(path) as f:
            lines = f.read().split("\n")
        changed = False
        for i, line in enumerate(lines):
            def fix(m):
                nonlocal bad, changed, marks
                marks += 1
                name, text = m.group(1), m.group(2)
                if name not in results:
                    print("%s:%d: %s: no such figure in the committed run" % (doc, i + 1, name))
                    bad += 1
                    return m.group(0)
                want = render(results[name], text)
                if text != want:
                    if write:
                        changed = True
                        return "<!--fig %s-->%s<!--/fig-->" % (name, want)
                    print("%s:%d: %s is %s in the committed run, the text says %s"
                          % (doc, i + 1, name, want, text))
                    bad += 1
                return m.group(0)
            lines[i] = MARK.sub(fix, line)
        if changed:
            with open(path, "w") as f:
                f.write("\n".join(lines))
    if bad:
        sys.exit("docfigs: %d quoted figure(s) differ from docs/bench/results.tsv "
                 "(make bench, then make bench-docs)" % bad)
    print("docfigs: %d quoted figures%s" % (marks, " rewritten" if write else ", all the committed run's"))


main()
