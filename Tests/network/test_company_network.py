"""A sign-in on a company's network (docs/network.md): its own certificate authority, its
proxies, a nameserver that stalls or says "no such name", a clock that drifts. Each failure
with no answer carries its reason. The setup is conftest.py's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EMULATOR, HERE, PROXY_PASSWORD, PROXY_USER, Network

from portal_auth import (
    AuthenticatedResult,
    MagicLinkConfig,
    NetworkError,
    NetworkFailureReason,
    PortalAuth,
    SignInClosed,
    SignInClosedReason,
    SignInUnavailable,
    SignInUnavailableReason,
)

CALLBACK = "myapp://auth/callback"
PROXY_VARIABLES = {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"}


def client(host: str = "portal.test", **options: object) -> PortalAuth:
    return PortalAuth(auth_environment_id="env-open", redirect_url=CALLBACK, api_host=host, storage="memory",
                      magic_link=MagicLinkConfig(from_email="hello@auth.example.com", template_id="tmpl-1"),
                      **options)  # type: ignore[arg-type]


def sign_in(network: Network, auth: PortalAuth) -> AuthenticatedResult:
    email = f"employee-{uuid.uuid4().hex[:8]}@example.com"
    auth.send_magic_link(email)
    result = auth.handle_redirect(network.outbox_link(email))
    assert isinstance(result, AuthenticatedResult)
    return result


def failure(auth: PortalAuth) -> NetworkError:
    with auth, pytest.raises(NetworkError) as raised:
        auth.get_methods()
    return raised.value


# The company's certificate authority.


def test_a_company_ca_nobody_named_is_untrusted(network: Network) -> None:
    error = failure(client())
    assert error.reason is NetworkFailureReason.CERTIFICATE_UNTRUSTED
    assert "(https://portal.test)" in str(error)


def test_ca_file_signs_in_through_the_company_ca(network: Network) -> None:
    before = network.nginx_requests()
    with client(ca_file=network.ca_file) as auth:
        sign_in(network, auth)
    assert network.nginx_requests() == before + 2


@pytest.mark.parametrize("variables", ["SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE"])
def test_the_environment_names_the_company_ca(network: Network, monkeypatch: pytest.MonkeyPatch, variables: str) -> None:
    monkeypatch.setenv(variables, str(network.ca_folder if variables == "SSL_CERT_DIR" else network.ca_file))
    with client() as auth:
        assert auth.get_methods().allowed_auth_methods


def test_curl_ca_bundle_comes_first_and_ca_file_before_it(network: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CURL_CA_BUNDLE", "/nonexistent/bundle.pem")
    monkeypatch.setenv("SSL_CERT_FILE", str(network.ca_file))
    assert failure(client()).reason is NetworkFailureReason.CA_FILE_UNUSABLE
    with client(ca_file=network.ca_file) as auth:
        assert auth.get_methods().allowed_auth_methods


def test_a_certificate_for_another_name_is_the_wrong_host(network: Network) -> None:
    error = failure(client("wrong.test", ca_file=network.ca_file))
    assert error.reason is NetworkFailureReason.CERTIFICATE_WRONG_HOST
    assert "(https://wrong.test)" in str(error)


@pytest.mark.parametrize(("shift", "reason"), [("+60d", "CERTIFICATE_EXPIRED"), ("-60d", "CERTIFICATE_NOT_YET_VALID")])
def test_a_clock_far_off_reads_the_certificate_as_out_of_its_dates(network: Network, shift: str, reason: str) -> None:
    script = (
        "import portal_auth, sys\n"
        "auth = portal_auth.PortalAuth(auth_environment_id='env-open', redirect_url='myapp://cb', api_host='portal.test',"
        " storage='memory', ca_file=sys.argv[1])\n"
        "try:\n    auth.get_methods()\nexcept portal_auth.NetworkError as error:\n    print(error.reason.name)\n"
    )
    ran = subprocess.run(["faketime", "-f", shift, sys.executable, "-c", script, str(network.ca_file)],
                         capture_output=True, text=True, timeout=120)
    assert ran.stdout.strip() == reason, ran.stderr


@pytest.mark.parametrize("shift", ["+10m", "-10m"])
def test_a_clock_ten_minutes_off_still_counts_the_totp_step_right(network: Network, shift: str) -> None:
    """The step's expiry is read against the server's Date: ten minutes left, and a typo is
    a typo, not an expired step, whichever way the machine's clock is off."""
    ran = subprocess.run(["faketime", "-f", shift, sys.executable, str(HERE / "skewed_client.py"), EMULATOR],
                         capture_output=True, text=True, timeout=120)
    seen = json.loads(ran.stdout or "{}") if ran.returncode == 0 else {"error": ran.stderr[-2000:]}
    assert seen.get("reason") == "TOTP_CODE_REJECTED", seen
    assert 540 <= seen["left"] <= 601, seen  # about ten minutes, not twenty nor none


# The company's proxies.


def test_the_proxy_of_https_proxy_carries_the_sign_in(network: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("https_proxy", "http://proxy.test:3128")
    with client(ca_file=network.ca_file) as auth:
        sign_in(network, auth)
    assert network.proxy_log("open").count("CONNECT portal.test:443") >= 1


def test_a_proxy_that_asks_for_credentials(network: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("https_proxy", "http://proxy.test:3129")
    assert failure(client(ca_file=network.ca_file)).reason is NetworkFailureReason.PROXY_AUTH_REQUIRED
    monkeypatch.setenv("https_proxy", f"http://{PROXY_USER}:wrong@proxy.test:3129")
    error = failure(client(ca_file=network.ca_file))
    assert error.reason is NetworkFailureReason.PROXY_AUTH_REQUIRED
    assert "wrong" not in str(error) and "through the proxy proxy.test:3129" in str(error)
    monkeypatch.setenv("https_proxy", f"http://{PROXY_USER}:{PROXY_PASSWORD}@proxy.test:3129")
    with client(ca_file=network.ca_file) as auth:
        sign_in(network, auth)
    # Percent-encoded, as a password with reserved characters must be: decoded for the proxy.
    encoded = "".join(f"%{ord(character):02X}" for character in PROXY_PASSWORD)
    monkeypatch.setenv("https_proxy", f"http://{PROXY_USER}:{encoded}@proxy.test:3129")
    with client(ca_file=network.ca_file) as auth:
        assert auth.get_methods().allowed_auth_methods


def test_a_proxy_that_refuses_the_tunnel(network: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("https_proxy", "http://proxy.test:3130")
    assert failure(client(ca_file=network.ca_file)).reason is NetworkFailureReason.PROXY_REFUSED


@pytest.mark.parametrize("proxy", ["http://proxy.test:3999", "http://missing-proxy.test:3128"])
def test_a_proxy_that_cannot_be_reached(network: Network, monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    monkeypatch.setenv("https_proxy", proxy)
    assert failure(client(ca_file=network.ca_file)).reason is NetworkFailureReason.PROXY_UNREACHABLE


def test_no_proxy_and_loopback_go_direct(network: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    # The proxy named cannot be reached: a request that went to it would fail.
    for name in ("https_proxy", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://proxy.test:3999")
    monkeypatch.setenv("no_proxy", "example.com,.test")
    with client(ca_file=network.ca_file) as auth:
        assert auth.get_methods().allowed_auth_methods
    monkeypatch.delenv("no_proxy")
    with client(EMULATOR) as auth:
        sign_in(network, auth)


# The desktop's proxy settings (GNOME's), for an app started from the desktop's menu: no
# proxy variable at all.


@pytest.fixture
def gnome_session(network: Network, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private session bus, on which dconf (GNOME's settings) starts when asked, and the
    environment of a program of that GNOME session: no proxy variable."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    environment = {key: value for key, value in os.environ.items() if key not in PROXY_VARIABLES}
    environment.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_RUNTIME_DIR=str(runtime),
                       XDG_CURRENT_DESKTOP="GNOME", GSETTINGS_BACKEND="dconf")
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address"], stdout=subprocess.PIPE,
                           text=True, env=environment)
    try:
        assert bus.stdout is not None
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
        yield environment
    finally:
        bus.terminate()
        bus.wait(timeout=10)


def gsettings(environment: dict[str, str], schema: str, key: str, value: str) -> None:
    subprocess.run(["gsettings", "set", schema, key, value], env=environment, check=True, timeout=60)


def methods_in(environment: dict[str, str], network: Network) -> str:
    """get_methods from a program of the session: "ok", or the failure's reason."""
    script = (
        "import portal_auth, sys\n"
        "auth = portal_auth.PortalAuth(auth_environment_id='env-open', redirect_url='myapp://cb', api_host='portal.test',"
        " storage='memory', ca_file=sys.argv[1])\n"
        "try:\n    auth.get_methods()\n    print('ok')\nexcept portal_auth.NetworkError as error:\n    print(error.reason.name)\n"
    )
    ran = subprocess.run([sys.executable, "-c", script, str(network.ca_file)], env=environment, capture_output=True,
                         text=True, timeout=120)
    return ran.stdout.strip() or ran.stderr


def test_gnomes_proxy_settings_apply_with_no_variable(network: Network, gnome_session: dict[str, str]) -> None:
    tunnels = network.proxy_log("open").count("CONNECT portal.test:443")
    gsettings(gnome_session, "org.gnome.system.proxy", "mode", "manual")
    gsettings(gnome_session, "org.gnome.system.proxy.https", "host", "proxy.test")
    gsettings(gnome_session, "org.gnome.system.proxy.https", "port", "3128")
    assert methods_in(gnome_session, network) == "ok"
    assert network.proxy_log("open").count("CONNECT portal.test:443") == tunnels + 1
    # A proxy the settings name that cannot be reached: the request went to it.
    gsettings(gnome_session, "org.gnome.system.proxy.https", "port", "3999")
    assert methods_in(gnome_session, network) == "PROXY_UNREACHABLE"
    # A variable naming a proxy wins over the desktop; no_proxy exempts from either.
    assert methods_in({**gnome_session, "https_proxy": "http://proxy.test:3128"}, network) == "ok"
    assert methods_in({**gnome_session, "no_proxy": "example.com"}, network) == "PROXY_UNREACHABLE"
    assert methods_in({**gnome_session, "no_proxy": ".test"}, network) == "ok"
    gsettings(gnome_session, "org.gnome.system.proxy", "mode", "none")
    assert methods_in(gnome_session, network) == "ok"
    assert network.proxy_log("open").count("CONNECT portal.test:443") == tunnels + 2  # the https_proxy one


# A browser whose proxy carries loopback addresses too.


def test_a_browser_that_sends_loopback_through_a_proxy_is_named(network: Network) -> None:
    """The proxy (running as another user, as a system's proxy does) brings the redirect to
    the listener, which refuses it as another user's: the sign-in times out, and says why."""
    port = 8790
    redirect = f"http://127.0.0.1:{port}/callback"
    environment = f"env-proxied-{uuid.uuid4().hex[:8]}"
    network.control("POST", "environments", {
        "id": environment, "allowedMethods": ["GOOGLE"], "redirectUrls": [redirect], "totpRequired": False,
        "accountAbstraction": False, "autoCreateWallet": True})
    through_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({"http": "http://127.0.0.1:3131"}))

    def browser(url: str, ephemeral: bool) -> bool:
        try:
            through_proxy.open(url, timeout=30).close()
        except OSError:  # the listener closed the proxy's connection: the proxy answers 5xx
            pass
        return True

    with PortalAuth(auth_environment_id=environment, redirect_url=redirect, api_host=EMULATOR, storage="memory") as auth:
        auth.set_browser_opener(browser)
        with pytest.raises(SignInClosed) as closed:
            auth.sign_in_with_google(timeout=3)
    assert closed.value.reason is SignInClosedReason.SIGN_IN_TIMED_OUT
    assert re.search(r"refused \d+ connections? of another user \(nobody, uid 65534\)", str(closed.value))
    assert "exempt 127.0.0.1" in str(closed.value)


# A laptop with IPv6 turned off.


def test_a_redirect_on_an_address_the_machine_lacks_says_so(network: Network) -> None:
    switch = Path("/proc/sys/net/ipv6/conf/lo/disable_ipv6")  # this network namespace's alone
    switch.write_text("1", encoding="ascii")
    try:
        with PortalAuth(auth_environment_id="env-open", redirect_url="http://[::1]:8765/callback", api_host=EMULATOR,
                        storage="memory") as auth, pytest.raises(SignInUnavailable) as raised:
            auth.sign_in_with_google(timeout=5)
    finally:
        switch.write_text("0", encoding="ascii")
    assert raised.value.reason is SignInUnavailableReason.REDIRECT_ADDRESS_UNAVAILABLE
    assert "[::1]:8765" in str(raised.value) and "try again" not in raised.value.reason.user_message.lower()


# The company's nameservers.


def test_a_name_that_does_not_resolve(network: Network) -> None:
    error = failure(client("missing.test"))
    assert error.reason is NetworkFailureReason.NAME_NOT_RESOLVED
    assert "missing.test" in str(error)


def test_a_stalled_lookup_holds_up_no_other_call(network: Network) -> None:
    """The nameserver never answers for stalled.test, and the resolver would wait 30 s for
    it: the call fails once its own connect timeout (5 s) has passed, far short of the
    resolver's wait, and another client's call over loopback, made while the lookup stalls,
    completes at once."""
    nameserver = network.services["nameserver"]
    asked = len(nameserver.lines)
    outcome: list[BaseException] = []
    took: list[float] = []

    def stalled() -> None:
        started = time.monotonic()
        try:
            with client("stalled.test", connect_timeout=5) as auth:
                auth.get_methods()
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            outcome.append(error)
        took.append(time.monotonic() - started)

    watcher = threading.Thread(target=stalled)
    watcher.start()
    # The lookup has reached the nameserver once it printed the name.
    assert any(line.startswith("stalled.test") for line in nameserver.lines_from(asked))
    with client(EMULATOR) as other:
        assert other.get_methods().allowed_auth_methods
    assert watcher.is_alive(), "the loopback call completed only after the stalled one"
    watcher.join(timeout=60)
    assert len(outcome) == 1 and isinstance(outcome[0], NetworkError)
    assert outcome[0].reason is NetworkFailureReason.CONNECT_TIMED_OUT
    # Bounded by its own timeout, not by the resolver's 30 s (which an I/O thread waiting for
    # the lookup to end would take, holding up every other call meanwhile).
    assert took[0] < 15, f"the stalled call took {took[0]:.1f} s"
    print(f"stalled lookup: failed after {took[0]:.2f} s with a 5 s connect timeout")
