#!/usr/bin/env bash
# make docs: the HTML reference of include/portal_auth.h with Doxygen (docs/Doxyfile), in
# .build/docs/html. Fails on any warning: an undocumented function, parameter or return
# value, or a broken reference. Prints the index's path.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^#define PORTAL_AUTH_VERSION_STRING "\(.*\)"$/\1/p' include/portal_auth.h)
rm -rf .build/docs
mkdir -p .build/docs
PORTAL_AUTH_VERSION=$version doxygen docs/Doxyfile 2> .build/docs/warnings || true
if [ -s .build/docs/warnings ] || [ ! -f .build/docs/html/index.html ]; then
    cat .build/docs/warnings >&2
    echo "make docs: Doxygen warned about include/portal_auth.h" >&2
    exit 1
fi
echo "$PWD/.build/docs/html/index.html"
