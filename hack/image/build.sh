#!/usr/bin/env bash
# Builds the function's image or the Argo CD plugin sidecar's with the
# project's one image toolchain: files staged here, assembled by
# hack/kube/registry's ocibuild (go-containerregistry), as the test
# cluster's images are. No Docker, no registry, no network: the binaries
# are static builds made here (jobset-flux from this checkout with the
# release metadata, as make build links it; kustomize from the module
# proxy), the base files the host's.
#
#   function  hack/image/function.json: a distroless-style static base
#             (passwd/group with root and nobody, the CA bundle, /tmp) and
#             /usr/local/bin/jobset-flux; user 65534, entrypoint the binary
#   sidecar   hack/image/sidecar.json: Debian's busybox-static with its
#             applets (jobset-flux-cmp is a POSIX sh script using find and
#             grep), passwd/group with argocd (999), the CA bundle, /tmp;
#             jobset-flux, kustomize and jobset-flux-cmp in /usr/local/bin,
#             plugin.yaml where argocd-cmp-server reads it; user 999
#
# Usage: hack/image/build.sh function|sidecar OUT
#   IMAGE, VERSION, COMMIT   the reference, and the release metadata of the
#                            labels and of the binary (main.version, main.commit)
#   KUSTOMIZE_VERSION        sidecar: the kustomize to build
# Writes OUT/oci (the layout), OUT/image.tar (for `docker load`),
# OUT/refs.txt and OUT/build.log, replacing OUT only when complete, and
# prints OUT/image.tar as its last line.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mode=${1:-}
out=${2:-}
[[ ($mode == function || $mode == sidecar) && -n $out ]] || { echo "usage: $0 function|sidecar OUT" >&2; exit 2; }
: "${IMAGE:?IMAGE not set}" "${VERSION:?VERSION not set}" "${COMMIT:?COMMIT not set}"
certs=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
busybox=${BUSYBOX:-/bin/busybox}
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}

log() { printf 'image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# static BIN: the image has no libc, so the binary must not need one.
static() {
  go version -m "$1" 2>/dev/null | grep -q 'CGO_ENABLED=0' || die "$1 is not a static Go build (CGO_ENABLED=0)"
}

# accounts DIR LINE...: etc/passwd and etc/group with root, nobody and the
# extra users given as name:uid (their group has the same id).
accounts() {
  local dir=$1 u
  shift
  install -d -m 0755 "$dir/etc"
  { echo 'root:x:0:0:root:/root:/sbin/nologin'
    echo 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin'
    for u in "$@"; do echo "${u%%:*}:x:${u#*:}:${u#*:}:${u%%:*}:/home/${u%%:*}:/bin/sh"; done
  } >"$dir/etc/passwd"
  { echo 'root:x:0:'
    echo 'nobody:x:65534:'
    for u in "$@"; do echo "${u%%:*}:x:${u#*:}:"; done
  } >"$dir/etc/group"
  chmod 0644 "$dir/etc/passwd" "$dir/etc/group"
  install -D -m 0644 "$certs" "$dir/etc/ssl/certs/ca-certificates.crt"
  install -d -m 1777 "$dir/tmp"
}

# kustomize_bin: a static kustomize KUSTOMIZE_VERSION (bin/kustomize may
# link libc), cached by version and Go version.
kustomize_bin() {
  local v=${KUSTOMIZE_VERSION:?KUSTOMIZE_VERSION not set} dir
  dir=$cache_root/image-kustomize/$v-$(go env GOVERSION)
  if [[ ! -x $dir/kustomize ]]; then
    log "building a static kustomize $v"
    rm -rf "$dir.tmp"
    CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOBIN=$dir.tmp \
      go install -ldflags='-s -w' "sigs.k8s.io/kustomize/kustomize/v5@$v"
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir/kustomize"
}

# jobset_flux DEST: the function, linked with VERSION and COMMIT every
# time (bin/jobset-flux is not relinked when only COMMIT moves); the Go
# build cache makes that a link.
jobset_flux() {
  (cd "$repo" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath \
    -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" -o "$1" ./fn)
  static "$1"
}

stage_function() {
  local s=$1
  accounts "$s/static"
  install -d -m 0755 "$s/app/usr/local/bin"
  jobset_flux "$s/app/usr/local/bin/jobset-flux"
}

stage_sidecar() {
  local s=$1 a k
  [[ -x $busybox ]] || die "$busybox not found: install Debian's busybox-static (.ci/apt/image.txt)"
  accounts "$s/busybox" argocd:999
  install -D -m 0755 "$busybox" "$s/busybox/bin/busybox"
  for a in $("$busybox" --list); do
    [[ $a == busybox || -e $s/busybox/bin/$a ]] || ln -s busybox "$s/busybox/bin/$a"
  done
  install -d -m 0755 "$s/busybox/home/argocd"
  k=$(kustomize_bin)
  static "$k"
  install -d -m 0755 "$s/app/usr/local/bin"
  jobset_flux "$s/app/usr/local/bin/jobset-flux"
  install -m 0755 "$k" "$s/app/usr/local/bin/kustomize"
  install -m 0755 "$repo/deploy/argocd/jobset-flux-cmp" "$s/app/usr/local/bin/jobset-flux-cmp"
  install -D -m 0644 "$repo/deploy/argocd/plugin.yaml" "$s/app/home/argocd/cmp-server/config/plugin.yaml"
}

tools=$(dirname "$(bash "$repo/hack/kube/registry/build.sh" | tail -n 1)")
new=$out.new
rm -rf "$new"
mkdir -p "$new/stage"
"stage_$mode" "$new/stage"
STAGE=$new/stage "$tools/ocibuild" -spec "$here/$mode.json" -out "$new" -tarball "$new/image.tar" 2>&1 |
  tee "$new/build.log" >&2
rm -rf "$new/stage" "$out"
mv "$new" "$out"
echo "$out/image.tar"
