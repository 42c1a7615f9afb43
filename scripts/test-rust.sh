#!/usr/bin/env bash
# The Rust crates (bindings/rust), built against the library as `make install` lays it out
# (in a prefix, found with pkg-config), tested against the Portal emulator inside a private
# D-Bus session with gnome-keyring: the crates' quick start as the README writes it, `cargo
# test` with Debian's cargo, offline (portal-auth-sys against the header, portal-auth end to
# end and under tokio, the doctests), the READMEs' Rust blocks, which compile, and Debian's
# `cargo clippy` with every warning an error. The crate's example and a program that depends
# on the crates (bindings/rust/dependent) load the library by its soname, found through
# their run path. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh rust

install_prefix

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# Debian's cargo and rustc, whatever else is on PATH (a rustup toolchain), offline, with
# their home and build folder here.
export CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/cargo-target" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc

quick_start bindings/rust/README.md

# From the crates' folder: its .cargo/config.toml points crates.io at Debian's registry, for
# the tokio of the tests. Debian's cargo-clippy comes first on PATH.
(cd bindings/rust && PATH="/usr/bin:$PATH" /usr/bin/cargo test --offline --no-fail-fast) 2>&1 | tee "$work/rust" \
    || fail "cargo test"
rust_count=$(awk '/^test result: ok\. [0-9]+ passed; 0 failed/ { sum += $4 } END { print sum + 0 }' "$work/rust")
[ "$rust_count" -gt 0 ] || fail "cargo test ran no test"
grep -q '^test result: ok\. [1-9][0-9]* passed' <<< "$(sed -n '/Doc-tests portal_auth$/,/test result/p' "$work/rust")" \
    || fail "the doctests of portal-auth did not run"
passed=$((passed + rust_count))
(cd bindings/rust && PATH="/usr/bin:$PATH" /usr/bin/cargo clippy --offline --all-targets -- -D warnings) > "$work/clippy" 2>&1 \
    || { cat "$work/clippy"; fail "cargo clippy"; }
pass "cargo clippy (Debian's $(PATH="/usr/bin:$PATH" /usr/bin/cargo clippy --version)) finds nothing in the crates"
loads_by_soname "the crate's example" "$CARGO_TARGET_DIR/debug/examples/sign_in"
pass "the crate's example loads the library as $soname"
(cd bindings/rust && /usr/bin/cargo build --offline --quiet -p portal-auth-dependent) || fail "the dependent program does not build"
dependent=$CARGO_TARGET_DIR/debug/portal-auth-dependent
loads_by_soname "the dependent program" "$dependent"
ran=$(env -u LD_LIBRARY_PATH "$dependent" --api-host "$PORTAL_AUTH_TEST_API_HOST" --environment env-demo) \
    || fail "the dependent program does not run as it is built"
[ "$ran" = "$(printf 'libportalauth %s\nmethods: [EmailMagicLink, Google, Apple]' "$(pkg-config --modversion portal-auth)")" ] \
    || fail "the dependent program printed: $ran"
pass "a program that depends on the crates finds the library through the run path its build script set"
# Every ```rust block of the crates' READMEs compiles, each as the body of a function of one
# program that passes it the names a block uses but does not make (the root README's Rust
# quick start is an excerpt of the first).
readmes=(bindings/rust/README.md bindings/rust/portal-auth/README.md bindings/rust/portal-auth-sys/README.md)
mkdir -p "$work/readme-blocks/src"
printf '[package]\nname = "readme-blocks"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nportal-auth = { path = "%s" }\n' \
    "$PWD/bindings/rust/portal-auth" > "$work/readme-blocks/Cargo.toml"
awk 'FNR == 1 && NR == 1 { print "#![allow(unused)]\nuse portal_auth::{Options, PortalAuth};\nfn main() {}" }
     /^```rust$/ { blocks++; printf "// %s:%d\nfn block_%d(auth: &PortalAuth, options: &Options, url: &str, typed: &str) -> Result<(), portal_auth::Error> {\n", FILENAME, FNR, blocks; inside = 1; next }
     /^```$/ && inside { print "Ok(())\n}"; inside = 0; next }
     inside' "${readmes[@]}" > "$work/readme-blocks/src/main.rs"
blocks=$(grep -c '^fn block_' "$work/readme-blocks/src/main.rs" || true)
[ "$blocks" -gt 0 ] && [ "$blocks" -eq "$(cat "${readmes[@]}" | grep -c '^```rust')" ] \
    || fail "not every \`\`\`rust block of the READMEs was read (a fence with more than the word rust is not)"
(cd bindings/rust && /usr/bin/cargo build --offline --quiet --manifest-path "$work/readme-blocks/Cargo.toml") > "$work/readme-blocks.log" 2>&1 \
    || { cat -n "$work/readme-blocks/src/main.rs" "$work/readme-blocks.log"; fail "a Rust block of the crates' READMEs does not compile"; }
pass "the $blocks Rust blocks of the crates' READMEs compile"
# Each README shows the run-path line of the dependent's build script, as it is there.
run_path=$(grep -F 'cargo:rustc-link-arg-bins=-Wl,-rpath' bindings/rust/dependent/build.rs | sed 's/^ *//')
for readme in "${readmes[@]}"; do
    grep -qF "$run_path" "$readme" || fail "$readme does not show the build script's run-path line ($run_path)"
done
pass "the Rust READMEs show the dependent's run-path line as its build script has it"

# Publishable: cargo package makes and verifies both crates offline; each carries its
# LICENSE and the metadata crates.io shows, and none of the repository's tests.
crates=$(scripts/package-crates.sh "$work/crates" 2> "$work/crates.log") || { cat "$work/crates.log"; fail "cargo package"; }
for crate in $crates; do
    name=$(basename "$crate" .crate)
    listing=$(tar -tzf "$crate")
    grep -qx "$name/LICENSE" <<< "$listing" || fail "$name.crate carries no LICENSE"
    ! grep -q "^$name/tests/" <<< "$listing" || fail "$name.crate carries the repository's tests"
    manifest=$(tar -xzOf "$crate" "$name/Cargo.toml")
    for field in description license repository documentation homepage keywords categories readme; do
        grep -q "^$field = " <<< "$manifest" || fail "$name.crate's Cargo.toml has no $field"
    done
done
pass "cargo package makes and verifies both crates offline, each with its LICENSE, its metadata and no repository test"
# build.rs runs the pkg-config that PKG_CONFIG names.
printf '#!/bin/sh
echo "$@" >> "%s"
exec pkg-config "$@"
' "$work/pkg-config-calls" > "$work/named-pkg-config"
chmod +x "$work/named-pkg-config"
(cd bindings/rust && PKG_CONFIG="$work/named-pkg-config" CARGO_TARGET_DIR="$work/named-target" /usr/bin/cargo build --offline --quiet -p portal-auth-sys) \
    || fail "portal-auth-sys does not build with PKG_CONFIG set"
grep -q 'portal-auth' "$work/pkg-config-calls" 2>/dev/null || fail "portal-auth-sys's build script did not run the PKG_CONFIG named"
pass "portal-auth-sys's build script runs the pkg-config that PKG_CONFIG names"

finish
