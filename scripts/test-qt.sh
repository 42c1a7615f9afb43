#!/usr/bin/env bash
# portal-auth-qt as `make install` lays it out in a temporary prefix, inside a private D-Bus
# session with gnome-keyring, against the Portal emulator, under Xvfb: the Qt library
# exports its API only and carries no exception handling; its QtTest tests and the sample
# build against the installed CMake package (with -fno-exceptions) and run under valgrind
# (tst_client: the journey, Google, no browser, replies and clients gone in flight, two
# threads, forwarded redirects; tst_sample: the sample's window driven as a user would); the
# README's whole sign-in builds with pkg-config and signs in through the real
# QDesktopServices and xdg-open; the README's quick start works as written. Every library
# log line goes to the log audit. Ends with a count line.
#   scripts/test-qt.sh [QTTEST_FUNCTION]   one function of tst_client alone
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh qt
only=${1:-}

install_prefix
qt_library="$prefix/lib/libportal-auth-qt6.so.0"
[ -f "$qt_library" ] || fail "make install put no portal-auth-qt in the prefix (is qt6-base-dev installed?)"

# Its API only: every export in PortalAuthQt, but the C++ runtime's weak typeinfo.
nm -D --defined-only "$qt_library" | awk '$2 ~ /^[A-Z]$/ { print $3 }' | c++filt > "$work/qt-exports"
grep -v -e '^PortalAuthQt::' -e '^\(typeinfo\|typeinfo name\|vtable\) for \(PortalAuthQt::\|std::\)' \
    -e '^_edata$' -e '^_end$' -e '^__bss_start$' "$work/qt-exports" && fail "portal-auth-qt exports names outside its API"
nm -D --undefined-only "$qt_library" > "$work/qt-imports"
grep -q -e __gxx_personality_v0 -e __cxa_throw "$work/qt-imports" && fail "portal-auth-qt has exception handling"
pass "portal-auth-qt exports its API only ($(grep -c '^PortalAuthQt::' "$work/qt-exports") names) and has no exception handling"

cmake -S bindings/qt/tests -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/build.log" 2>&1 \
    && cmake --build "$work/build" --parallel "$(nproc)" >> "$work/build.log" 2>&1 \
    || { cat "$work/build.log"; fail "the tests and the sample do not build against find_package(PortalAuthQt)"; }
pass "the tests and the sample build against find_package(PortalAuthQt), with -fno-exceptions"

# The README's whole sign-in, with pkg-config, pointed at the emulator. (README.md shows an
# excerpt of it, which scripts/test-docs.sh checks.)
scripts/readme-block.sh bindings/qt/README.md "A whole sign-in" cpp > "$work/sign_in.cpp" || fail "bindings/qt/README.md has no whole sign-in"
read -r -a qt_flags <<< "$(pkg-config --cflags --libs portal-auth-qt6)"
g++ -fno-exceptions -fPIC -Wall -Werror "$work/sign_in.cpp" -o "$work/sign_in" "${qt_flags[@]}" -Wl,-rpath,"$prefix/lib" \
    || fail "the README's whole sign-in does not build with pkg-config's portal-auth-qt6"
pass "the README's whole sign-in builds with pkg-config's portal-auth-qt6, with -fno-exceptions"

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT
export PORTAL_AUTH_TEST_LOG_FILE=${PORTAL_AUTH_TEST_LOG_FILE:-$work/library.log}

# Runs a QtTest program under Xvfb and valgrind (the Qt stack's own reports suppressed; the
# forked children of QProcess::startDetached not followed); its functions join the count.
#   qt_test NAME [FUNCTION]
qt_test() {
    local name=$1
    shift
    xvfb-run -a valgrind -q --child-silent-after-fork=yes --error-exitcode=3 --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --suppressions=Tests/c/valgrind.supp --suppressions=bindings/qt/tests/valgrind.supp \
        "$work/build/$name" "$@" > "$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name under valgrind"; }
    grep -E '^(PASS|FAIL|Totals)' "$work/$name.out"
    local count
    count=$(sed -n 's/^Totals: \([0-9]*\) passed, 0 failed, 0 skipped.*/\1/p' "$work/$name.out")
    [ -n "$count" ] || fail "$name printed no result"
    passed=$((passed + count))
}
qt_test tst_client ${only:+"$only"}
[ -n "$only" ] && { finish; exit 0; }
qt_test tst_sample

# The README's program signs in with Google through QDesktopServices and xdg-open, whose
# handler of http URLs (set with xdg-mime, in this run's own XDG folders) is a browser that
# follows the provider's redirect to the loopback listener.
port=$(curl -sS --fail "$PORTAL_AUTH_TEST_API_HOST/_emulator/loopback-port" | sed -n 's/^{"port":\([0-9]*\)}$/\1/p') \
    && [ -n "$port" ] || fail "the emulator handed out no loopback port"
curl -sS -X POST -H 'Content-Type: application/json' "$PORTAL_AUTH_TEST_API_HOST/_emulator/environments" \
    --data-binary "{\"id\":\"qt-readme\",\"allowedMethods\":[\"GOOGLE\"],\"redirectUrls\":[\"http://127.0.0.1:$port/callback\"],\"totpRequired\":false,\"accountAbstraction\":false,\"autoCreateWallet\":false}" > /dev/null
sed -e 's/YOUR_AUTH_ENVIRONMENT_ID/qt-readme/' -e "s/8765/$port/" \
    -e "s|^\(.*\)options.applicationId = .*|&\n\1options.apiHost = \"$PORTAL_AUTH_TEST_API_HOST\";|" "$work/sign_in.cpp" > "$work/sign_in_here.cpp"
g++ -fno-exceptions -fPIC "$work/sign_in_here.cpp" -o "$work/sign_in_here" "${qt_flags[@]}" -Wl,-rpath,"$prefix/lib" \
    || fail "the README's program, pointed at the emulator, does not build"
printf '#!/bin/sh\nexec curl -sS -L -o /dev/null "$1"\n' > "$work/browser"
chmod +x "$work/browser"
mkdir -p "$work/xdg-data/applications" "$work/xdg-config"
printf '[Desktop Entry]\nType=Application\nName=Test browser\nExec=%s %%u\nMimeType=x-scheme-handler/http;\n' \
    "$work/browser" > "$work/xdg-data/applications/test-browser.desktop"
export XDG_DATA_HOME="$work/xdg-data" XDG_CONFIG_HOME="$work/xdg-config"
xdg-mime default test-browser.desktop x-scheme-handler/http
[ "$(xdg-mime query default x-scheme-handler/http)" = test-browser.desktop ] || fail "xdg-mime did not set the test browser"
env -u BROWSER -u XDG_CURRENT_DESKTOP timeout 120 xvfb-run -a "$work/sign_in_here" > "$work/sign_in.out" 2>&1 \
    || { cat "$work/sign_in.out"; fail "the README's program did not sign in"; }
grep -q '^Signed in as eu_[0-9a-f]*\.$' "$work/sign_in.out" || { cat "$work/sign_in.out"; fail "the README's program said no user"; }
pass "the README's program signs in with Google through QDesktopServices and xdg-open"

quick_start bindings/qt/README.md
finish
