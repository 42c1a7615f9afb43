#!/usr/bin/env bash
# The Swift tests under ThreadSanitizer, then AddressSanitizer (with LeakSanitizer), each in
# its own build folder (.build/tsan, .build/asan) so the normal build stays valid, inside a
# private keyring like the plain run. Any sanitizer report fails the run. Nothing is
# suppressed in the library (its locks are pthread mutexes, which TSan sees), and the one
# leak LeakSanitizer is told to ignore
# (Tests/Sanitizers/lsan.supp) belongs to the toolchain's test library. The tests start
# their programs with posix_spawn (Tests/PortalAuthCoreTests/Support/Subprocess.swift), so
# no Foundation process code runs.
# Ends with a count line: the tests that passed, summed over both sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/counts.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
fail() { echo "FAILED: $1" >&2; echo "sanitize: $passed passed, 1 failed"; exit 1; }

# The backtracer would hang after a sanitizer abort; the sanitizers report it themselves.
export SWIFT_BACKTRACE=enable=no
export TSAN_OPTIONS="halt_on_error=0 exitcode=66"
export ASAN_OPTIONS="detect_leaks=1"
export LSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/lsan.supp"
for sanitizer in thread address; do
    echo "== swift test --sanitize=$sanitizer"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path ".build/sanitize-$sanitizer" 2>&1 | tail -n 1
    scripts/private-keyring.sh run swift test --skip-build --sanitize="$sanitizer" \
        --scratch-path ".build/sanitize-$sanitizer" --disable-xctest > "$work/$sanitizer" 2>&1 \
        || { grep -E -A 4 'recorded an issue|^✘ Test .* failed' "$work/$sanitizer" | head -n 60
             tail -n 40 "$work/$sanitizer"; fail "swift test --sanitize=$sanitizer"; }
    grep -q -e "WARNING: ThreadSanitizer" -e "ERROR: AddressSanitizer" -e "ERROR: LeakSanitizer" "$work/$sanitizer" \
        && { grep -A 30 -e "WARNING: ThreadSanitizer" -e "ERROR: .*Sanitizer" "$work/$sanitizer" | head -n 80; fail "$sanitizer sanitizer report"; }
    count=$(sed -n "$swift_counter" "$work/$sanitizer" | tail -n 1)
    [ -n "$count" ] || { tail -n 40 "$work/$sanitizer"; fail "swift test --sanitize=$sanitizer printed no result"; }
    passed=$((passed + count))
    echo "ok: $count tests clean under the $sanitizer sanitizer"
done
echo "sanitize: $passed passed, 0 failed"
