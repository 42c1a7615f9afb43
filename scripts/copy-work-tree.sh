#!/usr/bin/env bash
# Copies the files of the work tree under FOLDER (the repository's root by default) that git
# tracks or would track (nothing it ignores, so no build output) to DESTINATION, as they
# are now; a tracked file deleted in the work tree is left out.
#   scripts/copy-work-tree.sh DESTINATION [FOLDER]
set -euo pipefail
destination=$(realpath -m "${1:?usage: scripts/copy-work-tree.sh DESTINATION [FOLDER]}")
cd "$(dirname "$0")/../${2:-.}"
mkdir -p "$destination"
git ls-files -z --cached --others --exclude-standard . | while IFS= read -r -d '' file; do
    [ ! -e "$file" ] || printf '%s\0' "$file"
done | tar --null --files-from=- --create --file=- | tar --extract --file=- --directory="$destination"
