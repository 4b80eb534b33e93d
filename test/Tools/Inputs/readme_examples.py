#!/usr/bin/env python3
"""Runs the README's examples, so that they stay true.

A fenced block right after `<!-- example: run -->` is run with bash
(-euo pipefail) in WORKDIR, in order, all in the same directory; WORKDIR
gets links `test` (the source tree's test/) and `build` (the build tree),
so the examples' paths work as they do from the repository root. A block
right after `<!-- example: same-as PATH -->` must equal the file PATH
(relative to the repository root) line for line.

  readme_examples.py README.md BUILD_DIR WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys

MARKER = re.compile(r"^<!-- example: (run|same-as (\S+)) -->\s*$")


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
    for line, kind, path, text in examples(lines):
        count += 1
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
        print("README line %d: ran" % line)
    print("%d examples" % count)


if __name__ == "__main__":
    main()
