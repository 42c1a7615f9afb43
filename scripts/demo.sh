#!/usr/bin/env bash
# The main job: starts the Portal emulator on loopback, signs a user in against it with
# the SDK (magic link, TOTP enrollment, session persisted in a private keyring), then stops
# the emulator and the keyring.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"

export PYTHONPATH="$PWD/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
# The emulator stops when the pipe on its stdin closes, i.e. when this script exits.
coproc EMULATOR { exec python3 -m portal_auth.emulator --port 0 --stop-on-stdin-eof 2>/dev/null; }
trap 'exec {EMULATOR[1]}>&-; wait "$EMULATOR_PID" 2>/dev/null || true' EXIT
read -r line <&"${EMULATOR[0]}"
api_host="${line##* }"
echo "Portal emulator: $api_host"

.build/debug/portal-auth-demo --api-host "$api_host" --email "${DEMO_EMAIL:-ada@example.com}"
echo "A second process, restoring from the keyring:"
.build/debug/portal-auth-demo --restore
