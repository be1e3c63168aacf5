#!/usr/bin/env bash
# Builds (or finds in the cache) the layer of the MPI app image
# (jobset-flux.test/lammps-mpi:bookworm): the Debian packages in
# mpi-packages.txt installed over the base's rootfs (base.sh), stored as
# what changed: every file, link or directory that is new or differs from
# the base, so the image is the base layer (shared with the other images)
# plus this one. A package that removed a file of the base would need a
# whiteout, which ocibuild does not write: the build fails instead.
#
# Usage: mpi.sh BASE_DIR   (base.sh's output: BASE_DIR/rootfs)
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the result under
#   kube-images/mpi/<key>, <key> hashing this script, the package list, the
#   base's key and the mirror. DEBIAN_MIRROR overrides the mirror.
# Prints the cache directory as its last line: layer/ (the changes) and
# packages.txt (the packages added, with their versions).
# Needs root (chroot, a private mount namespace for /proc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
base=${1:?usage: mpi.sh BASE_DIR}

log() { printf 'kube-images mpi: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# entries ROOT: every entry under ROOT, one a line: its path, a tab, then
# what an image layer keeps of it (type, mode, owners, size, time, link).
entries() {
  (cd "$1" && find . -printf '%p\t%y %m %U %G %s %T@ %l\n') | LC_ALL=C sort
}

# write_changes OLD NEW DIR: writes into DIR every entry of NEW that OLD
# lacks or holds otherwise, with all its parent directories as NEW has
# them (so the layer keeps their modes). Fails when NEW lacks an entry of
# OLD: that would need a whiteout.
write_changes() {
  local old=$1 new=$2 dir=$3 lists
  lists=$(mktemp -d)
  entries "$old" >"$lists/old"
  entries "$new" >"$lists/new"
  comm -23 <(cut -f1 "$lists/old" | LC_ALL=C sort) <(cut -f1 "$lists/new" | LC_ALL=C sort) >"$lists/removed"
  if [[ -s $lists/removed ]]; then
    die "the packages removed $(wc -l <"$lists/removed") entries of the base (first: $(head -n 1 "$lists/removed")): a layer cannot express that"
  fi
  comm -13 "$lists/old" "$lists/new" | cut -f1 |
    awk -F/ '{ p = $1; for (i = 2; i <= NF; i++) { p = p "/" $i; print p } }' |
    LC_ALL=C sort -u >"$lists/changed"
  mkdir -p "$dir"
  tar -C "$new" --numeric-owner --xattrs --xattrs-include='security.*' --no-recursion \
    -cf - -T "$lists/changed" | tar -C "$dir" --numeric-owner --xattrs --xattrs-include='security.*' -xpf -
  log "$(wc -l <"$lists/changed") entries differ from the base"
  rm -rf "$lists"
}

[[ $(id -u) == 0 ]] || die "run as root (chroot)"
[[ -f $base/.complete && -d $base/rootfs ]] || die "$base is not a base built by base.sh"
mapfile -t pkgs < <(sed 's/#.*//' "$here/mpi-packages.txt" | awk 'NF' | sort -u)

key=$( { sha256sum "$here/mpi.sh" | cut -d' ' -f1
         basename "$base"
         printf '%s\n' "${DEBIAN_MIRROR:-}" "${pkgs[@]}"
       } | sha256sum | cut -c1-16)
out=$cache_root/kube-images/mpi/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
root=$tmp/rootfs
cp -a "$base/rootfs" "$root"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"  # start no services
chmod 0755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"

log "installing ${#pkgs[@]} packages over the base: ${pkgs[*]}"
# shellcheck disable=SC2016 # expanded by the inner bash
unshare --mount --propagation private -- bash -euo pipefail -c '
  root=$1; shift
  mount -t proc proc "$root/proc"
  # The base keeps an empty /dev (the runtime makes one); apt needs /dev/null.
  mount --bind /dev "$root/dev"
  export DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin
  chroot "$root" apt-get -o Acquire::Retries=3 update -qq
  chroot "$root" apt-get -o Acquire::Retries=3 install -y -qq --no-install-recommends "$@"
  chroot "$root" apt-get clean
' _ "$root" "${pkgs[@]}" >"$tmp/install.log" 2>&1 ||
  die "package install failed; log in $tmp/install.log"

# What differs between two builds, as base.sh removes it from the base.
rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf" \
  "$root"/etc/{passwd,group,shadow,gshadow,subuid,subgid}- \
  "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old \
  "$root/var/cache/ldconfig/aux-cache"
rm -rf "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/apt/* \
  "${root:?}"/tmp/* "${root:?}"/run/* "${root:?}"/var/log/*

chroot "$root" dpkg-query -W -f "\${Package} \${Version}\n" | sort >"$tmp/all-packages.txt"
comm -13 "$base/packages.txt" "$tmp/all-packages.txt" >"$tmp/packages.txt"
write_changes "$base/rootfs" "$root" "$tmp/layer"
rm -rf "$root" "$tmp/all-packages.txt"

touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
log "built: $out ($(du -sm "$out/layer" | cut -f1) MB over the base, $(wc -l <"$out/packages.txt") packages)"
echo "$out"
