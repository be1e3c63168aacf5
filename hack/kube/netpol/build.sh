#!/usr/bin/env bash
# Builds (or finds in the cache) the test cluster's NetworkPolicy
# implementation: kube-router's network policy controller
# (github.com/cloudnativelabs/kube-router/v2, the version this module pins with
# its `tool` line), which enforces NetworkPolicy with iptables and ipset.
#
# Why kube-router: the CNI bridge enforces no policy, and this machine's
# kernel has no nft `queue` expression (CONFIG_NFT_QUEUE), which
# kube-network-policies needs; it has iptables, the xt `set` match and ipset
# (docs/contributing/kubernetes.md, "NetworkPolicy").
#
# Usage: hack/kube/netpol/build.sh    prints the cache directory (bin/) last.
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the result under
#   netpol/<key>/, where <key> hashes go.mod, go.sum, this script and the Go
#   version: a second run only prints the path. KUBE_BUILD_JOBS (default 2)
#   is passed to go build -p.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
jobs=${KUBE_BUILD_JOBS:-2}

log() { printf 'netpol-build: %s\n' "$*" >&2; }

cd "$here"
key=$( { go env GOVERSION; sha256sum go.mod go.sum build.sh; } | sha256sum | cut -c1-16)
out=$cache_root/netpol/$key
mkdir -p "$cache_root/netpol"
exec 9>"$cache_root/netpol/.lock"
flock 9 # concurrent callers wait for one build, then find it
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$cache_root/netpol/.tmp-$key-$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/bin"
start=$SECONDS
log "building kube-router (go build -p $jobs)"
go build -p "$jobs" -trimpath -o "$tmp/bin/kube-router" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start)) s: $out"
echo "$out"
