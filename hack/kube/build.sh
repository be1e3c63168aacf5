#!/usr/bin/env bash
# Builds every binary of the single-node test cluster, cached by content:
#
#   kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd
#       from test/apiserver (k8s.io/kubernetes v1.35.4, etcd v3.6), one `go
#       build` so they share one Go build cache with test-apiserver's builds;
#   coredns   from hack/kube/coredns (CoreDNS v1.15.0, a few plugins only);
#   jobset    from hack/kube/jobset (the JobSet controller v0.12.0), plus its
#       CRD from the same module version under crd/.
#
# The result lands in JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) under
# kube/<key>/, where <key> hashes every input: both modules' go.mod/go.sum, the
# wrapper mains, this script and the Go version. A second run with the same
# inputs only prints the path. Cold: ~17 min on 2 shared cores (with ~600 MB of
# module downloads); warm: well under a second.
#
# Usage: hack/kube/build.sh     prints the cache directory (bin/, crd/) last.
# KUBE_BUILD_JOBS (default 2) is passed to go build -p.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
jobs=${KUBE_BUILD_JOBS:-2}
kube_version=v1.35.4

log() { printf 'kube-build: %s\n' "$*" >&2; }

apiserver_mod=$repo/test/apiserver
kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd)

# inputs lists every file whose content decides the binaries.
inputs() {
  local c
  printf '%s\n' "$apiserver_mod/go.mod" "$apiserver_mod/go.sum"
  for c in "${kube_cmds[@]}"; do printf '%s\n' "$apiserver_mod/cmd/$c/main.go"; done
  printf '%s\n' "$here/coredns/go.mod" "$here/coredns/go.sum" "$here/coredns/main.go" \
    "$here/jobset/go.mod" "$here/jobset/go.sum" "$here/build.sh"
}

key=$( { inputs | xargs sha256sum | cut -d' ' -f1; go version; } | sha256sum | cut -c1-16)
out=$cache_root/kube/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$cache_root/kube/.tmp-$key-$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/crd"
start=$SECONDS

# kubectl and the clients parse the version; the module build leaves it empty
# (same flags as mk/apiserver.mk, so the compiled packages are shared).
ldflags="-X k8s.io/component-base/version.gitVersion=$kube_version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35"
pkgs=()
for c in "${kube_cmds[@]}"; do pkgs+=("./cmd/$c"); done
log "building ${kube_cmds[*]} (go build -p $jobs)"
(cd "$apiserver_mod" && go build -p "$jobs" -ldflags "$ldflags" -o "$tmp/bin/" "${pkgs[@]}")

log "building coredns"
(cd "$here/coredns" && go build -p "$jobs" -o "$tmp/bin/coredns" .)

log "building the JobSet controller"
(cd "$here/jobset" && go build -p "$jobs" -o "$tmp/bin/jobset-controller" sigs.k8s.io/jobset)
jobset_dir=$(cd "$here/jobset" && go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
cp "$jobset_dir/config/components/crd/bases/"*.yaml "$tmp/crd/"
chmod -R u+w "$tmp/crd"

touch "$tmp/.complete"
mkdir -p "$cache_root/kube"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start)) s: $out"
echo "$out"
