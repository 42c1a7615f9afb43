"""A C header's declarations as clang reads them: its AST, and its functions as name →
(return type, [(parameter name, type)]), each type spelled as clang spells it, without
nullability. Shared by scripts/compare-header.py, scripts/abi-stub.py and
scripts/header_facts.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

Signature = tuple[str, list[tuple[str, str]]]

NULLABILITY = re.compile(r"\s*\b_(Nullable|Nonnull|Null_unspecified)\b")


def c_type(spelled: str) -> str:
    """A type as clang spells it, without nullability: `char * _Nullable *` is `char **`."""
    return re.sub(r"\*\s+(?=\*)", "*", NULLABILITY.sub("", spelled)).strip()


def ast(header: str, after: list[str] | None = None) -> list[dict[str, Any]]:
    """The top-level declarations clang reads from `header`, then the lines of `after`, as
    the nodes of its JSON AST."""
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as unit:
        unit.write(f'#include "{os.path.abspath(header)}"\n' + "\n".join(after or []) + "\n")
    try:
        dumped = subprocess.run(
            ["clang", "-x", "c", "-std=c11", "-fsyntax-only", "-Xclang", "-ast-dump=json", unit.name],
            check=True, capture_output=True, text=True,
        ).stdout
    except subprocess.CalledProcessError as failure:
        sys.exit(f"clang could not read the declarations of {header}:\n{failure.stderr}")
    finally:
        os.unlink(unit.name)
    nodes: list[dict[str, Any]] = json.loads(dumped).get("inner", [])
    return nodes


def functions(header: str, after: list[str] | None = None, prefix: str = "portal_auth_") -> dict[str, Signature]:
    """The functions named `prefix...` that `header`, then the lines of `after`, declare."""
    found: dict[str, Signature] = {}
    for node in ast(header, after):
        name = node.get("name", "")
        if node.get("kind") != "FunctionDecl" or not name.startswith(prefix):
            continue
        function_type = c_type(node["type"]["qualType"])
        parameters = [
            (parameter.get("name", ""), c_type(parameter["type"]["qualType"]))
            for parameter in node.get("inner", [])
            if parameter.get("kind") == "ParmVarDecl"
        ]
        found[name] = (function_type[: function_type.index("(")].strip(), parameters)
    return found
