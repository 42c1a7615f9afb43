#!/usr/bin/env bash
# The main job: starts the Portal emulator on loopback, signs a user in against it with
# the SDK (magic link, TOTP enrollment, session persisted in a private keyring), then stops
# the emulator and the keyring.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"

export PYTHONPATH="$PWD/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
emulator_log=$(mktemp)
# The emulator stops when the pipe on its stdin closes, i.e. when this script exits.
coproc EMULATOR { exec python3 -m portal_auth.emulator --port 0 --stop-on-stdin-eof 2>"$emulator_log"; }
emulator_out=${EMULATOR[0]} emulator_in=${EMULATOR[1]} emulator_pid=$EMULATOR_PID
trap 'exec {emulator_in}>&-; wait "$emulator_pid" 2>/dev/null || true; rm -f "$emulator_log"' EXIT
if ! read -r line <&"$emulator_out"; then
    echo "The Portal emulator did not start:" >&2
    cat "$emulator_log" >&2
    exit 1
fi
api_host="${line##* }"
echo "Portal emulator: $api_host"

.build/debug/portal-auth-demo --api-host "$api_host" --email "${DEMO_EMAIL:-ada@example.com}"
echo "A second process, restoring from the keyring:"
.build/debug/portal-auth-demo --restore
