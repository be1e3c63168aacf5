#!/usr/bin/env bash
# Builds (or finds in the cache) Kueue for the test cluster: the controller
# manager sigs.k8s.io/kueue/cmd/kueue at the version this module pins (go.mod's
# `tool` line), and its CRDs from the same module version
# (config/components/crd/bases).
#
# Usage: hack/kube/kueue/build.sh    prints the cache directory (bin/, crd/) last.
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the result under
#   kueue/<key>/, where <key> hashes go.mod, go.sum, this script and the Go
#   version: a second run only prints the path. KUBE_BUILD_JOBS (default 2)
#   is passed to go build -p. docs/contributing/measurements.md has the cold build time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
jobs=${KUBE_BUILD_JOBS:-2}

log() { printf 'kueue-build: %s\n' "$*" >&2; }

cd "$here"
key=$( { go env GOVERSION; sha256sum go.mod go.sum build.sh; } | sha256sum | cut -c1-16)
out=$cache_root/kueue/$key
mkdir -p "$cache_root/kueue"
exec 9>"$cache_root/kueue/.lock"
flock 9 # concurrent callers wait for one build, then find it
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$cache_root/kueue/.tmp-$key-$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/bin" "$tmp/crd"
start=$SECONDS
log "building sigs.k8s.io/kueue/cmd/kueue (go build -p $jobs)"
go build -p "$jobs" -trimpath -o "$tmp/bin/kueue" sigs.k8s.io/kueue/cmd/kueue
mod_dir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
cp "$mod_dir/config/components/crd/bases/"*.yaml "$tmp/crd/"
chmod -R u+w "$tmp/crd"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start)) s: $out"
echo "$out"
