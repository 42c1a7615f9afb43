#!/usr/bin/env bash
# Installs libportalauth.so, its two headers and portal-auth.pc under PREFIX, so that a C
# program builds with `cc app.c $(pkg-config --cflags --libs portal-auth)`.
#   scripts/install.sh PREFIX
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: scripts/install.sh PREFIX}
library=$(scripts/build-library.sh)
version=$(sed -n 's/^#define PORTAL_AUTH_VERSION_STRING "\(.*\)"$/\1/p' include/portal_auth_types.h)

install -D -m 0755 "$library" "$prefix/lib/libportalauth.so"
install -D -m 0644 include/portal_auth.h "$prefix/include/portal_auth.h"
install -D -m 0644 include/portal_auth_types.h "$prefix/include/portal_auth_types.h"
mkdir -p "$prefix/lib/pkgconfig"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" scripts/portal-auth.pc.in > "$prefix/lib/pkgconfig/portal-auth.pc"
echo "Installed portal-auth $version under $prefix" >&2
