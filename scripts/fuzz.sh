#!/usr/bin/env bash
# libFuzzer over the core's parsers: the redirect matcher and query parser, the userJwt
# reader, the otpauth parser, the response envelope decoder and the loopback listener's
# reading of a request (Tests/Fuzz/FuzzTargets.swift).
#
#   scripts/fuzz.sh [SECONDS]   fuzz each target for SECONDS (default 60)
#
# SwiftPM cannot link a -sanitize=fuzzer executable (it renames main), so swiftc compiles
# the core's sources and the targets into one binary under .build/fuzz. Per target, every
# input kept in Tests/Fuzz/<target>/ (seeds/ and regressions/) is replayed first, then the
# target is fuzzed from those seeds, as many targets at once as the machine has cores; a
# crash, a trap on a broken rule or an input slower than 5 s fails the run and its input is
# written to Tests/Fuzz/<target>/regressions/, where it stays as a regression case. Ends with
# a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh fuzz
seconds=${1:-60}
binary=.build/fuzz/portal-auth-fuzz
mkdir -p .build/fuzz

echo "== fuzz: building $binary (swiftc -sanitize=fuzzer,address)"
read -r -a c_flags <<< "$(pkg-config --cflags libcurl libsecret-1 libqrencode libpng)"
swift_flags=()
for directory in Sources/C*/ Sources/C*/include/; do swift_flags+=(-I "$directory"); done
for flag in "${c_flags[@]}"; do swift_flags+=(-Xcc "$flag"); done
mapfile -t sources < <(find Sources/PortalAuthCore -name '*.swift' | sort)
# The system libraries' functions the core calls: CLibraryLoader, which opens them on first
# use; CDesktop, the desktop's services over them; CProcess, the core's view of the process;
# and CGlibcFloor.
loader_objects=()
for source in Sources/CLibraryLoader/*.c Sources/CDesktop/*.c Sources/CProcess/*.c Sources/CGlibcFloor/*.c; do
    object=.build/fuzz/$(basename "$source" .c).o
    gcc -c -g -I"$(dirname "$source")/include" -ISources/CLibraryLoader/include "${c_flags[@]}" "$source" \
        -o "$object"
    loader_objects+=("$object")
done
# ld.gold warns about every ASan helper it cannot export; those lines are noise.
swiftc -j "$(nproc)" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -g \
    -module-name PortalAuthFuzz -package-name portal_auth "${swift_flags[@]}" \
    "${sources[@]}" Tests/Fuzz/FuzzTargets.swift "${loader_objects[@]}" -o "$binary" \
    2> >(grep -v "Cannot export local symbol '__asan" >&2)

# The backtracer would hang after a crash; libFuzzer and ASan report it themselves.
export SWIFT_BACKTRACE=enable=no
targets=(redirect userjwt otpauth envelope callback)
for target in "${targets[@]}"; do
    kept=Tests/Fuzz/$target
    mkdir -p "$kept/seeds" "$kept/regressions"
    mapfile -t inputs < <(find "$kept" -type f ! -name '.*' | sort)
    [ ${#inputs[@]} -gt 0 ] || fail "$target has no seed"
    PORTAL_AUTH_FUZZ_TARGET=$target "$binary" -timeout=5 "${inputs[@]}" > "$work/$target.replay" 2>&1 \
        || { tail -n 40 "$work/$target.replay"; fail "$target: a kept input fails"; }
    pass "$target replays its ${#inputs[@]} kept inputs"
    mkdir -p "$work/corpus-$target"
    start_job "$target" env PORTAL_AUTH_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -max_len=8192 \
        -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$kept/regressions/" \
        "$work/corpus-$target" "$kept/seeds"
done
for target in "${targets[@]}"; do
    expect_job "$target" "$target: libFuzzer found a failing input (kept in Tests/Fuzz/$target/regressions)"
    pass "$target fuzzed for ${seconds}s: $(sed -n 's/^stat::number_of_executed_units: *//p' "$work/jobs/$target.out") inputs"
done
finish
