#!/usr/bin/env bash
# Installs libportalauth under PREFIX the way a distribution lays a C library out:
#   lib/libportalauth.so.0.MINOR.PATCH    the library, stripped
#   lib/libportalauth.so.0                the soname's link, which programs load
#   lib/libportalauth.so                  the link the linker finds for -lportalauth
#   lib/.debug/libportalauth.so.0.MINOR.PATCH.debug   its debug information, which gdb and
#                                         valgrind find through the library's .gnu_debuglink
#   include/portal_auth.h, include/portal_auth.hpp (the C++ layer, header-only),
#   lib/pkgconfig/portal-auth.pc, lib/cmake/PortalAuth/*.cmake
# so that a C program builds with `cc app.c $(pkg-config --cflags --libs portal-auth)`, or
# with CMake's find_package(PortalAuth) and PortalAuth::PortalAuth (a C++ one with
# PortalAuth::PortalAuthCpp, which adds the C++17 portal_auth.hpp needs); then portal-auth-glib
# (bindings/glib, built with Meson against the library just installed):
#   lib/libportal-auth-glib.so.0.*, include/portal-auth-glib/*.h, lib/pkgconfig/portal-auth-glib.pc,
#   share/gir-1.0/PortalAuth-0.gir, lib/girepository-1.0/PortalAuth-0.typelib
# and portal-auth-qt (bindings/qt, with CMake, where Qt 6 is installed):
#   lib/libportal-auth-qt6.so.0.*, include/PortalAuthQt/*.h, lib/pkgconfig/portal-auth-qt6.pc,
#   lib/cmake/PortalAuthQt/*.cmake
#   scripts/install.sh PREFIX
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: scripts/install.sh PREFIX}
library=$(scripts/build-library.sh)
macro() { sed -n "s/^#define $1 \"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" include/portal_auth.h; }
version=$(macro PORTAL_AUTH_VERSION_STRING)
soname=$(readelf -d "$library" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
file=$soname.$(macro PORTAL_AUTH_VERSION_MINOR).$(macro PORTAL_AUTH_VERSION_PATCH)
lib=$prefix/lib

install -d "$lib/.debug" "$lib/pkgconfig" "$lib/cmake/PortalAuth" "$prefix/include"
objcopy --only-keep-debug "$library" "$lib/.debug/$file.debug"
chmod 0644 "$lib/.debug/$file.debug"
strip --strip-unneeded --remove-section=.comment -o "$lib/$file.tmp" "$library"
objcopy --add-gnu-debuglink="$lib/.debug/$file.debug" "$lib/$file.tmp"
chmod 0755 "$lib/$file.tmp"
mv -f "$lib/$file.tmp" "$lib/$file"
ln -sfn "$file" "$lib/$soname"
ln -sfn "$soname" "$lib/libportalauth.so"

install -m 0644 include/portal_auth.h "$prefix/include/portal_auth.h"
install -m 0644 bindings/cpp/portal_auth.hpp "$prefix/include/portal_auth.hpp"
substitute() {
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@FILE@|$file|g" -e "s|@SONAME@|$soname|g" \
        -e "s|@MAJOR@|$(macro PORTAL_AUTH_VERSION_MAJOR)|g" "$1" > "$2"
}
substitute scripts/portal-auth.pc.in "$lib/pkgconfig/portal-auth.pc"
substitute scripts/PortalAuthConfig.cmake.in "$lib/cmake/PortalAuth/PortalAuthConfig.cmake"
substitute scripts/PortalAuthConfigVersion.cmake.in "$lib/cmake/PortalAuth/PortalAuthConfigVersion.cmake"
echo "Installed portal-auth $version under $prefix ($file, $(stat -c %s "$lib/$file") bytes stripped)" >&2

# portal-auth-glib and portal-auth-qt, each built in a folder of its own and installed beside
# the library it wraps.
glib_build=$(mktemp -d)
qt_build=$(mktemp -d)
trap 'rm -rf "$glib_build" "$qt_build"' EXIT
export PKG_CONFIG_PATH="$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
meson setup --prefix="$prefix" --libdir=lib "$glib_build" bindings/glib > "$glib_build.log" 2>&1 \
    && meson install -C "$glib_build" >> "$glib_build.log" 2>&1 \
    || { cat "$glib_build.log" >&2; rm -f "$glib_build.log"; exit 1; }
rm -f "$glib_build.log"
echo "Installed portal-auth-glib under $prefix (with its PortalAuth-0 introspection data)" >&2

# portal-auth-qt, with CMake, where Qt 6 is installed (make deps installs it).
if pkg-config --exists Qt6Core Qt6Gui; then
    { cmake -S bindings/qt -B "$qt_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" \
          -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
        && cmake --build "$qt_build" --parallel "$(nproc)" && cmake --install "$qt_build"; } > "$qt_build.log" 2>&1 \
        || { cat "$qt_build.log" >&2; rm -f "$qt_build.log"; exit 1; }
    rm -f "$qt_build.log"
    echo "Installed portal-auth-qt under $prefix (the PortalAuthQt CMake package, portal-auth-qt6.pc)" >&2
else
    echo "Not installed: portal-auth-qt (no Qt 6: apt-get install qt6-base-dev)" >&2
fi
