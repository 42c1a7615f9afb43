#!/usr/bin/env bash
# The C sample (bindings/c), built against the library as `make install` lays it out (in a
# prefix, found with pkg-config), tested against the Portal emulator inside a private D-Bus
# session with gnome-keyring: its quick start as its README writes it, and its end-to-end
# tests (some under valgrind). It loads the library by its soname, found through its run
# path. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh c-sample

install_prefix

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

quick_start bindings/c/README.md

make -s -C bindings/c OUT="$work/portal-auth-login" || fail "portal-auth-login does not build"
loads_by_soname "the C sample" "$work/portal-auth-login"
pass "the C sample loads the library as $soname"
PORTAL_AUTH_LOGIN="$work/portal-auth-login" python3 -m unittest discover -v -s bindings/c/tests 2>&1 | tee "$work/c-sample" \
    || fail "the C sample's tests"
c_count=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$work/c-sample")
grep -qx OK "$work/c-sample" && [ -n "$c_count" ] || fail "the C sample's tests printed no result"
passed=$((passed + c_count))

finish
