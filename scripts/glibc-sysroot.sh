#!/usr/bin/env bash
# The glibc scripts/build-library.sh links libportalauth against: Debian 11's (glibc
# 2.31), so that each symbol the library imports binds to the oldest version that has it
# and the library loads on glibc 2.31 and later (Debian 11, Ubuntu 20.04 and newer), though
# it is built on Debian 12. Only libc6 and libc6-dev are fetched (Debian's registry, with an
# apt configuration of its own: nothing on the machine changes), unpacked, and made
# self-contained: their linker scripts and absolute symlinks point inside the folder. Kept
# in .build/glibc-2.31. Fetched by `make deps` (--fetch), never by a build, which only asks
# for the folder to pass to the linker with -L, and is told to run make deps when it is not
# there.
#   scripts/glibc-sysroot.sh [--fetch]
set -euo pipefail
cd "$(dirname "$0")/.."
base=$PWD/.build/glibc-2.31
link=$base/link
arch=$(dpkg --print-architecture)
multiarch=$(gcc -print-multiarch)
if [ ! -f "$link/ready" ] && [ "${1:-}" != --fetch ]; then
    echo "$0: glibc 2.31's libraries, which the library links against, are not in $base: run make deps" >&2
    exit 1
fi
if [ ! -f "$link/ready" ]; then
    rm -rf "$base"
    mkdir -p "$base/apt/lists/partial" "$base/apt/cache/partial" "$base/debs" "$base/root" "$link"
    # Signed by Debian's archive key, which debian-archive-keyring carries.
    echo "deb http://deb.debian.org/debian bullseye main" > "$base/apt/sources.list"
    touch "$base/apt/status"
    apt=(-o "Dir::Etc::SourceList=$base/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
         -o "Dir::State::Lists=$base/apt/lists" -o "Dir::Cache::Archives=$base/apt/cache"
         -o "Dir::State::status=$base/apt/status" -o Dir::Etc::Preferences=/dev/null
         -o Dir::Etc::PreferencesParts=/dev/null -o Debug::NoLocking=1)
    apt-get "${apt[@]}" update -qq >&2
    (cd "$base/debs" && apt-get "${apt[@]}" download "libc6:$arch" "libc6-dev:$arch" >&2)
    for deb in "$base"/debs/*.deb; do dpkg -x "$deb" "$base/root"; done
    root=$base/root
    find "$root" -type l | while read -r entry; do
        target=$(readlink "$entry")
        case $target in /*) ln -sfn "$root$target" "$entry" ;; esac
    done
    libraries=$root/usr/lib/$multiarch
    for name in libc libm; do   # linker scripts naming absolute paths
        sed -E "s#([ (])/(lib|usr/lib|lib64)/#\\1$root/\\2/#g" "$libraries/$name.so" > "$link/$name.so"
    done
    for name in libpthread libdl librt; do
        ln -sfn "$(readlink -f "$libraries/$name.so")" "$link/$name.so"
    done
    grep -q "$root/lib/$multiarch/libc.so.6" "$link/libc.so" || { echo "$0: libc.so not rewritten" >&2; exit 1; }
    touch "$link/ready"
fi
[ "${1:-}" = --fetch ] || echo "$link"
