#!/usr/bin/env bash
# The release archive (make dist): .build/dist/portal-auth-VERSION-MACHINE-linux-gnu.tar.xz,
# the tree `make install` lays out (lib/ with the stripped library, portal-auth-glib and
# portal-auth-qt, their .pc files and CMake packages; include/; share/), which works from
# wherever it is unpacked: every .pc file and CMake package finds its paths from its own
# place, and the GLib and Qt libraries find libportalauth.so.0 beside them. The debug
# information stays out (every library stripped); share/doc/portal-auth has the licences (the Swift runtime's among
# them, as debian/copyright gives them). Reproducible (names sorted, owners and times fixed);
# its SHA-256 beside it, in sha256sum's format. Prints the archive's path.
#   scripts/dist.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^#define PORTAL_AUTH_VERSION_STRING "\(.*\)"$/\1/p' include/portal_auth.h)
name=portal-auth-$version-$(uname -m)-linux-gnu
out=$PWD/.build/dist
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
scripts/install.sh "$stage/$name" > /dev/null
rm -rf "$stage/$name/lib/.debug"
objcopy --remove-section=.gnu_debuglink "$stage/$name/lib/libportalauth.so.0".*.*
strip --strip-unneeded "$stage/$name"/lib/libportal-auth-glib.so.0.*.* "$stage/$name"/lib/libportal-auth-qt6.so.0.*.*
install -D -m 0644 LICENSE "$stage/$name/share/doc/portal-auth/LICENSE"
install -D -m 0644 debian/copyright "$stage/$name/share/doc/portal-auth/copyright"
mkdir -p "$out"
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" -cf - "$name" | xz -9 -T1 > "$out/$name.tar.xz"
(cd "$out" && sha256sum "$name.tar.xz" > "$name.tar.xz.sha256")
echo "$out/$name.tar.xz"
