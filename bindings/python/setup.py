"""Builds the package with libportalauth.so.0 inside it, beside its modules (where the binding
looks first), stripped and under its soname, as `make install` lays it out.

The library comes from PORTAL_AUTH_LIBRARY when set (a library built already), else from
the sdist being built (which carries it), else from the repository this folder is in
(scripts/install.sh builds and installs it in a temporary prefix). The sdist carries the
library it was made with, so that a wheel builds from it anywhere.

The wheel is not tied to one CPython (the binding is ctypes only): it is tagged
py3-none-manylinux_<glibc>_<machine>, where the glibc is the first manylinux policy's at or
above the newest version the library's symbols need, read from the library (readelf) as the
wheel is made."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
LIBRARY = "libportalauth.so.0"
# An unpacked sdist has its PKG-INFO, and carries the library.
CARRIED = HERE / "portal_auth" / LIBRARY if (HERE / "PKG-INFO").is_file() else None
INSTALL = HERE.parents[1] / "scripts" / "install.sh"  # in the repository
# ELF e_machine values and the wheel platforms' names for them.
MACHINES = {62: "x86_64", 183: "aarch64"}


def copy_library(target: Path) -> None:
    """Copies the library to carry to `target`: PORTAL_AUTH_LIBRARY, the sdist's own, or the
    repository's, installed (stripped) in a temporary prefix."""
    override = os.environ.get("PORTAL_AUTH_LIBRARY")
    carried = override or CARRIED
    if carried:
        shutil.copyfile(carried, target)
    elif INSTALL.is_file():
        with tempfile.TemporaryDirectory(prefix="portal-auth-") as prefix:
            subprocess.run([str(INSTALL), prefix], check=True, stdout=subprocess.DEVNULL)
            shutil.copyfile(Path(prefix) / "lib" / LIBRARY, target)
    else:
        raise RuntimeError(f"no {LIBRARY}: set PORTAL_AUTH_LIBRARY to a built library (`make library` in the repository)")
    target.chmod(0o755)


# The glibc versions of the manylinux policies auditwheel checks wheels against (each a
# distribution's): a wheel is tagged with the first at or above what its library needs.
POLICY_GLIBCS = [(2, 17), (2, 24), (2, 26), (2, 27), (2, 28), (2, 31), (2, 34), (2, 35), (2, 36), (2, 37),
                 (2, 38), (2, 39), (2, 40), (2, 41)]


def platform_tag(built: Path) -> str:
    """manylinux_<major>_<minor>_<machine>: the first policy's glibc at or above the newest
    GLIBC_ version the library needs."""
    with built.open("rb") as elf:
        header = elf.read(20)
    if header[:4] != b"\x7fELF":
        raise RuntimeError(f"{built} is not an ELF library")
    machine = MACHINES.get(struct.unpack("<H", header[18:20])[0])
    needs = subprocess.run(["readelf", "--version-info", "--wide", str(built)], check=True, capture_output=True, text=True)
    versions = {tuple(map(int, found)) for found in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", needs.stdout)}
    if machine is None or not versions:
        raise RuntimeError(f"cannot tell the platform {built} needs")
    need = max(versions)
    major, minor = next((glibc for glibc in POLICY_GLIBCS if glibc >= need), need)
    return f"manylinux_{major}_{minor}_{machine}"


class BuildWithLibrary(build_py):
    """Copies the library into the built package."""

    def run(self) -> None:
        super().run()
        copy_library(Path(self.build_lib) / "portal_auth" / LIBRARY)


class SdistWithLibrary(sdist):
    """Puts the library into the sdist's tree, so that a wheel builds from the sdist alone."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        copy_library(Path(base_dir) / "portal_auth" / LIBRARY)


class BinaryDistribution(Distribution):
    """A native library inside: built and installed as platform code (platlib), not pure."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    """A wheel for any Python 3 (ctypes only) on the glibc the library needs."""

    def get_tag(self) -> tuple[str, str, str]:
        built = Path(self.bdist_dir) / "portal_auth" / LIBRARY
        if not built.is_file():  # get_tag may be asked before the build: build first
            self.run_command("build")
            built = Path(self.get_finalized_command("build").build_lib) / "portal_auth" / LIBRARY
        return "py3", "none", platform_tag(built)


setup(
    cmdclass={"build_py": BuildWithLibrary, "sdist": SdistWithLibrary, "bdist_wheel": PlatformWheel},
    distclass=BinaryDistribution,
)
