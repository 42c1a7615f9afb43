#!/usr/bin/env bash
# The C++ layer, bindings/cpp/portal_auth.hpp, as `make install` lays it out beside
# portal_auth.h in a temporary prefix: it names every function and constant of the C header
# (so a call added there without its C++ counterpart fails here), and its no-exceptions test
# calls every std::nothrow form it declares; the C++ tests and the example (the
# no-exceptions test with -fno-exceptions) build with pkg-config under g++ and clang++ as
# C++17 and C++20 with -Wall -Wextra -Wpedantic -Werror (and -Wshadow -Wconversion
# -Wsign-conversion -Wold-style-cast, which hosts often build with); the README's quick start
# works as written; and against the Portal emulator, inside a private D-Bus session with
# gnome-keyring, both tests built by each compiler pass under valgrind (no invalid access, no
# definite leak), the wipe test built by each (at -O2) finds no secret the layer copied in
# the memory it freed, and the example signs in through its terminal; both tests pass again
# under AddressSanitizer and UBSan. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh cpp

install_prefix
header="$prefix/include/portal_auth.h"
cpp_header="$prefix/include/portal_auth.hpp"
cmp -s "$cpp_header" bindings/cpp/portal_auth.hpp || fail "make install does not put portal_auth.hpp beside portal_auth.h"
pass "make install puts portal_auth.hpp beside portal_auth.h"

# The functions of C_HEADER and the constants of its enums that CPP_HEADER never names.
#   uncovered C_HEADER CPP_HEADER
uncovered() {
    local declared
    declared=$(gcc -E -P "$1")
    { grep -o '\bportal_auth_[a-z0-9_]*\s*(' <<< "$declared" | tr -d ' ('
      grep -o '\bPORTAL_AUTH_\(E\|REASON\|RESULT\|STORAGE\|LOG\|TERMINAL\)_[A-Z0-9_]*\b' <<< "$declared"
    } | sort -u | while read -r name; do grep -qw -- "$name" "$2" || echo "$name"; done
}
missing=$(uncovered "$header" "$cpp_header")
[ -z "$missing" ] || fail "portal_auth.hpp does not cover: $(tr '\n' ' ' <<< "$missing")"
pass "portal_auth.hpp names every function and constant of portal_auth.h"
sed 's/^void portal_auth_call_free(portal_auth_call \*call);$/&\nvoid portal_auth_added_for_the_test(void);/' "$header" > "$work/added.h"
[ "$(uncovered "$work/added.h" "$cpp_header")" = portal_auth_added_for_the_test ] \
    || fail "the coverage check misses a function added to the C header"
pass "the coverage check names a function added to the C header"

# The std::nothrow forms CPP_HEADER declares that TEST never calls (as name(std::nothrow, ...)).
#   uncalled CPP_HEADER TEST
uncalled() {
    grep -o '\b[a-z_]*(std::nothrow_t\b' "$1" | sed 's/(std::nothrow_t$//' | sort -u \
        | while read -r name; do grep -q "\b$name(std::nothrow\b" "$2" || echo "$name"; done
}
tests=bindings/cpp/tests
missing=$(uncalled "$cpp_header" "$tests/no_exceptions_test.cpp")
[ -z "$missing" ] || fail "the no-exceptions test does not call the std::nothrow form of: $(tr '\n' ' ' <<< "$missing")"
pass "the no-exceptions test calls every std::nothrow form of portal_auth.hpp"
sed 's/^inline Outcome<void> set_log_level(std::nothrow_t, LogLevel level) {$/inline Outcome<void> added_for_the_test(std::nothrow_t);\n&/' \
    "$cpp_header" > "$work/added.hpp"
[ "$(uncalled "$work/added.hpp" "$tests/no_exceptions_test.cpp")" = added_for_the_test ] \
    || fail "the std::nothrow check misses a form added to portal_auth.hpp"
pass "the std::nothrow check names a form added to portal_auth.hpp"

read -r -a cflags <<< "$(pkg-config --cflags portal-auth libcurl libcrypto)"
read -r -a libs <<< "$(pkg-config --libs portal-auth libcurl libcrypto)"
warnings=(-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast)
# The tests' names and the flags each is built with: the no-exceptions test as KDE's ECM
# builds; the wipe test optimised, where the compiler drops every store it may.
declare -A test_flags=([sign_in_test]="" [no_exceptions_test]=-fno-exceptions [wipe_test]=-O2)
# Every compile is a job of its own (one compiler process each), all side by side: the test
# programs built as C++17 by each compiler (and two under AddressSanitizer and UBSan, g++'s
# runtime), their sources and the example's checked as C++20, and the example as C++17.
#   build_test COMPILER TEST OUTPUT [FLAG...]
build_test() {
    local compiler=$1 test=$2 output=$3 flags
    shift 3
    read -r -a flags <<< "${test_flags[$test]}"
    "$compiler" -std=c++17 "${warnings[@]}" "${flags[@]}" "$@" -pthread -I"$tests" "$tests/$test.cpp" \
        "${cflags[@]}" "${libs[@]}" -Wl,-rpath,"$prefix/lib" -o "$output"
}
# DWARF 4: valgrind 3.19 cannot read all of clang 14's DWARF 5.
for compiler in g++ clang++; do
    for test in "${!test_flags[@]}"; do
        start_job "build-$test-$compiler" build_test "$compiler" "$test" "$work/$test-$compiler" -gdwarf-4
    done
    start_job "check-$compiler-c++20" "$compiler" -std=c++20 "${warnings[@]}" -I"$tests" -fsyntax-only \
        "$tests/sign_in_test.cpp" "$tests/wipe_test.cpp" bindings/cpp/examples/sign_in.cpp "${cflags[@]}"
    start_job "check-$compiler-c++20-no-exceptions" "$compiler" -std=c++20 "${warnings[@]}" -fno-exceptions \
        -I"$tests" -fsyntax-only "$tests/no_exceptions_test.cpp" "${cflags[@]}"
    start_job "check-$compiler-c++17-example" "$compiler" -std=c++17 "${warnings[@]}" -fsyntax-only \
        bindings/cpp/examples/sign_in.cpp "${cflags[@]}"
done
for test in sign_in_test no_exceptions_test; do
    start_job "build-$test-asan" build_test g++ "$test" "$work/$test-asan" \
        -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
done
start_job build-example make -s -C bindings/cpp OUT="$work/sign-in"
quick_start bindings/cpp/README.md
for compiled in "${!job_pids[@]}"; do expect_job "$compiled" "$compiled failed, with ${warnings[*]}"; done
for compiler in g++ clang++; do
    for test in "${!test_flags[@]}"; do loads_by_soname "$test built by $compiler" "$work/$test-$compiler"; done
done
loads_by_soname "the example" "$work/sign-in"
pass "the tests and the example build with g++ and clang++ as C++17 and C++20, ${warnings[*]} (the no-exceptions test with -fno-exceptions), and with its Makefile"

# The runs side by side, each against an emulator and in a keyring of its own: the tests sign
# in to the same environments and clear their entries.
#   start_run WHAT TEST COMMAND...
start_run() { start_test "$1" "$2" with_emulator scripts/private-keyring.sh run "${@:3}"; }
for compiler in g++ clang++; do
    label=${compiler%++}
    for test in sign_in_test no_exceptions_test; do
        start_run "$test built by $compiler, under valgrind" "$test" \
            valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
            --suppressions=Tests/c/valgrind.supp --suppressions="$tests/valgrind.supp" "$work/$test-$compiler" "$label${test%%_*}"
    done
    # Not under valgrind: the test's own operator new and delete record the memory freed.
    start_run "wipe_test built by $compiler" wipe_test "$work/wipe_test-$compiler" "${label}wipe"
done
# Under AddressSanitizer and UBSan: the layer's own objects (openers, completions) checked as
# they are used, with the sanitizer's report of where a freed one was freed. Leaks are
# valgrind's to find, above.
for test in sign_in_test no_exceptions_test; do
    start_run "$test under AddressSanitizer and UBSan" "$test" env ASAN_OPTIONS=detect_leaks=0 "$work/$test-asan" "asan${test%%_*}"
done
# The example signs in through its terminal, restores and signs out.
start_run "the example's sign-in through its terminal" example_test python3 bindings/cpp/tests/example_test.py "$work/sign-in"
judge_tests

finish
