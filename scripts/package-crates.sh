#!/usr/bin/env bash
# `cargo package` of both crates, offline, with Debian's cargo, as they would be published:
# each .crate is built alone from what it carries and verified (compiled against the
# library pkg-config finds). portal-auth depends on portal-auth-sys by version, which no
# registry here has: so it is verified against a directory registry of Debian's crates and
# the portal-auth-sys .crate just made, as crates.io would serve it once published. Prints
# the two .crate files.
#   scripts/package-crates.sh OUT
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/package-crates.sh OUT}
mkdir -p "$out"
export CARGO_TARGET_DIR=$out/target CARGO_HOME=$out/cargo-home
cargo=(/usr/bin/cargo package --offline --allow-dirty --quiet)
(cd bindings/rust && "${cargo[@]}" -p portal-auth-sys) >&2
sys=$CARGO_TARGET_DIR/package/portal-auth-sys-$(sed -n 's/^version = "\(.*\)"$/\1/p' bindings/rust/portal-auth-sys/Cargo.toml).crate
registry=$out/registry
rm -rf "$registry"
mkdir -p "$registry"
for crate in /usr/share/cargo/registry/*/; do ln -s "${crate%/}" "$registry/"; done
tar -xzf "$sys" -C "$registry"
python3 - "$registry/$(basename "$sys" .crate)" "$sys" <<'PYTHON'
import hashlib, json, os, sys
# A directory registry's entry: the checksum of each file, and the .crate's.
root, crate = sys.argv[1], sys.argv[2]
digest = lambda path: hashlib.sha256(open(path, "rb").read()).hexdigest()
files = {os.path.relpath(os.path.join(folder, name), root): digest(os.path.join(folder, name))
         for folder, _, names in os.walk(root) for name in names}
json.dump({"files": files, "package": digest(crate)}, open(os.path.join(root, ".cargo-checksum.json"), "w"))
PYTHON
(cd bindings/rust && "${cargo[@]}" -p portal-auth --config "source.debian.directory=\"$registry\"") >&2
ls "$CARGO_TARGET_DIR"/package/*.crate
