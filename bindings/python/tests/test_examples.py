"""The programs users copy first: the examples, and the README's quick start exactly as
written (its commands and its code, against the emulator on the port the README names)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from conftest import Emulator, Interaction, decode, grey_png, rasterise
from test_browser import chromium, loopback_environment
from test_magic_link import TOTP_PAGE, mail, open_in_chromium

import portal_auth

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLES = PACKAGE / "examples"


def run_sign_in(emu: Emulator, env: str, email: str, *options: str) -> Interaction:
    return Interaction(
        sys.executable, str(EXAMPLES / "sign_in.py"), "--api-host", emu.url, "--environment", env, *options
    )


def enroll_and_verify(program: Interaction, emu: Emulator, env: str, email: str, tmp_path: Path) -> str:
    """Answers the TOTP step after checking the QR code it drew; the user it signed in."""
    transcript = program.expect("Code from your authenticator app: ")
    # The QR code it drew, as a screen shows it, reads back to a link with the key it printed.
    drawn = transcript.split("authenticator app,\n")[1].split("or enter this key")[0]
    (tmp_path / "screen.png").write_bytes(grey_png(rasterise(drawn, dark_on_light=False)))
    key = re.search(r"by hand: (\S+)\n", transcript)
    assert key is not None and portal_auth.totp_secret(decode(tmp_path / "screen.png")) == key[1]
    code = emu.totp_code(env, email)
    program.answer("12345")  # five digits: asked again, nothing sent
    program.expect("The code is six digits.\nCode from your authenticator app: ")
    program.answer(f"{code[:3]} {code[3:]}")  # as the app shows it
    status, output = program.finish()
    user = re.search(r"Signed in as (\S+)\.", output)
    assert status == 0 and user is not None, output
    return user[1]


def test_sign_in_then_restore_then_sign_out(emu: Emulator, env: str, tmp_path: Path) -> None:
    email = "example@example.com"
    program = run_sign_in(emu, env, email)
    program.expect("Email: ")
    program.answer(email)
    program.expect("Link: ")
    program.answer("otherapp://not-this-one")
    program.expect("that is not a sign-in link of this app")  # the library's line on stderr
    program.answer(mail(emu, email, 1, "link"))
    user = enroll_and_verify(program, emu, env, email, tmp_path)

    restore = [sys.executable, str(EXAMPLES / "restore.py"), "--api-host", emu.url, "--environment", env]
    restored = subprocess.run(restore, capture_output=True, text=True, timeout=60)
    assert (restored.returncode, restored.stdout) == (0, f"Signed in as {user}.\n")
    # sign_in.py itself finds the session and asks nothing.
    again = run_sign_in(emu, env, email)
    assert again.finish() == (0, f"Signed in as {user}.\n")

    signed_out = subprocess.run([*restore, "--sign-out"], capture_output=True, text=True, timeout=60)
    assert (signed_out.returncode, signed_out.stdout) == (0, f"Signed out {user}.\n")
    gone = subprocess.run(restore, capture_output=True, text=True, timeout=60)
    assert (gone.returncode, gone.stdout) == (1, "Not signed in.\n")


def loopback_sign_in(emu: Emulator, email: str) -> tuple[Interaction, str]:
    """sign_in.py with a loopback redirect URL (TOTP on), at its Link: prompt; and its environment."""
    env, redirect = loopback_environment(emu, totp=True)
    program = run_sign_in(emu, env, email, "--redirect-url", redirect)
    program.expect("Email: ")
    program.answer(email)
    program.expect("Open it, or paste it here.\nLink: ")
    return program, env


def test_sign_in_with_a_loopback_redirect_needs_no_paste(emu: Emulator, tmp_path: Path) -> None:
    email = "example-loopback@example.com"
    program, env = loopback_sign_in(emu, email)
    assert TOTP_PAGE in open_in_chromium(emu, email, tmp_path)
    enroll_and_verify(program, emu, env, email, tmp_path)


def test_a_loopback_sign_in_takes_a_pasted_link_too(emu: Emulator, tmp_path: Path) -> None:
    email = "example-pasted@example.com"
    program, env = loopback_sign_in(emu, email)
    program.answer(mail(emu, email, 1, "link"))  # the email opened on another device
    enroll_and_verify(program, emu, env, email, tmp_path)


def test_sign_in_reports_errors_and_abandonment(emu: Emulator, env: str) -> None:
    program = run_sign_in(emu, env, "x@example.com")
    program.expect("Email: ")
    program.answer("   ")
    status, output = program.finish()
    assert status == 1 and "Sign-in failed: " in output and "Traceback" not in output

    program = run_sign_in(emu, env, "x@example.com")
    program.expect("Email: ")
    status, output = program.finish()  # stdin closed: the user went away
    assert status == 130 and "Sign-in abandoned." in output and "Traceback" not in output


def readme_blocks(language: str) -> list[str]:
    text = (PACKAGE / "README.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def readme_command(start: str) -> str:
    for block in readme_blocks("sh"):
        for line in block.splitlines():
            if line.startswith(start):
                return line
    raise AssertionError(f"the README has no command starting {start!r}")


# Set inside the private network namespace the README's quick start runs in.
PRIVATE_NETWORK = "PORTAL_AUTH_TEST_PRIVATE_NETWORK"


def test_readme_quick_start(tmp_path: Path) -> None:
    """The README's quick start as written, its emulator on the fixed port 8787 a reader
    types: so in a network namespace of its own (loopback up), where no other program of the
    machine, nor another run of these tests, holds that port."""
    if os.environ.get(PRIVATE_NETWORK) != "1":
        namespace = ["unshare", "--net"] if os.getuid() == 0 else ["unshare", "--map-root-user", "--net"]
        inner = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"{__file__}::test_readme_quick_start"]
        result = subprocess.run([*namespace, "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *inner],
                                env=dict(os.environ, **{PRIVATE_NETWORK: "1"}), capture_output=True, text=True, timeout=600)
        assert result.returncode == 0 and re.search(r"^1 passed", result.stdout, re.MULTILINE), result.stdout + result.stderr
        return
    assert shutil.which("curl"), "the README's commands use curl"
    # As in a shell where the virtual environment is active.
    shell = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    emulator = subprocess.Popen(
        shlex.split(readme_command("portal-auth-emulator")), env=shell, stdout=subprocess.PIPE, text=True
    )
    try:
        assert emulator.stdout is not None
        assert emulator.stdout.readline().startswith("portal-auth-emulator listening on http://127.0.0.1:8787")
        quickstart = tmp_path / "quickstart.py"
        (code,) = [block for block in readme_blocks("python") if block.startswith("import sys\n\nfrom portal_auth import")]
        quickstart.write_text(code, encoding="utf-8")

        email = "you@example.com"
        program = Interaction(sys.executable, str(quickstart))
        program.expect("Email: ")
        program.answer(email)
        outbox = subprocess.run(readme_command("curl -s 'http://127.0.0.1:8787/_emulator/outbox"), shell=True,
                                capture_output=True, text=True, check=True)
        # The email's button, opened in the browser as the README says: the program goes on.
        page = chromium(json.loads(outbox.stdout)["messages"][-1]["emailLink"], False, tmp_path / "browser")()
        assert page.returncode == 0 and TOTP_PAGE in page.stdout
        program.expect("Code: ")
        totp = subprocess.run(readme_command("curl -s 'http://127.0.0.1:8787/_emulator/totp"), shell=True,
                              capture_output=True, text=True, check=True)
        program.answer(json.loads(totp.stdout)["code"])
        status, output = program.finish()
        signed_in = re.search(r"Signed in as \S+\n$", output)
        assert status == 0 and signed_in is not None, output

        # "Run it again: the session comes back from the keyring, and nothing is asked."
        again = Interaction(sys.executable, str(quickstart))
        assert again.finish() == (0, signed_in[0])
    finally:
        emulator.send_signal(signal.SIGTERM)
        assert emulator.wait(timeout=30) == 0
