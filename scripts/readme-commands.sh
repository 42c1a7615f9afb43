#!/usr/bin/env bash
# Prints the shell commands of a README's "## Quick start" section (its ```sh blocks), for
# a test to run them as written.
#   scripts/readme-commands.sh README.md
set -euo pipefail
awk '
    /^## / { in_section = ($0 == "## Quick start") }
    in_section && /^```sh$/ { in_block = 1; next }
    in_block && /^```$/ { in_block = 0; next }
    in_block { print }
' "${1:?usage: scripts/readme-commands.sh README.md}"
