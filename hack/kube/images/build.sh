#!/usr/bin/env bash
# Builds (or finds in the cache) the container images of the test cluster,
# as one OCI image layout, without Docker (hack/kube/registry's ocibuild, on
# go-containerregistry): every image jobset-flux's examples and tests name,
# under its real reference (images.json, roles in images.txt, what each is
# in README.md). The registry in hack/kube/registry
# serves them to containerd, so rendered JobSets run unchanged.
#
# Usage: hack/kube/images/build.sh [FLUX_SRC]
#   FLUX_SRC: the Flux source tarballs for hack/flux-view/pmix.sh (default
#   as mk/flux.mk: ../shared/flux-src beside the repository, else
#   /work/shared/flux-src). The view roots are pmix.sh's: full/ carries
#   flux-pmix (as the flux-views images do), core-only/ does not.
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the result under
#   kube-images/<key>; <key> hashes pmix.sh's key (which hashes
#   build.sh's), the tools' build key, every file here but the docs and
#   hosts.sh, and the host's busybox. The Debian base is cached on its own
#   (base.sh).
# Prints the directory IMAGES as its last line: IMAGES/oci/ (the layout,
# each manifest annotated org.opencontainers.image.ref.name = full ref),
# IMAGES/refs.txt (one ref per line), IMAGES/base-packages.txt (the base's
# packages and versions), IMAGES/mpi-packages.txt (what the MPI image adds
# to it) and IMAGES/build.log.
# Needs root (debootstrap, chroot; the view build's apt-get).
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
busybox=${BUSYBOX:-/bin/busybox}

log() { printf 'kube-images: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# stage_busybox DIR: Debian's static busybox with a link per applet where
# busybox --list-full puts it, minimal account files, /tmp and /root: what
# the busybox image's users here need (sh, tail, echo).
stage_busybox() {
  local dir=$1 applet
  install -d -m 0755 "$dir/bin" "$dir/etc"
  install -d -m 1777 "$dir/tmp"
  install -d -m 0700 "$dir/root"
  install -m 0755 "$busybox" "$dir/bin/busybox"
  install -m 0644 "$here/standins/busybox/etc/passwd" "$here/standins/busybox/etc/group" "$dir/etc/"
  for applet in $("$busybox" --list-full); do
    [[ -e $dir/$applet ]] && continue
    mkdir -p "$(dirname "$dir/$applet")"
    ln -s /bin/busybox "$dir/$applet"
  done
}

# stage_ubuntu_user BASE DIR: the base's account files with the ubuntu
# user and group (1000) added and its home, as Ubuntu 24.04 images have
# them (examples/interactive runs as uid 1000).
stage_ubuntu_user() {
  local base=$1 dir=$2 f
  install -d -m 0755 "$dir/etc" "$dir/home"
  install -d -m 0750 -o 1000 -g 1000 "$dir/home/ubuntu"
  for f in passwd group shadow gshadow; do
    cp -p "$base/etc/$f" "$dir/etc/$f"
  done
  echo 'ubuntu:x:1000:1000:Ubuntu:/home/ubuntu:/bin/bash' >>"$dir/etc/passwd"
  echo 'ubuntu:x:1000:' >>"$dir/etc/group"
  echo 'ubuntu:!:19518:0:99999:7:::' >>"$dir/etc/shadow"
  echo 'ubuntu:!::' >>"$dir/etc/gshadow"
}

[[ $(id -u) == 0 ]] || die "run as root (debootstrap and chroot)"
# The tools this build runs (also in .ci/apt/kube-images.txt), installed
# here too so the script works on its own, as hack/flux-view's does.
missing=()
for p in debootstrap busybox-static binutils util-linux; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ -x $busybox ]] || die "$busybox not found: install Debian's busybox-static (.ci/apt/kube-images.txt)"
flux_src=${1:-${FLUX_SRC:-}}
if [[ -z $flux_src ]]; then
  flux_src=$repo/../shared/flux-src
  [[ -d $flux_src ]] || flux_src=/work/shared/flux-src
fi

# Both are cached by content: quick when built. pmix.sh's key hashes
# build.sh's, so the key below follows both.
view=$(bash "$repo/hack/flux-view/pmix.sh" "$flux_src" | tail -n 1)
tools=$(dirname "$(bash "$repo/hack/kube/registry/build.sh" | tail -n 1)")
[[ -d $view/full/opt/view && -d $view/core-only/opt/view ]] || die "no view roots in $view"
# The view's links are absolute (/opt/software/...), valid in the image only.
[[ -L $view/full/opt/view/etc/flux/shell/lua.d/pmix.lua ]] ||
  die "the full view in $view has no flux-pmix (etc/flux/shell/lua.d/pmix.lua): see hack/flux-view/pmix.sh"

mkdir -p "$cache_root/kube-images"
exec 9>"$cache_root/kube-images/.lock"
flock 9  # one build at a time; a second caller then finds the cache

key=$( { echo "flux-view $(basename "$view")"
         echo "tools $(basename "$tools")"
         echo "mirror ${DEBIAN_MIRROR:-} ${DEBIAN_SECURITY_MIRROR:-}"
         sha256sum "$busybox" | cut -d' ' -f1
         cd "$here" && find . -type f ! -name README.md ! -name hosts.sh ! -name images.txt -print0 |
           LC_ALL=C sort -z | xargs -0 sha256sum
         find . -type f -perm /111 | LC_ALL=C sort   # the execute bits ocibuild keeps
       } | sha256sum | cut -c1-16)
out=$cache_root/kube-images/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi
start=$SECONDS
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"

log "libraries the Flux view needs (view-deps.sh)"
deps_list=$(bash "$here/view-deps.sh" "$view/full/opt/software")  # fails the build if it fails
mapfile -t deps <<<"$deps_list"
base=$(bash "$here/base.sh" "${deps[@]}" | tail -n 1)
mpi=$(bash "$here/mpi.sh" "$base" | tail -n 1)

stage=$tmp/stage
stage_busybox "$stage/busybox"
stage_ubuntu_user "$base/rootfs" "$stage/ubuntu-user"
install -D -m 0755 "$tools/pause" "$stage/pause/pause"

log "writing the OCI layout"
BASE_ROOT=$base/rootfs MPI_LAYER=$mpi/layer VIEW=$view STANDINS=$here/standins STAGE=$stage \
  "$tools/ocibuild" -spec "$here/images.json" -out "$tmp" 2>&1 | tee "$tmp/build.log" >&2
cp "$base/packages.txt" "$tmp/base-packages.txt"
cp "$mpi/packages.txt" "$tmp/mpi-packages.txt"
rm -rf "$stage"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
log "built in $((SECONDS - start)) s: $out ($(du -sm "$out/oci" | cut -f1) MB)"
echo "$out"
