#!/usr/bin/env bash
# The Swift tests under ThreadSanitizer, then AddressSanitizer (with LeakSanitizer), each
# built in its own folder (.build/sanitize-thread, .build/sanitize-address; the two builds at
# once) so the normal build stays valid, and run inside a private keyring like the plain run.
# Any sanitizer report fails the run. Nothing is suppressed in the library (its locks are
# pthread mutexes, which TSan sees), and the one leak LeakSanitizer is told to ignore
# (Tests/Sanitizers/lsan.supp) belongs to the toolchain's test library. The tests start
# their programs with posix_spawn (Tests/PortalAuthCoreTests/Support/Subprocess.swift), so
# no Foundation process code runs.
# Ends with a count line: the tests that passed, summed over both sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/counts.sh
source scripts/stage.sh sanitize

# The backtracer would hang after a sanitizer abort; the sanitizers report it themselves.
export SWIFT_BACKTRACE=enable=no
export TSAN_OPTIONS="halt_on_error=0 exitcode=66"
export ASAN_OPTIONS="detect_leaks=1"
export LSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/lsan.supp"
sanitizers=(thread address)
# Both builds at once: each spends much of its time on one core.
for sanitizer in "${sanitizers[@]}"; do
    start_job "build-$sanitizer" swift build --build-tests --sanitize="$sanitizer" --scratch-path ".build/sanitize-$sanitizer"
done
# The tests after both: a test run beside a build would be starved of the cores it expects.
for sanitizer in "${sanitizers[@]}"; do expect_job "build-$sanitizer" "swift build --sanitize=$sanitizer"; done
for sanitizer in "${sanitizers[@]}"; do
    echo "== swift test --sanitize=$sanitizer ($(tail -n 1 "$work/jobs/build-$sanitizer.out"))"
    scripts/private-keyring.sh run swift test --skip-build --sanitize="$sanitizer" \
        --scratch-path ".build/sanitize-$sanitizer" --disable-xctest > "$work/$sanitizer" 2>&1 \
        || { grep -E -A 4 'recorded an issue|^✘ Test .* failed' "$work/$sanitizer" | head -n 60
             tail -n 40 "$work/$sanitizer"; fail "swift test --sanitize=$sanitizer"; }
    grep -q -e "WARNING: ThreadSanitizer" -e "ERROR: AddressSanitizer" -e "ERROR: LeakSanitizer" "$work/$sanitizer" \
        && { grep -A 30 -e "WARNING: ThreadSanitizer" -e "ERROR: .*Sanitizer" "$work/$sanitizer" | head -n 80; fail "$sanitizer sanitizer report"; }
    count=$(sed -n "$swift_counter" "$work/$sanitizer" | tail -n 1)
    [ -n "$count" ] || { tail -n 40 "$work/$sanitizer"; fail "swift test --sanitize=$sanitizer printed no result"; }
    # The count line sums the tests that passed, not these checks.
    passed=$((passed + count))
    echo "ok: $count tests clean under the $sanitizer sanitizer"
done
finish
