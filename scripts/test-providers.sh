#!/usr/bin/env bash
# The keyring on every Secret Service provider a Linux desktop ships, each started on a
# private bus by scripts/private-keyring.sh (gnome-keyring with and without a login
# collection, KeePassXC with its confirmations and without, KWallet opened as at login, and
# without the plugins its encryption needs):
# the Python binding's provider tests (bindings/python/tests/providers) and the C test
# (Tests/c/providers_test.c) inside each; then the store of a Flatpak sandbox, on
# gnome-keyring's Secret portal (bindings/python/tests/sandbox). Ends with a count line.
#   scripts/test-providers.sh PYTHON   (an interpreter with portal_auth and the tests'
#                                      requirements installed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh providers
python=${1:?usage: $0 PYTHON}
install_prefix
providers=(gnome gnome-no-login keepassxc keepassxc-noconfirm kwallet kwallet-noqca)

# The C test calls a Portal emulator on loopback; it stops when this script exits.
source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -g -pthread -ITests/c Tests/c/providers_test.c \
    $(pkg-config --cflags --libs portal-auth libcurl) -o "$work/providers_test" || fail "providers_test does not build"

# Each run is bounded: a call that waited on a dialog for ever would fail the stage, not hang it.
bounded=(timeout 600)
for provider in "${providers[@]}"; do
    "${bounded[@]}" scripts/private-keyring.sh run --provider "$provider" "$python" -m pytest -p no:cacheprovider -q \
        bindings/python/tests/providers > "$work/python-$provider" 2>&1 \
        || { cat "$work/python-$provider"; fail "the Python provider tests on $provider"; }
    summary=$(tail -n 1 "$work/python-$provider")
    # Each provider runs the tests that apply to it; the rest are skipped by design.
    grep -qE "^[0-9]+ passed(, [0-9]+ skipped)? in " <<< "$summary" || fail "the Python provider tests on $provider: $summary"
    pass "Python on $provider: ${summary%% in *}"
    "${bounded[@]}" env LD_LIBRARY_PATH="$prefix/lib" scripts/private-keyring.sh run --provider "$provider" \
        "$work/providers_test" > "$work/c-$provider" 2>&1 || { cat "$work/c-$provider"; fail "providers_test on $provider"; }
    grep -q "^providers_test: [0-9]* passed, 0 failed\$" "$work/c-$provider" || { cat "$work/c-$provider"; fail "providers_test on $provider printed no result"; }
    pass "C on $provider: $(tail -n 1 "$work/c-$provider")"
done

# The sandbox's store: a Flatpak-like sandbox per application id, on gnome-keyring's Secret
# portal (bindings/python/tests/sandbox).
"${bounded[@]}" scripts/private-keyring.sh run "$python" -m pytest -p no:cacheprovider -q bindings/python/tests/sandbox \
    > "$work/python-sandbox" 2>&1 || { cat "$work/python-sandbox"; fail "the Python sandbox tests"; }
summary=$(tail -n 1 "$work/python-sandbox")
grep -qE "^[0-9]+ passed in " <<< "$summary" || fail "the Python sandbox tests: $summary"
pass "Python in a Flatpak sandbox (Secret portal on gnome-keyring): ${summary%% in *}"
finish
