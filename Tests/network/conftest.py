"""A company's network on one machine, for the tests beside this file: run only through
`scripts/test.sh network`, which starts pytest inside private network and mount namespaces
(`unshare --net --mount`). There this sets up, on loopback alone:

- private /etc/hosts and /etc/resolv.conf, bound over the machine's (which stay untouched):
  portal.test, wrong.test and proxy.test are 127.0.0.1; every other name goes to
  nameserver.py, which never answers for stalled.test and says "no such name" otherwise;
- a private certificate authority, and nginx serving https://portal.test with a certificate
  it signed (valid for 30 days, for portal.test alone) in front of the Portal emulator;
- tinyproxy four times: open (3128), asking for credentials (3129), allowing CONNECT to
  port 8443 only (3130), and open but running as the user nobody (3131), as a system's
  proxy runs.

Every service stops when the session ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
EMULATOR = "http://127.0.0.1:8787"
PROXY_USER, PROXY_PASSWORD = "employee", "s3cret-proxy-word"


class Service:
    """A program started for the session, its output read as it comes by a thread of its own
    (so it never blocks on a full pipe), and kept for the tests to read."""

    def __init__(self, name: str, *command: str, ready: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self._more = threading.Condition()
        self._ready = threading.Event()
        self._marker = ready
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(timeout=30) or self.process.poll() is not None:
            raise RuntimeError(f"{name} did not start: {''.join(self.lines[-5:])}")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._more:
                self.lines.append(line)
                self._more.notify_all()
            if self._marker in line:
                self._ready.set()
        self._ready.set()
        with self._more:
            self._more.notify_all()

    def lines_from(self, start: int) -> Iterator[str]:
        """The output's lines from line `start` on, each as it comes, until the program ends."""
        seen = start
        while True:
            with self._more:
                self._more.wait_for(lambda: seen < len(self.lines) or self.process.poll() is not None, timeout=60)
                if seen >= len(self.lines):
                    return
                line = self.lines[seen]
            seen += 1
            yield line

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


@dataclass
class Network:
    folder: Path
    ca_file: Path
    ca_folder: Path
    services: dict[str, Service]

    def proxy_log(self, name: str) -> str:
        return self.services[f"tinyproxy-{name}"].output

    def nginx_requests(self) -> int:
        return len((self.folder / "access.log").read_text(encoding="utf-8").splitlines())

    def control(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(EMULATOR + "/_emulator/" + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        # The emulator is loopback, reached directly whatever a test's proxy variables say.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def outbox_link(self, email: str) -> str:
        messages = self.control("GET", f"outbox?email={email}&count=1")["messages"]
        return str(messages[-1]["link"])


def _in_private_namespaces() -> bool:
    """Whether this runs where scripts/test.sh network starts it: a network namespace of its
    own (no interface but loopback), which the script makes with a mount namespace."""
    with open("/proc/self/net/dev", encoding="ascii") as devices:
        interfaces = {line.split(":")[0].strip() for line in devices.readlines()[2:]}
    return interfaces == {"lo"} and os.environ.get("PORTAL_AUTH_TEST_PRIVATE_NAMESPACES") == "1"


def _run(*command: str) -> None:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _make_pki(folder: Path) -> tuple[Path, Path]:
    ca_key, ca_file = folder / "ca.key", folder / "ca.pem"
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=Company Root CA",
         "-keyout", str(ca_key), "-out", str(ca_file))
    (folder / "server.ext").write_text("subjectAltName=DNS:portal.test\n", encoding="utf-8")
    _run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=portal.test",
         "-keyout", str(folder / "server.key"), "-out", str(folder / "server.csr"))
    _run("openssl", "x509", "-req", "-in", str(folder / "server.csr"), "-CA", str(ca_file), "-CAkey", str(ca_key),
         "-CAcreateserial", "-days", "30", "-extfile", str(folder / "server.ext"), "-out", str(folder / "server.pem"))
    # SSL_CERT_DIR's form: the certificate under its hashed name.
    ca_folder = folder / "certs"
    ca_folder.mkdir()
    shutil.copy(ca_file, ca_folder / "company.pem")
    _run("openssl", "rehash", str(ca_folder))
    return ca_file, ca_folder


NGINX = """pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log;
events {{}}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    server {{
        listen 127.0.0.1:443 ssl;
        ssl_certificate {folder}/server.pem;
        ssl_certificate_key {folder}/server.key;
        location / {{ proxy_pass {emulator}; }}
    }}
}}
"""

TINYPROXY = """Port {port}
Listen 127.0.0.1
Timeout 60
LogLevel Info
MaxClients 20
Allow 127.0.0.1
ConnectPort {connect_port}
{extra}
"""


@pytest.fixture(scope="session")
def network() -> Iterator[Network]:
    if not _in_private_namespaces():
        pytest.exit("Tests/network runs only through scripts/test.sh network (private network and mount namespaces)", 2)
    folder = Path(tempfile.mkdtemp(prefix="portal-auth-network-"))
    services: dict[str, Service] = {}
    try:
        _run("ip", "link", "set", "lo", "up")
        (folder / "hosts").write_text("127.0.0.1 localhost portal.test wrong.test proxy.test\n::1 localhost\n", encoding="utf-8")
        (folder / "resolv.conf").write_text("nameserver 127.0.0.1\noptions timeout:30 attempts:1\n", encoding="utf-8")
        for name in ("hosts", "resolv.conf"):
            _run("mount", "--bind", str(folder / name), f"/etc/{name}")
        ca_file, ca_folder = _make_pki(folder)
        services["nameserver"] = Service("nameserver", sys.executable, str(HERE / "nameserver.py"), ready="listening")
        services["emulator"] = Service("emulator", sys.executable, "-m", "portal_auth_emulator", "--port", "8787",
                                       "--stop-on-stdin-eof", ready="listening on")
        (folder / "nginx.conf").write_text(NGINX.format(folder=folder, emulator=EMULATOR), encoding="utf-8")
        # nginx puts itself in the background once its socket listens: ready when this returns.
        _run("nginx", "-p", str(folder), "-e", str(folder / "nginx-error.log"), "-c", str(folder / "nginx.conf"))
        proxies = {
            "open": (3128, 443, ""),
            "auth": (3129, 443, f"BasicAuth {PROXY_USER} {PROXY_PASSWORD}"),
            "strict": (3130, 8443, ""),
            "nobody": (3131, 443, "User nobody\nGroup nogroup"),
        }
        for name, (port, connect_port, extra) in proxies.items():
            conf = folder / f"tinyproxy-{name}.conf"
            conf.write_text(TINYPROXY.format(port=port, folder=folder, name=name, connect_port=connect_port, extra=extra),
                            encoding="utf-8")
            # In the foreground, tinyproxy logs to its standard output.
            services[f"tinyproxy-{name}"] = Service(f"tinyproxy-{name}", "tinyproxy", "-d", "-c", str(conf),
                                                    ready="Accepting connections")
        yield Network(folder, ca_file, ca_folder, services)
    finally:
        pid = folder / "nginx.pid"
        if pid.exists():
            os.kill(int(pid.read_text(encoding="utf-8")), signal.SIGTERM)
        for service in services.values():
            service.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with none of the variables it sets: they are read by each client made."""
    for name in ("http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
                 "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
