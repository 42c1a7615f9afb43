"""One source of truth for the ABI: the ctypes declarations of portal_auth._native, its
constants and the binding's error codes and reasons, against include/portal_auth.h as
scripts/header_facts.py reads it (clang for the declarations, a compiled program for the
values, sizes and offsets). Each check is shown to fail on a header that differs."""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import portal_auth
from portal_auth import _error_handles, _native, _reasons, errors

REPOSITORY = Path(__file__).resolve().parents[3]
HEADER = REPOSITORY / "include" / "portal_auth.h"
# Functions of the header that the Python binding does not call, and why.
UNUSED = {
    "portal_auth_version_number": "the package's __version__ is the header's (scripts/generate-tables.py)",
    "portal_auth_set_dispatcher": "completions come through the completion queue",
    "portal_auth_set_log_handler": "log lines come through the completion queue (set_queued_log_handler)",
    **{f"portal_auth_completion_queue_{verb}": "the binding's clients share the process's queue, which its loop runs"
       for verb in ("new", "free", "fd", "run")},
    "portal_auth_code_name": "each code is an exception class of its own, named in errors.py",
    "portal_auth_code_message": "each code is an exception class of its own, with its own message",
}


class Facts:
    """The lines of scripts/header_facts.py for one header."""

    def __init__(self, text: str) -> None:
        self.functions: dict[str, tuple[str, list[str]]] = {}
        self.callbacks: dict[str, tuple[str, list[str]]] = {}
        self.constants: dict[str, int | str] = {}
        self.structs: dict[str, int] = {}
        self.fields: dict[str, list[tuple[str, int, int, str]]] = {}
        self.scalars: dict[str, tuple[int, bool, str]] = {}
        for line in text.splitlines():
            kind, *rest = line.split("\t")
            if kind == "function":
                self.functions[rest[0]] = (rest[1], rest[2:])
            elif kind == "callback":
                self.callbacks[rest[0]] = (rest[1], rest[2:])
            elif kind == "constant":
                self.constants[rest[0]] = rest[1][1:-1] if rest[1].startswith('"') else int(rest[1])
            elif kind == "struct":
                self.structs[rest[0]] = int(rest[1])
            elif kind == "field":
                self.fields.setdefault(rest[0], []).append((rest[1], int(rest[2]), int(rest[3]), rest[4]))
            elif kind == "scalar":
                self.scalars[rest[0]] = (int(rest[1]), rest[2] == "1", rest[3])


def read_facts(header: Path) -> Facts:
    done = subprocess.run(
        [sys.executable, str(REPOSITORY / "scripts" / "header_facts.py"), str(header)],
        check=True, capture_output=True, text=True, cwd=REPOSITORY,
    )
    return Facts(done.stdout)


@pytest.fixture(scope="module")
def facts() -> Facts:
    return read_facts(HEADER)


# C types against ctypes types.

POINTERS = (ctypes.c_void_p, ctypes.c_char_p)


def _pointee(c_type: str) -> str | None:
    """`const char *` → `const char`; None for a type that is not a pointer."""
    stripped = c_type.strip()
    return stripped[:-1].strip() if stripped.endswith("*") else None


def _base(c_type: str) -> str:
    return " ".join(word for word in c_type.split() if word != "const")


def mismatch(c_type: str, declared: Any, facts: Facts) -> str | None:
    """Why the ctypes type `declared` is not the C type `c_type`, or None when it is."""
    if c_type == "void":
        return None if declared is None else f"{c_type} is declared {declared}"
    if "(*)" in c_type:  # an inline function pointer (a struct's field)
        returned, rest = c_type.split("(*)", 1)
        arguments = [part.strip() for part in rest.strip()[1:-1].split(",") if part.strip() not in ("", "void")]
        return _callback_mismatch((returned.strip(), arguments), declared, facts)
    if _base(c_type) in facts.callbacks:
        return _callback_mismatch(facts.callbacks[_base(c_type)], declared, facts)
    pointee = _pointee(c_type)
    if pointee is not None:
        if declared is ctypes.c_void_p:
            return None
        if declared is ctypes.c_char_p:
            return None if _base(pointee) == "char" else f"{c_type} is declared c_char_p"
        target = getattr(declared, "_type_", None)
        if not isinstance(declared, type) or not issubclass(declared, ctypes._Pointer) or target is None:
            return f"{c_type} is declared {declared.__name__}, not a pointer"
        return mismatch(pointee, target, facts)
    base = _base(c_type)
    if base in facts.structs or base.removeprefix("struct ") in facts.structs:
        name = base.removeprefix("struct ")
        expected = {"portal_auth_options": _native.Options, "portal_auth_storage_callbacks": _native.StorageCallbacks}.get(name)
        return None if declared is expected else f"{c_type} is declared {declared}"
    if base in facts.scalars:
        size, signed, kind = facts.scalars[base]
        if not isinstance(declared, type) or not issubclass(declared, ctypes._SimpleCData) or declared in POINTERS:
            return f"{c_type} is declared {declared}, not an integer"
        declared_signed = declared._type_ in "bhilq"
        if ctypes.sizeof(declared) != size:
            return f"{c_type} has {size} bytes, {declared.__name__} {ctypes.sizeof(declared)}"
        if kind == "int" and declared_signed != signed:
            return f"{c_type} is {'signed' if signed else 'unsigned'}, {declared.__name__} is not"
        return None
    return f"{c_type}: a type the check does not know"


def _callback_mismatch(signature: tuple[str, list[str]], declared: Any, facts: Facts) -> str | None:
    returned, arguments = signature
    restype, argtypes = getattr(declared, "_restype_", "missing"), getattr(declared, "_argtypes_", None)
    if restype == "missing" or argtypes is None:
        return f"a callback is declared {declared}, not a CFUNCTYPE"
    if len(argtypes) != len(arguments):
        return f"a callback takes {len(arguments)} parameters, its CFUNCTYPE {len(argtypes)}"
    problems = [mismatch(returned, restype, facts)] + [mismatch(a, d, facts) for a, d in zip(arguments, argtypes)]
    found = [problem for problem in problems if problem]
    return "; ".join(found) or None


def prototype_problems(facts: Facts) -> list[str]:
    problems = []
    for name, (restype, argtypes) in _native._PROTOTYPES.items():
        if name not in facts.functions:
            problems.append(f"{name} is declared in _native, not in the header")
            continue
        returned, parameters = facts.functions[name]
        if len(parameters) != len(argtypes):
            problems.append(f"{name}: {len(parameters)} parameters in the header, {len(argtypes)} in _native")
            continue
        for index, (c_type, declared) in enumerate([(returned, restype), *zip(parameters, argtypes)]):
            problem = mismatch(c_type, declared, facts)
            if problem:
                problems.append(f"{name}: {'the return' if index == 0 else f'parameter {index}'}: {problem}")
    for name in facts.functions:
        if name not in _native._PROTOTYPES and name not in UNUSED:
            problems.append(f"{name} is declared in the header: declare it in _native._PROTOTYPES, or say in UNUSED why not")
    return problems


def struct_problems(facts: Facts) -> list[str]:
    problems = []
    for name, structure in (("portal_auth_options", _native.Options), ("portal_auth_storage_callbacks", _native.StorageCallbacks)):
        if ctypes.sizeof(structure) != facts.structs[name]:
            problems.append(f"{name}: {facts.structs[name]} bytes in C, {ctypes.sizeof(structure)} in _native")
        ours = [field[0] for field in structure._fields_]
        theirs = [field[0] for field in facts.fields[name]]
        if ours != theirs:
            problems.append(f"{name}: the fields are {theirs} in C, {ours} in _native")
            continue
        for (field, offset, size, c_type), (_, declared) in zip(facts.fields[name], structure._fields_):
            described = getattr(structure, field)
            if (described.offset, described.size) != (offset, size):
                problems.append(f"{name}.{field}: at {offset}, {size} bytes in C; at {described.offset}, {described.size} in _native")
            problem = mismatch(c_type, declared, facts)
            if problem:
                problems.append(f"{name}.{field}: {problem}")
    return problems


def constant_problems(facts: Facts) -> list[str]:
    problems = []
    for attribute, value in vars(_native).items():
        name = f"PORTAL_AUTH_{attribute}"
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", attribute) and isinstance(value, int) and name in facts.constants:
            if facts.constants[name] != value:
                problems.append(f"{name} is {facts.constants[name]} in the header, {value} in _native")
    codes = {name: value for name, value in facts.constants.items() if name.startswith("PORTAL_AUTH_E_")}
    for name, value in codes.items():
        if getattr(_native, name.removeprefix("PORTAL_AUTH_"), None) != value:
            problems.append(f"{name} ({value}) is not _native.{name.removeprefix('PORTAL_AUTH_')}")
    reasons = {name.removeprefix("PORTAL_AUTH_REASON_"): value for name, value in facts.constants.items()
               if name.startswith("PORTAL_AUTH_REASON_") and name != "PORTAL_AUTH_REASON_NONE"}
    kinds = (_reasons.StorageFailureReason, _reasons.SignInUnavailableReason, _reasons.SignInClosedReason,
             _reasons.UnauthorizedReason, _reasons.NetworkFailureReason)
    enums = {member.name: member.value for kind in kinds for member in kind}
    if enums != reasons:
        problems.append(f"the reasons are {reasons} in the header, {enums} in the enums")
    return problems


def test_every_prototype_has_the_header_s_types(facts: Facts) -> None:
    assert prototype_problems(facts) == []
    assert len(facts.functions) >= 50  # the parser saw the header


def test_the_structs_have_the_header_s_fields_offsets_and_sizes(facts: Facts) -> None:
    assert struct_problems(facts) == []


def test_every_constant_code_and_reason_has_the_header_s_value(facts: Facts) -> None:
    assert constant_problems(facts) == []


def test_every_code_of_the_header_is_read_into_its_own_exception(facts: Facts) -> None:
    read = set(_error_handles._SIMPLE) | set(_error_handles._WITH_FIELDS)
    codes = {name: code for name, code in facts.constants.items() if name.startswith("PORTAL_AUTH_E_")}
    assert {name for name, code in codes.items() if code not in read} == {"PORTAL_AUTH_E_INTERNAL"}
    for code, kind in _error_handles._SIMPLE.items():
        assert kind is not errors.PortalAuthError and type(_error_handles.from_code(code, "")) is kind


def test_every_code_of_the_header_has_its_name_and_a_message_from_the_library(facts: Facts) -> None:
    library = _native.lib()
    for function in (library.portal_auth_code_name, library.portal_auth_code_message):
        function.restype, function.argtypes = ctypes.c_char_p, [ctypes.c_int32]
    codes = {name: code for name, code in facts.constants.items() if name.startswith("PORTAL_AUTH_E_") or name == "PORTAL_AUTH_OK"}
    assert len(codes) > 20
    for name, code in codes.items():
        assert isinstance(code, int)
        assert library.portal_auth_code_name(code) == name.removeprefix("PORTAL_AUTH_E_").removeprefix("PORTAL_AUTH_").encode()
        message = library.portal_auth_code_message(code)
        assert message and message.endswith(b".")
    assert library.portal_auth_code_name(12345) is None and library.portal_auth_code_message(-1) is None


def test_the_default_request_timeout_is_the_header_s() -> None:
    header = HEADER.read_text(encoding="utf-8")
    said = re.search(r"How long a whole request may take; zero or less: ([\d,]+) ms", header)
    assert said is not None and int(said[1].replace(",", "")) == _native.DEFAULT_REQUEST_TIMEOUT_MS


def test_the_library_loaded_is_the_header_s_version() -> None:
    assert _native.text(_native.lib().portal_auth_version()) == portal_auth.__version__


def _changed(tmp_path: Path, old: str, new: str) -> Facts:
    header = HEADER.read_text(encoding="utf-8")
    assert old in header
    changed = tmp_path / "portal_auth.h"
    changed.write_text(header.replace(old, new, 1), encoding="utf-8")
    return read_facts(changed)


def test_the_checks_see_a_header_that_differs(tmp_path: Path) -> None:
    # A parameter's type (ptrdiff_t where _native has c_size_t), a return type, a function added.
    facts = _changed(tmp_path, "const char *portal_auth_methods_at(const portal_auth_methods *methods, size_t index);",
                     "const char *portal_auth_methods_at(const portal_auth_methods *methods, ptrdiff_t index);")
    assert prototype_problems(facts) == ["portal_auth_methods_at: parameter 2: ptrdiff_t is signed, c_ulong is not"]
    facts = _changed(tmp_path, "size_t portal_auth_run_completions(void);", "int32_t portal_auth_run_completions(void);")
    assert prototype_problems(facts) == ["portal_auth_run_completions: the return: int32_t has 4 bytes, c_ulong 8"]
    facts = _changed(tmp_path, "void portal_auth_bytes_free(uint8_t *bytes);",
                     "void portal_auth_bytes_free(uint8_t *bytes);\nvoid portal_auth_new_call(void);")
    assert len(prototype_problems(facts)) == 1
    # A callback's parameter.
    facts = _changed(tmp_path, "typedef void (*portal_auth_done_fn)(void *user_data, const portal_auth_error *error);",
                     "typedef void (*portal_auth_done_fn)(void *user_data, int32_t error);")
    assert any("portal_auth_send_magic_link" in problem for problem in prototype_problems(facts))
    # A field added at the end of the options, and one moved.
    facts = _changed(tmp_path, "    const char *ca_file;\n} portal_auth_options;",
                     "    const char *ca_file;\n    const char *added_field;\n} portal_auth_options;")
    assert len(struct_problems(facts)) == 2  # its size and its fields
    facts = _changed(tmp_path, "    int32_t connect_timeout_ms;\n    /** How long a whole request may take; zero or less: 30,000 ms. */\n    int32_t request_timeout_ms;",
                     "    int64_t connect_timeout_ms;\n    /** How long a whole request may take; zero or less: 30,000 ms. */\n    int32_t request_timeout_ms;")
    assert struct_problems(facts) != []
    # A constant's value, and a new code.
    facts = _changed(tmp_path, "PORTAL_AUTH_E_NETWORK = 22,", "PORTAL_AUTH_E_NETWORK = 23,")
    assert len(constant_problems(facts)) == 2  # _native's value, and the code's name
    facts = _changed(tmp_path, "PORTAL_AUTH_REASON_NETWORK_FAILED = 76", "PORTAL_AUTH_REASON_NETWORK_FAILED = 76,\n    PORTAL_AUTH_REASON_NEW = 77")
    assert len(constant_problems(facts)) == 1
