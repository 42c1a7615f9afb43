#!/usr/bin/env bash
# Checks of include/portal_auth.h, as `make install` lays it out in a temporary prefix: plain
# ASCII C with no HTML and nothing of Swift's; it compiles, with a program using its
# initialiser macro, under gcc and clang as C99, C11 and C++17 with -Wall -Wextra -Wpedantic
# -Werror; and it declares every @c export with the types swiftc generates for it
# (scripts/generate-header.sh, then scripts/compare-header.py, whose report names the
# declaration that differs). Needs `swift build` first. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh header

install_prefix
header="$prefix/include/portal_auth.h"

LC_ALL=C grep -n '[^[:print:][:space:]]' "$header" && fail "the header holds characters that are not ASCII"
grep -n -E '</?[a-z]+>|&[a-z]+;' "$header" && fail "the header holds HTML"
grep -n -E 'SWIFT_|_Nullable|_Nonnull|@c\b|#pragma|__attribute__|(^|[^:])//' "$header" && fail "the header holds Swift's boilerplate, attributes or // comments"
pass "plain ASCII C: /* */ comments, no HTML, nothing of Swift's"

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
