#!/usr/bin/env bash
# The C sample and the Rust crate, built against the library as `make install` lays it out
# (in a temporary prefix, found with pkg-config), tested against the Portal emulator inside
# a private D-Bus session with gnome-keyring: the sample's quick start as its README writes
# it, its end-to-end tests (some under valgrind); the crate's quick start, and `cargo test`
# with Debian's cargo, offline. The sample and the crate's programs load the library by its
# soname. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh bindings

install_prefix

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# Debian's cargo and rustc, whatever else is on PATH (a rustup toolchain), offline, with
# their home and build folder here.
export CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/cargo-target" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc

quick_start bindings/c/README.md
quick_start bindings/rust/README.md

make -s -C bindings/c OUT="$work/portal-auth-login" || fail "portal-auth-login does not build"
loads_by_soname "the C sample" "$work/portal-auth-login"
pass "the C sample loads the library as $soname"
PORTAL_AUTH_LOGIN="$work/portal-auth-login" python3 -m unittest discover -v -s bindings/c/tests 2>&1 | tee "$work/c-sample" \
    || fail "the C sample's tests"
c_count=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$work/c-sample")
grep -qx OK "$work/c-sample" && [ -n "$c_count" ] || fail "the C sample's tests printed no result"
passed=$((passed + c_count))

# From the crate's folder: its .cargo/config.toml points crates.io at Debian's registry, for
# the tokio of its tests.
(cd bindings/rust && /usr/bin/cargo test --offline) 2>&1 | tee "$work/rust" || fail "cargo test"
rust_count=$(awk '/^test result: ok\. [0-9]+ passed; 0 failed/ { sum += $4 } END { print sum + 0 }' "$work/rust")
[ "$rust_count" -gt 0 ] || fail "cargo test ran no test"
passed=$((passed + rust_count))
loads_by_soname "the crate's example" "$CARGO_TARGET_DIR/debug/examples/sign_in"
pass "the crate's example loads the library as $soname"

finish
