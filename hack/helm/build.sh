#!/usr/bin/env bash
# Builds the pinned Helm 3 and Helm 4 the tests run, cached by content:
#
#   helm3  helm.sh/helm/v3 cmd/helm, from test/helm/tools/helm3 (go.mod pins the version)
#   helm4  helm.sh/helm/v4 cmd/helm, from test/helm/tools/helm4
#
# Each wrapper module holds only its Helm (as a `tool`), so each is built
# with exactly the dependencies it is released with. The binaries land in
# JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) under helm/<key>/, where
# <key> hashes both modules' go.mod/go.sum, the build flags and the Go
# version;
# a second run with the same inputs only prints the path. A build runs
# under the machine's heavy-build lock (HEAVY_LOCK, default
# /var/tmp/jf-heavy.lock), so it never runs beside another heavy build; a
# cache hit takes no lock.
#
# Usage: hack/helm/build.sh     prints the cache directory (helm3, helm4) last.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tools=$repo/test/helm/tools
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}

log() { printf 'helm-build: %s\n' "$*" >&2; }

# How each binary is built, in the key with the modules' files and the Go
# version: what decides the binaries, and not this script's comments or
# locking.
build_flags='CGO_ENABLED=0 -trimpath -ldflags=-s -w -X helm.sh/helm/vN/internal/version.version=<pinned>'
key=$( { sha256sum "$tools"/helm3/go.{mod,sum} "$tools"/helm4/go.{mod,sum} | cut -d' ' -f1
  echo "$build_flags"; go version; } | sha256sum | cut -c1-16)
out=$cache_root/helm/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

mkdir -p "$cache_root/helm"
exec 9>"${HEAVY_LOCK:-/var/tmp/jf-heavy.lock}"
log "waiting for the heavy-build lock"
flock 9
# Another run may have built it while this one waited.
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$cache_root/helm/.tmp-$key-$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
for major in 3 4; do
  mod=$tools/helm$major
  # The version helm prints: the one go.mod pins, not the module's
  # placeholder ("v3.22"), so `helm version` says what was built.
  version=$(cd "$mod" && go list -m -f '{{.Version}}' "helm.sh/helm/v$major")
  start=$SECONDS
  log "building helm $version"
  (cd "$mod" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v$major/internal/version.version=$version" \
    -o "$tmp/helm$major" "helm.sh/helm/v$major/cmd/helm")
  log "helm $version built in $((SECONDS - start)) s"
done
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
echo "$out"
