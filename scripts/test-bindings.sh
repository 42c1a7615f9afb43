#!/usr/bin/env bash
# The C sample and the Rust crate, built against the library as `make install` lays it out
# (in a temporary prefix, found with pkg-config), tested against the Portal emulator inside
# a private D-Bus session with gnome-keyring: the sample's quick start as its README writes
# it, its end-to-end tests (some under valgrind), and `cargo test` with Debian's cargo,
# offline. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { echo "FAILED: $1" >&2; echo "bindings: $passed passed, 1 failed"; exit 1; }

prefix="$work/prefix"
scripts/install.sh "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# The README's quick-start commands, as written, with HOME in the temporary folder.
scripts/readme-commands.sh bindings/c/README.md > "$work/c-quick-start.sh"
(export HOME="$work/home" && mkdir -p "$HOME" && bash -euo pipefail -x "$work/c-quick-start.sh") > "$work/c-quick-start.log" 2>&1 \
    || { cat "$work/c-quick-start.log"; fail "bindings/c/README.md's quick start"; }
pass "bindings/c/README.md's quick start builds and runs portal-auth-login"

make -s -C bindings/c OUT="$work/portal-auth-login" || fail "portal-auth-login does not build"
PORTAL_AUTH_LOGIN="$work/portal-auth-login" python3 -m unittest discover -v -s bindings/c/tests 2>&1 | tee "$work/c-sample" \
    || fail "the C sample's tests"
c_count=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$work/c-sample")
grep -qx OK "$work/c-sample" && [ -n "$c_count" ] || fail "the C sample's tests printed no result"
passed=$((passed + c_count))

echo "bindings: $passed passed, 0 failed"
