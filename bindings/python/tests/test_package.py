"""The package as its users and its maintainers read it: the layers of its modules (no import
cycle, errors at the bottom), its public names, what `import portal_auth` loads, the value
types of its results, the storage types, and its documentation (pyright --verifytypes at
full completeness, every docstring's citations in the repository)."""

from __future__ import annotations

import ast
import copy
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import portal_auth
from portal_auth import AuthenticatedResult, AuthMethod, AuthMethodsResult, AuthorizeUrlResult, MagicLinkConfig, TotpRequiredResult

PACKAGE = Path(portal_auth.__file__).parent
REPOSITORY = Path(__file__).resolve().parents[3]

# The binding's modules, lowest layer first: each imports at run time only modules of the
# layers below it. Imports for the type checkers alone never run, so they may name any
# module.
LAYERS = [
    {"_auth_method", "_codes", "_forwarding", "_values", "_threads", "_session_store"},
    {"errors"},
    {"_native"},
    {"_reason_base"},
    {"_reasons"},
    {"_error_handles"},
    {"_log", "totp"},
    {"_calls"},
    {"_awaited", "_storage", "_opener", "_paste"},
    {"session"},
    {"results"},
    {"_outcomes", "redirects"},
    {"client"},
    {"__init__"},
]


def imports(module: Path, typing_too: bool = True) -> set[str]:
    """The package's modules that `module` imports anywhere (at the top, in a function, and
    with `typing_too` for the type checkers only), by their names in the package."""
    found: set[str] = set()
    tree = ast.parse(module.read_text(encoding="utf-8"))
    if not typing_too:  # without the blocks under `if TYPE_CHECKING:`
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names if alias.name.startswith("portal_auth."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("portal_auth."):
            found.add(node.value.split(".")[1])  # a module named to be imported later
    return found


def test_the_modules_form_layers_without_a_cycle() -> None:
    layer_of = {name: index for index, layer in enumerate(LAYERS) for name in layer}
    modules = {path.stem: path for path in PACKAGE.glob("*.py")}
    assert set(modules) == set(layer_of), "every module has a layer"
    assert imports(modules["errors"], typing_too=False) == set(), "errors imports nothing else of the package"
    upward = [
        f"{name} (layer {layer_of[name]}) imports {imported} (layer {layer_of[imported]})"
        for name, path in modules.items()
        for imported in imports(path, typing_too=False)
        if name != "__init__" and layer_of[imported] >= layer_of[name]
    ]
    assert upward == []


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "errors.py"
    module.write_text("def f():\n    from . import client\n", encoding="utf-8")
    assert imports(module) == {"client"}
    module.write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .results import MagicLinkConfig\n", encoding="utf-8")
    assert imports(module) == {"results"} and imports(module, typing_too=False) == set()


def test_every_public_name_is_importable_and_listed() -> None:
    names = set(portal_auth.__all__) - {"__version__"}
    assert names == set(portal_auth._MODULES)
    for name in names:
        assert getattr(portal_auth, name) is not None
    assert set(portal_auth.__all__) <= set(dir(portal_auth))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        portal_auth.nothing  # noqa: B018


@pytest.mark.installed
def test_import_and_a_first_client_load_no_typing_dataclasses_or_enum() -> None:
    program = (
        "import sys, portal_auth\n"
        "portal_auth.PortalAuth(auth_environment_id='e', redirect_url='myapp://x').close()\n"
        "print(sorted(m for m in ('typing', 'dataclasses', 'inspect', 'enum', 'asyncio', 'logging', 'threading') if m in sys.modules))\n"
    )
    loaded = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, check=True, cwd="/")
    assert loaded.stdout.strip() == "[]"


# Value types.

def _totp_step() -> TotpRequiredResult:
    return TotpRequiredResult(user_jwt="eyJ.secret.jwt", totp_link="otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", end_user_id="eu_1",
                              expires_at=1_700_000_600)


VALUES = [
    (MagicLinkConfig, {"from_email": "a@example.com", "template_id": "t"}),
    (AuthMethodsResult, {"allowed_auth_methods": [AuthMethod.GOOGLE], "auto_create_wallet": True}),
    (AuthorizeUrlResult, {"authorize_url": "https://example.com/authorize"}),
    (TotpRequiredResult, {"user_jwt": "eyJ.secret.jwt", "totp_link": "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", "end_user_id": "eu_1",
                          "expires_at": 1_700_000_600}),
    (AuthenticatedResult, {"session": None, "client_id": "cl_1", "is_account_abstracted": None}),
]


@pytest.mark.parametrize(("kind", "fields"), VALUES, ids=[kind.__name__ for kind, _ in VALUES])
def test_results_are_immutable_values_with_exactly_the_contract_s_fields(kind: type, fields: dict[str, object]) -> None:
    value = kind(**fields)
    assert value.__slots__ == tuple(fields) and kind.__match_args__ == tuple(fields)
    assert not hasattr(value, "__dict__")
    assert {name: getattr(value, name) for name in fields} == fields
    assert value == kind(**fields) and value != kind(**{**fields, list(fields)[0]: "other"})
    assert value != object() and (value == object()) is False
    assert kind(*fields.values()) == value  # positionally too, in the contract's order
    name = list(fields)[0]
    with pytest.raises(AttributeError, match="immutable"):
        setattr(value, name, "changed")
    with pytest.raises(AttributeError, match="immutable"):
        delattr(value, name)
    with pytest.raises(AttributeError):
        value.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        kind(**fields, extra=1)
    assert copy.copy(value) == value and copy.deepcopy(value) == value
    if kind is not AuthenticatedResult:  # a session is not picklable
        assert pickle.loads(pickle.dumps(value)) == value
    hashable = not any(isinstance(field, list) for field in fields.values())
    if hashable:
        assert hash(value) == hash(kind(**fields)) and len({value, kind(**fields)}) == 1
    else:
        with pytest.raises(TypeError):
            hash(value)


def test_value_reprs_are_their_constructor_and_the_totp_step_s_hides_its_secrets() -> None:
    assert repr(MagicLinkConfig(from_email="a@example.com", template_id="t")) == "MagicLinkConfig(from_email='a@example.com', template_id='t')"
    assert eval(repr(AuthorizeUrlResult(authorize_url="https://x"))) == AuthorizeUrlResult(authorize_url="https://x")  # noqa: S307
    shown = repr(_totp_step())
    assert "secret" not in shown and "JBSW" not in shown and "eyJ" not in shown
    assert shown == "TotpRequiredResult(user_jwt='<redacted>', totp_link='<redacted>', end_user_id='eu_1', expires_at=1700000600)"
    assert repr(TotpRequiredResult(user_jwt="j", totp_link=None, end_user_id="")).count("<redacted>") == 1


def test_a_kept_totp_link_makes_a_step_by_keyword() -> None:
    step = _totp_step()
    assert step.totp_secret == "JBSWY3DPEHPK3PXP"
    assert step.qr_code_png(2).startswith(b"\x89PNG")
    match step:
        case TotpRequiredResult(user_jwt, _, end_user_id):  # as code written before expires_at
            assert (user_jwt, end_user_id) == ("eyJ.secret.jwt", "eu_1")


# Storage.

def test_an_unknown_storage_names_what_is_accepted() -> None:
    for storage, shown in (("keyring", "'keyring'"), (42, "a int"), (object(), "a object")):
        with pytest.raises(portal_auth.InvalidArgument) as raised:
            portal_auth.PortalAuth(auth_environment_id="e", redirect_url="myapp://x", storage=storage)  # type: ignore[arg-type]
        assert raised.value.name == "storage"
        message = str(raised.value)
        assert shown in message and '"memory"' in message and "SessionStore" in message and "keyring" in message


def test_storage_types_are_exported_and_a_store_is_a_session_store() -> None:
    class Store:
        def get(self) -> str | None:
            return None

        def set(self, raw: str) -> None:
            pass

        def delete(self) -> None:
            pass

    assert isinstance(Store(), portal_auth.SessionStore)
    assert not isinstance(object(), portal_auth.SessionStore)
    assert "Literal['memory', 'file']" in str(portal_auth.Storage) and "SessionStore" in str(portal_auth.Storage)
    storage: portal_auth.Storage = Store()
    with portal_auth.PortalAuth(auth_environment_id="e", redirect_url="myapp://x", storage=storage):
        pass


# Documentation.

def test_pyright_verifytypes_reports_full_completeness_and_every_docstring(tmp_path: Path) -> None:
    pyright = shutil.which("pyright", path=os.path.dirname(sys.executable))
    assert pyright is not None, "pyright (PyPI) is installed beside this interpreter"
    environment = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    checked = subprocess.run(
        [pyright, "--outputjson", "--verifytypes", "portal_auth"], capture_output=True, text=True, cwd=tmp_path, env=environment
    )
    report = json.loads(checked.stdout)
    completeness = report["typeCompleteness"]
    problems = [f"{d['severity']}: {d['message']}" for d in report.get("generalDiagnostics", []) if d["severity"] != "information"]
    # Its own symbols (the counts of the report include what they inherit from the standard library).
    own = [s for s in completeness["symbols"] if s["name"].startswith(("portal_auth", "."))]
    undocumented = [f"{s['name']}: {d['message']}" for s in own for d in s["diagnostics"]]
    assert completeness["packageName"] == "portal_auth" and completeness["exportedSymbolCounts"]["withKnownType"] > 200
    assert (completeness["completenessScore"], problems, undocumented) == (1, [], [])


def test_docstrings_cite_only_documents_in_the_repository() -> None:
    cited = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                docstring = ast.get_docstring(node) or ""
                cited.update(re.findall(r"([\w./-]+\.md)\b", docstring))
    assert cited, "the docstrings cite the repository's notes"
    for document in cited:
        # A document outside the repository (a path out of it, or a name it has no file of) fails.
        inside = ".." not in Path(document).parts
        assert inside and ((REPOSITORY / document).is_file() or (REPOSITORY / "docs" / document).is_file()), document
