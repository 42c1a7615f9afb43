#!/usr/bin/env python3
"""Checks what the project's documents show a reader, without building anything. Prints one
line per problem, and exits 1 if there is any.

    scripts/check-docs.py [FILE...]   default: README.md, ARCHITECTURE.md, SECURITY.md, docs/*.md

- Every `make` command of a ```sh block, or of inline code that starts with `make `, is one
  make accepts: `make -n` with its -C folder, variables (the environment's expanded) and
  targets succeeds.
- Every path into the repository's folders that a ```sh block names exists (a relative path
  whose first part is a top-level folder), and is executable where it is the command. So
  does one of scripts/, bindings/ or emulator/ that inline code starts with (other paths in
  prose may be of the installed layout, as include/portal_auth.hpp under PREFIX).
- Every relative Markdown link names a file or folder that exists, and, with an anchor, a
  heading of that Markdown file (as GitHub makes anchors of headings).
- A code block after the line `<!-- excerpt of PATH -->` (PATH from the repository's root)
  is an excerpt of PATH: its lines are lines of PATH, in the same order (indentation aside).
- Every other ```c and ```cpp block is a whole translation unit that compiles against
  include/ (and bindings/cpp), and every other ```python block parses.
- ARCHITECTURE.md names only Sources/ paths that exist, and names every folder of Sources/
  and of Sources/PortalAuthCore, so that a newcomer finds each one's place."""

from __future__ import annotations

import ast
import functools
import glob
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
EXCERPT = re.compile(r"^<!--\s*excerpt of (\S+)\s*-->$")
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
SOURCES_PATH = re.compile(r"\bSources/[\w./-]+")
# Shell operators between simple commands, and redirections, whose target is not checked.
SEPARATORS = {"&&", "||", ";", ";;", "|", "|&", "&", "(", ")", "{", "}"}
REDIRECTIONS = {">", ">>", "<", "<<", "<<<", ">&", "&>", ">|"}
RUNNABLE = ("scripts/", "bindings/", "emulator/", "./scripts/", "./bindings/", "./emulator/")
WRAPPERS = {"env", "exec", "export", "sudo", "time", "command", "nohup"}
# Text in a token that says it is a placeholder or a shell expansion, not a path.
NOT_A_PATH = re.compile(r"[$<>*?{}~…=\[\]]")
COMPILERS = {
    "c": ["gcc", "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only", "-Iinclude", "-x", "c", "-"],
    "cpp": ["g++", "-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only", "-Iinclude",
            "-Ibindings/cpp", "-x", "c++", "-"],
}


@dataclass
class Block:
    language: str
    line: int  # of its first line of code
    code: list[str]
    excerpt_of: str | None


def top_folders() -> set[str]:
    return {name for name in os.listdir(ROOT) if not name.startswith(".") and os.path.isdir(os.path.join(ROOT, name))}


FOLDERS = top_folders()


def parse(lines: list[str]) -> tuple[list[Block], list[tuple[int, str]]]:
    """The fenced blocks, and the lines of prose (outside them) with their numbers."""
    blocks: list[Block] = []
    prose: list[tuple[int, str]] = []
    fence: str | None = None
    marker: str | None = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            blocks.append(Block(match.group(2), number + 1, [], marker))
            marker = None
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None:
            blocks[-1].code.append(line)
        else:
            excerpt = EXCERPT.match(line.strip())
            if excerpt:
                marker = excerpt.group(1)
            elif line.strip():
                marker = None
                prose.append((number, line))
    return blocks, prose


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


@functools.cache
def anchors(path: str) -> set[str]:
    """The anchors of a Markdown file's headings, a repeated one numbered as GitHub does."""
    with open(path, encoding="utf-8") as markdown:
        _, prose = parse(markdown.read().splitlines())
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose:
        if match := HEADING.match(line):
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def repository_path(token: str, cwd: str) -> str | None:
    """The repository path a token names, relative to the root, when it names one: a relative
    path whose first part is a top-level folder of the repository (a pytest node id's path
    counts), and no placeholder."""
    token = token.split("::", 1)[0]
    if not token or token.startswith(("-", "/")) or NOT_A_PATH.search(token):
        return None
    if "/" not in token.rstrip("/") and not token.startswith("./"):
        return None
    full = os.path.normpath(os.path.join(cwd, token))
    relative = os.path.relpath(full, ROOT)
    if relative.startswith("..") or relative.split(os.sep, 1)[0] not in FOLDERS:
        return None
    return relative


def check_make(arguments: list[str], cwd: str) -> bool:
    """Whether make accepts the command, run with -n (nothing is built)."""
    expanded = [os.path.expandvars(argument) for argument in arguments]
    result = subprocess.run(["make", "-n", "--no-print-directory", *expanded], cwd=cwd,
                            env=dict(os.environ, PWD=cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return result.returncode == 0


def check_shell(text: str, where: str, cwd: str, problems: list[str]) -> str:
    """Checks one line of shell; returns the folder it leaves the shell in (after a `cd`)."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError as error:
        problems.append(f"{where}: cannot read the command ({error}): {text}")
        return cwd
    commands: list[list[str]] = [[]]
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
        elif token in SEPARATORS:
            commands.append([])
        elif token in REDIRECTIONS:
            skip_next = True
        else:
            commands[-1].append(token)
    for words in commands:
        while words and (re.match(r"^[A-Za-z_]\w*=", words[0]) or words[0] in WRAPPERS):
            words = words[1:]
        if not words:
            continue
        if words[0] == "make" and not check_make(words[1:], cwd):
            problems.append(f"{where}: `{' '.join(words)}` is not a command make accepts (make -n fails)")
        for index, word in enumerate(words):
            check_path(word, cwd, index == 0, where, problems)
        if words[0] == "cd" and len(words) == 2 and os.path.isdir(os.path.join(cwd, words[1])):
            cwd = os.path.normpath(os.path.join(cwd, words[1]))
    return cwd


def check_path(token: str, cwd: str, run: bool, where: str, problems: list[str]) -> None:
    """A path into the repository exists, and is an executable file where it is run."""
    path = repository_path(token, cwd)
    if path is None:
        return
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        problems.append(f"{where}: {path} does not exist")
    elif run and not (os.path.isfile(full) and os.access(full, os.X_OK)):
        problems.append(f"{where}: {path} is run as a command but is not an executable file")


def check_blocks(relative: str, blocks: list[Block], problems: list[str]) -> None:
    for block in blocks:
        where = f"{relative}:{block.line}"
        if block.excerpt_of:
            check_excerpt(block, where, problems)
        elif block.language == "sh":
            cwd = ROOT
            logical = ""
            for offset, line in enumerate(block.code):
                logical += line[:-1] + " " if line.endswith("\\") else line
                if not line.endswith("\\"):
                    cwd = check_shell(logical, f"{relative}:{block.line + offset}", cwd, problems)
                    logical = ""
        elif block.language in COMPILERS:
            result = subprocess.run(COMPILERS[block.language], cwd=ROOT, input="\n".join(block.code) + "\n",
                                    capture_output=True, text=True)
            if result.returncode != 0:
                problems.append(f"{where}: the {block.language} block does not compile:\n{result.stderr.rstrip()}")
        elif block.language == "python":
            try:
                ast.parse("\n".join(block.code))
            except SyntaxError as error:
                problems.append(f"{where}: the python block does not parse: {error.msg} (its line {error.lineno})")


def check_excerpt(block: Block, where: str, problems: list[str]) -> None:
    assert block.excerpt_of is not None
    source = os.path.join(ROOT, block.excerpt_of)
    if not os.path.isfile(source):
        problems.append(f"{where}: the excerpt's source {block.excerpt_of} does not exist")
        return
    with open(source, encoding="utf-8") as text:
        remaining = iter([line.strip() for line in text.read().splitlines()])
    for offset, line in enumerate(block.code):
        wanted = line.strip()
        if wanted and wanted not in remaining:  # consumes the source up to the match
            problems.append(f"{where}: line {offset + 1} of the excerpt is not in {block.excerpt_of} "
                            f"(after the lines before it): {wanted}")
            return


def paragraphs(prose: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The prose's paragraphs, each with the number of its first line: a heading and a table
    row are paragraphs of their own."""
    joined: list[tuple[int, str]] = []
    last = 0
    for number, line in prose:
        alone = line.startswith(("#", "|"))
        if joined and number == last + 1 and not alone and not joined[-1][1].startswith(("#", "|")):
            joined[-1] = (joined[-1][0], joined[-1][1] + " " + line.strip())
        else:
            joined.append((number, line.strip()))
        last = number
    return joined


def check_prose(path: str, relative: str, prose: list[tuple[int, str]], problems: list[str]) -> None:
    folder = os.path.dirname(path)
    for number, text in paragraphs(prose):
        where = f"{relative}:{number}"
        for span in INLINE.findall(text):
            if span.startswith("make ") or span.startswith(RUNNABLE) and len(span.split()) > 1:
                check_shell(span, where, ROOT, problems)
            elif span.startswith(RUNNABLE):
                check_path(span, ROOT, False, where, problems)
        for target in LINK.findall(INLINE.sub("", text)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            name, _, anchor = target.partition("#")
            linked = os.path.normpath(os.path.join(folder, name)) if name else path
            if not os.path.exists(linked):
                problems.append(f"{where}: the link's target {name} does not exist")
            elif anchor and linked.endswith(".md") and anchor not in anchors(linked):
                problems.append(f"{where}: {name or os.path.basename(path)} has no heading whose anchor is #{anchor}")


def check_architecture(relative: str, text: str, problems: list[str]) -> None:
    named = {match.rstrip("./") for match in SOURCES_PATH.findall(text)}
    for name in sorted(named):
        if not os.path.exists(os.path.join(ROOT, name)):
            problems.append(f"{relative}: names {name}, which does not exist")
    folders = [os.path.relpath(folder, ROOT).rstrip("/") for folder in
               sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "")) +
                      glob.glob(os.path.join(ROOT, "Sources", "PortalAuthCore", "*", "")))]
    for folder in folders:
        if not any(name == folder or name.startswith(folder + "/") for name in named):
            problems.append(f"{relative}: does not name {folder}")


def check(path: str) -> list[str]:
    relative = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
    with open(path, encoding="utf-8") as markdown:
        text = markdown.read()
    blocks, prose = parse(text.splitlines())
    problems: list[str] = []
    check_blocks(relative, blocks, problems)
    check_prose(path, relative, prose, problems)
    if os.path.basename(path) == "ARCHITECTURE.md":
        check_architecture(relative, text, problems)
    return problems


def main() -> int:
    files = [os.path.abspath(name) for name in sys.argv[1:]] or \
        [os.path.join(ROOT, name) for name in ("README.md", "ARCHITECTURE.md", "SECURITY.md")] + \
        sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    problems = [problem for path in files for problem in check(path)]
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"docs: the commands, paths, links and code of {len(files)} documents hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
