# Debian roots for the test stages, sourced after scripts/stage.sh: debootstrap's, with the
# packages a stage needs, kept between runs in PORTAL_AUTH_TEST_ROOTS (default
# /var/cache/portal-auth/roots, outside any clone, so that CI's fresh clones reuse them), one
# folder per suite and package list, removed once no run has used it for a week.
#   debian_root SUITE PACKAGES...   sets root to the root's folder, made the first time
#   in_root ROOT STATE SCRIPT [--private-network | --private-network-emulator]
#                                   runs SCRIPT (bash -eux) as root inside ROOT; with STATE,
#                                   on an overlay kept there, ROOT untouched
roots=${PORTAL_AUTH_TEST_ROOTS:-/var/cache/portal-auth/roots}
# Debian 11's root, one for every stage that needs one: C builds, and a keyring.
debian_11_packages=(ca-certificates xz-utils curl gcc g++ libc6-dev make pkg-config cmake libcurl4 libsecret-1-0
                    dbus gnome-keyring libglib2.0-bin)
# A root of SUITE with PACKAGES (apt's choice of what they need, no recommends), made once
# (under a lock: two runs at once make it once): sets root to its folder. (debootstrap's own
# --include fails to configure gnome-keyring.)
#   debian_root SUITE PACKAGES...
debian_root() {
    local suite=$1 key
    shift
    key=$(printf '%s\n' "$suite" "$@" | sha256sum | cut -c1-12)
    root=$roots/$suite-$key
    mkdir -p "$roots"
    exec {root_lock}> "$root.lock"
    flock "$root_lock"
    if [ ! -f "$root/.ready" ]; then
        rm -rf "$root"
        { debootstrap --variant=minbase "$suite" "$root" http://deb.debian.org/debian \
            && in_root "$root" "" "apt-get install -y -q --no-install-recommends $* && apt-get clean"; } \
            > "$work/debootstrap-$suite.log" 2>&1 || { tail -n 20 "$work/debootstrap-$suite.log"; fail "a $suite root with $*"; }
    fi
    touch "$root/.ready"   # when it was last used
    exec {root_lock}>&-
    # Roots no run has used for a week (another package list's, an older suite's) go.
    find "$roots" -mindepth 2 -maxdepth 2 -name .ready -mtime +7 -printf '%h\n' | while IFS= read -r unused; do
        rm -rf "$unused" "$unused.lock"
    done
}
# Runs SCRIPT as root inside ROOT with the system's /dev and /proc, the machine's network
# (loopback reaches the emulator) and its name servers, for apt. With STATE, on an overlay
# kept there, so that one test's steps see each other's changes and ROOT stays as it was.
# With --private-network, in a network namespace of its own whose loopback is up: a program
# there may take a fixed port, and reaches nothing outside; --private-network-emulator adds
# the repository's Portal emulator there (run by this machine's Python, as the root may have
# none new enough), in PORTAL_AUTH_TEST_API_HOST, stopped when SCRIPT ends. The run's log audit files
# (PORTAL_AUTH_TEST_LOG_FILE, PORTAL_AUTH_TEST_SECRETS_FILE) are reachable there, as here.
#   in_root ROOT STATE SCRIPT [--private-network | --private-network-emulator]
in_root() {
    local merged=$1 network=()
    if [ -n "$2" ]; then
        mkdir -p "$2/upper" "$2/work" "$2/merged"
        merged=$2/merged
    fi
    case ${4:-} in --private-network*) network=(--net) ;; esac
    unshare --mount --propagation private "${network[@]}" bash -euc '
        root=$1 state=$2 merged=$3
        [ -z "$5" ] || ip link set lo up
        if [ "$5" = --private-network-emulator ]; then
            # It stops at the end of its standard input: when SCRIPT, which holds descriptor 9
            # (not a coprocess'"'"'s, which bash closes on exec), ends.
            fifos=$(mktemp -d)
            mkfifo "$fifos/in" "$fifos/out"
            PYTHONPATH=$6/emulator python3 -m portal_auth_emulator --port 0 --stop-on-stdin-eof < "$fifos/in" > "$fifos/out" &
            exec 9> "$fifos/in"
            read -r line < "$fifos/out"
            rm -rf "$fifos"
            PORTAL_AUTH_TEST_API_HOST=${line##* }
        fi
        [ -z "$state" ] || mount -t overlay overlay -o "lowerdir=$root,upperdir=$state/upper,workdir=$state/work" "$merged"
        mount --rbind /dev "$merged/dev"
        mount -t proc proc "$merged/proc"
        [ -e "$merged/etc/resolv.conf" ] || touch "$merged/etc/resolv.conf"
        mount --bind /etc/resolv.conf "$merged/etc/resolv.conf"
        # The run log audit'"'"'s files (scripts/test.sh): the library'"'"'s lines, the secrets issued.
        audit=${PORTAL_AUTH_TEST_LOG_FILE:+$(dirname "$PORTAL_AUTH_TEST_LOG_FILE")}
        if [ -n "$audit" ]; then mkdir -p "$merged$audit" && mount --bind "$audit" "$merged$audit"; fi
        exec chroot "$merged" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
            DEBIAN_FRONTEND=noninteractive PORTAL_AUTH_TEST_API_HOST="${PORTAL_AUTH_TEST_API_HOST:-}" \
            ${PORTAL_AUTH_TEST_LOG_FILE:+PORTAL_AUTH_TEST_LOG_FILE="$PORTAL_AUTH_TEST_LOG_FILE"} \
            ${PORTAL_AUTH_TEST_SECRETS_FILE:+PORTAL_AUTH_TEST_SECRETS_FILE="$PORTAL_AUTH_TEST_SECRETS_FILE"} bash -euxc "$4"' \
        in_root "$1" "$2" "$merged" "$3" "${4:-}" "$PWD"
}
