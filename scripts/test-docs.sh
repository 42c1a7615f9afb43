#!/usr/bin/env bash
# Checks of the documentation: `make docs` (Doxygen over include/portal_auth.h) builds with
# no warning, and fails on an undocumented parameter; every citation of docs/protocol.md and
# docs/desktop.md in the repository names a section that exists (scripts/check-citations.py),
# and the check fails on one that does not. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh docs

index=$(scripts/docs.sh) || fail "make docs: Doxygen warned (above)"
for group in version client calls results sessions errors storage logging totp; do
    [ -f "$(dirname "$index")/group__$group.html" ] || fail "make docs wrote no page for the group $group"
done
pass "make docs builds the reference with no Doxygen warning: $index"

sed 's/^ \* @param bytes The buffer; NULL is ignored\.$/ */' include/portal_auth.h > "$work/portal_auth.h"
! cmp -s "$work/portal_auth.h" include/portal_auth.h || fail "the test's change to the header changed nothing"
(cat docs/Doxyfile; echo "INPUT = $work/portal_auth.h"; echo "OUTPUT_DIRECTORY = $work/docs") \
    | PORTAL_AUTH_VERSION=test doxygen - > "$work/doxygen.log" 2>&1 && fail "Doxygen accepts an undocumented parameter"
grep -q 'parameters of member portal_auth_bytes_free are not documented' "$work/doxygen.log" \
    || { cat "$work/doxygen.log"; fail "Doxygen failed for another reason than the undocumented parameter"; }
pass "an undocumented parameter fails it"

scripts/check-citations.py || fail "a citation names a section that does not exist (above)"
pass "every citation of docs/protocol.md and docs/desktop.md resolves"

# The citations are spelled here from parts, so that this script cites nothing itself.
section=$(printf '\302\247') protocol=docs/protocol.md desktop=docs/desktop.md
cat > "$work/citing.txt" <<TEXT
$protocol ${section}3, ${section}5 and $desktop "Browser sign-in" exist; RFC 8252 ${section}7.3 is outside.
$protocol ${section}11 does not exist.
$desktop "Nowhere" does not exist.
A bare ${section}4 names no file.
TEXT
scripts/check-citations.py "$work/citing.txt" | sed "s|^.*citing.txt:||" > "$work/report" || true
cat > "$work/expected" <<EXPECTED
2: $protocol has no ${section}11
3: $desktop has no heading "Nowhere"
4: ${section}4 names no file: write $protocol ${section}4
EXPECTED
diff -u "$work/expected" "$work/report" || fail "check-citations.py does not report exactly the citations that do not resolve"
pass "a missing section, a missing heading and a bare section number are each reported"

finish
