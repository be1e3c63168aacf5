#!/usr/bin/env bash
# Builds (or finds in the cache) the project's image tools, static Go
# programs from this module, on go-containerregistry:
#   registry   the read-only registry containerd pulls the test images from
#   ocibuild   the OCI image builder (hack/kube/images/build.sh for the
#              test cluster, hack/image/build.sh for the function and the
#              Argo CD sidecar)
#   pause      the pod sandbox program (image jobset-flux.test/pause:1)
#
# Usage: hack/kube/registry/build.sh
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the binaries under
#   kube-registry/<key>, where <key> hashes this module's files (not its
#   tests: the images' key includes this one) and the Go version: a second
#   run only prints the path.
# Prints the path of the registry binary as its last line (ocibuild and
# pause are beside it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}

log() { printf 'kube-registry: %s\n' "$*" >&2; }

cd "$here"
key=$( { go env GOVERSION
         find . -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum -o -name build.sh \) -print0 |
           LC_ALL=C sort -z | xargs -0 sha256sum
       } | sha256sum | cut -c1-16)
out=$cache_root/kube-registry/$key
mkdir -p "$cache_root/kube-registry"
exec 9>"$cache_root/kube-registry/.lock"
flock 9  # concurrent callers wait for one build, then find it
if [[ -x $out/registry && -x $out/ocibuild && -x $out/pause ]]; then
  log "cached: $out"
  echo "$out/registry"
  exit 0
fi
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp"
# -trimpath and no cgo: the same sources give the same binaries, and pause
# runs in an image that holds nothing else.
CGO_ENABLED=0 go build -p 2 -trimpath -ldflags=-s -o "$tmp/" ./cmd/registry ./cmd/ocibuild ./cmd/pause
rm -rf "$out"
mv "$tmp" "$out"
log "built: $out"
echo "$out/registry"
