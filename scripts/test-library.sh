#!/usr/bin/env bash
# Checks of the C ABI: the checked-in header is fresh; `make install`'s layout (library,
# headers, pkg-config file) works; header and exports agree; the library links only system
# C libraries and loads with the Swift toolchain hidden; a C11 and a C++17 program build
# with pkg-config; the C tests in Tests/c, built the same way, pass under valgrind. Ends
# with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { echo "FAILED: $1" >&2; echo "c-abi: $passed passed, 1 failed"; exit 1; }

scripts/generate-header.sh --check || fail "include/portal_auth.h is stale"
pass "the checked-in header matches the exports"

# Everything below uses the library, header and pkg-config file as `make install` lays them out.
prefix="$work/prefix"
scripts/install.sh "$prefix"
library="$prefix/lib/libportalauth.so"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

# Declared: the portal_auth_* functions of the preprocessed header.
gcc -E -P -Iinclude include/portal_auth.h | grep -o '\bportal_auth_[a-z0-9_]*\s*(' | tr -d ' (' | sort -u > "$work/declared"
# Exported: the library's global defined dynamic symbols.
nm -D --defined-only "$library" | awk '$2 ~ /^[A-Z]$/ { print $3 }' | sort -u > "$work/exported"
diff -u "$work/declared" "$work/exported" || fail "header and exports disagree"
pass "the header declares exactly the $(wc -l < "$work/exported") exported symbols, all portal_auth_*"

# Only libc, libm, libstdc++, libgcc_s and the system C libraries the core uses (with what
# those pull in); nothing of the Swift toolchain.
ldd "$library" | grep -q -e swift -e '/opt/' && fail "the library depends on the Swift toolchain: $(ldd "$library" | grep -e swift -e /opt/)"
direct=$(readelf -d "$library" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for needed in $direct; do
    case "$needed" in
        libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libcurl.so.*|libsecret-1.so.*|libqrencode.so.*|libpng16.so.*|libgio-2.0.so.*|libgobject-2.0.so.*|libglib-2.0.so.*|ld-linux*) ;;
        *) fail "unexpected direct dependency $needed" ;;
    esac
done
pass "direct dependencies are system C libraries only: $direct"

cat > "$work/version.c" <<'C'
#include <portal_auth.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    if (portal_auth_version_number() != PORTAL_AUTH_VERSION_NUMBER) return 1;
    if (strcmp(portal_auth_version(), PORTAL_AUTH_VERSION_STRING) != 0) return 2;
    printf("%s\n", portal_auth_version());
    return 0;
}
C
cp "$work/version.c" "$work/version.cpp"
read -r -a portal_auth_flags <<< "$(pkg-config --cflags --libs portal-auth)"
flags=(-Wall -Wextra -Werror -Wno-attributes -Wno-unknown-pragmas)
gcc -std=c11 "${flags[@]}" "$work/version.c" "${portal_auth_flags[@]}" -o "$work/version-c" \
    || fail "the installed header does not compile as C11"
g++ -std=c++17 "${flags[@]}" "$work/version.cpp" "${portal_auth_flags[@]}" -o "$work/version-cpp" \
    || fail "the installed header does not compile as C++17"
pass "a C11 and a C++17 program build with pkg-config against the installed library"

for program in version-c version-cpp; do
    LD_LIBRARY_PATH="$prefix/lib" "$work/$program" >/dev/null || fail "$program: the version does not match the header's"
done
pass "both run against the library and agree with the header's version"

# Loads where no Swift toolchain is installed: the toolchain's folder is hidden in a
# private mount namespace (root only; CI runs as root).
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")")
if [ "$(id -u)" -eq 0 ]; then
    unshare --mount --propagation private sh -c \
        "mount -t tmpfs none '$toolchain' && [ -z \"\$(ls '$toolchain')\" ] && LD_LIBRARY_PATH='$prefix/lib' '$work/version-c'" >/dev/null \
        || fail "the library does not load with the toolchain ($toolchain) hidden"
    pass "it loads with the Swift toolchain ($toolchain) hidden"
else
    echo "skipped: hiding the toolchain needs root"
fi

# The C tests call a Portal emulator on loopback; it stops when this script exits.
source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# The C test programs, under valgrind: any invalid access or definite leak fails them.
for source in Tests/c/*_test.c; do
    name=$(basename "$source" .c)
    gcc -std=c11 "${flags[@]}" -g -pthread -ITests/c "$source" "${portal_auth_flags[@]}" $(pkg-config --libs libcurl) -o "$work/$name" \
        || fail "$name does not build"
    LD_LIBRARY_PATH="$prefix/lib" valgrind -q --error-exitcode=3 --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite "$work/$name" > "$work/$name.out" \
        || { cat "$work/$name.out"; fail "$name failed under valgrind"; }
    cat "$work/$name.out"
    grep -q "^$name: [0-9]* passed, 0 failed\$" "$work/$name.out" || fail "$name printed no result"
    pass "$name"
done

echo "c-abi: $passed passed, 0 failed"
