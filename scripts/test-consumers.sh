#!/usr/bin/env bash
# The three ways an application's build finds an installed libportalauth, each with a small
# project of Tests/consumers built against a temporary prefix from `make install`: a Makefile
# with pkg-config, CMake's find_package(PortalAuth) and its target PortalAuth::PortalAuth,
# and Meson's dependency('portal-auth'). Each program loads the library by its soname from
# the prefix and runs. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh consumers

install_prefix
version=$(sed -n 's/^#define PORTAL_AUTH_VERSION_STRING "\(.*\)"$/\1/p' include/portal_auth.h)

# Runs the consumer a project built, as it is (no LD_LIBRARY_PATH): it must load the library
# of the prefix by its soname, and print its version.
#   run_consumer LABEL PROGRAM
run_consumer() {
    local label=$1 program=$2
    [ -x "$program" ] || fail "$label built no program"
    loads_by_soname "$label: the program" "$program"
    [ "$(env -u LD_LIBRARY_PATH "$program")" = "consumer: $version" ] || fail "$label: the program failed"
    pass "$label"
}

mkdir "$work/pkg-config"
make -s -C Tests/consumers/pkg-config OUT="$work/pkg-config/consumer" > "$work/pkg-config.log" 2>&1 \
    || { cat "$work/pkg-config.log"; fail "the pkg-config consumer does not build"; }
run_consumer "a Makefile with pkg-config --cflags --libs portal-auth" "$work/pkg-config/consumer"

{ cmake -S Tests/consumers/cmake -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" && cmake --build "$work/cmake"; } \
    > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "the CMake consumer does not build"; }
run_consumer "CMake: find_package(PortalAuth 0.1) and PortalAuth::PortalAuth" "$work/cmake/consumer"
# A version the package does not satisfy is refused: the same project, asking for 1.0.
cp -r Tests/consumers "$work/newer"
sed -i 's/find_package(PortalAuth 0.1 REQUIRED)/find_package(PortalAuth 1.0 REQUIRED)/' "$work/newer/cmake/CMakeLists.txt"
grep -q 'PortalAuth 1.0' "$work/newer/cmake/CMakeLists.txt" || fail "the CMake consumer no longer asks for PortalAuth 0.1"
! cmake -S "$work/newer/cmake" -B "$work/newer-build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/newer.log" 2>&1 \
    || fail "find_package(PortalAuth 1.0) accepts $version"
grep -q 'compatible with requested version "1.0"' "$work/newer.log" || { cat "$work/newer.log"; fail "find_package(PortalAuth 1.0) failed for another reason"; }
pass "CMake: find_package(PortalAuth 1.0) refuses $version"

{ meson setup "$work/meson" Tests/consumers/meson && meson compile -C "$work/meson"; } \
    > "$work/meson.log" 2>&1 || { cat "$work/meson.log"; fail "the Meson consumer does not build"; }
run_consumer "Meson: dependency('portal-auth', version: '>=0.1')" "$work/meson/consumer"

finish
