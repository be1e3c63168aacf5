#!/usr/bin/env bash
# Writes DEST/imagedeps (hack/image/imagedeps.sh) and DEST/goproxy: a Go
# module proxy tree (the layout of the module cache's cache/download)
# holding exactly the modules the Argo CD sidecar's build stage downloads: those ./fn builds with, and those of standalone
# kustomize KUSTOMIZE_VERSION. It is filled from the host's module cache
# (used as a file proxy, so nothing is fetched twice), and
# Dockerfile.sidecar uses it with GOPROXY=file:///src/goproxy, so the image
# builds with --network none. DEST is replaced only when complete.
#
#   hack/image/sidecar-goproxy.sh DEST KUSTOMIZE_VERSION
set -euo pipefail

dest=${1:?usage: $0 DEST KUSTOMIZE_VERSION}
kversion=${2:?usage: $0 DEST KUSTOMIZE_VERSION}
cd "$(dirname "$0")/../.."

host=$(go env GOMODCACHE)/cache/download
upstream=$(go env GOPROXY)
new=$dest.new
rm -rf "$new"
mkdir -p "$new"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The host's cache first, the configured proxy for anything it lacks (a
# first run on a fresh machine).
# -trimpath: the build cache keys of kustomize's packages then name module
# versions, not this run's temporary module cache, so a later run reuses
# them instead of compiling kustomize again (about 40 s on 2 CPUs).
export GOMODCACHE=$tmp/mod GOFLAGS="-modcacherw -buildvcs=false -trimpath" CGO_ENABLED=0
export GOPROXY="file://$host,$upstream"
go list -deps ./fn >/dev/null
GOBIN=$tmp/bin go install "sigs.k8s.io/kustomize/kustomize/v5@$kversion"

cp -r "$tmp/mod/cache/download" "$new/goproxy"
rm -rf "$new/goproxy/sumdb"
hack/image/imagedeps.sh "$new/imagedeps"
rm -rf "$dest"
mv "$new" "$dest"
echo "sidecar-goproxy: $(du -sh "$dest/goproxy" | cut -f1) in $dest/goproxy" >&2
