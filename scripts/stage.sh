# What the test stages share, sourced as `source scripts/stage.sh NAME`: a temporary folder
# $work removed at exit, and the checks' count with the closing line scripts/test.sh reads.
#   pass "what held"        counts a check and says so
#   fail "what did not"     says so, closes with "NAME: N passed, 1 failed" and exits 1
#   finish                  closes with "NAME: N passed, 0 failed"
#   install_prefix          the library as `make install` lays it out: the run's prefix
#                           when PORTAL_AUTH_TEST_PREFIX names one (scripts/test.sh installs
#                           once for every stage), else a `make install` into $work/prefix;
#                           sets prefix, soname and PKG_CONFIG_PATH
#   loads_by_soname LABEL PROGRAM   fails unless PROGRAM loads the library by its soname,
#                           found in the prefix when run as it is (no LD_LIBRARY_PATH)
#   finds_in_prefix LABEL PROGRAM SONAME   fails unless PROGRAM, run as it is, finds the
#                           library SONAME in the prefix's lib
#   hiding PATH COMMAND...  runs COMMAND in a private mount namespace where PATH is hidden: a
#                           folder under an empty tmpfs, a file under an empty file
#                           (unreadable as a library); as root, or in a user namespace
#   swift_toolchain         prints the Swift toolchain's folder (/opt/swift), for `hiding`
#   glibc_floor             sets floor: the oldest glibc the library claims (Sources/CGlibcFloor)
#   quick_start README      runs the README's quick-start commands as written, with HOME in
#                           $work and Debian's programs first on PATH (as on a fresh Debian 12)
#   start_job NAME COMMAND...   runs COMMAND in the background, its output to
#                           $work/jobs/NAME.out; as many jobs at once as the machine has cores
#                           (most tests here use one core and wait on loopback the rest), or
#                           as PORTAL_AUTH_TEST_JOBS says. A failing stage stops its jobs.
#   wait_job NAME           waits for the job NAME and returns its status
#   expect_job NAME WHAT    waits for the job NAME; if it failed, prints the end of its output
#                           and fails with WHAT
#   start_test WHAT TEST COMMAND...   starts a test program as a job, for judge_tests
#   judge_tests             waits for each test started, in the order they started, and prints
#                           its output; passes its WHAT if it exited 0 and closed with
#                           "TEST: N passed, 0 failed", else fails
#   with_emulator COMMAND...    runs COMMAND against a Portal emulator of its own, for a job:
#                           a test sets its emulator's faults and clock, so two running at once
#                           cannot share one
# Outputs are read whole before grep looks at them: under pipefail, `command | grep -q`
# fails whenever grep stops reading before the command has written everything.
stage=${1:?usage: source scripts/stage.sh NAME}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { stop_jobs; echo "FAILED: $1" >&2; echo "$stage: $passed passed, 1 failed"; exit 1; }
finish() { echo "$stage: $passed passed, 0 failed"; }
install_prefix() {
    prefix=${PORTAL_AUTH_TEST_PREFIX:-$work/prefix}
    [ -n "${PORTAL_AUTH_TEST_PREFIX:-}" ] || scripts/install.sh "$prefix"
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    soname=$(readelf -d "$prefix/lib/libportalauth.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
}
loads_by_soname() {
    grep -q "(NEEDED).*\[$soname\]" <<< "$(readelf -d "$2")" || fail "$1 does not load the library as $soname"
    finds_in_prefix "$1" "$2" "$soname"
}
finds_in_prefix() {
    local resolved found
    resolved=$(env -u LD_LIBRARY_PATH ldd "$2")
    # The path as the program's run path spells it (a relocatable .pc file's has "..").
    found=$(sed -n "s|^[[:space:]]*$3 => \(.*\) (0x[0-9a-f]*)\$|\1|p" <<< "$resolved")
    [ -n "$found" ] && [ "$(readlink -f "$found")" = "$(readlink -f "$prefix/lib/$3")" ] \
        || fail "$1 does not find $3 in the prefix: $(grep "$3" <<< "$resolved")"
}
hiding() {
    local namespace=(unshare --mount --propagation private)
    [ "$(id -u)" -eq 0 ] || namespace=(unshare --map-root-user --mount --propagation private)
    "${namespace[@]}" sh -c 'if [ -d "$0" ]; then mount -t tmpfs none "$0"; else mount --bind /dev/null "$0"; fi && exec "$@"' "$@"
}
swift_toolchain() { dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")"; }
quick_start() {
    scripts/readme-commands.sh "$1" > "$work/quick-start.sh"
    [ -s "$work/quick-start.sh" ] || fail "$1 has no quick start"
    (export HOME="$work/home" PATH="/usr/bin:$PATH" && mkdir -p "$HOME" && bash -euo pipefail -x "$work/quick-start.sh") \
        > "$work/quick-start.log" 2>&1 || { cat "$work/quick-start.log"; fail "$1's quick start"; }
    pass "$1's quick start works as written"
}
glibc_floor() { floor=$(scripts/glibc-floor.sh) || fail "no glibc floor"; }
jobs_at_once=${PORTAL_AUTH_TEST_JOBS:-$(nproc)}
[[ $jobs_at_once =~ ^[1-9][0-9]*$ ]] || { echo "PORTAL_AUTH_TEST_JOBS is a count of jobs, 1 or more" >&2; exit 2; }
declare -A job_pids=()
start_job() {
    local name=$1
    shift
    mkdir -p "$work/jobs"
    while [ "$(jobs -pr | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
    { "$@" && status=0 || status=$?; echo "$status" > "$work/jobs/$name.status"; } > "$work/jobs/$name.out" 2>&1 &
    job_pids[$name]=$!
}
wait_job() {
    # (A job that `wait -n` above reaped is no longer a child: its status file tells.)
    wait "${job_pids[$1]}" 2>/dev/null || true
    return "$(cat "$work/jobs/$1.status" 2>/dev/null || echo 1)"
}
expect_job() {
    wait_job "$1" || { tail -n 60 "$work/jobs/$1.out"; fail "$2"; }
}
tests_started=()
start_test() {
    start_job "test$((${#tests_started[@]} / 2))" "${@:3}"
    tests_started+=("$1" "$2")
}
judge_tests() {
    local i name status
    for ((i = 0; i < ${#tests_started[@]} / 2; i++)); do
        name=test$i status=0
        wait_job "$name" || status=$?
        cat "$work/jobs/$name.out"
        [ "$status" -eq 0 ] || fail "${tests_started[2 * i]} failed"
        grep -q "^${tests_started[2 * i + 1]}: [0-9]* passed, 0 failed\$" "$work/jobs/$name.out" \
            || fail "${tests_started[2 * i]} printed no result"
        pass "${tests_started[2 * i]}"
    done
}
# Each job's processes, the deepest first, so that none outlives the stage's $work.
stop_jobs() {
    local pid
    for pid in "${job_pids[@]}"; do stop_tree "$pid"; done
}
stop_tree() {
    local child
    for child in $(ps -o pid= --ppid "$1"); do stop_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
with_emulator() {
    source scripts/emulator.sh
    start_emulator "$work/jobs/emulator-$BASHPID.log" || { echo "the Portal emulator did not start"; return 1; }
    "$@"
}
