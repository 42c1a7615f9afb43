#!/usr/bin/env bash
# Builds the Debian packages of debian/ with dpkg-buildpackage -b, from a copy of the work
# tree (its files that git tracks or would: nothing ignored, no build output) in a folder
# of OUT, where the .deb files land. Needs what debian/rules says: the Swift toolchain on
# PATH and glibc 2.31's libraries (make deps), linked into the copy.
#   scripts/build-debs.sh OUT
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/build-debs.sh OUT}")
version=$(dpkg-parsechangelog -S Version)
source=$out/portal-auth-$version
rm -rf "$source"
mkdir -p "$source/.build"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    [ -e "$file" ] && printf '%s\0' "$file"   # a deleted file git still tracks
done | tar --null --files-from=- --create --file=- | tar --extract --file=- --directory="$source"
glibc=$(dirname "$(scripts/glibc-sysroot.sh)")
ln -s "$glibc" "$source/.build/$(basename "$glibc")"
(cd "$source" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 \
    || { tail -n 60 "$out/build.log" >&2; echo "dpkg-buildpackage failed: $out/build.log" >&2; exit 1; }
ls "$out"/*.deb
