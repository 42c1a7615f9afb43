"""Lifetimes across the boundary: a client closed with calls in flight, callbacks that
outlive everything the caller dropped, blocking calls while the library calls back into
Python, and where the library is found."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import CALLBACK, Emulator

import portal_auth
from portal_auth import AsyncPortalAuth, AuthenticatedResult, PortalAuth, _native


def test_closing_a_client_with_calls_in_flight(emu: Emulator) -> None:
    env = emu.environment(totp=False)
    url = emu.grant_redirect(env, "inflight@example.com")
    emu.fault("/methods", "hold", count=0)
    emu.fault("/magic-links/validations", "hold")

    async def main() -> None:
        auth = AsyncPortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, storage="memory")
        methods = [asyncio.ensure_future(auth.get_methods()) for _ in range(8)]
        exchange = asyncio.ensure_future(auth.handle_redirect(url))
        await asyncio.to_thread(emu.wait, "/methods", 8)
        await asyncio.to_thread(emu.wait, "/magic-links/validations", 1)
        await auth.close()
        del auth
        gc.collect()  # nothing the calls need may go with the client object
        emu.call("DELETE", "faults")
        results = await asyncio.gather(*methods, exchange)
        assert all(isinstance(result, portal_auth.AuthMethodsResult) for result in results[:8])
        assert isinstance(results[8], AuthenticatedResult)

    asyncio.run(main())


def test_blocking_calls_from_threads_while_a_host_store_calls_back(emu: Emulator) -> None:
    """The library calls the store (Python) on its own thread while Python threads wait in
    blocking calls: no thread may hold the GIL while it waits for the library."""
    env = emu.environment(totp=False)

    class SlowStore:
        def __init__(self) -> None:
            self.value: str | None = None

        def get(self) -> str | None:
            sum(range(10_000))  # Python work under the GIL, on the library's thread
            return self.value

        def set(self, raw: str) -> None:
            self.value = raw

        def delete(self) -> None:
            self.value = None

    with PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, storage=SlowStore()) as auth:
        failures: list[BaseException] = []

        def work(index: int) -> None:
            try:
                auth.handle_redirect(emu.grant_redirect(env, f"gil{index}@example.com"))
                for _ in range(5):
                    auth.restore_session()
            except BaseException as error:  # noqa: BLE001
                failures.append(error)

        threads = [threading.Thread(target=work, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)
        assert failures == []


@pytest.mark.installed
def test_the_installed_package_carries_its_library_by_its_soname() -> None:
    package = Path(portal_auth.__file__).parent
    assert (package / "libportalauth.so.0").is_file()
    assert (package / "py.typed").is_file()
    dynamic = subprocess.run(["readelf", "-d", str(package / "libportalauth.so.0")], capture_output=True, text=True, check=True)
    assert "Library soname: [libportalauth.so.0]" in dynamic.stdout
    found = subprocess.run(
        [sys.executable, "-c", "from portal_auth import _native; print(_native.library_path())"],
        capture_output=True, text=True, check=True, env={k: v for k, v in os.environ.items() if k != "PORTAL_AUTH_LIBRARY"},
    )
    assert found.stdout.strip() == str(package / "libportalauth.so.0")


@pytest.mark.installed
def test_portal_auth_library_names_the_library(tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere.so"
    copy.write_bytes((Path(portal_auth.__file__).parent / "libportalauth.so.0").read_bytes())
    program = (
        "from portal_auth import PortalAuth, _native\n"
        "PortalAuth(auth_environment_id='e', redirect_url='myapp://x', storage='memory').close()\n"
        "print(_native.library_path())\n"
    )
    used = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True,
        env=dict(os.environ, PORTAL_AUTH_LIBRARY=str(copy)),
    )
    assert used.stdout.strip() == str(copy)
    relative = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=tmp_path,
        env=dict(os.environ, PORTAL_AUTH_LIBRARY="elsewhere.so"),
    )
    assert relative.stdout.strip() == str(copy)
    missing = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True,
        env=dict(os.environ, PORTAL_AUTH_LIBRARY=str(tmp_path / "missing.so")),
    )
    assert missing.returncode == 1 and "LibraryNotFound" in missing.stderr and "missing.so" in missing.stderr


def test_a_package_without_its_library_loads_the_systems_by_soname(tmp_path: Path) -> None:
    # As a distribution installs it: the package alone, the library in the loader's path.
    library = Path(_native.library_path()).resolve()
    package = tmp_path / "site" / "portal_auth"
    shutil.copytree(Path(portal_auth.__file__).parent, package, ignore=shutil.ignore_patterns("*.so*", "__pycache__"))
    system = tmp_path / "system-lib"
    system.mkdir()
    (system / "libportalauth.so.0").symlink_to(library)
    program = (
        "from portal_auth import PortalAuth, _native\n"
        "PortalAuth(auth_environment_id='e', redirect_url='myapp://x', storage='memory').close()\n"
        "print(_native.library_path())\n"
    )
    environment = {k: v for k, v in os.environ.items() if k not in ("PORTAL_AUTH_LIBRARY", "LD_LIBRARY_PATH")}
    environment["PYTHONPATH"] = str(package.parent)
    used = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=tmp_path,
        env=dict(environment, LD_LIBRARY_PATH=str(system)),
    )
    assert used.stdout.strip() == "libportalauth.so.0"
    missing = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path, env=environment)
    assert missing.returncode == 1 and "LibraryNotFound" in missing.stderr
    assert "nor in the system's library path" in missing.stderr


def test_importing_the_package_loads_no_library() -> None:
    program = "from portal_auth import PortalAuth, _native; print(_native._loaded is None)"
    checked = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True,
        env=dict(os.environ, PORTAL_AUTH_LIBRARY="/nonexistent/libportalauth.so"),
    )
    assert checked.stdout.strip() == "True"


def _exit_during_an_exchange(emu: Emulator, env: str, email: str, store: str = "") -> None:
    """A process that exits while its exchange (slowed down) is in flight, in a daemon
    thread, exits cleanly. `store`: the source of a class Store to keep the session in."""
    url = emu.grant_redirect(env, email)
    emu.fault("/magic-links/validations", "latency", ms=300)
    storage = ", storage=Store()" if store else ""
    program = (
        "import sys, threading\n"
        "from portal_auth import PortalAuth\n"
        f"{store}"
        f"auth = PortalAuth(auth_environment_id=sys.argv[1], redirect_url=sys.argv[2], api_host=sys.argv[3]{storage})\n"
        "results = []\n"
        "threading.Thread(target=lambda: results.append(auth.handle_redirect(sys.argv[4])), daemon=True).start()\n"
        "import urllib.request\n"
        "urllib.request.urlopen(sys.argv[3] + '/_emulator/wait?path=/magic-links/validations&count=1').read()\n"
    )
    exited = subprocess.run(
        [sys.executable, "-c", program, env, CALLBACK, emu.url, url], capture_output=True, text=True, timeout=60
    )
    assert exited.returncode == 0, exited.stderr


def test_exit_with_a_call_in_flight_completes_it_first(emu: Emulator) -> None:
    """At exit the binding waits for calls in flight (the library's timeouts bound it), so no
    library thread calls into a finalising interpreter and a sent exchange still persists."""
    env = emu.environment(totp=False)
    _exit_during_an_exchange(emu, env, "exit@example.com")
    with PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url) as auth:
        assert auth.restore_session() is not None


def test_exit_lets_go_of_a_host_store_whose_session_a_call_in_flight_makes(emu: Emulator) -> None:
    """The exchange in flight at exit completes during the exit's wait and makes a session;
    exit releases it too, so the library lets go of the host's store and the process ends
    (it used to wait for ever: the session was made after the releases at exit had run)."""
    store = (
        "class Store:\n"
        "    value = None\n"
        "    def get(self): return self.value\n"
        "    def set(self, raw): self.value = raw\n"
        "    def delete(self): self.value = None\n"
    )
    _exit_during_an_exchange(emu, emu.environment(totp=False), "exit-store@example.com", store)
