#!/usr/bin/env bash
# The tests in tiers (docs/testing.md says what each runs):
#   scripts/test.sh [TIER...]   TIER: swift python c rust cpp glib qt providers network chaos docs hardening packages
# No tier: every one (make test, which CI runs), then an audit of every log line the library
# wrote during the run. Each tier's stages start the services they need (the emulator, a
# private keyring, Xvfb) and stop them. The tiers that test the library as `make install`
# lays it out share one install, made once here. PORTAL_AUTH_TEST_ONLY (make's ONLY=) picks
# one test of a single tier: a Swift test filter, pytest's arguments, "TEST [CASE]" of the C
# tests, or Tests/chaos/chaos.py's arguments. Ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/counts.sh
all_tiers=(swift python c rust cpp glib qt providers network chaos docs hardening packages)
tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=("${all_tiers[@]}")
for tier in "${tiers[@]}"; do
    [[ " ${all_tiers[*]} " == *" $tier "* ]] || { echo "no tier named $tier (tiers: ${all_tiers[*]})" >&2; exit 2; }
done
only=${PORTAL_AUTH_TEST_ONLY:-}
[ -z "$only" ] || [ ${#tiers[@]} -eq 1 ] || { echo "ONLY picks a test of one tier: name one tier" >&2; exit 2; }
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# The log audit's inputs: every harness appends the library's log lines to the first, every
# emulator the secrets it issues to the second; scripts/log-audit.py compares them at the end.
export PORTAL_AUTH_TEST_LOG_FILE="$log/library.log" PORTAL_AUTH_TEST_SECRETS_FILE="$log/issued-secrets"

# Runs a stage and adds its count of passed tests to the total. COUNTER is a sed script that
# prints the count from the stage's output (scripts/counts.sh).
#   run_counted NAME TITLE COUNTER COMMAND...
counts=()
run_counted() {
    local name=$1 title=$2 counter=$3 started=$SECONDS
    shift 3
    echo "== $title"
    "$@" 2>&1 | tee "$log/$name"
    counts+=("$(sed -n "$counter" "$log/$name" | tail -n 1)")
    echo "== $name: $((SECONDS - started)) s"
}
# A stage that closes with scripts/stage.sh's "NAME: N passed, 0 failed".
#   run_stage NAME TITLE COMMAND...
run_stage() { run_counted "$1" "$2" "$(stage_counter "$1")" "${@:3}"; }
selected() { [[ " ${tiers[*]} " == *" $1 "* ]]; }

# One install for every tier that tests the library as `make install` lays it out.
for tier in c rust cpp glib qt providers hardening; do
    if selected "$tier"; then
        echo "== make install into this run's prefix"
        scripts/install.sh "$log/prefix"
        export PORTAL_AUTH_TEST_PREFIX="$log/prefix"
        break
    fi
done

if selected swift; then
    filter=()
    [ -z "$only" ] || filter=(--filter "$only")
    run_counted swift "Swift tests (inside a private D-Bus session with gnome-keyring)" "$swift_counter" \
        scripts/private-keyring.sh run swift test --skip-build --disable-xctest "${filter[@]}"
fi

# The Python binding installed into a fresh virtual environment, made once, with its tests'
# requirements: sets python.
python_venv() {
    python=$log/venv/bin/python
    [ ! -x "$python" ] || return 0
    echo "== Python: pip install ./bindings/python into a fresh virtual environment"
    python3 -m venv "$log/venv"
    local pip=("$log/venv/bin/pip" install --quiet --disable-pip-version-check)
    "${pip[@]}" -r bindings/python/tests/requirements.txt
    "${pip[@]}" ./bindings/python ./emulator
}

if selected python; then
    python_venv
    read -r -a pytest_arguments <<< "${only:-bindings/python/tests}"
    if [ -z "$only" ]; then
        echo "== Python: mypy --strict"
        "$log/venv/bin/mypy" --config-file bindings/python/pyproject.toml \
            bindings/python/portal_auth bindings/python/examples
        "$log/venv/bin/mypy" --config-file emulator/pyproject.toml emulator/portal_auth_emulator
        # (The provider tests run in the providers tier, once inside each provider, and the
        # sandbox's tests there too.)
        pytest_arguments+=(--ignore=bindings/python/tests/providers --ignore=bindings/python/tests/sandbox)
    fi
    run_counted python "Python: pytest (the binding end to end, inside a private D-Bus session with gnome-keyring; the emulator)" \
        "$pytest_counter" scripts/private-keyring.sh run "$python" -m pytest -p no:cacheprovider -q "${pytest_arguments[@]}"
    if [ -z "$only" ]; then
        run_counted emulator "The emulator's own tests (emulator/tests)" "$pytest_counter" \
            bash -c 'cd emulator && exec "$0" -m pytest -p no:cacheprovider -q' "$python"
        run_stage wheel "The Python wheel: the sdist, the wheel from it, its tag, and a sign-in from it with no toolchain" \
            scripts/test-wheel.sh
        run_stage bench-import "make bench's import figure: the binding beside requests + keyring" scripts/test-bench.sh
    fi
fi

if selected c; then
    if [ -n "$only" ]; then
        # shellcheck disable=SC2086 # "TEST [CASE]"
        run_stage c-tests "The C test $only, under valgrind" scripts/test-c.sh --valgrind $only
    else
        run_stage c-abi "C ABI packaging: soname, versioned symbols, debug information, the ABI baseline" \
            scripts/test-library.sh
        run_stage c-tests "The C tests (Tests/c) under valgrind" scripts/test-c.sh --valgrind
        run_stage header "The C header: plain C under gcc and clang, and the declarations of the Swift exports" \
            scripts/test-header.sh
        run_stage consumers "Consumer projects: pkg-config, CMake (C and C++) and Meson, against the installed library" \
            scripts/test-consumers.sh
        run_stage c-sample "The C sample, against the installed library" scripts/test-c-sample.sh
    fi
fi
selected rust && run_stage rust "The Rust crates, against the installed library" scripts/test-rust.sh
selected cpp && run_stage cpp "The C++ layer (portal_auth.hpp) under g++ and clang++: its tests with and without exceptions under valgrind, its wiped secrets, its example" \
    scripts/test-cpp.sh
selected glib && run_stage glib "portal-auth-glib (C under valgrind, PyGObject, GJS) and the GTK app driven under Xvfb, against the installed library" \
    scripts/test-glib.sh
selected qt && run_stage qt "portal-auth-qt (QtTest under Xvfb and valgrind, the sample's window, the README's sign-in through xdg-open), against the installed library" \
    scripts/test-qt.sh
if selected providers; then
    python_venv
    run_stage providers "The keyring on each Secret Service provider (gnome-keyring, KeePassXC, KWallet), Python and C" \
        scripts/test-providers.sh "$python"
fi
if selected network; then
    python_venv
    read -r -a network_arguments <<< "${only:-Tests/network}"
    run_counted network "A company's network (a private CA behind nginx, tinyproxy, stalled and lying nameservers, faketime), in private network and mount namespaces" \
        "$pytest_counter" unshare --net --mount --propagation private env PORTAL_AUTH_TEST_PRIVATE_NAMESPACES=1 \
        "$python" -m pytest -p no:cacheprovider -q "${network_arguments[@]}"
fi
if selected chaos; then
    python_venv
    read -r -a chaos_arguments <<< "$only"
    if [ -z "$only" ]; then
        echo "== Chaos: mypy --strict"
        "$log/venv/bin/mypy" --strict --cache-dir "$log/mypy-chaos" Tests/chaos/*.py
    fi
    run_stage chaos "Faults: 6 to 8 processes on one environment and store (the keyring, the file store), SIGKILLed mid-call, the keyring daemon and the emulator killed or held (seeded trials; CHAOS_SEED, CHAOS_TRIALS)" \
        "$python" Tests/chaos/chaos.py "${chaos_arguments[@]}"
fi
selected docs && run_stage docs "Documentation: make docs (Doxygen), the citations of docs/, the commands the documents show" \
    scripts/test-docs.sh
if selected hardening; then
    run_stage old-glibc "The library on Debian 11 (its glibc floor, 2.31, and libcurl 7.74), in a root of its own" \
        scripts/test-old-glibc.sh
    run_stage fuzz "Fuzzing (libFuzzer, 10 s per target; make fuzz gives each 60 s)" scripts/fuzz.sh 10
    run_stage sanitize "Swift tests under ThreadSanitizer and AddressSanitizer" scripts/sanitize.sh
fi
selected packages && run_stage packages "The Debian packages (dpkg-buildpackage, lintian) and the release archive, installed and built against in clean Debian 12 and 11 roots" \
    scripts/test-packages.sh
[ $# -gt 0 ] || run_stage log-audit "Log audit: no secret the emulators issued in any log line of this run" \
    python3 scripts/log-audit.py "$PORTAL_AUTH_TEST_LOG_FILE" "$PORTAL_AUTH_TEST_SECRETS_FILE"

total=0
for count in "${counts[@]}"; do
    [ -n "$count" ] || { echo "tests: a stage reported no count" >&2; exit 1; }
    total=$((total + count))
done
echo "tests: $total passed, 0 failed"
