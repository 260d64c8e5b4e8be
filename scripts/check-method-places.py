#!/usr/bin/env python3
"""Checks that method knowledge lives only where docs/adding-a-method.md says.

The guide's table "Where shared knowledge lives" names, for each kind of
knowledge, the files that may hold it (backticked paths; `<Name>` matches
part of one path component, never a '/'). This script finds each kind in the sources and
fails, naming file and line, where it appears in a file the table does not
list for it:

- a method op: the C++ class of an op of ComposerOps.td that declares
  MethodOpInterface; also, no two files under passes/ may name the same
  method op (each method has one pass file);
- an aten kind: a quoted "aten::<name>" in passes/, lib/Dialect/ or
  lib/Analysis/ (kinds are entries of the TableGen table);
- a state name: a quoted "_composer_..." anywhere in the sources.

Usage: check-method-places.py [--root DIR]   (DIR: the repository, default
the parent of this script's directory). Exit status 1 on a violation.
"""

import argparse
import pathlib
import re
import sys

GUIDE = "docs/adding-a-method.md"
OPS_TD = "include/composer/Dialect/ComposerOps.td"
SOURCE_DIRS = ("include", "lib", "passes", "runtime", "tools", "python")
SOURCE_SUFFIXES = {".cpp", ".h", ".td", ".inc", ".cu", ".cuh", ".py"}
KIND_DIRS = ("passes/", "lib/Dialect/", "lib/Analysis/")

ROWS = {
    "a method op": "op",
    "an aten kind": "kind",
    "a state name": "state",
}


def fail(message):
    print(f"check-method-places: error: {message}", file=sys.stderr)
    sys.exit(1)


def path_pattern(path):
    """A regular expression for a guide path: `<Name>` matches one path
    component's part (never a '/')."""
    return re.compile("".join(
        "[^/]*" if part.startswith("<") else re.escape(part)
        for part in re.split(r"(<[^>]*>)", path) if part))


def read_guide_table(root):
    """Maps each knowledge kind to the glob patterns the guide lists."""
    path = root / GUIDE
    if not path.is_file():
        fail(f"{GUIDE} not found under {root}")
    patterns = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] not in ROWS:
            continue
        globs = [path_pattern(p) for p in re.findall(r"`([^`]+)`", cells[-1])]
        if not globs:
            fail(f"{GUIDE}:{number}: row '{cells[0]}' lists no files")
        patterns[ROWS[cells[0]]] = globs
    missing = [name for name, key in ROWS.items() if key not in patterns]
    if missing:
        fail(f"{GUIDE}: the table lacks the row(s) {', '.join(missing)}")
    return patterns


def read_method_ops(root):
    """The C++ class names of the ops that declare MethodOpInterface."""
    text = (root / OPS_TD).read_text()
    ops = []
    # Each op's header: from its def to the `{` that opens its body (trait
    # lists nest brackets: DeclareOpInterfaceMethods<X, ["m"]>).
    for match in re.finditer(r"^def Composer_(\w+)\s*:\s*Composer_\w+<([^{]*)\{",
                             text, re.MULTILINE):
        if re.search(r"\bMethodOpInterface\b", match.group(2)):
            ops.append(match.group(1))
    if not ops:
        fail(f"{OPS_TD}: no op declares MethodOpInterface")
    return ops


def source_files(root):
    for directory in SOURCE_DIRS:
        base = root / directory
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                yield path.relative_to(root).as_posix(), path


def listed(relative, patterns):
    return any(pattern.fullmatch(relative) for pattern in patterns)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent)
    root = parser.parse_args().root.resolve()

    patterns = read_guide_table(root)
    ops = read_method_ops(root)
    op_pattern = re.compile(r"\b(" + "|".join(ops) + r")\b")
    kind_pattern = re.compile(r"\"aten::[A-Za-z_]\w*")
    state_pattern = re.compile(r"\"_composer_\w*")

    violations = []
    pass_files_of_op = {}
    for relative, path in source_files(root):
        try:
            lines = path.read_text().splitlines()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(lines, 1):
            where = f"{relative}:{number}"
            for match in op_pattern.finditer(line):
                op = match.group(1)
                if relative.startswith("passes/"):
                    pass_files_of_op.setdefault(op, set()).add(relative)
                if not listed(relative, patterns["op"]):
                    violations.append(f"{where}: method op {op} outside the files "
                                      "the guide lists for method ops")
            if relative.startswith(KIND_DIRS):
                for match in kind_pattern.finditer(line):
                    if not listed(relative, patterns["kind"]):
                        violations.append(f"{where}: aten kind {match.group(0)}\" "
                                          "outside the kind table (AtenKind::)")
            for match in state_pattern.finditer(line):
                if not listed(relative, patterns["state"]):
                    violations.append(f"{where}: state name {match.group(0)}\" "
                                      "outside the headers the guide lists")
    for op, files in sorted(pass_files_of_op.items()):
        if len(files) > 1:
            violations.append(f"method op {op} is named by {len(files)} pass files "
                              f"({', '.join(sorted(files))}); a method has one")
    for violation in violations:
        print(f"check-method-places: error: {violation}", file=sys.stderr)
    if violations:
        sys.exit(1)
    print(f"check-method-places: {len(ops)} method ops, aten kinds and state "
          f"names are where {GUIDE} says")


if __name__ == "__main__":
    main()
