#!/usr/bin/env python3
"""Runs the README's examples, so that they stay true.

A fenced block right after `<!-- example: run -->` is run with bash
(-euo pipefail) in WORKDIR, in order, all in the same directory; WORKDIR
gets links `test` (the source tree's test/) and `build` (the build tree),
so the examples' paths work as they do from the repository root. A block
right after `<!-- example: same-as PATH -->` must equal the file PATH
(relative to the repository root) line for line; one right after
`<!-- example: contained-in PATH -->` must stand in that file, its lines
consecutive there (leading spaces aside). A block right after
`<!-- example: output -->` is what the run block before it prints
(stdout and stderr): its lines must appear in that output in order, with
other lines between them allowed. In an expected line `...` or `…` stands
for any text, runs of spaces match any run of spaces, and the numbers that
vary from run to run are not compared: those before ` samples/s`,
` tokens/s` and ` ms`, and the time after `ETA `.

  readme_examples.py README.md BUILD_DIR WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys

MARKER = re.compile(r"^<!-- example: (run|output|(?:same-as|contained-in) (\S+)) -->\s*$")
NUMBER = r"[0-9][0-9.e+-]*"
VARYING = [(re.compile(NUMBER + r"(?= (samples/s|tokens/s|ms)\b)"), NUMBER),
           (re.compile(r"(?<=ETA )[0-9:]+"), r"[0-9:]+")]


def line_pattern(expected):
    """A regex for one expected output line (see the module's docstring)."""
    pieces = []
    for i, part in enumerate(re.split(r"\.\.\.|…", expected.strip())):
        if i:
            pieces.append(".*")
        marks = []  # (start, end, regex) of the varying numbers in `part`
        for regex, replacement in VARYING:
            marks += [(m.start(), m.end(), replacement) for m in regex.finditer(part)]
        at = 0
        for start, end, replacement in sorted(marks):
            pieces.append(re.escape(part[at:start]))
            pieces.append(replacement)
            at = end
        pieces.append(re.escape(part[at:]))
    return re.compile(r"\s*" + re.sub(r"(\\ )+", r"\\s+", "".join(pieces)) + r"\s*$")


def missing_output(expected, output):
    """The first expected line not found, in order, in `output`, or None."""
    lines = output.splitlines()
    at = 0
    for want in expected.splitlines():
        if want.strip() in ("", "...", "…"):
            continue
        pattern = line_pattern(want)
        while at < len(lines) and not pattern.match(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def examples(lines):
    """Yields (line number, kind, path, block text) for each marked block."""
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        i += 1
        if not m:
            continue
        if i >= len(lines) or not lines[i].startswith("```"):
            sys.exit("README line %d: an example marker must be followed by a fenced block" % i)
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        if i >= len(lines):
            sys.exit("README line %d: unterminated fenced block" % (start + 1))
        i += 1
        yield start + 1, m.group(1).split()[0], m.group(2), "".join(body)


def main():
    readme, build, work = sys.argv[1:4]
    root = os.path.dirname(os.path.abspath(readme))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.symlink(os.path.join(root, "test"), os.path.join(work, "test"))
    os.symlink(os.path.abspath(build), os.path.join(work, "build"))
    with open(readme) as f:
        lines = f.readlines()
    count = 0
    last = None  # (line, output) of the last run block
    for line, kind, path, text in examples(lines):
        count += 1
        if kind == "output":
            if last is None:
                sys.exit("README line %d: an output block must follow a run block" % line)
            want = missing_output(text, last[1])
            if want is not None:
                sys.exit("README line %d: the example at line %d did not print\n  %s\n"
                         "--- its output ---\n%s" % (line, last[0], want, last[1]))
            print("README line %d: output of line %d as shown" % (line, last[0]))
            continue
        if kind == "contained-in":
            with open(os.path.join(root, path)) as f:
                have = [l.strip() for l in f.read().splitlines()]
            want = [l.strip() for l in text.splitlines()]
            if not any(have[i:i + len(want)] == want for i in range(len(have))):
                sys.exit("README line %d: the block is not in %s" % (line, path))
            print("README line %d: contained in %s" % (line, path))
            continue
        if kind == "same-as":
            with open(os.path.join(root, path)) as f:
                if f.read() != text:
                    sys.exit("README line %d: the block differs from %s" % (line, path))
            print("README line %d: same as %s" % (line, path))
            continue
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=work,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            sys.exit("README line %d: the example failed (exit %d):\n%s\n--- output ---\n%s"
                     % (line, proc.returncode, text, proc.stdout))
        last = (line, proc.stdout)
        print("README line %d: ran" % line)
    print("%d examples" % count)


if __name__ == "__main__":
    main()
