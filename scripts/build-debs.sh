#!/usr/bin/env bash
# Builds the Debian packages of debian/ with dpkg-buildpackage -b, from a copy of the work
# tree (scripts/copy-work-tree.sh: no build output) in a folder of OUT, removed once built;
# the .deb files land in OUT. Needs what debian/rules says: the Swift toolchain on PATH and
# glibc 2.31's libraries (make deps), linked into the copy. Prints the .deb files.
#   scripts/build-debs.sh OUT
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/build-debs.sh OUT}")
version=$(dpkg-parsechangelog -S Version)
source=$out/portal-auth-$version
rm -rf "$source"
mkdir -p "$source/.build"
scripts/copy-work-tree.sh "$source"
glibc=$(dirname "$(scripts/glibc-sysroot.sh)")
ln -s "$glibc" "$source/.build/$(basename "$glibc")"
(cd "$source" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 \
    || { tail -n 60 "$out/build.log" >&2; echo "dpkg-buildpackage failed: $out/build.log" >&2; exit 1; }
rm -rf "$source"
ls "$out"/*_"$version"_*.deb
