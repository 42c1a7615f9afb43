#!/usr/bin/env bash
# Every test: the emulator's own tests, the Swift suite (which starts the emulators it needs
# on loopback and stops them) inside a private keyring, and the C ABI's packaging checks.
# Ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

echo "== Emulator tests (Python)"
PYTHONPATH="$PWD/bindings/python" python3 -m unittest discover -s bindings/python/tests 2>&1 | tee "$log/python"
python_count=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in.*/\1/p' "$log/python")

echo "== Swift tests (inside a private D-Bus session with gnome-keyring)"
scripts/private-keyring.sh run swift test --disable-xctest 2>&1 | tee "$log/swift"
swift_count=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .* passed.*/\1/p' "$log/swift" | tail -n 1)

echo "== C ABI packaging"
scripts/test-library.sh 2>&1 | tee "$log/c-abi"
c_abi_count=$(sed -n 's/^c-abi: \([0-9]*\) passed, 0 failed$/\1/p' "$log/c-abi")

[ -n "$python_count" ] && [ -n "$swift_count" ] && [ -n "$c_abi_count" ] || { echo "tests: no test ran" >&2; exit 1; }
echo "tests: $((python_count + swift_count + c_abi_count)) passed, 0 failed"
