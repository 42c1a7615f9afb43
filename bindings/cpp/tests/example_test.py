"""The example sign-in (bindings/cpp/examples/sign_in.cpp) driven through its terminal against
the Portal emulator in PORTAL_AUTH_TEST_API_HOST, inside the private keyring the stage runs
in: a magic-link sign-in with TOTP enrollment (the code read from the emulator, typed as an
app shows it, after one that is not six digits and one the server refuses), --restore and
--sign-out. Prints `example_test: N passed, 0 failed`.

    python3 bindings/cpp/tests/example_test.py PATH/TO/sign-in"""

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request

API = os.environ["PORTAL_AUTH_TEST_API_HOST"]
EMAIL = "cpp-example@example.com"


def control(path: str) -> dict:
    with urllib.request.urlopen(API + path, timeout=30) as response:
        return json.load(response)


def main(program: str) -> int:
    common = [program, "--api-host", API, "--environment", "env-demo"]
    passed = 0

    def check(condition: bool, what: str) -> None:
        nonlocal passed
        if not condition:
            print(f"FAILED: {what}", file=sys.stderr)
            print(f"example_test: {passed} passed, 1 failed")
            sys.exit(1)
        passed += 1

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*common, *flags], capture_output=True, text=True, timeout=60)

    check(run("--restore").returncode == 1, "--restore before a sign-in exits 1")

    sign_in = subprocess.Popen([*common, "--from-email", "hello@auth.example.com", "--template-id", "sign-in"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert sign_in.stdin and sign_in.stdout

    def read_until(prompt: str) -> str:
        seen = ""
        while not seen.endswith(prompt):
            character = sign_in.stdout.read(1)
            if not character:
                check(False, f"the prompt {prompt!r} (the program said {seen!r})")
            seen += character
        return seen

    def answer(text: str) -> None:
        sign_in.stdin.write(text + "\n")
        sign_in.stdin.flush()

    read_until("Email: ")
    answer(EMAIL)
    read_until("Link from the email: ")
    outbox = control("/_emulator/outbox?email=" + urllib.parse.quote(EMAIL))
    answer(outbox["messages"][-1]["link"])
    enrollment = read_until("Code: ")
    check("Scan this code" in enrollment and any(block in enrollment for block in "\u2580\u2584\u2588"), "the QR code is drawn")
    code = control("/_emulator/totp?environmentId=env-demo&email=" + urllib.parse.quote(EMAIL))["code"]
    answer("12345")
    check("six digits" in read_until("Code: "), "a code that is not six digits is asked for again")
    answer("%06d" % ((int(code) + 500000) % 1000000))
    said = read_until("Code: ")[:-len("Code: ")].strip()
    check(said.endswith(".") and "\n" not in said, f"a refused code gets the reason's sentence ({said!r}), and is asked for again")
    code = control("/_emulator/totp?environmentId=env-demo&email=" + urllib.parse.quote(EMAIL))["code"]
    answer(code[:3] + " " + code[3:])
    rest = sign_in.stdout.read()
    check(sign_in.wait(timeout=60) == 0 and rest.startswith("Signed in as eu_"), f"the sign-in ends signed in ({rest!r})")

    restored = run("--restore")
    check(restored.returncode == 0 and restored.stdout == rest, "--restore prints the same user")
    check(run("--sign-out").returncode == 0, "--sign-out")
    check(run("--restore").returncode == 1, "--restore after --sign-out exits 1")
    print(f"example_test: {passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
