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
# The syntax checks of each compiler and standard side by side (each is one compiler process).
syntax_check() {
    "$1" -std="$2" "${warnings[@]}" -I"$tests" -fsyntax-only \
        "$tests/sign_in_test.cpp" "$tests/wipe_test.cpp" bindings/cpp/examples/sign_in.cpp "${cflags[@]}" \
        && "$1" -std="$2" "${warnings[@]}" -fno-exceptions -I"$tests" -fsyntax-only \
            "$tests/no_exceptions_test.cpp" "${cflags[@]}"
}
declare -A checking=()
for compiler in g++ clang++; do
    for standard in c++17 c++20; do
        syntax_check "$compiler" "$standard" & checking["$compiler -std=$standard"]=$!
    done
done
for checked in "${!checking[@]}"; do
    wait "${checking[$checked]}" || fail "the tests or the example do not compile with $checked ${warnings[*]}"
done
for compiler in g++ clang++; do
    for test in "${!test_flags[@]}"; do
        read -r -a flags <<< "${test_flags[$test]}"
        # DWARF 4: valgrind 3.19 cannot read all of clang 14's DWARF 5.
        "$compiler" -std=c++17 "${warnings[@]}" "${flags[@]}" -gdwarf-4 -pthread -I"$tests" "$tests/$test.cpp" \
            "${cflags[@]}" "${libs[@]}" -Wl,-rpath,"$prefix/lib" -o "$work/$test-$compiler" || fail "$test does not build with $compiler"
        loads_by_soname "$test built by $compiler" "$work/$test-$compiler"
    done
done
pass "the tests and the example build with g++ and clang++ as C++17 and C++20, ${warnings[*]} (the no-exceptions test with -fno-exceptions)"

# The quick start as the README writes it, with HOME in the temporary folder and Debian's
# programs first on PATH (as on a fresh Debian 12).
scripts/readme-commands.sh bindings/cpp/README.md > "$work/quick-start.sh"
[ -s "$work/quick-start.sh" ] || fail "bindings/cpp/README.md has no quick start"
(export HOME="$work/home" PATH="/usr/bin:$PATH" && mkdir -p "$HOME" && bash -euo pipefail -x "$work/quick-start.sh") \
    > "$work/quick-start.log" 2>&1 || { cat "$work/quick-start.log"; fail "bindings/cpp/README.md's quick start"; }
pass "bindings/cpp/README.md's quick start works as written"

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# Runs a test program, which must pass and print its count line.
#   run_test WHAT TEST COMMAND...
run_test() {
    local what=$1 test=$2
    shift 2
    "$@" > "$work/test.out" 2>&1 || { cat "$work/test.out"; fail "$what failed"; }
    cat "$work/test.out"
    grep -q "^$test: [0-9]* passed, 0 failed\$" "$work/test.out" || fail "$what printed no result"
    pass "$what"
}

# Each run is named by its compiler and test (the emails and environments it makes).
for compiler in g++ clang++; do
    label=${compiler%++}
    for test in sign_in_test no_exceptions_test; do
        run_test "$test built by $compiler, under valgrind" "$test" \
            valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
            --suppressions=Tests/c/valgrind.supp --suppressions="$tests/valgrind.supp" "$work/$test-$compiler" "$label${test%%_*}"
    done
    # Not under valgrind: the test's own operator new and delete record the memory freed.
    run_test "wipe_test built by $compiler" wipe_test "$work/wipe_test-$compiler" "${label}wipe"
done

# Again under AddressSanitizer and UBSan (g++'s runtime): the layer's own objects (openers,
# completions) checked as they are used, with the sanitizer's report of where a freed one was
# freed. Leaks are valgrind's to find, above.
for test in sign_in_test no_exceptions_test; do
    read -r -a flags <<< "${test_flags[$test]}"
    g++ -std=c++17 "${warnings[@]}" "${flags[@]}" -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
        -pthread -I"$tests" "$tests/$test.cpp" "${cflags[@]}" "${libs[@]}" -Wl,-rpath,"$prefix/lib" \
        -o "$work/$test-asan" || fail "$test does not build with AddressSanitizer"
    run_test "$test under AddressSanitizer and UBSan" "$test" env ASAN_OPTIONS=detect_leaks=0 "$work/$test-asan" "asan${test%%_*}"
done

make -s -C bindings/cpp OUT="$work/sign-in" || fail "the example does not build with its Makefile"
loads_by_soname "the example" "$work/sign-in"
python3 bindings/cpp/tests/example_test.py "$work/sign-in" > "$work/example.out" || { cat "$work/example.out"; fail "the example's sign-in"; }
cat "$work/example.out"
grep -q '^example_test: [0-9]* passed, 0 failed$' "$work/example.out" || fail "the example's test printed no result"
pass "the example signs in through its terminal, restores and signs out"

finish
