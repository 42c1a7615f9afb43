#!/usr/bin/env bash
# Builds the self-contained libportalauth.so: the Swift runtime linked in statically (so it
# loads where no Swift toolchain is installed), only portal_auth_* symbols exported.
# Prints the library's path.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product portalauth -Xswiftc -static-stdlib \
    -Xlinker "--version-script=$PWD/Sources/PortalAuthC/exports.map" >&2
echo "$PWD/.build/release/libportalauth.so"
