#!/usr/bin/env bash
# The library on the oldest Debian with a glibc at or above its floor (Sources/CGlibcFloor):
# Debian 11, glibc 2.31. A Debian 11 root from Debian's registry (debootstrap, minbase with
# libcurl; kept in .build/debian-11), the library as `make install` lays it out (the file the
# wheel carries), and Tests/c/old_glibc_test.c, built on this machine against glibc 2.31's
# libraries as the library is (scripts/glibc-sysroot.sh), run inside the root with
# bubblewrap (the root as /, loopback shared) against the Portal emulator: it loads there
# and signs a user in. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh old-glibc
install_prefix

root=$PWD/.build/debian-11
if [ ! -f "$root/.ready" ]; then
    rm -rf "$root"
    debootstrap --variant=minbase --include=libcurl4,ca-certificates bullseye "$root" http://deb.debian.org/debian \
        > "$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log"; fail "debootstrap bullseye"; }
    touch "$root/.ready"
fi
version=$(find "$root/lib/" -maxdepth 2 -name 'libc-*.so' -printf '%f\n' | sed -n 's/^libc-\(.*\)\.so$/\1/p' | head -n 1)
[ -n "$version" ] || fail "no glibc in the Debian 11 root"
glibc_floor
[ "$version" = "$floor" ] || fail "the root's glibc is $version, not the library's floor $floor"
pass "a Debian 11 root with glibc $version, the library's floor"

# The host's libraries it links (libcurl, libstdc++ for the library) need the host's glibc:
# they are Debian 11's in the root, so their undefined symbols are not checked here.
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -g -pthread -ITests/c Tests/c/old_glibc_test.c \
    -L"$(scripts/glibc-sysroot.sh)" $(pkg-config --cflags --libs portal-auth libcurl) \
    -Wl,--allow-shlib-undefined -Wl,-rpath,/opt/portal-auth/lib -o "$work/old_glibc_test" || fail "old_glibc_test does not build"

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT
# The log audit's file, where the test writes the library's lines, is bound into the root.
audit=()
[ -n "${PORTAL_AUTH_TEST_LOG_FILE:-}" ] && audit=(--bind "$(dirname "$PORTAL_AUTH_TEST_LOG_FILE")" "$(dirname "$PORTAL_AUTH_TEST_LOG_FILE")")
timeout 120 bwrap --bind "$root" / --dev /dev --proc /proc --tmpfs /tmp \
    --ro-bind "$prefix/lib" /opt/portal-auth/lib --ro-bind "$work/old_glibc_test" /opt/old_glibc_test "${audit[@]}" \
    --setenv PORTAL_AUTH_TEST_API_HOST "$PORTAL_AUTH_TEST_API_HOST" --setenv PORTAL_AUTH_TEST_GLIBC "$version" \
    --unsetenv LD_LIBRARY_PATH --die-with-parent /opt/old_glibc_test > "$work/run" 2>&1 \
    || { cat "$work/run"; fail "old_glibc_test in the Debian 11 root"; }
grep -q "^old_glibc_test: [0-9]* passed, 0 failed\$" "$work/run" || { cat "$work/run"; fail "old_glibc_test printed no result"; }
pass "in Debian 11 (glibc $version) the library loads and signs a user in: $(tail -n 1 "$work/run")"
finish
