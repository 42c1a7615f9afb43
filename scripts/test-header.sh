#!/usr/bin/env bash
# Checks of include/portal_auth.h, as `make install` lays it out in a temporary prefix: plain
# ASCII C with no HTML and nothing of Swift's; it compiles, with a program using its
# initialiser macro, under gcc and clang as C99, C11 and C++17 with -Wall -Wextra -Wpedantic
# -Werror; the initialiser sets the size alone; every function carries PORTAL_AUTH_EXTERN;
# PORTAL_AUTH_DEPRECATED warns unless PORTAL_AUTH_NO_DEPRECATION_WARNINGS is defined; and
# it declares every @c export with the types swiftc generates for it
# (scripts/generate-header.sh, then scripts/compare-header.py, whose report names the
# declaration that differs). Needs `swift build` first. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh header

install_prefix
header="$prefix/include/portal_auth.h"

LC_ALL=C grep -n '[^[:print:][:space:]]' "$header" && fail "the header holds characters that are not ASCII"
grep -n -E '</?[a-z]+>|&[a-z]+;' "$header" && fail "the header holds HTML"
grep -n -E 'SWIFT_|_Nullable|_Nonnull|@c\b|#pragma|__attribute__|(^|[^:])//' "$header" \
    | grep -v -E '^[0-9]+:#define PORTAL_AUTH_(EXTERN|DEPRECATED\(message\)) __attribute__' \
    && fail "the header holds Swift's boilerplate, attributes (but in its declaration macros) or // comments"
pass "plain ASCII C: /* */ comments, no HTML, nothing of Swift's, attributes only in its declaration macros"

cat > "$work/program.c" <<'C'
#include <portal_auth.h>
int main(void) {
    portal_auth_options options = PORTAL_AUTH_OPTIONS_INIT;
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    return options.size == sizeof options && portal_auth_version_number() == PORTAL_AUTH_VERSION_NUMBER ? 0 : 1;
}
C
cp "$work/program.c" "$work/program.cpp"
warnings=(-Wall -Wextra -Wpedantic -Werror)
for compiler in gcc clang; do
    for standard in c99 c11; do
        "$compiler" -std="$standard" "${warnings[@]}" -Wstrict-prototypes -I"$prefix/include" -fsyntax-only "$work/program.c" \
            || fail "the header does not compile with $compiler -std=$standard ${warnings[*]}"
    done
    cxx=$([ "$compiler" = gcc ] && echo g++ || echo clang++)
    "$cxx" -std=c++17 "${warnings[@]}" -I"$prefix/include" -fsyntax-only "$work/program.cpp" \
        || fail "the header does not compile with $cxx -std=c++17 ${warnings[*]}"
done
pass "it compiles with gcc and clang as C99, C11 and C++17, ${warnings[*]}"

# The initialiser leaves every field but `size` as a zeroed struct has it, in C and in C++:
# each field that scripts/header_facts.py finds in portal_auth_options, compared. Run
# against the header, then against one whose C initialiser sets a second field.
{
    printf '#include <portal_auth.h>\n#include <string.h>\nint main(void) {\n'
    printf '    portal_auth_options options = PORTAL_AUTH_OPTIONS_INIT, zeroed;\n'
    printf '    memset(&zeroed, 0, sizeof zeroed);\n    zeroed.size = sizeof zeroed;\n    int differ = 0;\n'
    python3 scripts/header_facts.py "$header" | awk -F '\t' '$1 == "field" && $2 == "portal_auth_options" {
        printf "    differ |= memcmp(&options.%s, &zeroed.%s, sizeof options.%s);\n", $3, $3, $3 }'
    printf '    return differ != 0;\n}\n'
} > "$work/defaults.c"
cp "$work/defaults.c" "$work/defaults.cpp"
mkdir "$work/seconded"
sed 's/{ \.size = sizeof(portal_auth_options) }/{ .size = sizeof(portal_auth_options), .storage = PORTAL_AUTH_STORAGE_MEMORY }/' \
    "$header" > "$work/seconded/portal_auth.h"
! cmp -s "$header" "$work/seconded/portal_auth.h" || fail "the test's change to the initialiser changed nothing"
for source in defaults.c defaults.cpp; do
    compiler=$([ "$source" = defaults.c ] && echo "gcc -std=c11" || echo "g++ -std=c++17")
    $compiler "${warnings[@]}" -I"$prefix/include" "$work/$source" -o "$work/defaults" && "$work/defaults" \
        || fail "PORTAL_AUTH_OPTIONS_INIT sets more than the size ($compiler)"
done
gcc -std=c11 "${warnings[@]}" -I"$work/seconded" "$work/defaults.c" -o "$work/defaults" && ! "$work/defaults" \
    || fail "the initialiser's check accepts a second field set"
pass "PORTAL_AUTH_OPTIONS_INIT sets the size alone, in C and in C++; a second field set fails the check"

# PORTAL_AUTH_EXTERN on every function: a stand-in library that defines them all, built with
# -fvisibility=hidden, still exports each (and not one whose declaration lacks the macro).
#   unexported HEADER     the functions HEADER declares that its stand-in does not export
unexported() {
    python3 scripts/abi-stub.py "$1" > "$work/stub.c"
    gcc -std=c11 -shared -fPIC -fvisibility=hidden "$work/stub.c" -o "$work/libstub.so" || fail "the stand-in does not build"
    nm -D --defined-only "$work/libstub.so" | awk '$2 == "T" { print $3 }' | sort > "$work/exported"
    gcc -E -P "$1" | grep -o '\bportal_auth_[a-z0-9_]*\s*(' | tr -d ' (' | sort -u | comm -23 - "$work/exported"
}
missing=$(unexported "$header")
[ -z "$missing" ] || fail "hidden without PORTAL_AUTH_EXTERN: $(tr '\n' ' ' <<< "$missing")"
sed '/^PORTAL_AUTH_EXTERN$/{N;s/^PORTAL_AUTH_EXTERN\n\(void portal_auth_call_free(\)/\1/}' "$header" > "$work/bare.h"
[ "$(unexported "$work/bare.h")" = portal_auth_call_free ] || fail "the check misses a declaration without PORTAL_AUTH_EXTERN"
pass "every function is declared with PORTAL_AUTH_EXTERN: built with -fvisibility=hidden, a stand-in exports each"

# PORTAL_AUTH_DEPRECATED: a use of what it marks warns, quoting the message, so -Werror
# fails; with PORTAL_AUTH_NO_DEPRECATION_WARNINGS defined it passes.
cat > "$work/deprecated.c" <<'C'
#include <portal_auth.h>
PORTAL_AUTH_DEPRECATED("use new_thing") static int old_thing(void);
static int old_thing(void) { return 0; }
int main(void) { return old_thing(); }
C
for compiler in gcc clang; do
    "$compiler" -std=c11 "${warnings[@]}" -I"$prefix/include" -fsyntax-only "$work/deprecated.c" 2> "$work/deprecated.log" \
        && fail "$compiler accepts a use of what PORTAL_AUTH_DEPRECATED marks"
    grep -q 'use new_thing' "$work/deprecated.log" || { cat "$work/deprecated.log"; fail "$compiler does not quote the deprecation's message"; }
    "$compiler" -std=c11 "${warnings[@]}" -DPORTAL_AUTH_NO_DEPRECATION_WARNINGS -I"$prefix/include" -fsyntax-only "$work/deprecated.c" \
        || fail "$compiler warns of a deprecation with PORTAL_AUTH_NO_DEPRECATION_WARNINGS defined"
done
pass "PORTAL_AUTH_DEPRECATED warns with gcc and clang (-Werror fails), and not with PORTAL_AUTH_NO_DEPRECATION_WARNINGS"

generated=$(scripts/generate-header.sh "$work/portal_auth.generated.h")
scripts/compare-header.py "$generated" "$header" || fail "include/portal_auth.h and the Swift exports disagree (above)"
pass "it declares every export of Sources/PortalAuthC with the types of the declaration swiftc generates"

# The comparison names what differs: a header with one parameter's type changed, one
# function left out, and one added.
altered="$work/altered.h"
sed -e 's/int32_t scale, uint8_t \*\*out_png/double scale, uint8_t **out_png/' -e '/^void portal_auth_call_free(/d' \
    -e 's/^void portal_auth_call_cancel(portal_auth_call \*call);$/&\nvoid portal_auth_nowhere(void);/' "$header" > "$altered"
scripts/compare-header.py "$generated" "$altered" > "$work/report" && fail "compare-header.py accepts an altered header"
cat > "$work/expected" <<EXPECTED
portal_auth_call_free: exported by Sources/PortalAuthC but not declared in $altered
portal_auth_nowhere: declared in $altered but not exported by Sources/PortalAuthC
portal_auth_totp_qr_png: parameter 2 (scale) is double in $altered, int32_t in the Swift export
EXPECTED
diff -u "$work/expected" "$work/report" || fail "compare-header.py does not name each declaration that differs"
pass "a changed parameter, a missing and an extra declaration are each named"

finish
