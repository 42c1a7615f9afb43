#!/usr/bin/env python3
"""The facts of the C ABI that bindings copy, read from include/portal_auth.h: what clang
declares in it, and what a C compiler makes of it (values, sizes, offsets). The Python and
Rust bindings' tests compare their own declarations with these lines, so that the header is
the one source of truth. One fact a line, its fields separated by tabs:

    function  NAME  RETURN  PARAMETER...      every portal_auth_* function
    callback  NAME  RETURN  PARAMETER...      every function-pointer typedef
    constant  NAME  VALUE                     every PORTAL_AUTH_* macro with a value, and
                                              every enumerator (a string as C spells it)
    struct    NAME  SIZE                      every struct the header defines
    field     STRUCT  NAME  OFFSET  SIZE  TYPE    its fields, in order
    scalar    TYPE  SIZE  SIGNED  KIND        every integer type used (KIND: int or enum;
                                              an enum's signedness is the compiler's choice)

Types are spelled as clang spells them, without nullability: `const char *`,
`portal_auth_call **`, `portal_auth_done_fn`, and a function pointer as
`int (*)(void *, const char *)`.

    scripts/header_facts.py [HEADER]      HEADER defaults to include/portal_auth.h"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from typing import Any

from header_declarations import ast, c_type

PREFIX = "portal_auth"
# Macros that are no value: the include guard, the options' braced initialiser, and
# PORTAL_AUTH_EXTERN (an attribute).
NOT_VALUES = re.compile(r"^\s*(\{.*|__attribute__.*)?$")


def typedefs(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Every typedef's name → the type it names, as clang spells it."""
    return {node["name"]: c_type(node["type"]["qualType"]) for node in nodes if node.get("kind") == "TypedefDecl"}


def is_function_pointer(spelled: str) -> bool:
    return "(*)" in spelled


def parameters_of(spelled: str) -> tuple[str, list[str]]:
    """A function pointer's return type and parameter types: `int (*)(void *, char)`."""
    returned, rest = spelled.split("(*)", 1)
    inside = rest.strip()[1:-1]
    parts, depth, current = [], 0, ""
    for character in inside:
        if character == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += character == "("
        depth -= character == ")"
        current += character
    if current.strip() and current.strip() != "void":
        parts.append(current.strip())
    return returned.strip(), parts


def base(spelled: str) -> str:
    """The type a pointer type points to, at its end: `const char **` → `char`."""
    return spelled.replace("*", " ").replace("const", " ").split()[-1] if spelled.strip() else spelled


def main() -> int:
    if len(sys.argv) > 2:
        sys.exit(__doc__)
    header = sys.argv[1] if len(sys.argv) == 2 else "include/portal_auth.h"
    nodes = ast(header)
    named = typedefs(nodes)
    lines: list[str] = []
    used: set[str] = set()

    def use(spelled: str) -> None:
        if is_function_pointer(spelled):
            returned, arguments = parameters_of(spelled)
            for each in (returned, *arguments):
                use(each)
        else:
            used.add(base(spelled))

    for node in nodes:
        name = node.get("name", "")
        if node.get("kind") == "FunctionDecl" and name.startswith(PREFIX):
            function_type = c_type(node["type"]["qualType"])
            arguments = [c_type(p["type"]["qualType"]) for p in node.get("inner", []) if p.get("kind") == "ParmVarDecl"]
            returned = function_type[: function_type.index("(")].strip()
            lines.append("\t".join(["function", name, returned, *arguments]))
            for each in (returned, *arguments):
                use(each)
        elif node.get("kind") == "TypedefDecl" and name.startswith(PREFIX) and is_function_pointer(named[name]):
            returned, arguments = parameters_of(named[name])
            lines.append("\t".join(["callback", name, returned, *arguments]))
            use(named[name])

    structs: dict[str, list[tuple[str, str]]] = {}
    enumerators: list[str] = []
    for node in nodes:
        kind, name = node.get("kind"), node.get("name", "")
        if kind == "RecordDecl" and name.startswith(PREFIX) and node.get("completeDefinition"):
            fields = [(f["name"], c_type(f["type"]["qualType"])) for f in node.get("inner", []) if f.get("kind") == "FieldDecl"]
            structs[name] = fields
            for _, spelled in fields:
                use(spelled)
        elif kind == "EnumDecl":
            enumerators += [c["name"] for c in node.get("inner", []) if c.get("kind") == "EnumConstantDecl"]

    macros = subprocess.run(["clang", "-x", "c", "-std=c11", "-dM", "-E", header], check=True, capture_output=True, text=True).stdout
    values: list[tuple[str, bool]] = []  # (name, is a string)
    for line in macros.splitlines():
        match = re.match(r"#define (PORTAL_AUTH_\w+)(?: (.*))?$", line)
        if match and not NOT_VALUES.match(match[2] or ""):
            values.append((match[1], (match[2] or "").startswith('"')))
    values += [(name, False) for name in enumerators if name.startswith("PORTAL_AUTH_")]

    def resolved(spelled: str) -> str:
        while spelled in named and not named[spelled].startswith(("struct ", "enum ")):
            spelled = named[spelled]
        return named.get(spelled, spelled)

    builtin = ("char", "short", "int", "long")
    scalars = sorted(
        t for t in used
        if (t in named or t in builtin) and not resolved(t).startswith("struct ") and not is_function_pointer(resolved(t))
    )

    program = ["#include <stdio.h>", "#include <stddef.h>", f'#include "{os.path.abspath(header)}"', "int main(void) {"]
    for name, is_string in values:
        if is_string:
            program.append(f'    printf("constant\\t{name}\\t\\"%s\\"\\n", {name});')
        else:
            program.append(f'    printf("constant\\t{name}\\t%lld\\n", (long long)({name}));')
    for name, fields in structs.items():
        spelled = name if name in named else f"struct {name}"
        program.append(f'    printf("struct\\t{name}\\t%zu\\n", sizeof({spelled}));')
        for field, field_type in fields:
            program.append(
                f'    printf("field\\t{name}\\t{field}\\t%zu\\t%zu\\t{field_type}\\n", '
                f"offsetof({spelled}, {field}), sizeof((({spelled} *)0)->{field}));"
            )
    for scalar in scalars:
        kind = "enum" if resolved(scalar).startswith("enum ") else "int"
        program.append(f'    printf("scalar\\t{scalar}\\t%zu\\t%d\\t{kind}\\n", sizeof({scalar}), ({scalar})-1 < ({scalar})0);')
    program += ["    return 0;", "}"]

    with tempfile.TemporaryDirectory() as work:
        source, binary = os.path.join(work, "facts.c"), os.path.join(work, "facts")
        with open(source, "w", encoding="utf-8") as file:
            file.write("\n".join(program) + "\n")
        subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", source, "-o", binary], check=True)
        computed = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    print("\n".join(lines))
    print(computed, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
