#!/usr/bin/env bash
# The ABI of an installed libportalauth against the baseline checked in under abi/, with
# abidw and abidiff (Debian's abigail-tools):
#   abi/libportalauth.so.0.abi   the library itself: its soname, needed libraries, and every
#                                exported symbol with its version node
#   abi/portal_auth.h.abi        the types of every function, read from a stub library built
#                                from the installed header with debug information (abidw
#                                cannot read the Swift library's own)
# Any change abidiff reports fails the check, except functions added (abidiff also lets
# enumerators added pass). A field appended to a size-versioned struct is compatible by
# design, but abidiff cannot tell it from a layout change: refresh the baseline with it.
#   scripts/abi.sh check PREFIX [BASELINE_DIR]   compare; prints abidiff's report on a change
#   scripts/abi.sh write PREFIX                  refresh abi/ (after an intended ABI change)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/abi.sh check|write PREFIX [BASELINE_DIR]}
prefix=${2:?usage: scripts/abi.sh check|write PREFIX [BASELINE_DIR]}
baseline=${3:-abi}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

soname=$(readelf -d "$prefix/lib/libportalauth.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
abidw=(abidw --no-corpus-path --no-comp-dir-path --no-show-locs --drop-undefined-syms)
# Debug information is found through the library's debug link; only what the installed
# header declares is kept (the loader's C internals are not the ABI).
"${abidw[@]}" --drop-private-types --headers-dir "$prefix/include" "$prefix/lib/$soname" > "$work/$soname.abi"
scripts/abi-stub.py "$prefix/include/portal_auth.h" > "$work/stub.c"
mkdir "$work/stub"
# Compiled from within its folder, so that the baseline names it stub.c wherever it ran.
(cd "$work" && gcc -std=c11 -g -O0 -shared -fPIC -Wl,--version-script="$OLDPWD/Sources/PortalAuthC/exports.map" \
    -Wl,-soname,"$soname" stub.c -o "stub/$soname")
"${abidw[@]}" "$work/stub/$soname" > "$work/portal_auth.h.abi"

if [ "$mode" = write ]; then
    cp "$work/$soname.abi" "$work/portal_auth.h.abi" abi/
    echo "abi/: the baseline of $soname written" >&2
    exit 0
fi
[ "$mode" = check ] || { echo "unknown mode $mode" >&2; exit 2; }
status=0
for corpus in "$soname.abi" portal_auth.h.abi; do
    [ -f "$baseline/$corpus" ] || { echo "no baseline $baseline/$corpus for $soname: a new soname needs scripts/abi.sh write" >&2; exit 1; }
    if ! abidiff --no-added-syms "$baseline/$corpus" "$work/$corpus" > "$work/report"; then
        echo "abidiff: $corpus differs from $baseline/$corpus:" >&2
        cat "$work/report" >&2
        status=1
    fi
done
exit $status
