#!/usr/bin/env bash
# A private Secret Service for the demo and the tests: its own D-Bus session bus and an
# unlocked gnome-keyring-daemon, with HOME in a temporary folder, so that no user's keyring
# is ever touched. Its one service folder, for a test's D-Bus activation, is in
# PORTAL_AUTH_TEST_BUS_SERVICES.
#
#   scripts/private-keyring.sh run CMD [ARG...]   run CMD inside it; everything stops after
#   scripts/private-keyring.sh run --deny-item-delete CMD [ARG...]
#                                                 the same, but the bus refuses every
#                                                 Secret Service item's Delete (reads and
#                                                 writes work): a keyring that cannot clear
#   scripts/private-keyring.sh start|stop|lock    inside `run`: control the keyring daemon
set -euo pipefail

password="throwaway"   # unlocks the throwaway login keyring; protects nothing real

start() {
    # Any running daemon goes first (this is also how a locked keyring is reopened unlocked).
    stop
    # The password on stdin unlocks the login keyring, creating it on first use. The daemon
    # outlives this script, so it must not keep a descriptor it inherited: a caller waiting
    # for end-of-file on a pipe would wait for ever.
    printf '%s' "$password" | (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        exec gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null 2>&1
    )
    # The daemonised process may not own its bus name yet: wait for it to appear.
    gdbus wait --session --timeout 20 org.freedesktop.secrets
}

secrets_pid() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null \
        | awk '/uint32/ { print $2 }' || true
}

has_owner() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"
}

stop() {
    local pid
    pid=$(secrets_pid)
    [ -n "$pid" ] || return 0
    # SIGKILL, and its exit is not awaited: where PID 1 reaps nothing, the daemon stays a
    # zombie for ever. What matters is that it has left the bus, which the bus confirms
    # within a few round trips.
    kill -KILL "$pid" 2>/dev/null || true
    local tries=0
    while has_owner; do
        tries=$((tries + 1))
        [ "$tries" -lt 1000 ] || { echo "$0: the keyring daemon did not leave the bus" >&2; return 1; }
    done
}

lock() {
    dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
        org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/login >/dev/null
}

case "${1:-}" in
run)
    shift
    deny=""
    if [ "${1:-}" = --deny-item-delete ]; then
        shift
        deny='<deny send_destination="org.freedesktop.secrets" send_interface="org.freedesktop.Secret.Item" send_member="Delete"/>'
    fi
    home=$(mktemp -d)
    trap 'rm -rf "$home"' EXIT
    mkdir -m 700 "$home/run" "$home/services"
    # A bus whose one service directory is the tests' own, empty until a test puts an
    # application's .service file there (D-Bus activation): nothing else is auto-started on
    # it, so a stopped daemon stays stopped and no unlock prompt can be launched.
    cat > "$home/bus.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:dir=$home/run</listen>
  <servicedir>$home/services</servicedir>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    $deny
  </policy>
</busconfig>
CONF
    env -u DISPLAY -u WAYLAND_DISPLAY HOME="$home" XDG_RUNTIME_DIR="$home/run" \
        XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" XDG_CACHE_HOME="$home/cache" \
        PORTAL_AUTH_PRIVATE_KEYRING="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" \
        PORTAL_AUTH_TEST_BUS_SERVICES="$home/services" \
        dbus-run-session --config-file="$home/bus.conf" -- "$0" inside "$@"
    ;;
inside)
    shift
    trap stop EXIT
    start
    "$@"
    ;;
start|stop|lock)
    [ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || { echo "$0 $1: only inside '$0 run'" >&2; exit 2; }
    "$1"
    ;;
*)
    echo "usage: $0 run [--deny-item-delete] CMD [ARG...] | start | stop | lock" >&2
    exit 2
    ;;
esac
