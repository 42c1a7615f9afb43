#!/usr/bin/env bash
# The three ways an application's build finds an installed libportalauth, each with a small
# project of Tests/consumers built against a temporary prefix from `make install`: a Makefile
# with pkg-config, CMake's find_package(PortalAuth) and its target PortalAuth::PortalAuth,
# and Meson's dependency('portal-auth'); and for C++, CMake's PortalAuth::PortalAuthCpp
# (bindings/cpp/tests/consumer: C++17 from the target, -fno-exceptions), alone and as a
# subdirectory of the C project, whose C program still builds beside it. Each program loads
# the library by its soname from the prefix and runs. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh consumers

install_prefix
# Relocatable: no file that finds the library names the folder it was installed in, and the
# GLib and Qt libraries find libportalauth.so.0 beside themselves, not in a fixed folder.
named=$(grep -rl --include='*.pc' --include='*.cmake' -F "$prefix" "$prefix/lib" || true)
[ -z "$named" ] || fail "these files name the prefix they were installed in, and break when it moves: $named"
for library in "$prefix"/lib/libportal-auth-glib.so.0 "$prefix"/lib/libportal-auth-qt6.so.0; do
    [ -f "$library" ] || continue
    runpath=$(readelf -d "$library" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
    [ "$runpath" = '$ORIGIN' ] || fail "$(basename "$library")'s run path is '$runpath', not \$ORIGIN"
done
pass "the .pc files and CMake packages find their paths from their own place; the GLib and Qt libraries' run path is \$ORIGIN"
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

# Configures and builds a CMake project against PREFIX; the log in $work/LABEL.log.
#   cmake_build LABEL SOURCE BUILD PREFIX
cmake_build() {
    { cmake -S "$2" -B "$3" -DCMAKE_PREFIX_PATH="$4" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON && cmake --build "$3"; } > "$work/$1.log" 2>&1
}

# A prefix whose CMake package is the installed one edited by the sed SCRIPT (the library and
# the headers are the installed ones, linked).
#   edited_prefix FOLDER SCRIPT
edited_prefix() {
    local config=lib/cmake/PortalAuth/PortalAuthConfig.cmake
    cp -rs "$prefix" "$1"
    rm "$1/$config"
    sed "$2" "$prefix/$config" > "$1/$config"
    ! cmp -s "$prefix/$config" "$1/$config" || fail "the edit of the CMake package changed nothing: $2"
}

# C++: a project at C++14, without exceptions, gets the C++17 of portal_auth.hpp from the
# target; the compile command says so.
cpp_consumer=bindings/cpp/tests/consumer
cmake_build cmake-cpp "$cpp_consumer" "$work/cmake-cpp" "$prefix" || { cat "$work/cmake-cpp.log"; fail "the C++ CMake consumer does not build"; }
commands=$(< "$work/cmake-cpp/compile_commands.json")
grep -q -- '-std=c++17' <<< "$commands" && grep -q -- '-fno-exceptions' <<< "$commands" \
    || fail "the C++ consumer is not built as C++17 without exceptions: $commands"
run_consumer "CMake: PortalAuth::PortalAuthCpp, C++17 for a project at C++14, -fno-exceptions" "$work/cmake-cpp/consumer-cpp"
edited_prefix "$work/no-cxx17" '/^ *INTERFACE_COMPILE_FEATURES cxx_std_17)$/s/.*/)/'
! cmake_build no-cxx17 "$cpp_consumer" "$work/no-cxx17-build" "$work/no-cxx17" \
    || fail "the C++ consumer builds without the C++17 of PortalAuth::PortalAuthCpp: the check above proves nothing"
pass "CMake: without cxx_std_17 on PortalAuth::PortalAuthCpp, the C++ consumer does not build"

# The C project with the C++ one as a subdirectory, the only place C++ is enabled: its C
# program links PortalAuth::PortalAuth, which must ask for no C++ standard, as CMake refuses
# that there (the last check).
cp -r Tests/consumers "$work/mixed"
echo "add_subdirectory(\"$PWD/$cpp_consumer\" cpp)" >> "$work/mixed/cmake/CMakeLists.txt"
cmake_build mixed "$work/mixed/cmake" "$work/mixed-build" "$prefix" || { cat "$work/mixed.log"; fail "the C project with a C++ subdirectory does not build"; }
run_consumer "CMake: a C program beside a C++ subdirectory, PortalAuth::PortalAuth" "$work/mixed-build/consumer"
run_consumer "CMake: the C++ subdirectory of a C project, PortalAuth::PortalAuthCpp" "$work/mixed-build/cpp/consumer-cpp"
edited_prefix "$work/c-cxx17" 's|^\( *INTERFACE_INCLUDE_DIRECTORIES .*/include"\))$|\1 INTERFACE_COMPILE_FEATURES cxx_std_17)|'
! cmake_build c-cxx17 "$work/mixed/cmake" "$work/c-cxx17-build" "$work/c-cxx17" || fail "CMake takes a C target asking for cxx_std_17"
grep -q 'No known features for CXX compiler' "$work/c-cxx17.log" || { cat "$work/c-cxx17.log"; fail "CMake refused the C target asking for cxx_std_17 for another reason"; }
pass "CMake: with cxx_std_17 on PortalAuth::PortalAuth, the C program beside a C++ subdirectory does not build"

{ meson setup "$work/meson" Tests/consumers/meson && meson compile -C "$work/meson"; } \
    > "$work/meson.log" 2>&1 || { cat "$work/meson.log"; fail "the Meson consumer does not build"; }
run_consumer "Meson: dependency('portal-auth', version: '>=0.1')" "$work/meson/consumer"

finish
