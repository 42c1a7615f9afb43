"""The emulator stands alone: its modules import the standard library and each other only,
so that it installs and runs without the binding, the library or anything from PyPI."""

import ast
import sys
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "portal_auth_emulator"


def outside_imports(source: str) -> set[str]:
    """The top-level packages `source` imports that are neither the standard library's nor
    its own (relative imports)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return {name.split(".")[0] for name in names} - sys.stdlib_module_names


class StandaloneTests(unittest.TestCase):
    def test_the_package_imports_only_the_standard_library_and_itself(self):
        modules = sorted(PACKAGE.glob("*.py"))
        self.assertIn(PACKAGE / "server.py", modules)
        found = {path.name: outside_imports(path.read_text(encoding="utf-8")) for path in modules}
        self.assertEqual({name: imported for name, imported in found.items() if imported}, {})

    def test_the_check_sees_the_binding_and_ignores_the_package_s_own_modules(self):
        source = "import json\nfrom . import jwt\nfrom .urls import append_query\n"
        self.assertEqual(outside_imports(source), set())
        self.assertEqual(outside_imports(source + "import portal_auth._native\n"), {"portal_auth"})
        self.assertEqual(outside_imports("def f():\n    from portal_auth import errors\n"), {"portal_auth"})


if __name__ == "__main__":
    unittest.main()
