#!/usr/bin/env bash
# Checks of the shared object as `make install` lays it out in a temporary prefix: the
# soname, the file and its two links; every exported symbol portal_auth_* in the version node
# PORTAL_AUTH_<soversion>; the library stripped, with debug information that gdb finds
# through its debug link; the header and the exports agree; the ABI matches the baseline in
# abi/ (scripts/abi.sh, which fails on an incompatible change and lets added functions pass);
# the library links only glibc, libstdc++ and libgcc_s (libcurl, libsecret, libqrencode
# and libpng are opened on first use) and loads with the Swift toolchain hidden; a C11 and a
# C++17 program build with pkg-config. (The C tests of Tests/c are scripts/test-c.sh.) Ends
# with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh c-abi

install_prefix
macro() { sed -n "s/^#define $1 \"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" include/portal_auth.h; }
soversion=$(macro PORTAL_AUTH_SOVERSION)
file=$soname.$(macro PORTAL_AUTH_VERSION_MINOR).$(macro PORTAL_AUTH_VERSION_PATCH)
library="$prefix/lib/$file"

# The soname of PORTAL_AUTH_SOVERSION; the file, the soname's link and the linker's link.
[ "$soname" = "libportalauth.so.$soversion" ] || fail "the soname is '$soname', not libportalauth.so.$soversion"
[ -f "$library" ] && [ ! -L "$library" ] || fail "$file is not installed as a file"
[ "$(readlink "$prefix/lib/$soname")" = "$file" ] || fail "$soname is not a link to $file"
[ "$(readlink "$prefix/lib/libportalauth.so")" = "$soname" ] || fail "libportalauth.so is not a link to $soname"
pass "$file with the soname $soname, linked from $soname and libportalauth.so"

# Every global symbol defined: portal_auth_*@@PORTAL_AUTH_<soversion>, beside the node itself.
nm -D --defined-only "$library" > "$work/dynamic"
awk '$2 ~ /^[A-Z]$/ && $2 != "A" { print $3 }' "$work/dynamic" | sort -u > "$work/versioned"
grep -v "^portal_auth_[a-z0-9_]*@@PORTAL_AUTH_$soversion\$" "$work/versioned" > "$work/unversioned" \
    && fail "exported without the version node PORTAL_AUTH_$soversion, or not portal_auth_*: $(tr '\n' ' ' < "$work/unversioned")"
grep -qx "0* A PORTAL_AUTH_$soversion" "$work/dynamic" || fail "no version node PORTAL_AUTH_$soversion"
pass "the $(wc -l < "$work/versioned") exports are portal_auth_*, each in the version node PORTAL_AUTH_$soversion"

# Stripped, with its debug information apart, where gdb finds it through the debug link.
grep -q -e ' \.debug_info ' -e ' \.symtab ' <<< "$(readelf -S -W "$library")" && fail "$file is not stripped"
objcopy --dump-section .gnu_debuglink="$work/debuglink" "$library" "$work/scratch" 2>/dev/null || fail "$file has no debug link"
link=$(tr '\0' '\n' < "$work/debuglink" | head -n 1)
[ "$link" = "$file.debug" ] || fail "the debug link names '$link', not $file.debug"
grep -q ' \.debug_info ' <<< "$(readelf -S -W "$prefix/lib/.debug/$file.debug")" || fail "lib/.debug/$file.debug holds no debug information"
gdb -batch -nx -ex 'info line portal_auth_version' "$prefix/lib/$soname" > "$work/gdb" 2>&1
grep -q '^Line [0-9]* of ".*Sources/PortalAuthC/Version\.swift"' "$work/gdb" || { cat "$work/gdb"; fail "gdb finds no line of portal_auth_version"; }
pass "stripped to $(stat -c %s "$library") bytes; gdb reads its lines from lib/.debug/$file.debug"

# The glibc floor: no symbol the library imports is of a newer GLIBC_ version than the floor
# its source names (Sources/CGlibcFloor), so that a new call cannot raise it unnoticed.
glibc_floor
objdump -T "$library" | grep -o '(GLIBC_[0-9.]*)' | tr -d '()' | sed 's/^GLIBC_//' | sort -u -V > "$work/glibc"
newest=$(tail -n 1 "$work/glibc")
[ "$(printf '%s\n' "$newest" "$floor" | sort -V | tail -n 1)" = "$floor" ] \
    || fail "the library needs glibc $newest (objdump -T: $(objdump -T "$library" | grep -F "(GLIBC_$newest)" | awk '{ print $NF }' | tr '\n' ' ')), above its floor $floor"
pass "the newest glibc symbol version the library imports, $newest, is not above its floor, $floor"

# Declared: the portal_auth_* functions of the preprocessed header. Exported: the library's
# global defined dynamic symbols, without their version.
gcc -E -P "$prefix/include/portal_auth.h" | grep -o '\bportal_auth_[a-z0-9_]*\s*(' | tr -d ' (' | sort -u > "$work/declared"
sed 's/@.*//' "$work/versioned" > "$work/exported"
diff -u "$work/declared" "$work/exported" || fail "header and exports disagree"
pass "the header declares exactly the $(wc -l < "$work/exported") exported symbols"

scripts/abi.sh check "$prefix" || fail "the ABI differs from the baseline in abi/ (docs/abi.md, \"Changing the ABI\")"
pass "abidiff finds the ABI of the baseline in abi/"

# The check fails on an incompatible change and lets an added function pass: the same prefix
# with its header altered.
cp -r "$prefix" "$work/altered"
altered="$work/altered/include/portal_auth.h"
sed 's/^void portal_auth_call_free(portal_auth_call \*call);$/&\nvoid portal_auth_added_for_the_test(int32_t value);/' include/portal_auth.h > "$altered"
grep -q portal_auth_added_for_the_test "$altered" && scripts/abi.sh check "$work/altered" >/dev/null 2>&1 \
    || fail "scripts/abi.sh refuses an added function"
for change in 's/int32_t scale, uint8_t \*\*out_png/double scale, uint8_t **out_png/' '/^void portal_auth_call_free(/d' \
              's/^    int32_t connect_timeout_ms;$/    int64_t connect_timeout_ms;/'; do
    sed "$change" include/portal_auth.h > "$altered"
    ! cmp -s "$altered" include/portal_auth.h || fail "the test's change '$change' changed nothing"
    ! scripts/abi.sh check "$work/altered" >/dev/null 2>&1 || fail "scripts/abi.sh lets an incompatible change pass: $change"
done
pass "scripts/abi.sh lets an added function pass and fails a changed parameter, a removed function and a changed field"

# Only what the static Swift runtime needs: libc, libm, libstdc++, libgcc_s and the dynamic
# loader (with glibc 2.31's libpthread and libdl, which later glibcs keep as empty stubs);
# nothing of the Swift toolchain. libcurl, libsecret (with GLib), libqrencode and
# libpng are opened on first use (Sources/CLibraryLoader), so a client costs none of them.
dependencies=$(ldd "$library")
grep -q -e swift -e '/opt/' <<< "$dependencies" && fail "the library depends on the Swift toolchain: $(grep -e swift -e /opt/ <<< "$dependencies")"
direct=$(readelf -d "$library" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for needed in $direct; do
    case "$needed" in
        libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*|libpthread.so.0|libdl.so.2) ;;
        libcurl.*|libsecret*|libglib*|libgio*|libgobject*|libpng*|libqrencode*)
            fail "$needed is linked; it must be opened on first use (Sources/CLibraryLoader)" ;;
        *) fail "unexpected direct dependency $needed" ;;
    esac
done
pass "direct dependencies are the C and C++ runtimes only: $direct"

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
flags=(-Wall -Wextra -Wpedantic -Werror)
gcc -std=c11 "${flags[@]}" "$work/version.c" "${portal_auth_flags[@]}" -o "$work/version-c" \
    || fail "the installed header does not compile as C11"
g++ -std=c++17 "${flags[@]}" "$work/version.cpp" "${portal_auth_flags[@]}" -o "$work/version-cpp" \
    || fail "the installed header does not compile as C++17"
grep -q "(NEEDED).*\[$soname\]" <<< "$(readelf -d "$work/version-c")" || fail "version-c does not load the library by its soname"
pass "a C11 and a C++17 program build with pkg-config against the installed library, which they load as $soname"

for program in version-c version-cpp; do
    LD_LIBRARY_PATH="$prefix/lib" "$work/$program" >/dev/null || fail "$program: the version does not match the header's"
done
pass "both run against the library and agree with the header's version"

# Loads where no Swift toolchain is installed: the toolchain's folder is hidden.
toolchain=$(swift_toolchain)
if hiding "$work" true 2>/dev/null; then
    hiding "$toolchain" sh -c '[ -z "$(ls "$0")" ] && exec "$@"' "$toolchain" env LD_LIBRARY_PATH="$prefix/lib" "$work/version-c" >/dev/null \
        || fail "the library does not load with the toolchain ($toolchain) hidden"
    pass "it loads with the Swift toolchain ($toolchain) hidden"
else
    echo "skipped: loading with the toolchain hidden (no private mount namespace: unshare)"
fi

finish
