#!/usr/bin/env bash
# make check: the fast tier, against the one debug build `swift build --build-tests` made.
# Four suites: the Swift suite, pytest (the binding from the source tree, loading
# .build/debug's library), the C tests without valgrind, each inside its own private keyring
# and with the emulators it starts, and the emulator's own tests. The four run side by
# side: most of their time is spent waiting on loopback. What make test adds is in docs/testing.md. Ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/counts.sh
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
library=$PWD/.build/debug/libportalauth.so
[ -f "$library" ] || { echo "no $library: run swift build --build-tests (make check does)" >&2; exit 1; }

# A virtual environment for pytest and the emulator, kept between runs (.build/check-venv)
# and remade when the requirements change.
venv=.build/check-venv
requirements=(bindings/python/tests/requirements.txt emulator/pyproject.toml)
if [ ! -x "$venv/bin/python" ] || ! cat "${requirements[@]}" | cmp -s - "$venv/requirements"; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r bindings/python/tests/requirements.txt ./emulator
    cat "${requirements[@]}" > "$venv/requirements"
fi

started=$SECONDS
scripts/private-keyring.sh run swift test --skip-build --disable-xctest > "$log/swift" 2>&1 &
swift=$!
env PYTHONPATH="$PWD/bindings/python:$PWD/emulator" PORTAL_AUTH_LIBRARY="$library" \
    scripts/private-keyring.sh run "$venv/bin/python" -m pytest -p no:cacheprovider -q bindings/python/tests \
    --ignore=bindings/python/tests/providers --ignore=bindings/python/tests/sandbox -m "not installed" > "$log/python" 2>&1 &
python=$!
scripts/test-c.sh --library .build/debug > "$log/c" 2>&1 &
c=$!
(cd emulator && exec "../$venv/bin/python" -m pytest -p no:cacheprovider -q) > "$log/emulator" 2>&1 &
emulator=$!

# Waits for one suite and prints its count, or its output and the failure.
#   outcome NAME PID SED_SCRIPT
failed=()
total=0
outcome() {
    local count
    if wait "$2" && count=$(sed -n "$3" "$log/$1" | tail -n 1) && [ -n "$count" ]; then
        echo "ok: $1, $count passed"
        total=$((total + count))
    else
        tail -n 60 "$log/$1"
        # Swift Testing prints each issue where it happens, often far above the tail.
        grep -e "recorded an issue" "$log/$1" || true
        echo "FAILED: $1 (its output is above)"
        failed+=("$1")
    fi
}
outcome swift "$swift" "$swift_counter"
outcome python "$python" "$pytest_counter"
outcome c "$c" "$(stage_counter c-tests)"
outcome emulator "$emulator" "$pytest_counter"
echo "check: $((SECONDS - started)) s"
[ ${#failed[@]} -eq 0 ] || { echo "check: $total passed, failed: ${failed[*]}"; exit 1; }
echo "check: $total passed, 0 failed"
