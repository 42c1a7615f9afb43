#!/usr/bin/env bash
# Builds and installs libportalauth under PREFIX the way a distribution lays a C library
# out, LIBDIR being PREFIX/lib unless told (a multiarch lib/x86_64-linux-gnu works):
#   LIBDIR/libportalauth.so.0.MINOR.PATCH    the library, stripped
#   LIBDIR/libportalauth.so.0                the soname's link, which programs load
#   LIBDIR/libportalauth.so                  the link the linker finds for -lportalauth
#   LIBDIR/.debug/libportalauth.so.0.MINOR.PATCH.debug   its debug information, which gdb
#                                         and valgrind find through the library's .gnu_debuglink
#   include/portal_auth.h, include/portal_auth.hpp (the C++ layer, header-only),
#   LIBDIR/pkgconfig/portal-auth.pc, LIBDIR/cmake/PortalAuth/*.cmake
# so that a C program builds with `cc app.c $(pkg-config --cflags --libs portal-auth)`, or
# with CMake's find_package(PortalAuth) and PortalAuth::PortalAuth (a C++ one with
# PortalAuth::PortalAuthCpp, which adds the C++17 portal_auth.hpp needs); then portal-auth-glib
# (bindings/glib, built with Meson against the library just installed):
#   LIBDIR/libportal-auth-glib.so.0.*, include/portal-auth-glib/*.h, LIBDIR/pkgconfig/portal-auth-glib.pc,
#   share/gir-1.0/PortalAuth-0.gir, LIBDIR/girepository-1.0/PortalAuth-0.typelib
# and portal-auth-qt (bindings/qt, with CMake, where Qt 6 is installed):
#   LIBDIR/libportal-auth-qt6.so.0.*, include/PortalAuthQt/*.h, LIBDIR/pkgconfig/portal-auth-qt6.pc,
#   LIBDIR/cmake/PortalAuthQt/*.cmake
# Every .pc file and CMake package finds its paths from its own place, and the GLib and Qt
# libraries find libportalauth.so.0 through the run path $ORIGIN, so the tree works wherever
# it is moved to (make dist's archive is one), and from DESTDIR while staged.
#   [DESTDIR=STAGE] [LIBDIR=lib] [KEEP_DEBUG=1] [RELOCATABLE=no] scripts/install.sh PREFIX
# DESTDIR: the files go to STAGE/PREFIX, for a package to be made of them. KEEP_DEBUG=1
# installs the library unstripped, its debug information inside it, for a packager's own
# split (dh_strip's -dbgsym packages). RELOCATABLE=no, for a distribution's tree that never
# moves: the .pc files name PREFIX itself (pkg-config then leaves out the system's folders),
# and the GLib and Qt libraries have no run path (theirs is the loader's own). The build
# takes CFLAGS, CPPFLAGS, CXXFLAGS and LDFLAGS from the environment
# (scripts/build-library.sh for the Swift library).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: [DESTDIR=STAGE] [LIBDIR=lib] [KEEP_DEBUG=1] [RELOCATABLE=no] scripts/install.sh PREFIX}
case $prefix in /*) ;; *) echo "install.sh: PREFIX must be an absolute path, not $prefix" >&2; exit 2 ;; esac
prefix=${prefix%/}
libdir=${LIBDIR:-lib}
libdir=${libdir#"$prefix/"}   # an absolute LIBDIR under PREFIX, as distributions give it
case $libdir in /* | *..* | "") echo "install.sh: LIBDIR must be a folder under PREFIX, not ${LIBDIR:-}" >&2; exit 2 ;; esac
libdir=${libdir%/}
destdir=${DESTDIR:-}
relocatable=true
case ${RELOCATABLE:-yes} in yes) ;; no) relocatable=false ;; *) echo "install.sh: RELOCATABLE is yes or no, not $RELOCATABLE" >&2; exit 2 ;; esac
library=$(scripts/build-library.sh)
macro() { sed -n "s/^#define $1 \"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" include/portal_auth.h; }
version=$(macro PORTAL_AUTH_VERSION_STRING)
soname=$(readelf -d "$library" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
file=$soname.$(macro PORTAL_AUTH_VERSION_MINOR).$(macro PORTAL_AUTH_VERSION_PATCH)
lib=$destdir$prefix/$libdir
# From a folder under LIBDIR, `depth` folders down, back up to PREFIX: ../../.. and so on.
up_from() { local depth=$(($1 + $(tr -cd / <<< "$libdir/" | wc -c))) path=..; while [ "$depth" -gt 1 ]; do path=$path/..; depth=$((depth - 1)); done; echo "$path"; }

install -d "$lib/pkgconfig" "$lib/cmake/PortalAuth" "$destdir$prefix/include"
if [ "${KEEP_DEBUG:-}" = 1 ]; then
    install -m 0755 "$library" "$lib/$file"
else
    install -d "$lib/.debug"
    objcopy --only-keep-debug "$library" "$lib/.debug/$file.debug"
    chmod 0644 "$lib/.debug/$file.debug"
    strip --strip-unneeded --remove-section=.comment -o "$lib/$file.tmp" "$library"
    objcopy --add-gnu-debuglink="$lib/.debug/$file.debug" "$lib/$file.tmp"
    chmod 0755 "$lib/$file.tmp"
    mv -f "$lib/$file.tmp" "$lib/$file"
fi
ln -sfn "$file" "$lib/$soname"
ln -sfn "$soname" "$lib/libportalauth.so"

install -m 0644 include/portal_auth.h "$destdir$prefix/include/portal_auth.h"
install -m 0644 bindings/cpp/portal_auth.hpp "$destdir$prefix/include/portal_auth.hpp"
substitute() {
    sed -e "s|@TO_PREFIX@|$3|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@VERSION@|$version|g" -e "s|@FILE@|$file|g" \
        -e "s|@SONAME@|$soname|g" -e "s|@MAJOR@|$(macro PORTAL_AUTH_VERSION_MAJOR)|g" "$1" > "$2"
}
substitute scripts/portal-auth.pc.in "$lib/pkgconfig/portal-auth.pc" "$(up_from 1)"
substitute scripts/PortalAuthConfig.cmake.in "$lib/cmake/PortalAuth/PortalAuthConfig.cmake" "$(up_from 2)"
substitute scripts/PortalAuthConfigVersion.cmake.in "$lib/cmake/PortalAuth/PortalAuthConfigVersion.cmake" "$(up_from 2)"
echo "Installed portal-auth $version under $destdir$prefix ($libdir/$file, $(stat -c %s "$lib/$file") bytes)" >&2

# portal-auth-glib and portal-auth-qt, each built in a folder of its own against the library
# just installed (found in the stage through the relocating .pc and CMake files), and
# installed beside it.
glib_build=$(mktemp -d)
qt_build=$(mktemp -d)
trap 'rm -rf "$glib_build" "$qt_build"' EXIT
export PKG_CONFIG_PATH="$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# Meson's debugoptimized: -O2 with debug information, which a packager's split takes.
{ meson setup --prefix="$prefix" --libdir="$libdir" --buildtype=debugoptimized -Dpkgconfig.relocatable=true \
      -Dorigin_rpath="$relocatable" "$glib_build" bindings/glib \
      && meson install -C "$glib_build" --destdir "$destdir"; } > "$glib_build.log" 2>&1 \
    || { cat "$glib_build.log" >&2; rm -f "$glib_build.log"; exit 1; }
rm -f "$glib_build.log"
echo "Installed portal-auth-glib under $destdir$prefix (with its PortalAuth-0 introspection data)" >&2

# portal-auth-qt, with CMake, where Qt 6 is installed (make deps installs it).
if pkg-config --exists Qt6Core Qt6Gui; then
    # CMake reads CXXFLAGS, not CPPFLAGS (a distribution's _FORTIFY_SOURCE among them).
    { CXXFLAGS="${CPPFLAGS:-} ${CXXFLAGS:-}" cmake -S bindings/qt -B "$qt_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$destdir$prefix" \
          -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR="$libdir" -DPORTAL_AUTH_QT_ORIGIN_RPATH="$relocatable" \
        && cmake --build "$qt_build" --parallel "$(nproc)" \
        && DESTDIR=$destdir cmake --install "$qt_build"; } > "$qt_build.log" 2>&1 \
        || { cat "$qt_build.log" >&2; rm -f "$qt_build.log"; exit 1; }
    rm -f "$qt_build.log"
    echo "Installed portal-auth-qt under $destdir$prefix (the PortalAuthQt CMake package, portal-auth-qt6.pc)" >&2
else
    echo "Not installed: portal-auth-qt (no Qt 6: apt-get install qt6-base-dev)" >&2
fi

# A tree that never moves names its prefix: relocating .pc files were needed only while
# portal-auth-glib and portal-auth-qt built against the staged library.
if [ "$relocatable" = false ]; then
    sed -i "s|^prefix=\${pcfiledir}/.*\$|prefix=$prefix|" "$lib"/pkgconfig/portal-auth*.pc
fi
