"""Puts the library inside the package as libportalauth.so.0, its soname, next to its
modules (where the binding looks first), so that `pip install ./bindings/python` carries the
library. The library comes from PORTAL_AUTH_LIBRARY when set, else from the repository's
release build (built when missing). The version is the C header's own."""

import os
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[1]
LIBRARY = "libportalauth.so.0"


def version() -> str:
    header = (REPOSITORY / "include" / "portal_auth.h").read_text(encoding="utf-8")
    match = re.search(r'#define PORTAL_AUTH_VERSION_STRING "([^"]+)"', header)
    if match is None:
        raise RuntimeError("PORTAL_AUTH_VERSION_STRING not found in include/portal_auth.h")
    return match.group(1)


def library() -> Path:
    override = os.environ.get("PORTAL_AUTH_LIBRARY")
    if override:
        return Path(override)
    built = subprocess.run(
        [str(REPOSITORY / "scripts" / "build-library.sh")], check=True, stdout=subprocess.PIPE, text=True
    )
    return Path(built.stdout.strip().splitlines()[-1])


class BuildWithLibrary(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "portal_auth" / LIBRARY
        shutil.copyfile(library(), target)


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tagged for this platform, not as pure Python."""

    def has_ext_modules(self) -> bool:
        return True


setup(version=version(), cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
