#!/usr/bin/env bash
# make bench: the SDK side by side with what its users would use instead, on one loopback
# nginx (Debian's) that serves the emulator's responses as static JSON with keep-alive:
#   c-library    libportalauth from C              py-blocking / py-async  the Python binding
#   c-queue      the same, through the completion queue
#   c-queue-in-python  the same calls from C inside the Python contenders' process, in their
#                chunks (bench/library.c built as a shared library), for the binding's
#                overhead over C under one machine load
#   py-peer      requests + keyring (PyPI)         c-floor   libcurl easy handle + libsecret
#   py-blocking-thread / py-async-thread   the binding whose completions ran on the library
#                thread (commit c1438ce, the last one that had it), on the same library
#   gnome-library  libportalauth on a GMainLoop, its completion queue watched by g_unix_fd_add
#   gnome-glib   portal-auth-glib on a GMainLoop: PortalAuthClient's _async/_finish calls
#   gnome-peer   what a GNOME app would write instead: libsoup 3, json-glib and libsecret
#                on a GMainLoop (bench/gnome.c drives both; one file each, bench/gnome_*.c)
# Prints the table of figures and ratios and writes bench/RESULTS.md with the machine's
# description. Runs inside a private keyring (its own D-Bus and gnome-keyring).
# BENCH_MODES="calls …" runs only those of load, calls, one-cpu, instructions, concurrent,
# keyring, hostile, soak, gnome and flood, and prints their lines without touching bench/RESULTS.md;
# BENCH_SAMPLES sets how many processes each load figure is the median of (15), BENCH_ROUNDS
# how many rounds the calls and concurrent modes run (5). The load mode ends with the import
# figure: `import portal_auth` and a first client over a bare interpreter, beside
# `import requests, keyring` and a Session.
# one-cpu adds a pass of the calls on one CPU to each round (why: bench/analysis.md, "One CPU").
# flood: how long the browser waits for a sign-in's loopback listener while another user
# (nobody) floods it (bench/flood_bench.py), against the emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
modes=" ${BENCH_MODES:-load calls one-cpu instructions concurrent keyring hostile soak gnome flood} "
# What the modes need beyond the library and the virtual environment: the loopback server,
# the old binding.
needs_server=false needs_old_binding=false
for mode in calls one-cpu instructions concurrent keyring soak gnome; do [[ $modes == *" $mode "* ]] && needs_server=true; done
for mode in calls concurrent soak; do [[ $modes == *" $mode "* ]] && needs_old_binding=true; done
if [ -z "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ]; then
    if $needs_server; then scripts/install-deps.sh bench; else scripts/install-deps.sh; fi
    exec scripts/private-keyring.sh run "$0" "$@"
fi

work=$(mktemp -d)
cleanup() {
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

echo "== bench: the release library, installed (stripped) in a temporary prefix"
scripts/install.sh "$work/prefix"
library="$work/prefix/lib/libportalauth.so.0"

echo "== bench: a virtual environment with the binding, requests and keyring"
python3 -m venv "$work/venv"
pip=("$work/venv/bin/pip" install --quiet --disable-pip-version-check)
"${pip[@]}" -r bench/requirements.txt
PORTAL_AUTH_LIBRARY="$library" "${pip[@]}" ./bindings/python
python="$work/venv/bin/python"
# The binding of the old completion model, installed beside it (first on PYTHONPATH when it
# runs), over the same library: the old model's figures come from this very run. Outside a
# git checkout that has the commit, its rows stay empty.
old_binding=c1438ce
thread_model=()
if ! $needs_old_binding; then
    :
elif git cat-file -e "$old_binding^{commit}" 2>/dev/null; then
    git archive "$old_binding" bindings/python include | tar -x -C "$work"  # setup.py reads the version there
    PORTAL_AUTH_LIBRARY="$library" "${pip[@]}" --target "$work/thread-binding" "$work/bindings/python"
    thread_model=(env PYTHONPATH="$work/thread-binding" BENCH_PY_MODEL=thread "$python")
else
    echo "bench: no commit $old_binding here, so no figures of the old Python binding" >&2
fi

echo "== bench: the C contenders"
flags=(-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Ibench -Iinclude)
gcc "${flags[@]}" bench/library.c -L"$(dirname "$library")" -lportalauth -Wl,-rpath,"$(dirname "$library")" \
    -lm -pthread -o "$work/c-library"
# The same calls as a shared library, for python_bench.py's process (c-queue-in-python); what
# only main uses is left unused there.
gcc "${flags[@]}" -Wno-unused-function -DBENCH_IN_PROCESS -fPIC -shared -fvisibility=hidden bench/library.c \
    -L"$(dirname "$library")" -lportalauth -Wl,-rpath,"$(dirname "$library")" -lm -pthread -o "$work/libbenchcalls.so"
read -r -a system_flags <<< "$(pkg-config --cflags --libs libcurl libsecret-1)"
gcc "${flags[@]}" bench/floor.c "${system_flags[@]}" -lm -o "$work/c-floor"
gcc "${flags[@]}" bench/load.c -ldl -lm -o "$work/load"

# Builds bench/gnome.c with one contender's file and its libraries, as $work/NAME.
#   build_gnome NAME SOURCE LINK-FLAGS...
build_gnome() {
    local name=$1 source=$2
    shift 2
    gcc "${flags[@]}" bench/gnome.c "$source" "$@" -lm -o "$work/$name"
    gnome_contenders+=("$name")
}
gnome_contenders=()
if [[ $modes == *" gnome "* ]]; then
    echo "== bench: the GNOME contenders, each a program of bench/gnome.c and its own file"
    read -r -a glib_flags <<< "$(pkg-config --cflags --libs glib-2.0)"
    build_gnome gnome-library bench/gnome_library.c "${glib_flags[@]}" -L"$(dirname "$library")" -lportalauth \
        -Wl,-rpath,"$(dirname "$library")"
    read -r -a glib_layer_flags <<< "$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs portal-auth-glib portal-auth)"
    build_gnome gnome-glib bench/gnome_glib.c "${glib_layer_flags[@]}" -Wl,-rpath,"$work/prefix/lib"
    read -r -a gnome_flags <<< "$(pkg-config --cflags --libs libsoup-3.0 json-glib-1.0 libsecret-1)"
    build_gnome gnome-peer bench/gnome_peer.c "${gnome_flags[@]}"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export BENCH_BASE="http://127.0.0.1:$port" BENCH_LIBRARY="$library" BENCH_C_CALLS="$work/libbenchcalls.so"
if $needs_server; then
    echo "== bench: nginx on loopback, answering with the emulator's responses"
    PYTHONPATH=emulator python3 bench/responses.py "$work/responses"
    mkdir -p "$work/nginx-temp"
    cat > "$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    client_body_temp_path $work/nginx-temp;
    proxy_temp_path $work/nginx-temp;
    fastcgi_temp_path $work/nginx-temp;
    uwsgi_temp_path $work/nginx-temp;
    scgi_temp_path $work/nginx-temp;
    server {
        listen 127.0.0.1:$port;
        default_type application/json;
        location = /api/v3/auth/methods { return 200 '$(cat "$work/responses/methods.json")'; }
        location = /api/v3/auth/magic-links/validations { return 200 '$(cat "$work/responses/grant.json")'; }
    }
}
NGINX
    # nginx daemonises once its socket listens: when this returns, the server is ready.
    nginx -c "$work/nginx.conf" -p "$work"
fi

results="$work/results.tsv"
: > "$results"
run() { echo "-- $*" >&2; "$@" | tee -a "$results"; }
# Load: a fresh process per sample (dlopen and import happen once per process), the
# contenders in turn, so that the machine's load weighs on each alike.
if [[ $modes == *" load "* ]]; then
    for _ in $(seq "${BENCH_SAMPLES:-15}"); do
        run "$work/load" library
        run "$work/load" floor
        run "$python" bench/python_bench.py load-library
        run "$python" bench/python_bench.py load-peer
    done
    python3 bench/report.py --import "$results"
fi
# The one-cpu pass: the calls of c-library (both models), c-floor and python_bench.py (the
# binding, the peer, c-queue-in-python) started under taskset on the first CPU this shell may
# use, with nginx's worker moved there for the pass; each figure renamed one_cpu_*.
every_cpu=$(taskset -c -p $$ | sed 's/.*: //')
first_cpu=${every_cpu%%[-,]*}
# Moves nginx's worker (its master's children) to the CPU list $1. One request answered first:
# nginx returns before its master has forked the worker.
pin_nginx() {
    local master workers pid
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read()' \
        "$BENCH_BASE/api/v3/auth/methods"
    master=$(cat "$work/nginx.pid")
    workers=$(cat "/proc/$master/task/$master/children")
    [ -n "$workers" ] || { echo "bench: nginx has no worker to move" >&2; exit 1; }
    for pid in $workers; do taskset -a -c -p "$1" "$pid" > /dev/null; done
}
on_one_cpu() { echo "-- on CPU $first_cpu: $*" >&2; taskset -c "$first_cpu" "$@" | sed 's/\t/\tone_cpu_/' | tee -a "$results"; }
one_cpu_pass() {
    pin_nginx "$first_cpu"
    on_one_cpu "$work/c-library" calls
    on_one_cpu "$work/c-floor" calls
    on_one_cpu "$python" bench/python_bench.py calls
    pin_nginx "$every_cpu"
}
# Each model of the library beside the other: C on the library thread and through the
# completion queue, the Python binding of each model. Both modes run in rounds, every
# contender in turn in each (the report takes the medians of the rounds' figures, and compares
# contenders within each round): a shared machine's load drifts over minutes, and the ratios
# between contenders are the figures that matter, so each contender must see the same drift.
# With one-cpu, each round of the calls ends with the one-cpu pass.
for mode in calls concurrent; do
    [[ $modes == *" $mode "* ]] || continue
    for _ in $(seq "${BENCH_ROUNDS:-5}"); do
        run "$work/c-library" "$mode"  # the calls mode measures both models, in turn
        [ "$mode" = calls ] || run "$work/c-library" "$mode" queue
        run "$work/c-floor" "$mode"
        run "$python" bench/python_bench.py "$mode"
        [ ${#thread_model[@]} -eq 0 ] || run "${thread_model[@]}" bench/python_bench.py "$mode"
        if [ "$mode" = calls ] && [[ $modes == *" one-cpu "* ]]; then one_cpu_pass; fi
    done
done
if [[ $modes == *" one-cpu "* && $modes != *" calls "* ]]; then
    for _ in $(seq "${BENCH_ROUNDS:-5}"); do one_cpu_pass; done
fi
# Instructions per call, as valgrind's callgrind counts them over the whole process (every
# thread, libcurl's and the interpreter's work included): a run of 400 calls less a run of
# 100, so that start-up counts for nothing. Unlike a time, the count hardly moves with the
# machine's state, so it shows what each contender's call costs in work.
#   count CONTENDER METRIC COMMAND...   (COMMAND gets the number of calls appended)
count() {
    local contender=$1 metric=$2 n counts=()
    shift 2
    for n in 100 400; do
        valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$work/callgrind.log" "$@" "$n" > /dev/null \
            || { cat "$work/callgrind.log" >&2; exit 1; }
        counts+=("$(sed -n 's/.*Collected : //p' "$work/callgrind.log")")
        [[ ${counts[-1]} =~ ^[0-9]+$ ]] || { echo "bench: callgrind gave no count for $contender" >&2; cat "$work/callgrind.log" >&2; exit 1; }
    done
    printf '%s\t%s\t%s\n' "$contender" "$metric" "$(((counts[1] - counts[0]) / 300))" | tee -a "$results"
}
if [[ $modes == *" instructions "* ]]; then
    echo "-- instructions per call (callgrind)" >&2
    for call in methods grant; do
        count c-library "${call}_instructions" "$work/c-library" repeat "$call"
        count c-queue "${call}_instructions" "$work/c-library" repeat queue "$call"
        count c-floor "${call}_instructions" "$work/c-floor" repeat "$call"
        for who in blocking async peer; do
            count "py-$who" "${call}_instructions" "$python" bench/python_bench.py repeat "$who" "$call"
        done
    done
fi
if [[ $modes == *" keyring "* ]]; then
    run "$work/c-library" keyring
    run "$work/c-floor" keyring
    run "$python" bench/python_bench.py keyring
fi
[[ $modes == *" hostile "* ]] && run "$work/c-library" hostile
if [[ $modes == *" flood "* ]]; then
    coproc emulator { PYTHONPATH=emulator exec python3 -m portal_auth_emulator --port 0 --stop-on-stdin-eof; }
    read -r emulator_line <&"${emulator[0]}"
    BENCH_EMULATOR=${emulator_line##* } run "$python" bench/flood_bench.py
    exec {emulator[1]}>&-
    wait "$emulator_PID"
fi
if [[ $modes == *" soak "* ]]; then
    run "$work/c-library" soak
    run "$work/c-library" soak queue
    run "$python" bench/python_bench.py soak
    [ ${#thread_model[@]} -eq 0 ] || run "${thread_model[@]}" bench/python_bench.py soak
fi
# The GNOME contenders, interleaved, three runs each (the report takes the medians); then the
# Secret Service calls of each one's exchange (with its persist) and restore, as dbus-monitor
# sees them: the calls between the contender's marks (bench/gnome.c), per operation.
if [[ $modes == *" gnome "* ]]; then
    for _ in 1 2 3; do
        for name in "${gnome_contenders[@]}"; do run "$work/$name"; done
    done
    for name in "${gnome_contenders[@]}"; do
        dbus-monitor --session "type='method_call',destination='org.freedesktop.secrets'" > "$work/calls-$name" 2>/dev/null &
        monitor=$!
        # A monitor gives up the name it got once it sees everything: bounded, no sleep.
        for _ in $(seq 100000); do grep -q "member=NameLost" "$work/calls-$name" && break; done
        "$work/$name" keyring-calls > /dev/null
        # The last mark's call is on the bus before its reply reached the contender.
        for _ in $(seq 100000); do [ "$(grep -c "member=Ping" "$work/calls-$name")" -ge 3 ] && break; done
        kill "$monitor"
        awk -v contender="$name" '
            /^method call / && /member=Ping/ { phase++; next }
            /^method call / && phase >= 1 && phase <= 2 { calls[phase]++ }
            END { printf "%s\tpersist_calls\t%.1f\n%s\trestore_calls\t%.1f\n", contender, calls[1] / 10, contender, calls[2] / 10 }
        ' "$work/calls-$name" | tee -a "$results"
    done
fi
[ -z "${BENCH_MODES:-}" ] || exit 0

# The raw lines stay beside the report, so that it can be rebuilt: bench/report.py FILE LIB OUT.
cp "$results" bench/results.tsv
python3 bench/report.py "$results" "$library" bench/RESULTS.md
