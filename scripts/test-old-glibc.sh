#!/usr/bin/env bash
# The library on the oldest Debian with a glibc at or above its floor (Sources/CGlibcFloor):
# Debian 11, glibc 2.31. A Debian 11 root from Debian's registry (scripts/debian-roots.sh,
# with libcurl and a keyring: D-Bus, gnome-keyring, libsecret), the library as `make install`
# lays it out (the file the wheel carries), and two C tests built on this machine against
# glibc 2.31's libraries as the library is (scripts/glibc-sysroot.sh), run inside the root
# with bubblewrap (the root as /, read-only; loopback shared) against the Portal emulator:
# Tests/c/old_glibc_test.c (it loads there and signs a user in) and Tests/c/fork_test.c in a
# private keyring (a forked child's keyring goes through the library run as a program, its
# keyring helper). Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh old-glibc
source scripts/debian-roots.sh
install_prefix

debian_root bullseye "${debian_11_packages[@]}"
version=$(find "$root/lib/" -maxdepth 2 -name 'libc-*.so' -printf '%f\n' | sed -n 's/^libc-\(.*\)\.so$/\1/p' | head -n 1)
[ -n "$version" ] || fail "no glibc in the Debian 11 root"
glibc_floor
[ "$version" = "$floor" ] || fail "the root's glibc is $version, not the library's floor $floor"
pass "a Debian 11 root with glibc $version, the library's floor"

# The host's libraries it links (libcurl, libstdc++ for the library) need the host's glibc:
# they are Debian 11's in the root, so their undefined symbols are not checked here.
for test in old_glibc_test fork_test; do
    # shellcheck disable=SC2046
    gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -g -pthread -ITests/c "Tests/c/$test.c" \
        -L"$(scripts/glibc-sysroot.sh)" $(pkg-config --cflags --libs portal-auth libcurl) \
        -Wl,--allow-shlib-undefined -Wl,-rpath,/opt/portal-auth/lib -o "$work/$test" || fail "$test does not build"
done

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT
# The log audit's file, where the tests write the library's lines, is bound into the root.
audit=()
[ -n "${PORTAL_AUTH_TEST_LOG_FILE:-}" ] && audit=(--bind "$(dirname "$PORTAL_AUTH_TEST_LOG_FILE")" "$(dirname "$PORTAL_AUTH_TEST_LOG_FILE")")
# Runs the program as the root's, read-only but for /tmp.
#   in_debian_11 COMMAND...
in_debian_11() {
    timeout 120 bwrap --ro-bind "$root" / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --tmpfs /opt \
        --ro-bind "$prefix/lib" /opt/portal-auth/lib --ro-bind "$work" /opt/tests --ro-bind scripts/private-keyring.sh /opt/private-keyring.sh \
        "${audit[@]}" --setenv PORTAL_AUTH_TEST_API_HOST "$PORTAL_AUTH_TEST_API_HOST" --setenv PORTAL_AUTH_TEST_GLIBC "$version" \
        --unsetenv LD_LIBRARY_PATH --die-with-parent "$@"
}
in_debian_11 /opt/tests/old_glibc_test > "$work/run" 2>&1 || { cat "$work/run"; fail "old_glibc_test in the Debian 11 root"; }
grep -q "^old_glibc_test: [0-9]* passed, 0 failed\$" "$work/run" || { cat "$work/run"; fail "old_glibc_test printed no result"; }
pass "in Debian 11 (glibc $version) the library loads and signs a user in: $(tail -n 1 "$work/run")"
in_debian_11 /opt/private-keyring.sh run /opt/tests/fork_test child_starts_anew_after_keyring_use > "$work/fork" 2>&1 \
    || { cat "$work/fork"; fail "fork_test in a private keyring in the Debian 11 root"; }
grep -q "^fork_test: [0-9]* passed, 0 failed\$" "$work/fork" || { cat "$work/fork"; fail "fork_test printed no result"; }
pass "in Debian 11 a forked child's keyring works, through the library run as its keyring helper: $(tail -n 1 "$work/fork")"
finish
