#!/usr/bin/env bash
# Builds the self-contained libportalauth: the Swift runtime linked in statically (so it
# loads where no Swift toolchain is installed), its glibc imports as old as they go, only
# portal_auth_* exported, each symbol in the version node of
# Sources/PortalAuthC/exports.map, and the soname libportalauth.so.N of
# PORTAL_AUTH_SOVERSION. A link by the soname stands beside it, so that the repository's
# build is found the way an installed library is. CPPFLAGS and CFLAGS reach the C targets
# (and Swift's importer of C headers), LDFLAGS the link, as a distribution's build sets them
# (dpkg-buildflags: hardening, debug-prefix maps). Prints the library's path.
set -euo pipefail
cd "$(dirname "$0")/.."
soname=libportalauth.so.$(sed -n 's/^#define PORTAL_AUTH_SOVERSION \([0-9][0-9]*\)$/\1/p' include/portal_auth.h)
[ "$soname" != libportalauth.so. ] || { echo "PORTAL_AUTH_SOVERSION not found in include/portal_auth.h" >&2; exit 1; }
# Linked against glibc 2.31's libraries (scripts/glibc-sysroot.sh): the library loads on
# every glibc from its floor (Sources/CGlibcFloor) on, not only on the one it is built on.
glibc=$(scripts/glibc-sysroot.sh)
flags=()
for flag in ${CPPFLAGS:-} ${CFLAGS:-}; do flags+=(-Xcc "$flag"); done
for flag in ${LDFLAGS:-}; do
    case $flag in
        -Wl,*) IFS=, read -r -a words <<< "${flag#-Wl,}"; for word in "${words[@]}"; do flags+=(-Xlinker "$word"); done ;;
        *) flags+=(-Xswiftc -Xclang-linker -Xswiftc "$flag") ;;
    esac
done
swift build -c release --product portalauth -Xswiftc -static-stdlib -Xlinker "-L$glibc" \
    -Xlinker "--version-script=$PWD/Sources/PortalAuthC/exports.map" -Xlinker "-soname=$soname" "${flags[@]}" >&2
ln -sfn libportalauth.so ".build/release/$soname"
echo "$PWD/.build/release/libportalauth.so"
