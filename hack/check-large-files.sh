#!/usr/bin/env bash
# Refuses tracked files larger than LIMIT bytes (default 1 MiB): binaries,
# archives and generated dumps belong in bin/, _out/ or a release, not in
# git, where every clone carries them forever. Sizes are those of the blobs
# in the index, so a file is refused as soon as it is staged.
#
#   hack/check-large-files.sh [LIMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-1048576}
big=$(git ls-files --stage |
  sed -E 's/^[0-7]+ ([0-9a-f]+) [0-9]+\t/\1 /' |
  git cat-file --batch-check='%(objectsize) %(rest)' |
  awk -v limit="$limit" '$1 > limit')
if [[ -n $big ]]; then
  echo "tracked files over $limit bytes (git rm --cached them; add them to .gitignore):" >&2
  echo "$big" >&2
  exit 1
fi
