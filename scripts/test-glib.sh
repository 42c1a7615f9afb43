#!/usr/bin/env bash
# portal-auth-glib and the GTK app, as `make install` lays them out in a temporary prefix,
# against the Portal emulator inside a private D-Bus session with gnome-keyring: the GLib
# library exports only its API (none of its helpers, nothing of libportalauth's); its C test
# under valgrind; a PyGObject and a GJS program that sign in by magic link through its
# introspection data; the README's C block, which compiles; the README quick starts of
# bindings/glib and bindings/gtk as written; the GTK app, which loads portal-auth-glib by its
# soname, driven end to end under Xvfb through AT-SPI (bindings/gtk/tests/test_app.py). Every
# library log line of the GLib harnesses goes to the log audit. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh glib

install_prefix
glib_library="$prefix/lib/libportal-auth-glib.so.0"

# The API only: every export portal_auth_*, none of the helpers (portal_auth_glib_*), and
# none that libportalauth exports too.
nm -D --defined-only "$glib_library" | awk '$2 ~ /^[A-Z]$/ { print $3 }' | sort -u > "$work/glib-exports"
nm -D --defined-only "$prefix/lib/$soname" | awk '$2 ~ /^[A-Z]$/ { print $3 }' | sed 's/@.*//' | sort -u > "$work/c-exports"
grep -v '^portal_auth_' "$work/glib-exports" && fail "portal-auth-glib exports names outside portal_auth_"
grep '^portal_auth_glib_' "$work/glib-exports" && fail "portal-auth-glib exports its helpers"
comm -12 "$work/glib-exports" "$work/c-exports" | grep . && fail "portal-auth-glib exports names of libportalauth"
[ -f "$prefix/share/gir-1.0/PortalAuth-0.gir" ] && [ -f "$prefix/lib/girepository-1.0/PortalAuth-0.typelib" ] \
    || fail "no PortalAuth-0 GIR or typelib in the prefix"
pass "portal-auth-glib exports its $(wc -l < "$work/glib-exports") API functions only, with its GIR and typelib"

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# The C test, against the installed headers and library, under valgrind as the C ABI's are.
read -r -a glib_flags <<< "$(pkg-config --cflags --libs portal-auth-glib portal-auth)"
gcc -std=gnu11 -Wall -Wextra -Werror -g -pthread -ITests/c bindings/glib/tests/client_test.c "${glib_flags[@]}" \
    $(pkg-config --libs libcurl) -Wl,-rpath,"$prefix/lib" -o "$work/client_test" || fail "client_test does not build"
valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --suppressions=Tests/c/valgrind.supp "$work/client_test" > "$work/client_test.out" \
    || { cat "$work/client_test.out"; fail "client_test failed under valgrind"; }
cat "$work/client_test.out"
grep -q '^client_test: [0-9]* passed, 0 failed$' "$work/client_test.out" || fail "client_test printed no result"
pass "client_test under valgrind"

# Runs an introspection program, whose closing line is "NAME: N passed, 0 failed"; its checks
# join the count, and its library log lines (G_MESSAGES_DEBUG) the log audit.
#   introspected NAME COMMAND...
introspected() {
    local name=$1
    shift
    env GI_TYPELIB_PATH="$prefix/lib/girepository-1.0" LD_LIBRARY_PATH="$prefix/lib" G_MESSAGES_DEBUG=PortalAuth \
        "$@" > "$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "the $name program failed"; }
    grep -v -e '^PortalAuth-' -e '^(.*): PortalAuth-' "$work/$name.out" || true
    local count
    count=$(sed -n "s/^$name: \([0-9]*\) passed, 0 failed\$/\1/p" "$work/$name.out")
    [ -n "$count" ] || fail "the $name program printed no result"
    passed=$((passed + count))
    grep -q '^PortalAuth-INFO' "$work/$name.out" || fail "the $name program saw no library log line on g_log"
    if [ -n "${PORTAL_AUTH_TEST_LOG_FILE:-}" ]; then
        # GLib's lines: "PortalAuth-DEBUG: TIME: MESSAGE", "(PROGRAM:PID): PortalAuth-WARNING **: TIME: MESSAGE".
        sed -n 's/^\(([^)]*): \)\{0,1\}PortalAuth-\([A-Z]*\)\( \*\*\)\{0,1\}: [0-9:.]*: /glib\t\2\t/p' "$work/$name.out" \
            >> "$PORTAL_AUTH_TEST_LOG_FILE"
    fi
}
introspected pygobject /usr/bin/python3 bindings/glib/tests/sign_in.py
introspected gjs gjs -m bindings/glib/tests/sign_in.js

# The README's C block is a whole program (the root README's GLib quick start is an excerpt
# of it): it builds with the README's command against the installed portal-auth-glib, with
# warnings as errors, unused callback parameters aside.
scripts/readme-block.sh bindings/glib/README.md - c > "$work/app.c" || fail "bindings/glib/README.md has no C block"
grep -qxF 'cc app.c $(pkg-config --cflags --libs portal-auth-glib)' bindings/glib/README.md \
    || fail "bindings/glib/README.md no longer shows the command this stage builds its C block with"
# shellcheck disable=SC2046 # the README's command, as written
(cd "$work" && cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Wno-unused-parameter app.c $(pkg-config --cflags --libs portal-auth-glib)) \
    || fail "bindings/glib/README.md's C block does not build"
pass "bindings/glib/README.md's C block builds with its command against portal-auth-glib"
quick_start bindings/glib/README.md
quick_start bindings/gtk/README.md

# The GTK app: it loads portal-auth-glib by its soname from the prefix, with no LD_LIBRARY_PATH.
make -s -C bindings/gtk OUT="$work/portal-auth-gtk-example" || fail "the GTK app does not build"
grep -q '(NEEDED).*\[libportal-auth-glib.so.0\]' <<< "$(readelf -d "$work/portal-auth-gtk-example")" \
    || fail "the GTK app does not load libportal-auth-glib.so.0"
finds_in_prefix "the GTK app" "$work/portal-auth-gtk-example" libportal-auth-glib.so.0
pass "the GTK app builds, and loads libportal-auth-glib.so.0 from the prefix"
/usr/bin/python3 bindings/gtk/tests/test_app.py "$work/portal-auth-gtk-example" bindings/gtk/io.portalhq.SignInExample.desktop \
    "$work/gtk-app" > "$work/gtk-app.out" 2>&1 || { cat "$work/gtk-app.out"; fail "the GTK app's end-to-end test"; }
# (pyatspi's dbind warns that GTK 4.8 has no AT-SPI cache; it reads the tree without one.)
grep -v 'dbind-WARNING' "$work/gtk-app.out" || true
gtk_count=$(sed -n 's/^gtk-app: \([0-9]*\) passed, 0 failed$/\1/p' "$work/gtk-app.out")
[ -n "$gtk_count" ] || fail "the GTK app's test printed no result"
passed=$((passed + gtk_count))

finish
