# Sourced by the test scripts and scripts/demo.sh: start_emulator starts the Portal emulator
# on a free loopback port and exports its base URL as PORTAL_AUTH_TEST_API_HOST. The
# emulator stops when the sourcing script exits (it closes the emulator's stdin);
# stop_emulator waits for that, for the script's EXIT trap.
#   start_emulator LOG_FILE [PROGRAM]   PROGRAM: an installed portal-auth-emulator, run as
#                                       installed (no PYTHONPATH); by default the
#                                       repository's (emulator/), through python3 -m
start_emulator() {
    local command=(env PYTHONPATH="$PWD/emulator" python3 -m portal_auth_emulator)
    [ -z "${2:-}" ] || command=(env -u PYTHONPATH "$2")
    coproc EMULATOR { exec "${command[@]}" --port 0 --stop-on-stdin-eof 2>"$1"; }
    emulator_out=${EMULATOR[0]} emulator_in=${EMULATOR[1]} emulator_pid=$EMULATOR_PID
    local line
    read -r line <&"$emulator_out" || { cat "$1" >&2; return 1; }
    export PORTAL_AUTH_TEST_API_HOST="${line##* }"
}

stop_emulator() {
    exec {emulator_in}>&-
    wait "$emulator_pid" 2>/dev/null || true
}
