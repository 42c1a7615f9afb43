#!/usr/bin/env python3
"""Writes C that defines every function include/portal_auth.h declares, with the header's
own types and empty bodies. Compiled with debug information into a library of the real
soname and version script, it gives abidw the header's types, which it cannot read from
the Swift library's own debug information (scripts/abi.sh).

    scripts/abi-stub.py HEADER > stub.c"""

from __future__ import annotations

import os
import sys

from header_declarations import functions


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(f"#include \"{os.path.abspath(sys.argv[1])}\"")
    for name, (returned, parameters) in sorted(functions(sys.argv[1]).items()):
        arguments = ", ".join(f"{type_} {parameter}" for parameter, type_ in parameters) or "void"
        body = "" if returned == "void" else " return 0; "
        print(f"{returned} {name}({arguments}) {{{body}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
