#!/usr/bin/env bash
# The main job: starts the Portal emulator on loopback, signs a user in against it with
# the SDK (magic link, TOTP enrollment, session persisted in a private keyring), then stops
# the emulator and the keyring.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"

emulator_log=$(mktemp)
trap 'rm -f "$emulator_log"' EXIT
# The repository's emulator (emulator/); it stops when this script exits.
source scripts/emulator.sh
start_emulator "$emulator_log" || { echo "The Portal emulator did not start (above)." >&2; exit 1; }
trap 'stop_emulator; rm -f "$emulator_log"' EXIT
api_host=$PORTAL_AUTH_TEST_API_HOST
echo "Portal emulator: $api_host"

.build/debug/portal-auth-demo --api-host "$api_host" --email "${DEMO_EMAIL:-ada@example.com}"
echo "A second process, restoring from the keyring:"
.build/debug/portal-auth-demo --restore
