#!/usr/bin/env bash
# The C++ layer, bindings/cpp/portal_auth.hpp, as `make install` lays it out beside
# portal_auth.h in a temporary prefix: it names every function and constant of the C header
# (so a call added there without its C++ counterpart fails here); the C++ test and the
# example build with pkg-config under g++ and clang++ as C++17 and C++20 with -Wall -Wextra
# -Wpedantic -Werror (and -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast, which
# hosts often build with); the README's quick start works as written; and against the
# Portal emulator, inside a private D-Bus session with gnome-keyring, the test built by each
# compiler passes under valgrind (no invalid access, no definite leak) and the example signs
# in through its terminal; the test passes again under AddressSanitizer and UBSan. Ends with
# a count line.
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

read -r -a cflags <<< "$(pkg-config --cflags portal-auth libcurl libcrypto)"
read -r -a libs <<< "$(pkg-config --libs portal-auth libcurl libcrypto)"
warnings=(-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast)
for compiler in g++ clang++; do
    for standard in c++17 c++20; do
        "$compiler" -std="$standard" "${warnings[@]}" -Ibindings/cpp/tests -fsyntax-only \
            bindings/cpp/tests/sign_in_test.cpp bindings/cpp/examples/sign_in.cpp "${cflags[@]}" \
            || fail "the test or the example does not compile with $compiler -std=$standard ${warnings[*]}"
    done
    # DWARF 4: valgrind 3.19 cannot read all of clang 14's DWARF 5.
    "$compiler" -std=c++17 "${warnings[@]}" -gdwarf-4 -pthread -Ibindings/cpp/tests bindings/cpp/tests/sign_in_test.cpp \
        "${cflags[@]}" "${libs[@]}" -Wl,-rpath,"$prefix/lib" -o "$work/sign_in_test-$compiler" || fail "the test does not build with $compiler"
    loads_by_soname "the test built by $compiler" "$work/sign_in_test-$compiler"
done
pass "the test and the example build with g++ and clang++ as C++17 and C++20, ${warnings[*]}"

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

for compiler in g++ clang++; do
    label=${compiler%++}
    valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --suppressions=Tests/c/valgrind.supp --suppressions=bindings/cpp/tests/valgrind.supp "$work/sign_in_test-$compiler" "$label" > "$work/test.out" \
        || { cat "$work/test.out"; fail "the test built by $compiler failed under valgrind"; }
    cat "$work/test.out"
    grep -q '^sign_in_test: [0-9]* passed, 0 failed$' "$work/test.out" || fail "the test built by $compiler printed no result"
    pass "the test built by $compiler, under valgrind"
done

# Again under AddressSanitizer and UBSan (g++'s runtime): the layer's own objects (openers,
# completions) checked as they are used, with the sanitizer's report of where a freed one was
# freed. Leaks are valgrind's to find, above.
g++ -std=c++17 "${warnings[@]}" -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -pthread \
    -Ibindings/cpp/tests bindings/cpp/tests/sign_in_test.cpp "${cflags[@]}" "${libs[@]}" -Wl,-rpath,"$prefix/lib" \
    -o "$work/sign_in_test-asan" || fail "the test does not build with AddressSanitizer"
ASAN_OPTIONS=detect_leaks=0 "$work/sign_in_test-asan" asan > "$work/test.out" 2>&1 \
    || { cat "$work/test.out"; fail "the test failed under AddressSanitizer"; }
grep -q '^sign_in_test: [0-9]* passed, 0 failed$' "$work/test.out" || { cat "$work/test.out"; fail "the test under AddressSanitizer printed no result"; }
pass "the test under AddressSanitizer and UBSan"

make -s -C bindings/cpp OUT="$work/sign-in" || fail "the example does not build with its Makefile"
loads_by_soname "the example" "$work/sign-in"
python3 bindings/cpp/tests/example_test.py "$work/sign-in" > "$work/example.out" || { cat "$work/example.out"; fail "the example's sign-in"; }
cat "$work/example.out"
grep -q '^example_test: [0-9]* passed, 0 failed$' "$work/example.out" || fail "the example's test printed no result"
pass "the example signs in through its terminal, restores and signs out"

finish
