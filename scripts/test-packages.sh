#!/usr/bin/env bash
# The Debian packages of debian/, as a user of Debian gets them: built with
# dpkg-buildpackage -b (scripts/build-debs.sh), checked by lintian --pedantic (an error or a
# warning that no override justifies fails), then installed with apt into clean Debian 12
# and Debian 11 roots with no Swift toolchain. Debian 12 gets every package: the README's C
# and C++ quick starts and portal-auth-glib's README program build with the commands the
# READMEs give, the consumer projects with pkg-config and CMake's find_package, the Qt
# sample with find_package(PortalAuthQt); PyGObject reads the introspection data; a Rust
# program built with Debian's cargo asks the emulator; Python (the system's library, by its
# soname) signs a user in against the emulator in a private keyring, and the C++ and GLib
# quick starts restore that session; in a network of their own, the C quick start and the
# Qt README's program sign in against the packaged emulator. Debian 11 (glibc 2.31, the
# library's floor) gets the packages its archive can carry (no Qt 6, GLib 2.66, Python
# 3.9): the C library and its development files, built against with pkg-config and CMake,
# and the C quick start signs in there against the repository's emulator.
# Each root then purges every package and is searched for anything left; then the release
# archive is unpacked into each and built against.
# The roots come from debootstrap with the packages the checks need, kept between runs
# (scripts/debian-roots.sh); each run works on an overlay of its own and leaves them as they
# were.
# Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh packages
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)

# Built, and the packages debian/control names, each with the -dbgsym of its libraries.
scripts/build-debs.sh "$work/debs" > /dev/null || fail "dpkg-buildpackage -b"
mapfile -t named < <(sed -n 's/^Package: //p' debian/control)
for package in "${named[@]}" libportalauth0-dbgsym libportal-auth-glib0-dbgsym libportal-auth-qt6-0-dbgsym; do
    compgen -G "$work/debs/${package}_${version}_*.deb" > /dev/null || fail "dpkg-buildpackage made no $package"
done
pass "dpkg-buildpackage -b makes ${#named[@]} packages and the -dbgsym of each library"
debug=$(dpkg-deb --contents "$work/debs/libportalauth0-dbgsym_${version}_$arch.deb")
grep -q '/usr/lib/debug/.build-id/.*\.debug$' <<< "$debug" || fail "libportalauth0-dbgsym carries no debug information"
depends=$(dpkg-deb -f "$work/debs/libportalauth0_${version}_$arch.deb" Depends)
glibc_floor
grep -q "libc6 (>= $floor)" <<< "$depends" || fail "libportalauth0 does not depend on libc6 (>= $floor), the library's floor: $depends"
grep -q "libcurl4 (>= " <<< "$depends" || fail "libportalauth0 does not depend on libcurl4, which it opens: $depends"
pass "libportalauth0 depends on libc6 (>= $floor) and on the libraries it opens, and its -dbgsym has its debug information"

# A distribution's tree never moves: its .pc files name /usr (pkg-config then leaves the
# system's folders out), and the GLib and Qt libraries have no run path.
mkdir "$work/extracted"
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/extracted"; done
for pc in "$work"/extracted/usr/lib/*/pkgconfig/*.pc; do
    grep -qx 'prefix=/usr' "$pc" || fail "$(basename "$pc") does not name its prefix, /usr: $(grep '^prefix=' "$pc")"
done
for library in "$work"/extracted/usr/lib/*/libportal-auth-*.so.0; do
    ! grep -q RUNPATH <<< "$(readelf -d "$library")" || fail "$(basename "$library") has a run path"
done
pass "the packages' .pc files name /usr, and the GLib and Qt libraries have no run path"

lintian --pedantic --info --fail-on error,warning --tag-display-limit 0 "$work"/debs/*.changes > "$work/lintian.log" 2>&1 \
    || { cat "$work/lintian.log"; fail "lintian --pedantic finds errors or warnings"; }
pass "lintian --pedantic: no error or warning ($(grep -c '^[IP]:' "$work/lintian.log" || true) informational tags)"

source scripts/debian-roots.sh

# What the root's overlay holds beyond apt's and dpkg's own records, logs and caches, and the
# test's folder: anything a purge left behind, files, links and folders the root had not (a
# folder it had stays in the overlay, emptied).
#   left_behind ROOT STATE
left_behind() {
    local found
    (cd "$2/upper" && find . -mindepth 1 \( -type f -o -type l -o -type d -empty \) \
        ! -path './var/lib/dpkg/*' ! -path './var/lib/apt/*' ! -path './var/cache/*' ! -path './var/log/*' \
        ! -path './etc/ld.so.cache' ! -path './root/*' ! -path './tmp/*' ! -path './etc/resolv.conf' | sort) |
        while IFS= read -r found; do
            [ -d "$2/upper/$found" ] && [ ! -L "$2/upper/$found" ] && [ -d "$1/$found" ] || echo "$found"
        done
}

source scripts/emulator.sh
start_emulator "$work/emulator.log" || fail "the Portal emulator did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT

# Says each "checked: WHAT" line of LOG as a pass of LABEL, and counts them.
#   report_checked LABEL LOG
report_checked() {
    grep '^checked: ' "$2" | while IFS= read -r line; do echo "ok: $1: ${line#checked: }"; done
    passed=$((passed + $(grep -c '^checked: ' "$2")))
}

# Installs the packages named (from the build), runs the checks, and NETWORK_CHECKS in a
# network of its own (NETWORK: in_root's --private-network or --private-network-emulator),
# purges them, and looks for anything left.
#   check_root LABEL ROOT CHECKS NETWORK_CHECKS NETWORK PACKAGES...
check_root() {
    local label=$1 root=$2 checks=$3 network_checks=$4 network=$5 state=$work/state-$1
    shift 5
    local debs=() package
    for package in "$@"; do debs+=("/root/debs/$(basename "$work"/debs/"${package}_${version}"_*.deb)"); done
    mkdir -p "$state/upper/root/debs" "$state/upper/root/src"
    cp "$work"/debs/*.deb "$state/upper/root/debs/"
    cp -r "$work/src/." "$state/upper/root/src/"
    in_root "$root" "$state" "apt-get install -y ${debs[*]}" > "$work/$label-install.log" 2>&1 \
        || { tail -n 30 "$work/$label-install.log"; fail "$label: apt-get install of the packages"; }
    in_root "$root" "$state" "! command -v swift && ! command -v swiftc && [ -z \"\$(ls /opt)\" ]" > "$work/$label-swift.log" 2>&1 \
        || { cat "$work/$label-swift.log"; fail "$label: the root has a Swift toolchain"; }
    pass "$label (no Swift toolchain): apt installs ${*}"
    in_root "$root" "$state" "cd /root/src"$'\n'"$checks" > "$work/$label-checks.log" 2>&1 \
        || { tail -n 40 "$work/$label-checks.log"; fail "$label: the programs built against the packages"; }
    if [ -n "$network_checks" ]; then
        in_root "$root" "$state" "cd /root/src"$'\n'"$network_checks" "$network" >> "$work/$label-checks.log" 2>&1 \
            || { tail -n 40 "$work/$label-checks.log"; fail "$label: the programs run in a network of their own"; }
    fi
    report_checked "$label" "$work/$label-checks.log"
    in_root "$root" "$state" "rm -rf /root/debs /root/src /root/build && apt-get purge -y --autoremove $*" \
        > "$work/$label-purge.log" 2>&1 || { tail -n 30 "$work/$label-purge.log"; fail "$label: apt-get purge"; }
    local left
    left=$(left_behind "$root" "$state")
    [ -z "$left" ] || fail "$label: the purge left files behind: $left"
    pass "$label: apt purges them all, and nothing of theirs is left"
}

# Unpacks the release archive in a fresh overlay of ROOT, where no package of ours is
# installed, and builds against it.
#   check_archive LABEL ROOT
check_archive() {
    local state=$work/archive-$1
    mkdir -p "$state/upper/root/src"
    cp -r "$work/src/." "$state/upper/root/src/"
    in_root "$2" "$state" "test ! -e /usr/include/portal_auth.h"$'\n'"cd /root/src"$'\n'"$archive_checks" > "$work/$1-archive.log" 2>&1 \
        || { tail -n 40 "$work/$1-archive.log"; fail "$1: the programs built against the release archive"; }
    report_checked "$1, the release archive" "$work/$1-archive.log"
}

# What the checks build, as a user copies it: the README's C and C++ quick starts and
# portal-auth-glib's README program as written, the consumer projects, the Qt sample, the Rust
# crates, the Python sign-in, and the release archive.
mkdir -p "$work/src/rust"
scripts/readme-block.sh README.md C c > "$work/src/app.c" || fail "README.md's C quick start"
scripts/readme-block.sh README.md C++ cpp > "$work/src/app.cpp" || fail "README.md's C++ quick start"
scripts/readme-block.sh bindings/glib/README.md - c > "$work/src/glib-app.c" || fail "bindings/glib/README.md's C program"
cp -r Tests/consumers bindings/cpp/tests/consumer bindings/qt/examples bindings/python/tests/installed_sign_in.py \
    scripts/private-keyring.sh "$work/src/"
cp "$work/src/app.cpp" "$work/src/consumers/quick-start-cpp/"
scripts/copy-work-tree.sh "$work/src/rust" bindings/rust
# README.md's C++ quick start with ENVIRONMENT in place of its placeholder, built with CMake
# into the folder BUILD (the quick start is BUILD/quick-start).
cat > "$work/src/build-quick-start-cpp.sh" <<'BUILD'
cp -r consumers/quick-start-cpp "$2-source"
sed "s/YOUR_AUTH_ENVIRONMENT_ID/$1/" app.cpp > "$2-source/app.cpp"
cmake -S "$2-source" -B "$2" > /dev/null
cmake --build "$2" > /dev/null
BUILD
# In one private keyring: Python signs in, then the C++ and GLib quick starts, PyGObject and
# the Rust example restore the session it stored (no application id: every program of the
# environment shares it). The GLib program runs until killed: its first line is read
# through a pipe, no waiting.
cat > "$work/src/restore-quick-starts.sh" <<'RESTORE'
python3 installed_sign_in.py "$1" env-quick-start > /root/sign-in.out
cat /root/sign-in.out
user=$(sed -n 's/^signed in as \(eu_[^,]*\), restored from the keyring$/\1/p' /root/sign-in.out)
[ -n "$user" ]
[ "$(/root/build/filled-cpp/quick-start)" = "Signed in as $user" ]
[ "$(/root/build/rust/debug/examples/sign_in --environment env-quick-start --restore)" = "Signed in as $user." ]
cat > /root/pygobject.py <<'PY'
import gi
gi.require_version("PortalAuth", "0")
from gi.repository import GLib, PortalAuth
loop = GLib.MainLoop()
client = PortalAuth.Client(auth_environment_id="env-quick-start", redirect_url="myapp://auth/callback")
client.init(None)
def restored(client, result):
    print(client.restore_session_finish(result).get_end_user_id())
    loop.quit()
client.restore_session_async(None, restored)
loop.run()
PY
[ "$(timeout 60 python3 /root/pygobject.py)" = "$user" ]
mkfifo /root/glib.fifo
timeout 60 /root/build/glib-app-filled > /root/glib.fifo &
first=$(head -n 1 /root/glib.fifo)
kill "$!" || true
[ "$first" = "$user" ]
RESTORE
# In a network of its own (the quick starts take the fixed port 8765 of their redirect URL),
# against the emulator the portal-auth-emulator package installed there: README.md's C quick
# start gets the email's link, and bindings/qt/README.md's program signs in with Google
# under Xvfb, through QDesktopServices and xdg-open to the browser $BROWSER names (a curl
# that follows the emulator's redirects), each with its environment and API host filled in.
scripts/readme-block.sh bindings/qt/README.md "A whole sign-in" cpp > "$work/src/qt-app.cpp" || fail "bindings/qt/README.md's whole sign-in"
printf '#!/bin/sh\nexec curl -sS -L -o /dev/null "$1"\n' > "$work/src/open-url"
chmod +x "$work/src/open-url"
printf 'cmake_minimum_required(VERSION 3.19)\nproject(qt_app LANGUAGES CXX)\nfind_package(PortalAuthQt 0.1 REQUIRED)\nadd_executable(qt-app qt-app.cpp)\ntarget_link_libraries(qt-app PRIVATE PortalAuthQt::PortalAuthQt)\n' \
    > "$work/src/qt-app.cmake"
cat > "$work/src/sign-in-quick-start-c.sh" <<'SIGNIN'
# README.md's C quick start, against the emulator in PORTAL_AUTH_TEST_API_HOST; then the C++
# one restores the session it kept.
sed -e 's/YOUR_AUTH_ENVIRONMENT_ID/env-c/' -e 's|^#include <stdio.h>$|#include <stdio.h>\n#include <stdlib.h>|' \
    -e 's|^\( *\)options.redirect_url = |\1options.api_host = getenv("PORTAL_AUTH_TEST_API_HOST");\n&|' app.c > /root/build/filled.c
grep -q 'options.api_host = getenv' /root/build/filled.c
cc /root/build/filled.c $(pkg-config --cflags --libs portal-auth) -o /root/build/quick-start-c-filled
curl -sS --fail -X POST -H 'content-type: application/json' "$PORTAL_AUTH_TEST_API_HOST/_emulator/environments" -d \
    '{"id": "env-c", "allowedMethods": ["EMAIL_MAGIC_LINK"], "redirectUrls": ["http://127.0.0.1:8765/callback"], "totpRequired": false, "accountAbstraction": false, "autoCreateWallet": true}'
timeout 60 /root/build/quick-start-c-filled > /root/quick-start-c.out &
quick_start=$!
curl -sS --fail "$PORTAL_AUTH_TEST_API_HOST/_emulator/outbox?email=ada%40example.com&count=1&timeout=60" > /root/outbox.json
set +x   # the link carries a grant: no trace of it in the log
link=$(sed -n 's/.*"link": *"\([^"]*\)".*/\1/p' /root/outbox.json)
curl -sS --fail -o /dev/null "$link"
set -x
wait "$quick_start"
cat /root/quick-start-c.out
user=$(sed -n 's/^Signed in as \(eu_.*\)$/\1/p' /root/quick-start-c.out)
[ -n "$user" ]
# README.md's C++ quick start, of the same environment, restores that session.
bash -eux build-quick-start-cpp.sh env-c /root/build/env-c-cpp
[ "$(/root/build/env-c-cpp/quick-start)" = "Signed in as $user" ]
SIGNIN
cat > "$work/src/sign-in-quick-start-qt.sh" <<'SIGNIN'
# bindings/qt/README.md's whole sign-in, against the emulator in PORTAL_AUTH_TEST_API_HOST.
mkdir -p /root/build/qt-app
sed -e 's/YOUR_AUTH_ENVIRONMENT_ID/env-qt/' \
    -e 's|^\( *\)options.redirectUrl = |\1options.apiHost = qEnvironmentVariable("PORTAL_AUTH_TEST_API_HOST");\n&|' qt-app.cpp > /root/build/qt-app/qt-app.cpp
grep -q 'options.apiHost = qEnvironmentVariable' /root/build/qt-app/qt-app.cpp
cp qt-app.cmake /root/build/qt-app/CMakeLists.txt
cmake -S /root/build/qt-app -B /root/build/qt-app/build > /dev/null
cmake --build /root/build/qt-app/build > /dev/null
curl -sS --fail -X POST -H 'content-type: application/json' "$PORTAL_AUTH_TEST_API_HOST/_emulator/environments" -d \
    '{"id": "env-qt", "allowedMethods": ["GOOGLE"], "redirectUrls": ["http://127.0.0.1:8765/callback"], "totpRequired": false, "accountAbstraction": false, "autoCreateWallet": true}'
BROWSER=/root/src/open-url timeout 60 xvfb-run -a /root/build/qt-app/build/qt-app > /root/qt-app.out
cat /root/qt-app.out
grep -qx 'Signed in as eu_.*\.' /root/qt-app.out
SIGNIN
cat > "$work/src/packaged-emulator.sh" <<'EMULATOR'
# Runs the command against the emulator of the portal-auth-emulator package, in
# PORTAL_AUTH_TEST_API_HOST; the emulator stops when the command ends.
mkfifo /root/emulator.out
portal-auth-emulator --port 0 > /root/emulator.out 2> /root/emulator.log &
emulator=$!
trap 'kill "$emulator"' EXIT
exec 3< /root/emulator.out
read -r line <&3
PORTAL_AUTH_TEST_API_HOST=${line##* } "$@"
EMULATOR
archive=$(scripts/dist.sh 2> "$work/dist.log") || { cat "$work/dist.log"; fail "make dist"; }
cp "$archive" "$work/src/"
(cd "$(dirname "$archive")" && sha256sum --check --quiet "$archive.sha256") || fail "the archive's SHA-256 does not match"
pass "make dist makes $(basename "$archive") and its SHA-256"

# The checks, as shell run in the root's /root/src, one command a line (so that set -e stops
# at the first that fails): each prints "checked: WHAT" once it held. The C quick start waits
# for a browser, so it is built; the consumer programs run.
c_checks=$(cat <<CHECKS
mkdir -p /root/build
cc app.c \$(pkg-config --cflags --libs portal-auth) -o /root/build/quick-start-c
echo "checked: README.md's C quick start builds with its cc … \\\$(pkg-config --cflags --libs portal-auth)"
cmake -S consumers/quick-start-cpp -B /root/build/quick-start-cpp > /dev/null
cmake --build /root/build/quick-start-cpp > /dev/null
echo "checked: README.md's C++ quick start builds with CMake's find_package(PortalAuth) and PortalAuth::PortalAuthCpp"
make -s -C consumers/pkg-config OUT=/root/build/pkg-config
[ "\$(/root/build/pkg-config)" = "consumer: $version" ]
echo "checked: a C program built with pkg-config runs"
cmake -S consumers/cmake -B /root/build/cmake > /dev/null
cmake --build /root/build/cmake > /dev/null
[ "\$(/root/build/cmake/consumer)" = "consumer: $version" ]
echo "checked: a C program built with CMake's find_package(PortalAuth) runs"
CHECKS
)
desktop_checks=$c_checks$'\n'$(cat <<CHECKS
c++ -std=c++17 app.cpp \$(pkg-config --cflags --libs portal-auth) -o /root/build/quick-start-cpp-pkg-config
echo "checked: README.md's C++ quick start builds with its c++ -std=c++17 … \\\$(pkg-config --cflags --libs portal-auth)"
cc glib-app.c \$(pkg-config --cflags --libs portal-auth-glib) -o /root/build/glib-app
echo "checked: bindings/glib/README.md's C program builds with its cc … \\\$(pkg-config --cflags --libs portal-auth-glib)"
python3 -c 'import gi; gi.require_version("PortalAuth", "0"); from gi.repository import PortalAuth; print(PortalAuth.Client.new("env", "myapp://auth/callback").props.redirect_url)' > /root/gi.out
grep -qx "myapp://auth/callback" /root/gi.out
echo "checked: PyGObject reads PortalAuth-0 and makes a client"
cmake -S examples -B /root/build/qt > /dev/null
cmake --build /root/build/qt > /dev/null
[ -x /root/build/qt/portal-auth-qt-sample ]
echo "checked: the Qt sample builds with find_package(PortalAuthQt)"
(cd rust && CARGO_TARGET_DIR=/root/build/rust cargo build --offline --quiet -p portal-auth-dependent)
/root/build/rust/debug/portal-auth-dependent --api-host "\$PORTAL_AUTH_TEST_API_HOST" --environment env-demo > /root/rust.out
grep -qx "methods: \\[EmailMagicLink, Google, Apple\\]" /root/rust.out
echo "checked: a Rust program on the crates builds with Debian's cargo through pkg-config, and asks the emulator"
bash -eux build-quick-start-cpp.sh env-quick-start /root/build/filled-cpp
(cd rust && CARGO_TARGET_DIR=/root/build/rust cargo build --offline --quiet --example sign_in)
sed 's/YOUR_AUTH_ENVIRONMENT_ID/env-quick-start/' glib-app.c > /root/build/filled-glib.c
cc /root/build/filled-glib.c \$(pkg-config --cflags --libs portal-auth-glib) -o /root/build/glib-app-filled
./private-keyring.sh run bash -eux restore-quick-starts.sh "\$PORTAL_AUTH_TEST_API_HOST"
grep -qx "portal_auth $version from libportalauth.so.0" /root/sign-in.out
grep -q "^signed in as eu_.*, restored from the keyring\\$" /root/sign-in.out
echo "checked: Python signs a user in through the system's library, by its soname, in a private keyring"
echo "checked: README.md's C++ quick start (its environment filled in, built with CMake) restores that session from the keyring"
echo "checked: the Rust crate's example, built with Debian's cargo, restores it as bindings/rust/README.md runs it"
echo "checked: bindings/glib/README.md's program (its environment filled in) restores it too, and so does PyGObject with the README's calls"
CHECKS
)
# Run apart, in a network of its own: on Debian 11, against the repository's emulator.
c_network_checks=$(cat <<CHECKS
./private-keyring.sh run bash -eux sign-in-quick-start-c.sh
echo "checked: README.md's C quick start (its environment and API host filled in) signs in with the email's link, in a private keyring"
echo "checked: README.md's C++ quick start, built with CMake, restores that session"
CHECKS
)
network_checks=$(cat <<CHECKS
./private-keyring.sh run bash -eux packaged-emulator.sh bash -eux -c 'bash -eux sign-in-quick-start-c.sh && bash -eux sign-in-quick-start-qt.sh'
echo "checked: README.md's C quick start (its environment and API host filled in) signs in with the email's link, against the packaged emulator"
echo "checked: README.md's C++ quick start, built with CMake, restores that session"
echo "checked: bindings/qt/README.md's program (the same) signs in with Google under Xvfb, through QDesktopServices, xdg-open and \\\$BROWSER"
CHECKS
)
# The archive unpacked into a folder of its own, found with nothing but PKG_CONFIG_PATH and
# CMAKE_PREFIX_PATH.
archive_checks=$(cat <<CHECKS
folder=\$(mktemp -d /root/unpacked.XXXXXX)
tar -xJf $(basename "$archive") -C "\$folder" --strip-components=1
export PKG_CONFIG_PATH=\$folder/lib/pkgconfig CMAKE_PREFIX_PATH=\$folder
$c_checks
CHECKS
)

debian_root bookworm ca-certificates xz-utils curl gcc g++ libc6-dev make pkg-config cmake cargo librust-tokio-dev \
    libcurl4 libsecret-1-0 libqrencode4 libpng16-16 libglib2.0-dev gir1.2-glib-2.0 python3 python3-gi \
    qt6-base-dev qt6-qpa-plugins xvfb xauth xdg-utils dbus-daemon dbus-bin gnome-keyring libglib2.0-bin
bookworm=$root
check_root debian-12 "$bookworm" "$desktop_checks" "$network_checks" --private-network "${named[@]}"
check_archive debian-12 "$bookworm"

debian_root bullseye "${debian_11_packages[@]}"
bullseye=$root
check_root debian-11 "$bullseye" "$c_checks" "$c_network_checks" --private-network-emulator libportalauth0 libportalauth-dev
check_archive debian-11 "$bullseye"
finish
