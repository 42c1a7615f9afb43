#!/usr/bin/env bash
# A private Secret Service for the demo and the tests: its own D-Bus session bus and an
# unlocked keyring daemon, with HOME in a temporary folder, so that no user's keyring is ever
# touched. Its one service folder, for a test's D-Bus activation, is in
# PORTAL_AUTH_TEST_BUS_SERVICES.
#
#   scripts/private-keyring.sh run CMD [ARG...]   run CMD inside it; everything stops after
#   scripts/private-keyring.sh run --deny-item-delete CMD [ARG...]
#                                                 the same, but the bus refuses every
#                                                 Secret Service item's Delete (reads and
#                                                 writes work): a keyring that cannot clear
#   scripts/private-keyring.sh run --provider NAME [--deny-item-delete] CMD [ARG...]
#                                                 the same with another Secret Service
#                                                 provider; CMD sees its NAME in
#                                                 PORTAL_AUTH_TEST_PROVIDER
#   scripts/private-keyring.sh start|stop|lock|unlock
#                                                 inside `run`: control the provider daemon
#                                                 (exit 2 where a command means nothing)
#
# Providers, and the Debian packages each needs besides dbus (dbus-run-session), gdbus
# (libglib2.0-bin) and, for trying by hand, secret-tool (libsecret-tools):
#   gnome                gnome-keyring: the login keyring, unlocked (the default)
#   gnome-no-login       gnome-keyring: no login keyring, so the `default` alias is "/"
#   keepassxc            keepassxc: one database whose root group is exposed as the default
#                        collection, with KeePassXC's default confirmations (access, delete)
#   keepassxc-noconfirm  keepassxc: the same with both confirmations off
#   kwallet              libkf5wallet-bin (kwalletd5), libqca-qt5-2-plugins (its Secret
#                        Service's encrypted sessions), python3: the wallet "kdewallet" opened
#                        as pam_kwallet5 opens it at login (scripts/providers/kwallet-pam-login.py)
#   kwallet-noqca        the same, with QCA's crypto plugins hidden from kwalletd5 (a private
#                        mount namespace; as root): its Secret Service cannot encrypt
# The Qt daemons run with QT_QPA_PLATFORM=offscreen: a dialog they open is never seen, so a
# call that waits on one waits until its caller's timeout.
set -euo pipefail

password="throwaway"   # unlocks the throwaway keyring, database or wallet; protects nothing real
provider=${PORTAL_AUTH_TEST_PROVIDER:-gnome}
here=$(cd "$(dirname "$0")" && pwd)
readonly deadline_seconds=20   # every wait for a daemon is bounded by this

bus_call() {   # DEST PATH METHOD [ARG...]: a method call on the session bus, reply printed
    local dest=$1 path=$2 method=$3
    shift 3
    dbus-send --session --print-reply --reply-timeout=5000 --dest="$dest" "$path" "$method" "$@"
}

owner_pid() {   # NAME: the pid of the bus name's owner, or nothing
    bus_call org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID "string:$1" 2>/dev/null \
        | awk '/uint32/ { print $2 }' || true
}

secrets_pid() { owner_pid org.freedesktop.secrets; }

has_owner() {   # [NAME]
    bus_call org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner "string:${1:-org.freedesktop.secrets}" 2>/dev/null \
        | grep -q "boolean true"
}

default_collection() {   # what the `default` alias resolves to ("/" when none)
    bus_call org.freedesktop.secrets /org/freedesktop/secrets \
        org.freedesktop.Secret.Service.ReadAlias string:default 2>/dev/null \
        | awk '/object path/ { gsub(/"/, "", $3); print $3 }' || true
}

collection_locked() {   # PATH: succeeds when the collection's Locked property is true
    bus_call org.freedesktop.secrets "$1" org.freedesktop.DBus.Properties.Get \
        string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null | grep -q "boolean true"
}

wait_until() {   # WHAT CMD [ARG...]: poll CMD, bounded; no sleep, each poll is a bus round trip
    local what=$1 end=$((SECONDS + deadline_seconds))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || { echo "$0: $provider: timed out waiting for $what" >&2; return 1; }
    done
}

has_default_collection() { [ -n "$(default_collection | grep -v '^/$')" ]; }
default_unlocked() { ! collection_locked "$(default_collection)"; }

state=${PORTAL_AUTH_PRIVATE_KEYRING_STATE:-}   # pid file and logs of the daemon, inside `run`

detached() {   # CMD [ARG...]: exec CMD without the descriptors above 2 this script inherited
    # The daemon outlives this script, so it must not keep a descriptor it inherited: a caller
    # waiting for end-of-file on a pipe would wait for ever.
    local fd
    for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
    done
    exec "$@"
}

# --- gnome-keyring -------------------------------------------------------------------------

start_gnome() {
    # The password on stdin unlocks the login keyring, creating it on first use.
    printf '%s' "$password" | (
        detached gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null 2>&1
    )
    # The daemonised process may not own its bus name yet: wait for it to appear.
    gdbus wait --session --timeout "$deadline_seconds" org.freedesktop.secrets
}

start_gnome_no_login() {
    # Without --unlock no login keyring is created: only the in-memory `session` collection
    # exists and the `default` alias resolves to "/".
    ( detached gnome-keyring-daemon --components=secrets --daemonize </dev/null >/dev/null 2>&1 )
    gdbus wait --session --timeout "$deadline_seconds" org.freedesktop.secrets
}

# --- KeePassXC -----------------------------------------------------------------------------

keepassxc_db() { echo "$HOME/keepassxc/keepassxc.kdbx"; }   # collection .../collection/keepassxc

keepassxc_setup() {
    local confirm=true dir xml uuid hex
    [ "$provider" = keepassxc-noconfirm ] && confirm=false
    dir=$HOME/keepassxc
    mkdir -p -m 700 "$dir" "${XDG_CONFIG_HOME:?}/keepassxc"
    # [FdoSecrets] turns the Secret Service on; ConfirmAccessItem, ConfirmDeleteItem and
    # UnlockBeforeSearch are KeePassXC's defaults, written out so each test run is explicit.
    # The rest keeps a first start silent and offline: no update check or its question, no
    # tray, no single-instance socket, no backups, every change saved at once.
    cat > "$XDG_CONFIG_HOME/keepassxc/keepassxc.ini" <<INI
[General]
ConfigVersion=2
UpdateCheckMessageShown=true
SingleInstance=false
RememberLastDatabases=false
RememberLastKeyFiles=false
OpenPreviousDatabasesOnStartup=false
AutoSaveAfterEveryChange=true
AutoSaveOnExit=true
AutoReloadOnChange=false
BackupBeforeSave=false

[GUI]
CheckForUpdates=false
ShowTrayIcon=false
MinimizeOnStartup=false

[Security]
LockDatabaseIdle=false
LockDatabaseScreenLock=false
IconDownloadFallback=false

[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmAccessItem=$confirm
ConfirmDeleteItem=$confirm
UnlockBeforeSearch=true
INI
    [ -f "$(keepassxc_db)" ] && return 0
    # A new database's only group is its root: it is exposed by naming its UUID, in QUuid's
    # "{8-4-4-4-12}" form, in the Meta custom data FDO_SECRETS_EXPOSED_GROUP. keepassxc-cli
    # cannot set custom data, so the empty database goes through XML and back.
    printf '%s\n%s\n' "$password" "$password" \
        | keepassxc-cli db-create -q -p -t 100 "$dir/empty.kdbx" >/dev/null 2>&1
    xml=$(printf '%s' "$password" | keepassxc-cli export -q -f xml "$dir/empty.kdbx" 2>/dev/null)
    uuid=$(printf '%s\n' "$xml" | sed -n '/<Root>/,$ s|.*<UUID>\(.*\)</UUID>.*|\1|p' | head -n 1)
    hex=$(printf '%s' "$uuid" | base64 -d | od -An -tx1 | tr -d ' \n')
    [ "${#hex}" -eq 32 ] || { echo "$0: keepassxc: no root group in a new database" >&2; return 1; }
    uuid="{${hex:0:8}-${hex:8:4}-${hex:12:4}-${hex:16:4}-${hex:20:12}}"
    printf '%s\n' "$xml" | sed "s|</Meta>|<CustomData><Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>$uuid</Value></Item></CustomData></Meta>|" \
        > "$dir/exposed.xml"
    printf '%s\n%s\n' "$password" "$password" \
        | keepassxc-cli import -q -p -t 100 "$dir/exposed.xml" "$(keepassxc_db)" >/dev/null 2>&1
    rm -f "$dir/empty.kdbx" "$dir/exposed.xml"
}

start_keepassxc() {
    keepassxc_setup
    # --pw-stdin opens the database at start; TMPDIR keeps Qt's lock and socket files private.
    printf '%s' "$password" | (
        QT_QPA_PLATFORM=offscreen TMPDIR=$state detached keepassxc --pw-stdin "$(keepassxc_db)" \
            >>"$state/keepassxc.log" 2>&1
    ) &
    echo $! > "$state/pid"
    disown   # stop kills it; the shell is not to report that
    gdbus wait --session --timeout "$deadline_seconds" org.freedesktop.secrets
    # The name comes before the database is open and its collection registered.
    wait_until "the KeePassXC collection" has_default_collection
    wait_until "the KeePassXC database to unlock" default_unlocked
}

# --- KWallet -------------------------------------------------------------------------------

kwallet_setup() {
    # apiEnabled turns kwalletd5's Secret Service on; "First Use=false" skips its wizard.
    mkdir -p "${XDG_CONFIG_HOME:?}"
    [ -f "${XDG_CONFIG_HOME:?}/kwalletrc" ] || cat > "$XDG_CONFIG_HOME/kwalletrc" <<INI
[Wallet]
Enabled=true
First Use=false
Default Wallet=kdewallet
Close When Idle=false
Close on Screensaver=false
Leave Open=true

[org.freedesktop.secrets]
apiEnabled=true
INI
}

kwallet_open() {
    bus_call org.kde.kwalletd5 /modules/kwalletd5 org.kde.KWallet.isOpen string:kdewallet \
        2>/dev/null | grep -q "boolean true"
}

kwallet_login() {
    local pid
    local hide=""
    [ "$provider" = kwallet-noqca ] && hide=/usr/lib/x86_64-linux-gnu/qca-qt5/crypto
    pid=$(QT_QPA_PLATFORM=offscreen PORTAL_AUTH_KWALLET_HIDE="$hide" python3 "$here/providers/kwallet-pam-login.py" \
        start "$password" "$state/kwalletd5.log")
    echo "$pid" > "$state/pid"
    gdbus wait --session --timeout "$deadline_seconds" org.freedesktop.secrets
}

start_kwallet() {
    kwallet_setup
    if [ ! -f "${XDG_DATA_HOME:?}/kwalletd/kdewallet.kwl" ]; then
        # kwalletd5 lists its wallets as collections when it starts, before the login opens
        # (and so creates) the wallet: the first start only makes the wallet, closing it
        # to write it out, and the second one serves it.
        kwallet_login
        bus_call org.kde.kwalletd5 /modules/kwalletd5 org.kde.KWallet.close \
            string:kdewallet boolean:true >/dev/null
        stop
    fi
    kwallet_login
    wait_until "the KWallet collection" has_default_collection
    # Right after the login the collection still says Locked=true although the wallet is open:
    # kwalletd5 updates it when a client first uses the collection (no dialog is involved).
    wait_until "the wallet to open" kwallet_open
}

# --- every provider ------------------------------------------------------------------------

start() {
    # Any running daemon goes first (this is also how a locked keyring is reopened unlocked).
    stop
    case "$provider" in
    gnome) start_gnome ;;
    gnome-no-login) start_gnome_no_login ;;
    keepassxc|keepassxc-noconfirm) start_keepassxc ;;
    kwallet|kwallet-noqca) start_kwallet ;;
    esac
}

stop() {
    local pid tracked=""
    # KWallet writes its wallet on a timer: closing it first keeps what was stored.
    if [ "${provider%-noqca}" = kwallet ] && has_owner org.kde.kwalletd5; then
        bus_call org.kde.kwalletd5 /modules/kwalletd5 org.kde.KWallet.close \
            string:kdewallet boolean:true >/dev/null 2>&1 || true
    fi
    pid=$(secrets_pid)
    # A daemon that never got its name is known only by the pid recorded when it started.
    if [ -n "$state" ] && [ -f "$state/pid" ]; then
        tracked=$(cat "$state/pid")
        rm -f "$state/pid"
    fi
    [ -n "$pid$tracked" ] || return 0
    # SIGKILL, and its exit is not awaited: where PID 1 reaps nothing, the daemon stays a
    # zombie for ever. What matters is that it has left the bus, which the bus confirms
    # within a few round trips.
    for pid in $pid $tracked; do kill -KILL "$pid" 2>/dev/null || true; done
    local tries=0
    while has_owner || { [ "${provider%-noqca}" = kwallet ] && has_owner org.kde.kwalletd5; }; do
        tries=$((tries + 1))
        [ "$tries" -lt 1000 ] || { echo "$0: the keyring daemon did not leave the bus" >&2; return 1; }
    done
}

not_here() { echo "$0 $1: means nothing for provider $provider: $2" >&2; exit 2; }

lock() {
    local collection prompt
    case "$provider" in
    gnome)
        bus_call org.freedesktop.secrets /org/freedesktop/secrets \
            org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/login >/dev/null
        ;;
    gnome-no-login) not_here lock "there is no default collection" ;;
    *)
        # KeePassXC locks its database, kwalletd5 closes its wallet; neither asks first, but
        # KeePassXC answers with a prompt that does the locking only once it is prompted.
        collection=$(default_collection)
        prompt=$(bus_call org.freedesktop.secrets /org/freedesktop/secrets \
            org.freedesktop.Secret.Service.Lock "array:objpath:$collection" \
            | awk '/^   object path/ { gsub(/"/, "", $3); print $3 }')
        if [ -n "$prompt" ] && [ "$prompt" != / ]; then
            bus_call org.freedesktop.secrets "$prompt" org.freedesktop.Secret.Prompt.Prompt string: >/dev/null
        fi
        wait_until "the default collection to lock" collection_locked "$collection"
        ;;
    esac
}

unlock() {
    case "$provider" in
    gnome) start ;;
    gnome-no-login) not_here unlock "there is no default collection" ;;
    keepassxc|keepassxc-noconfirm)
        # Service.Unlock would ask for the password in a dialog; KeePassXC's own D-Bus
        # openDatabase unlocks the open, locked database with the password given.
        bus_call org.keepassxc.KeePassXC.MainWindow /keepassxc \
            org.keepassxc.KeePassXC.MainWindow.openDatabase \
            "string:$(keepassxc_db)" "string:$password" string: >/dev/null
        wait_until "the KeePassXC database to unlock" default_unlocked
        ;;
    kwallet|kwallet-noqca)
        # What the login does once kwalletd5 runs: KWalletD::pamOpen with the login key (a
        # no-reply method). It does nothing while kwalletd5 has a dialog pending (a client
        # that asked for the closed wallet): then the login itself is done again.
        bus_call org.kde.kwalletd5 /modules/kwalletd5 org.kde.KWallet.pamOpen string:kdewallet \
            "array:byte:$(python3 "$here/providers/kwallet-pam-login.py" key "$password")" \
            int32:0 >/dev/null
        local tries=0
        until kwallet_open; do
            tries=$((tries + 1))
            [ "$tries" -lt 100 ] || { start; return; }
        done
        ;;
    esac
}

usage() {
    echo "usage: $0 run [--provider gnome|gnome-no-login|keepassxc|keepassxc-noconfirm|kwallet|kwallet-noqca]" \
        "[--deny-item-delete] CMD [ARG...] | start | stop | lock | unlock" >&2
    exit 2
}

case "${1:-}" in
run)
    shift
    deny=""
    provider=gnome
    while [ $# -gt 0 ]; do
        case "$1" in
        --deny-item-delete)
            shift
            deny='<deny send_destination="org.freedesktop.secrets" send_interface="org.freedesktop.Secret.Item" send_member="Delete"/>'
            ;;
        --provider)
            [ $# -ge 2 ] || usage
            provider=$2
            shift 2
            case "$provider" in
            gnome|gnome-no-login|keepassxc|keepassxc-noconfirm|kwallet|kwallet-noqca) ;;
            *) echo "$0: unknown provider '$provider'" >&2; usage ;;
            esac
            ;;
        *) break ;;
        esac
    done
    home=$(mktemp -d)
    trap 'rm -rf "$home"' EXIT
    mkdir -m 700 "$home/run" "$home/services" "$home/state"
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
        PORTAL_AUTH_PRIVATE_KEYRING="$here/$(basename "$0")" \
        PORTAL_AUTH_PRIVATE_KEYRING_STATE="$home/state" \
        PORTAL_AUTH_TEST_BUS_SERVICES="$home/services" \
        PORTAL_AUTH_TEST_PROVIDER="$provider" \
        dbus-run-session --config-file="$home/bus.conf" -- "$0" inside "$@"
    ;;
inside)
    shift
    trap stop EXIT
    start
    "$@"
    ;;
start|stop|lock|unlock)
    [ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || { echo "$0 $1: only inside '$0 run'" >&2; exit 2; }
    "$1"
    ;;
*)
    usage
    ;;
esac
