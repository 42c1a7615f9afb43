#!/usr/bin/env bash
# Every test: the Python binding (installed into a fresh virtual environment, type-checked,
# tested end to end with the emulator, fault injection included; its wheel built from its
# sdist and installed where no toolchain is), the Swift suite (which starts the emulators it
# needs on loopback and stops them) inside a private keyring, the C ABI's packaging checks
# (soname, versioned symbols, its glibc floor, debug information, the ABI baseline) and C
# tests, the library signing in on Debian 11, the header's checks, the consumer projects,
# the documentation and its citations, the C sample and the Rust crate against the
# installed library, the C++ layer's test (under valgrind, built by g++ and by clang++) and
# example, the GLib layer (C, PyGObject, GJS) and the GTK app driven end to end under Xvfb,
# portal-auth-qt (its QtTest tests, its sample's window and the README's sign-in, under Xvfb),
# the fuzzers for a bounded time, the Swift suite again under ThreadSanitizer and
# AddressSanitizer, and an audit of every log line the library wrote during all of it. Ends
# with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# The log audit's inputs: every harness appends the library's log lines to the first, every
# emulator the secrets it issues to the second; scripts/log-audit.py compares them at the end.
export PORTAL_AUTH_TEST_LOG_FILE="$log/library.log" PORTAL_AUTH_TEST_SECRETS_FILE="$log/issued-secrets"

echo "== Python: pip install ./bindings/python into a fresh virtual environment"
python3 -m venv "$log/venv"
pip=("$log/venv/bin/pip" install --quiet --disable-pip-version-check)
"${pip[@]}" -r bindings/python/tests/requirements.txt
"${pip[@]}" ./bindings/python
echo "== Python: mypy --strict"
"$log/venv/bin/mypy" --config-file bindings/python/pyproject.toml \
    bindings/python/portal_auth bindings/python/examples
echo "== Python: pytest (the binding end to end, inside a private D-Bus session with gnome-keyring; the emulator)"
# (The provider tests run in their own stage, once inside each provider, and the sandbox's
# tests there too.)
scripts/private-keyring.sh run "$log/venv/bin/python" -m pytest -p no:cacheprovider -q bindings/python/tests \
    --ignore=bindings/python/tests/providers --ignore=bindings/python/tests/sandbox \
    2>&1 | tee "$log/python"
# Every test ran and passed: a skipped one (a missing keyring) counts as a failure here.
python_count=$(sed -n 's/^\([0-9]*\) passed\(, [0-9]* subtests passed\)\{0,1\} in .*/\1/p' "$log/python")

echo "== Swift tests (inside a private D-Bus session with gnome-keyring)"
scripts/private-keyring.sh run swift test --disable-xctest 2>&1 | tee "$log/swift"
swift_count=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .* passed.*/\1/p' "$log/swift" | tail -n 1)

# Runs a stage that closes with "NAME: N passed, 0 failed"; its N joins the total.
#   run_stage NAME TITLE COMMAND...
stage_counts=()
run_stage() {
    local name=$1 title=$2
    shift 2
    echo "== $title"
    "$@" 2>&1 | tee "$log/$name"
    stage_counts+=("$(sed -n "s/^$name: \([0-9]*\) passed, 0 failed\$/\1/p" "$log/$name")")
}
run_stage wheel "The Python wheel: the sdist, the wheel from it, its tag, and a sign-in from it with no toolchain" \
    scripts/test-wheel.sh
run_stage bench-import "make bench's import figure: the binding beside requests + keyring" scripts/test-bench.sh
run_stage c-abi "C ABI packaging: soname, versioned symbols, debug information, the ABI baseline, the C tests" \
    scripts/test-library.sh
run_stage old-glibc "The library on Debian 11 (its glibc floor, 2.31, and libcurl 7.74), in a root of its own" \
    scripts/test-old-glibc.sh
run_stage providers "The keyring on each Secret Service provider (gnome-keyring, KeePassXC, KWallet), Python and C" \
    scripts/test-providers.sh "$log/venv/bin/python"
run_stage header "The C header: plain C under gcc and clang, and the declarations of the Swift exports" \
    scripts/test-header.sh
run_stage consumers "Consumer projects: pkg-config, CMake (C and C++) and Meson, against the installed library" \
    scripts/test-consumers.sh
run_stage docs "Documentation: make docs (Doxygen) and the citations of docs/" scripts/test-docs.sh
run_stage bindings "The C sample and the Rust crate, against the installed library" scripts/test-bindings.sh
run_stage cpp "The C++ layer (portal_auth.hpp) under g++ and clang++: its tests with and without exceptions under valgrind, its wiped secrets, its example" \
    scripts/test-cpp.sh
run_stage glib "portal-auth-glib (C under valgrind, PyGObject, GJS) and the GTK app driven under Xvfb, against the installed library" \
    scripts/test-glib.sh
run_stage qt "portal-auth-qt (QtTest under Xvfb and valgrind, the sample's window, the README's sign-in through xdg-open), against the installed library" \
    scripts/test-qt.sh
run_stage fuzz "Fuzzing (libFuzzer, 20 s per target)" scripts/fuzz.sh 20
run_stage sanitize "Swift tests under ThreadSanitizer and AddressSanitizer" scripts/sanitize.sh
run_stage log-audit "Log audit: no secret the emulators issued in any log line of this run" \
    python3 scripts/log-audit.py "$PORTAL_AUTH_TEST_LOG_FILE" "$PORTAL_AUTH_TEST_SECRETS_FILE"

counts=("$python_count" "$swift_count" "${stage_counts[@]}")
total=0
for count in "${counts[@]}"; do
    [ -n "$count" ] || { echo "tests: a stage reported no count" >&2; exit 1; }
    total=$((total + count))
done
echo "tests: $total passed, 0 failed"
