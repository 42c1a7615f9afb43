#!/usr/bin/env bash
# Writes what swiftc declares for the @c exports of Sources/PortalAuthC, a build artefact
# that scripts/compare-header.py checks against the hand-written include/portal_auth.h.
# Needs `swift build` first (it reads the core's module from .build/debug). Prints the path.
#   scripts/generate-header.sh [OUT]     default .build/portal_auth.generated.h
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/portal_auth.generated.h}

# The module maps of the system-library targets, and of the C targets the core imports.
module_maps=()
for map in Sources/C*/module.modulemap Sources/C*/include/module.modulemap; do
    [ -f "$map" ] && module_maps+=(-Xcc "-fmodule-map-file=$map")
done
include_dirs=()
for dir in $(pkg-config --cflags-only-I libcurl libsecret-1 libqrencode libpng); do include_dirs+=(-Xcc "$dir"); done

# The package's name as swift build gave it (its folder's): the core's `package` declarations
# are visible to the package's modules alone.
package=$(python3 -c 'import json, sys
arguments = [a for c in json.load(open(sys.argv[1]))["swiftCommands"].values() for a in c.get("otherArguments", [])]
print(arguments[arguments.index("-package-name") + 1])' .build/debug/description.json)

mkdir -p "$(dirname "$out")"
swiftc -parse-as-library -typecheck -module-name PortalAuthC -package-name "$package" Sources/PortalAuthC/*.swift \
    -I .build/debug/Modules "${module_maps[@]}" "${include_dirs[@]}" -emit-clang-header-path "$out.tmp"
# The types module's headers are named by its module map's path: the public header as
# installed; the completed handles are Swift's alone.
sed -e 's,#\(include\|import\) <\.\./\.\./include/portal_auth\.h>,#\1 "portal_auth.h",' \
    -e '/#\(include\|import\) <handles\.h>/d' "$out.tmp" > "$out"
rm -f "$out.tmp"
echo "$out"
