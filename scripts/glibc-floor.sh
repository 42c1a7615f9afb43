#!/usr/bin/env bash
# Prints the oldest glibc the library claims to load on, PORTAL_AUTH_GLIBC_FLOOR of
# Sources/CGlibcFloor (the packages' libc6 dependency, the tests' Debian 11 root).
#   scripts/glibc-floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
floor=$(sed -n 's/^#define PORTAL_AUTH_GLIBC_FLOOR "\(.*\)"$/\1/p' Sources/CGlibcFloor/include/glibc_floor.h)
[ -n "$floor" ] || { echo "PORTAL_AUTH_GLIBC_FLOOR not found in Sources/CGlibcFloor/include/glibc_floor.h" >&2; exit 1; }
echo "$floor"
