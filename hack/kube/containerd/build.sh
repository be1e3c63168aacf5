#!/usr/bin/env bash
# Builds the test cluster's container runtime, cached by content: containerd,
# its runc shim (containerd-shim-runc-v2) and ctr from the Go module
# github.com/containerd/containerd/v2 at the version go.mod beside this script
# pins (2.x: image volumes need containerd 2.1 or newer; Debian 12 ships 1.6).
# runc stays Debian's (.ci/apt/kube.txt).
#
# The result lands in JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) under
# containerd/<key>/bin, where <key> hashes go.mod, go.sum, this script and the
# Go version: a second run with the same inputs only prints the path. Its own
# key (not hack/kube/build.sh's) so that changing one never rebuilds the other.
#
# Usage: hack/kube/containerd/build.sh   prints the cache directory (bin/) last.
# KUBE_BUILD_JOBS (default 2) is passed to go build -p.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
jobs=${KUBE_BUILD_JOBS:-2}
cmds=(containerd containerd-shim-runc-v2 ctr)

log() { printf 'containerd-build: %s\n' "$*" >&2; }

key=$( { sha256sum "$here/go.mod" "$here/go.sum" "$here/build.sh" | cut -d' ' -f1; go version; } | sha256sum | cut -c1-16)
out=$cache_root/containerd/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$cache_root/containerd/.tmp-$key-$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
start=$SECONDS

version=$(cd "$here" && go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)
# Static, pure Go binaries: the snapshotters that need cgo or kernel parts
# this machine lacks (btrfs, devmapper, zfs) are left out; overlayfs and
# native stay. The version string is what `containerd --version` and the
# CRI's RuntimeVersion report.
tags=no_btrfs,no_devmapper,no_zfs
ldflags="-X github.com/containerd/containerd/v2/version.Version=$version"
pkgs=()
for c in "${cmds[@]}"; do pkgs+=("github.com/containerd/containerd/v2/cmd/$c"); done
log "building ${cmds[*]} $version (go build -p $jobs)"
(cd "$here" && CGO_ENABLED=0 go build -p "$jobs" -tags "$tags" -ldflags "$ldflags" -o "$tmp/bin/" "${pkgs[@]}")
"$tmp/bin/containerd" --version >&2

touch "$tmp/.complete"
mkdir -p "$cache_root/containerd"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start)) s: $out"
echo "$out"
