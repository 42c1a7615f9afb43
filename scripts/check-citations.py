#!/usr/bin/env python3
"""Checks that every citation of the project's notes resolves to a file and a section in
this repository. Prints one line per citation that does not, and exits 1 if any does not.

    scripts/check-citations.py [FILE...]     default: every file git tracks

A citation names one of the notes (`docs/protocol.md`, or `protocol.md` beside the citing
file; `docs/desktop.md`) and may go on with a heading in quotes (`docs/desktop.md "Browser sign-in"`, which
must be a heading of that file) or with section numbers (`docs/protocol.md §3, §5`, each of
which must be a numbered heading `## N. ...` of that file; ASCII text, the C header, writes
`docs/protocol.md section 3`). A section number belongs to the
last file or RFC named before it on its line: `RFC 8252 §7.3` is an outside standard, and a
section number with no file before it is a citation that names no file, except inside a
numbered file itself, where it means that file. The protocol's source notes outside the
repository (the shared spec's files) may not be cited at all."""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = re.compile(
    r"(?P<file>(?<![\w/.-])(?:\.\./)*(?:[\w-]+/)*(?:protocol|desktop|client-auth|toolchain)\.md)(?:\s*(?:\"(?P<quoted>[^\"]+)\"|“(?P<curly>[^”]+)”))?"
    r"|(?P<rfc>\bRFC \d+)"
    r"|§\s?(?P<section>\d+(?:\.\d+)*)|\b[Ss]ection (?P<spelled>\d+)\b"
)
OUTSIDE = re.compile(r"client-auth\.md|\.\./shared\b|shared/spec")
NUMBERED = re.compile(r"^#{1,6}\s+(\d+)\.\s")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
# Inputs, not prose: the fuzzers' seeds and regressions, and abidw's output; and this
# script, which names what may not be cited.
SKIPPED = re.compile(r"^Tests/Fuzz/[^/]+/|^abi/.*\.abi$|^scripts/check-citations\.py$")


def headings(path: str) -> tuple[set[str], set[str]]:
    """The section numbers and the heading texts of a Markdown file."""
    numbers, titles = set(), set()
    with open(path, encoding="utf-8") as markdown:
        for line in markdown:
            if match := NUMBERED.match(line):
                numbers.add(match.group(1))
            if match := HEADING.match(line):
                titles.add(match.group(1))
    return numbers, titles


def resolve(name: str, citing: str) -> str | None:
    """The repository file a citation names: beside the citing file, else from the root."""
    for base in (os.path.dirname(citing), ROOT):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path) and path.startswith(ROOT + os.sep):
            return path
    return None


def check(path: str) -> list[str]:
    problems = []
    relative = os.path.relpath(path, ROOT)
    try:
        with open(path, encoding="utf-8") as source:
            lines = source.read().splitlines()
    except UnicodeDecodeError:
        return []
    own = path if path.endswith(".md") and headings(path)[0] else None
    for number, line in enumerate(lines, 1):
        where = f"{relative}:{number}"
        if match := OUTSIDE.search(line):
            problems.append(f"{where}: cites {match.group(0)}, outside the repository: cite docs/protocol.md or docs/desktop.md")
        anchor: str | None = own
        for token in TOKEN.finditer(line):
            if token.group("rfc"):
                anchor = "RFC"
            elif token.group("file"):
                name = token.group("file")
                anchor = resolve(name, path)
                if anchor is None:
                    problems.append(f"{where}: {name} is not a file of the repository")
                    continue
                heading = token.group("quoted") or token.group("curly")
                if token.group("curly"):
                    problems.append(f'{where}: {name} “{heading}”: quote the heading with plain quotes')
                if heading and heading not in headings(anchor)[1]:
                    problems.append(f'{where}: {name} has no heading "{heading}"')
            else:
                section = token.group("section") or token.group("spelled")
                if anchor == "RFC":
                    continue
                if anchor is None:
                    problems.append(f"{where}: §{section} names no file: write docs/protocol.md §{section}")
                elif section not in headings(anchor)[0]:
                    problems.append(f"{where}: {os.path.relpath(anchor, ROOT)} has no §{section}")
    return problems


def tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    names = [name for name in listed.decode().split("\0") if name and not SKIPPED.match(name)]
    return [os.path.join(ROOT, name) for name in names if os.path.isfile(os.path.join(ROOT, name))]


def main() -> int:
    files = [os.path.abspath(name) for name in sys.argv[1:]] or tracked()
    problems = [problem for path in files for problem in check(path)]
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"citations: every one of {len(files)} files cites sections that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
