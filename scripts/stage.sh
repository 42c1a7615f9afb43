# What the test stages share, sourced as `source scripts/stage.sh NAME`: a temporary folder
# $work removed at exit, and the checks' count with the closing line scripts/test.sh reads.
#   pass "what held"        counts a check and says so
#   fail "what did not"     says so, closes with "NAME: N passed, 1 failed" and exits 1
#   finish                  closes with "NAME: N passed, 0 failed"
#   install_prefix          `make install` into $work/prefix: sets prefix, soname and
#                           PKG_CONFIG_PATH
stage=${1:?usage: source scripts/stage.sh NAME}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { echo "FAILED: $1" >&2; echo "$stage: $passed passed, 1 failed"; exit 1; }
finish() { echo "$stage: $passed passed, 0 failed"; }
install_prefix() {
    prefix="$work/prefix"
    scripts/install.sh "$prefix"
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    soname=$(readelf -d "$prefix/lib/libportalauth.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
}
