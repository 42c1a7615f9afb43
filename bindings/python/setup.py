"""Builds the package with libportalauth.so.0 inside it, beside its modules (where the binding
looks first), stripped and under its soname, as `make install` lays it out.

The library comes from PORTAL_AUTH_LIBRARY when set (a library built already), else from
the repository this folder is in (scripts/install.sh builds and installs it in a temporary
prefix). The sdist carries no library: a wheel built from it alone (where neither is at
hand) carries none either, and loads the system's libportalauth.so.0 by its soname (the
Debian package libportalauth0, or the release archive's lib/ in the loader's path).

A wheel with the library is not tied to one CPython from 3.11 on (the binding is ctypes only): it is
tagged py3-none-manylinux_<glibc>_<machine>, where the glibc is the first manylinux policy's
at or above the newest version the library's symbols need, read from the library (readelf)
as the wheel is made. One without is py3-none-any."""

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
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
LIBRARY = "libportalauth.so.0"
INSTALL = HERE.parents[1] / "scripts" / "install.sh"  # in the repository, not in an sdist
# ELF e_machine values and the wheel platforms' names for them.
MACHINES = {62: "x86_64", 183: "aarch64"}


def carries_library() -> bool:
    """Whether the wheel carries a library: one is named, or the repository can build one."""
    return bool(os.environ.get("PORTAL_AUTH_LIBRARY")) or INSTALL.is_file()


def copy_library(target: Path) -> None:
    """Copies the library to carry to `target`: PORTAL_AUTH_LIBRARY, or the repository's,
    installed (stripped) in a temporary prefix."""
    override = os.environ.get("PORTAL_AUTH_LIBRARY")
    if override:
        shutil.copyfile(override, target)
    else:
        with tempfile.TemporaryDirectory(prefix="portal-auth-") as prefix:
            subprocess.run([str(INSTALL), prefix], check=True, stdout=subprocess.DEVNULL)
            shutil.copyfile(Path(prefix) / "lib" / LIBRARY, target)
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
    """Copies the library into the built package, when there is one to carry."""

    def run(self) -> None:
        super().run()
        if carries_library():
            copy_library(Path(self.build_lib) / "portal_auth" / LIBRARY)


class BinaryDistribution(Distribution):
    """With a native library inside: built and installed as platform code (platlib), not pure."""

    def has_ext_modules(self) -> bool:
        return carries_library()


class PlatformWheel(bdist_wheel):
    """A wheel for any Python 3 (ctypes only) on the glibc its library needs; without a
    library, for any platform."""

    def get_tag(self) -> tuple[str, str, str]:
        if not carries_library():
            return "py3", "none", "any"
        built = Path(self.bdist_dir) / "portal_auth" / LIBRARY
        if not built.is_file():  # get_tag may be asked before the build: build first
            self.run_command("build")
            built = Path(self.get_finalized_command("build").build_lib) / "portal_auth" / LIBRARY
        return "py3", "none", platform_tag(built)


setup(
    cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
    distclass=BinaryDistribution,
)
