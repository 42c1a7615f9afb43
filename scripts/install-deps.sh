#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only when some are missing
# (librust-tokio-dev: the Rust crates' one dev-dependency, through bindings/rust/.cargo;
# rust-clippy: the lint the Rust tests run; nodejs: what PyPI's pyright runs on; GLib's,
# GObject Introspection's and GTK 4's for bindings/glib and bindings/gtk, with GJS,
# PyGObject and libsoup's typelib for their tests; Xvfb, xdotool, pyatspi, the accessibility
# bus, xdg-utils and libX11 with XDamage to drive the GTK app; xdg-utils and xvfb also for the
# desktop starting an app's URL handler, in the forwarding tests; KeePassXC and KWallet with
# its encryption plugins, the Secret Service providers the keyring is tested on beside
# gnome-keyring; bubblewrap, xdg-dbus-proxy and xdg-desktop-portal for the Flatpak-like
# sandbox the sandbox's store is tested in, with xdg-desktop-portal-gtk, without which the
# portal offers no OpenURI; debootstrap for the Debian 11 root the library is tested in;
# Qt 6's base for bindings/qt, its sample and its QtTest tests; iproute2's ip, to bring up
# loopback in the private network namespace of a test that needs a fixed port; debhelper,
# dh-python and lintian to build and check the Debian packages of debian/; nginx, tinyproxy
# and faketime for a company's network in the network tier: a TLS front with a private CA,
# proxies, a drifting clock).
# Then glibc 2.31's libraries, which the library is linked against (scripts/glibc-sysroot.sh).
#   scripts/install-deps.sh [build|test|bench]   (bench adds what make bench needs)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(pkg-config libcurl4-openssl-dev libssl-dev openssl python3 python3-venv curl
          libsecret-1-dev gnome-keyring libsecret-tools dbus-daemon dbus-bin libglib2.0-bin
          libqrencode-dev libpng-dev zbar-tools librsvg2-bin chromium xdg-utils xvfb
          gcc g++ binutils valgrind cargo rust-clippy librust-tokio-dev nodejs
          clang gdb abigail-tools doxygen cmake meson ninja-build
          libglib2.0-dev gobject-introspection libgirepository1.0-dev
          gjs python3-gi gir1.2-soup-3.0 libgtk-4-dev
          xdotool python3-pyatspi at-spi2-core libx11-6 libxdamage1
          keepassxc libkf5wallet-bin libqca-qt5-2-plugins
          bubblewrap xdg-dbus-proxy xdg-desktop-portal xdg-desktop-portal-gtk debootstrap
          qt6-base-dev iproute2 debhelper dh-python lintian nginx tinyproxy faketime strace)
# The libraries of the benchmark's GNOME peer.
[ "${1:-}" = bench ] && packages+=(libsoup-3.0-dev libjson-glib-dev)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing Debian packages: ${missing[*]}"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
scripts/glibc-sysroot.sh --fetch
