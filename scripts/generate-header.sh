#!/usr/bin/env bash
# Writes what swiftc declares for the @c exports of Sources/PortalAuthC, a build artefact
# that scripts/compare-header.py checks against the hand-written include/portal_auth.h.
# Needs `swift build` first (it reads the core's module from .build/debug). Prints the path.
#   scripts/generate-header.sh [OUT]     default .build/portal_auth.generated.h
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/portal_auth.generated.h}

module_maps=()
for map in Sources/C*/module.modulemap; do module_maps+=(-Xcc "-fmodule-map-file=$map"); done
include_dirs=()
for dir in $(pkg-config --cflags-only-I libcurl libsecret-1 libqrencode libpng); do include_dirs+=(-Xcc "$dir"); done

mkdir -p "$(dirname "$out")"
swiftc -parse-as-library -typecheck -module-name PortalAuthC Sources/PortalAuthC/*.swift \
    -I .build/debug/Modules "${module_maps[@]}" "${include_dirs[@]}" -emit-clang-header-path "$out.tmp"
# The types module's headers are named by its module map's path: the public header as
# installed; the completed handles are Swift's alone.
sed -e 's,#\(include\|import\) <\.\./\.\./include/portal_auth\.h>,#\1 "portal_auth.h",' \
    -e '/#\(include\|import\) <handles\.h>/d' "$out.tmp" > "$out"
rm -f "$out.tmp"
echo "$out"
