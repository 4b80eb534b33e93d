#!/usr/bin/env python3
"""Checks the counts the docs state against the code they count.

Today one count: the runtime's kernel kinds. The docs avoid stating it
(every new op would change it), and this keeps any statement of it true.
The real number is the
MPTRT_KERNEL rows of runtime/include/mptrt/KernelSchema.def as the C
preprocessor sees them (the table includes generated rows), so the script
runs `c++ -E -P` on a snippet that includes it. Every statement of the
number in docs/*.md and README.md must equal it:

  - each entry of STATEMENTS names the file it applies to and a regex whose
    groups are the numbers stated; an entry that matches nothing fails, so
    a reworded doc cannot escape the check (update the regex with it);
  - SWEEP finds "N kernel kinds" anywhere else in those files, so a new
    statement in the usual words is checked too.

The ctest `doc-counts` runs it (test/CMakeLists.txt).

  scripts/check-doc-counts.py [--root DIR] [--cxx COMPILER] [-v]

Exit status: 0 when every statement holds, 1 otherwise.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

# Whitespace in a regex is written \s+, so that reflowed prose still matches.
# Empty today: the docs no longer restate the number of kinds, which every
# new op changes (docs/unary-functions.md, generated, lists the unary
# functions; the ctest `generated-current` keeps it current). A statement
# that must stay gets an entry here.
STATEMENTS = []

# Checked wherever it occurs in DOC_FILES; matching nothing is fine.
SWEEP = r"\b(\d+)\s+(?:runtime\s+)?kernel\s+kinds\b"

DOC_FILES = ["docs/*.md", "README.md"]

SNIPPET = """\
#define MPTRT_KERNEL(kind, ...) mptrt_doc_counts_kind #kind
#define MPTRT_ATTR(...)
#define MPTRT_VALUES(...)
#define MPTRT_DEFAULT(...)
#include "mptrt/KernelSchema.def"
"""


def kernel_kinds(root, cxx):
    """The kinds KernelSchema.def defines, through the preprocessor."""
    cmd = [cxx, "-E", "-P", "-x", "c++", "-I", os.path.join(root, "runtime", "include"), "-"]
    try:
        done = subprocess.run(cmd, input=SNIPPET, capture_output=True, text=True, cwd=root)
    except OSError as e:
        sys.exit(f"doc-counts: cannot run the preprocessor '{cxx}': {e}")
    if done.returncode != 0:
        sys.exit(f"doc-counts: '{' '.join(cmd)}' failed on KernelSchema.def:\n{done.stderr}")
    kinds = re.findall(r'mptrt_doc_counts_kind\s+"([^"]+)"', done.stdout)
    if not kinds:
        sys.exit("doc-counts: the preprocessed KernelSchema.def has no MPTRT_KERNEL row")
    return kinds


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="the repository to check (default: this script's)")
    parser.add_argument("--cxx", default=os.environ.get("CXX") or "c++",
                        help="the C++ compiler whose preprocessor reads the table")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every statement checked")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    if shutil.which(args.cxx) is None and not os.path.isfile(args.cxx):
        sys.exit(f"doc-counts: no C++ compiler '{args.cxx}' (pass --cxx or set CXX)")

    kinds = kernel_kinds(root, args.cxx)
    real = len(kinds)
    failures = []
    if len(set(kinds)) != real:
        twice = sorted({k for k in kinds if kinds.count(k) > 1})
        failures.append(f"KernelSchema.def: kinds listed twice: {', '.join(twice)}")

    texts = {}
    for pattern in DOC_FILES:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            with open(path, encoding="utf-8") as f:
                texts[os.path.relpath(path, root)] = f.read()

    checked = {}  # (file, offset of the number) -> (line, number, the words)

    def check(rel, match):
        words = " ".join(match.group(0).split())
        for group in range(1, (match.lastindex or 0) + 1):
            key = (rel, match.start(group))
            if key not in checked:
                checked[key] = (line_of(texts[rel], match.start(group)), int(match.group(group)),
                                words)

    for rel, regex in STATEMENTS:
        if rel not in texts:
            failures.append(f"{rel}: no such file (a STATEMENTS entry of {__file__} names it)")
            continue
        matches = list(re.finditer(regex, texts[rel]))
        if not matches:
            failures.append(f"{rel}: the statement /{regex}/ matches nothing: the doc was "
                            f"reworded or the count removed; update STATEMENTS in "
                            f"scripts/check-doc-counts.py with it")
        for match in matches:
            check(rel, match)
    for rel, text in texts.items():
        for match in re.finditer(SWEEP, text):
            check(rel, match)

    for (rel, _), (line, stated, words) in sorted(checked.items()):
        if args.verbose:
            print(f"{rel}:{line}: {stated} ('{words}')")
        if stated != real:
            failures.append(f"{rel}:{line}: '{words}' states {stated} kernel kinds, "
                            f"KernelSchema.def has {real}")

    if failures:
        for failure in failures:
            print(f"doc-counts: {failure}")
        return 1
    if not checked:
        print(f"doc-counts: no doc states the number of kernel kinds "
              f"(KernelSchema.def: {real} kinds)")
        return 0
    files = ", ".join(sorted({rel for rel, _ in checked}))
    print(f"doc-counts: all {len(checked)} stated counts of kernel kinds ({files}) "
          f"match KernelSchema.def: {real} kinds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
