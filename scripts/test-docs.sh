#!/usr/bin/env bash
# Checks of the documentation: `make docs` (Doxygen over include/portal_auth.h) builds with
# no warning, and fails on an undocumented parameter; every citation of docs/protocol.md and
# docs/desktop.md in the repository names a section that exists (scripts/check-citations.py),
# and the check fails on one that does not; every command, path, link and code block that
# README.md, ARCHITECTURE.md, SECURITY.md and docs/*.md show holds (scripts/check-docs.py,
# which builds nothing), and that check fails on each kind of problem; every copy of the
# header's codes, reasons and version in the core and the bindings is what
# scripts/generate-tables.py makes of it, and a header that differs fails that check. Ends
# with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh docs

index=$(scripts/docs.sh) || fail "make docs: Doxygen warned (above)"
for group in version client calls results sessions errors storage logging totp memory; do
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

scripts/check-docs.py || fail "a document shows a command, path, link or code that does not hold (above)"
pass "every make command, path, link and code block of the documents holds"

# One problem of each kind, beside one that holds, in a document of the test's own.
fence='```'
printf '%s\n' 'the first line' 'the second line' > "$work/source.txt"
cat > "$work/guide.md" <<TEXT
# Guide

${fence}sh
make docs
make no-such-target
scripts/no-such-script.sh
scripts/stage.sh
cd bindings/rust && ls ../../scripts/nothing
${fence}

Run \`make no-such-tier\`, read \`bindings/nothing\`, see [the guide](#guide), [a note](nowhere.md)
and [a heading](#nowhere).

<!-- excerpt of $work/source.txt -->
${fence}text
    the second line
the first line
${fence}

${fence}c
int main(void) { return undeclared; }
${fence}

${fence}python
def broken(:
${fence}
TEXT
scripts/check-docs.py "$work/guide.md" | sed "s|^.*guide.md:||" | grep -v '^<stdin>' > "$work/report" || true
cat > "$work/expected" <<EXPECTED
5: \`make no-such-target\` is not a command make accepts (make -n fails)
6: scripts/no-such-script.sh does not exist
7: scripts/stage.sh is run as a command but is not an executable file
8: scripts/nothing does not exist
16: line 2 of the excerpt is not in $work/source.txt (after the lines before it): the first line
21: the c block does not compile:
25: the python block does not parse: invalid syntax (its line 1)
11: \`make no-such-tier\` is not a command make accepts (make -n fails)
11: bindings/nothing does not exist
11: the link's target nowhere.md does not exist
11: guide.md has no heading whose anchor is #nowhere
EXPECTED
diff -u "$work/expected" "$work/report" || fail "check-docs.py does not report exactly the problems of a document"
pass "a make target, a path, a command that is no program, a link, an anchor, an excerpt and code that do not hold are each reported"

# ARCHITECTURE.md names every folder of Sources/: one left out is reported, and so is one
# that does not exist.
grep -o 'Sources/[A-Za-z/]*' ARCHITECTURE.md | grep -v '^Sources/OneTimeCode' > "$work/ARCHITECTURE.md"
echo 'Sources/NoSuchFolder' >> "$work/ARCHITECTURE.md"
scripts/check-docs.py "$work/ARCHITECTURE.md" | sed "s|^.*ARCHITECTURE.md: ||" > "$work/report" || true
printf '%s\n' 'names Sources/NoSuchFolder, which does not exist' 'does not name Sources/OneTimeCode' > "$work/expected"
diff -u "$work/expected" "$work/report" || fail "check-docs.py does not report a Sources folder ARCHITECTURE.md leaves out, or names wrongly"
pass "a Sources folder that ARCHITECTURE.md leaves out, or names but does not exist, is reported"

scripts/generate-tables.py --check || fail "a copy of the header's tables or version differs: run scripts/generate-tables.py"
pass "every binding's codes, reasons and version, and the core's code sentences and reason names, are the header's"

# A header with another version, a reason more and a code's sentence changed: every file the
# script writes differs from it.
sed -e 's/^#define PORTAL_AUTH_VERSION_STRING ".*"$/#define PORTAL_AUTH_VERSION_STRING "9.9.9"/' \
    -e 's|^\(    PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED = 52,\)$|\1\n    /** Added by the test. */\n    PORTAL_AUTH_REASON_ADDED = 99,|' \
    -e 's|/\*\* Portal sends no more emails for now\.|/** Portal sends no more emails now.|' \
    include/portal_auth.h > "$work/portal_auth.h"
scripts/generate-tables.py --check --header "$work/portal_auth.h" > "$work/report" && fail "generate-tables.py --check accepts a header that differs"
sed -n 's/ differs from what .* gives$//p' "$work/report" | sort > "$work/stale"
python3 -c 'import importlib.util, sys
spec = importlib.util.spec_from_file_location("tables", "scripts/generate-tables.py")
tables = sys.modules["tables"] = importlib.util.module_from_spec(spec)
sys.path.insert(0, "scripts"); spec.loader.exec_module(tables)
print("\n".join(sorted({path for path, *_ in tables.OUTPUTS} | {path for path, _ in tables.VERSIONS})))' > "$work/expected"
diff -u "$work/expected" "$work/stale" || fail "generate-tables.py --check does not name every file a changed header changes"
tail -n 1 "$work/report" | grep -qx 'run scripts/generate-tables.py' || fail "generate-tables.py --check does not say what to run"
pass "a header with another version, reason and sentence fails it, naming every file and the command to run"

finish
