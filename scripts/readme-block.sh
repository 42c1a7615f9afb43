#!/usr/bin/env bash
# Prints the first ```LANG block of a Markdown file under the heading HEADING (its text
# after the #s, exactly), or the file's first ```LANG block when HEADING is -: for a test to
# build the program a README shows, as written.
#   scripts/readme-block.sh FILE HEADING LANG
set -euo pipefail
file=${1:?usage: scripts/readme-block.sh FILE HEADING LANG} heading=${2:?} lang=${3:?}
block=$(awk -v heading="$heading" -v fence="\`\`\`$lang" '
    /^#+ / { text = $0; sub(/^#+ /, "", text); under = (heading == "-" || text == heading) }
    heading == "-" && NR == 1 { under = 1 }
    under && !inside && $0 == fence { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
' "$file")
[ -n "$block" ] || { echo "$file has no \`\`\`$lang block under '$heading'" >&2; exit 1; }
printf '%s\n' "$block"
