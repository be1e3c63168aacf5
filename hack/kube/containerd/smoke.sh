#!/usr/bin/env bash
# Image volumes on the cluster's own containerd 2, without Kubernetes: a
# private containerd (its own root, state and socket under a temporary
# directory, in a private mount namespace, the cluster's config from
# hack/kube/config.sh) imports the cluster's images (hack/kube/images), then
# smoke/ asks its CRI for what the kubelet asks for a pod of view-mount
# image: the Debian app image with the flux-view image's opt/software and
# opt/views mounted read-only as image volume subPaths, as root and as uid
# 1001. Each run must find the view's flux through the Spack links, run it
# (flux version 0.88, then a one-broker `flux start` running `flux run`),
# and be refused a write into /opt/software.
#
# Usage: hack/kube/containerd/smoke.sh   (root; runc, util-linux, tar)
# Not a cluster: it starts no kubelet, no network, no registry, and leaves
# nothing behind (the temporary directory, the cgroup it used).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

log() { printf 'containerd-smoke: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# cleanup removes the temporary directory and the cgroups the pods used.
cleanup() {
  local c
  rm -rf "$S"
  for c in /sys/fs/cgroup/*/jobset-flux-smoke; do
    if [[ -d $c ]]; then find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
  done
}

[[ $(id -u) == 0 ]] || die "run as root (mounts, containers)"
if [[ ${1:-} != inner ]]; then
  CONTAINERD=$(bash "$here/build.sh" | tail -n1)
  IMAGES=$(bash "$repo/hack/kube/images/build.sh" | tail -n1)
  S=$(mktemp -d /tmp/jobset-flux-containerd-smoke.XXXXXX)
  trap cleanup EXIT
  (cd "$here/smoke" && go build -o "$S/smoke" .)
  export CONTAINERD IMAGES S
  unshare --mount --propagation private -- bash "$0" inner
  exit
fi

# --- inside the private mount namespace ---------------------------------------
SOCK=$S/containerd/containerd.sock
# Read by write_containerd_config (config.sh), as in cluster.sh.
export PAUSE_IMAGE=jobset-flux.test/pause:1 CNI_BIN=/usr/lib/cni
# shellcheck disable=SC1091 # the cluster's own config functions
source "$here/../config.sh"
write_containerd_config
mkdir -p "$S/run" "$S/logs"
mount --bind "$S/run" /run/containerd 2>/dev/null || { mkdir -p /run/containerd && mount --bind "$S/run" /run/containerd; }
ctr() { "$CONTAINERD/bin/ctr" --address "$SOCK" -n k8s.io "$@"; }
PATH="$CONTAINERD/bin:$PATH" "$CONTAINERD/bin/containerd" --config "$S/containerd/config.toml" >"$S/containerd.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for ((i = 0; i < 100; i++)); do ctr version >/dev/null 2>&1 && break; sleep 0.2; done
ctr version >/dev/null || die "containerd did not start: $(tail -5 "$S/containerd.log")"
log "containerd $("$CONTAINERD/bin/containerd" --version | awk '{print $3}') up; importing $IMAGES/oci"
tar -C "$IMAGES/oci" -c . | ctr images import - >/dev/null

# shellcheck disable=SC2016 # expanded by the container's bash
script='readlink -f /opt/views/view/bin/flux
ln -s /opt/views/view /tmp/view && /tmp/view/bin/flux version | head -1
touch /opt/software/x 2>/dev/null && echo "software writable" || echo "software read-only"
/tmp/view/bin/flux start --test-size=1 flux run -n1 echo "job ran as $(id -u)"'
failed=0
for uid in 0 1001; do
  out=$("$S/smoke" "$SOCK" "$S/logs" jobset-flux.test/debian:bookworm ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy "$uid" "$script") ||
    die "the CRI run as uid $uid failed: $out"
  printf '%s\n' "$out" | sed 's/^/  /' >&2
  for want in "exit 0" "/opt/software/" "commands:" "software read-only" "job ran as $uid"; do
    grep -qF -- "$want" <<<"$out" || { log "uid $uid: no \"$want\" in the output"; failed=1; }
  done
done
((failed == 0)) || die "image volumes do not work as view-mount image needs"
log "ok: the view image mounted read-only by subPath runs Flux in the app image, as root and as uid 1001"
