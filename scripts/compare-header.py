#!/usr/bin/env python3
"""Checks that the hand-written include/portal_auth.h declares every @c export of
Sources/PortalAuthC, each with the same return and parameter types as the declaration swiftc
generates for it (scripts/generate-header.sh), and nothing else. Prints one line for each
declaration that differs, saying how, and exits 1 if any does.

    scripts/compare-header.py GENERATED [HEADER]     HEADER defaults to include/portal_auth.h

Both sides are read by clang in one translation unit: the hand-written header, then the
generated prototypes renamed (generated_ + name), so that each type is spelled the same way
on both sides (`char const *` and `const char *` alike); only the nullability qualifiers
Swift adds are dropped."""

from __future__ import annotations

import re
import sys

from header_declarations import Signature, functions

RENAMED = "generated_"
# The generated header's decorations, which say nothing about the C types.
DECORATIONS = re.compile(r"\b(SWIFT_EXTERN|SWIFT_NOEXCEPT|SWIFT_WARN_UNUSED_RESULT)\b")


def generated_prototypes(path: str) -> list[str]:
    """The generated header's prototypes, each renamed."""
    prototypes = []
    with open(path, encoding="utf-8") as header:
        for line in header:
            if line.startswith("SWIFT_EXTERN "):
                prototype = DECORATIONS.sub("", line).strip()
                prototypes.append(re.sub(r"\b(portal_auth_[a-z0-9_]*)\s*\(", RENAMED + r"\1(", prototype, count=1))
    return prototypes


def differences(written: dict[str, Signature], generated: dict[str, Signature], header: str) -> list[str]:
    problems = []
    for name in sorted(set(written) | set(generated)):
        if name not in written:
            problems.append(f"{name}: exported by Sources/PortalAuthC but not declared in {header}")
            continue
        if name not in generated:
            problems.append(f"{name}: declared in {header} but not exported by Sources/PortalAuthC")
            continue
        (ours, our_parameters), (theirs, their_parameters) = written[name], generated[name]
        if ours != theirs:
            problems.append(f"{name}: returns {ours} in {header}, {theirs} in the Swift export")
        if len(our_parameters) != len(their_parameters):
            problems.append(
                f"{name}: takes {len(our_parameters)} parameters in {header}, {len(their_parameters)} in the Swift export"
            )
            continue
        for index, ((our_name, our_type), (_, their_type)) in enumerate(zip(our_parameters, their_parameters), 1):
            if our_type != their_type:
                problems.append(
                    f"{name}: parameter {index} ({our_name}) is {our_type} in {header}, {their_type} in the Swift export"
                )
    return problems


def main() -> int:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    header = sys.argv[2] if len(sys.argv) == 3 else "include/portal_auth.h"
    declared = functions(header, generated_prototypes(sys.argv[1]), prefix="")
    written = {name: signature for name, signature in declared.items() if name.startswith("portal_auth_")}
    generated = {name[len(RENAMED):]: signature for name, signature in declared.items() if name.startswith(RENAMED)}
    if not generated:
        sys.exit(f"{sys.argv[1]} declares no portal_auth_ function")
    problems = differences(written, generated, header)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"{header} declares the {len(generated)} exports, each with the Swift export's types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
