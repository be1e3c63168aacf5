#!/usr/bin/env bash
# Builds (or finds in the cache) the Debian bookworm userland every app image
# of the test cluster starts from: `debootstrap --variant=minbase` from
# Debian's repository, plus base-packages.txt and the extra packages named
# on the command line (the libraries the Flux view needs, from
# view-deps.sh), cleaned of what varies from one build to the next (logs,
# apt lists and caches, the host's hostname, today's date in /etc/shadow).
#
# Usage: base.sh [PACKAGE...]
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the result under
#   kube-images/base/<key>, where <key> hashes this script, the package list,
#   the extra packages and the mirror. DEBIAN_MIRROR overrides the mirror.
# Prints the cache directory as its last line: rootfs/ and packages.txt
# (every installed package with its version).
# Needs root (debootstrap, chroot, a private mount namespace for /proc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

log() { printf 'kube-images base: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $(id -u) == 0 ]] || die "run as root (debootstrap and chroot)"
command -v debootstrap >/dev/null || die "debootstrap not found: install Debian's debootstrap (.ci/apt/kube-images.txt)"
mapfile -t pkgs < <( { sed 's/#.*//' "$here/base-packages.txt"; printf '%s\n' "$@"; } | awk 'NF' | sort -u)

key=$( { sha256sum "$here/base.sh" | cut -d' ' -f1
         printf '%s\n' "$mirror" "$security_mirror" "${pkgs[@]}"
       } | sha256sum | cut -c1-16)
out=$cache_root/kube-images/base/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
root=$tmp/rootfs
log "debootstrap --variant=minbase bookworm from $mirror (~80 s)"
# A second try after a failure: a mirror hiccup should not fail a CI run.
for attempt in 1 2; do
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 && break
  ((attempt == 1)) || die "debootstrap failed twice; log in $tmp/debootstrap.log"
  log "debootstrap failed, trying again"
  rm -rf "${root:?}"
done

# The same suites the host uses, so the libraries match the ones the view
# was linked against on this host.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security_mirror bookworm-security main
EOF
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"  # start no services
chmod 0755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"

log "installing ${#pkgs[@]} packages: ${pkgs[*]}"
# /proc only in a private mount namespace: gone when the namespace ends,
# even if the install fails half way.
# shellcheck disable=SC2016 # expanded by the inner bash
unshare --mount --propagation private -- bash -euo pipefail -c '
  root=$1 list=$2; shift 2
  mount -t proc proc "$root/proc"
  export DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin
  chroot "$root" apt-get -o Acquire::Retries=3 update -qq
  chroot "$root" apt-get -o Acquire::Retries=3 install -y -qq --no-install-recommends "$@"
  chroot "$root" apt-get clean
  chroot "$root" dpkg-query -W -f "\${Package} \${Version}\n" | sort >"$list"
' _ "$root" "$tmp/packages.txt" "${pkgs[@]}" >"$tmp/install.log" 2>&1 ||
  die "package install failed; log in $tmp/install.log"

# What differs between two builds of the same packages, or belongs to the
# host or to the container runtime rather than to the image.
rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf" "$root/etc/hostname" \
  "$root"/etc/{passwd,group,shadow,gshadow,subuid,subgid}- \
  "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old \
  "$root/var/cache/ldconfig/aux-cache" "$root/etc/machine-id"
rm -rf "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/apt/* "${root:?}"/dev/* \
  "${root:?}"/tmp/* "${root:?}"/run/* "${root:?}"/var/log/*
# Each account's last password change would be the day the build ran:
# day 19518 (2023-06-10, bookworm's release) instead.
sed -i -E 's/^([^:]*:[^:]*:)[0-9]+:/\119518:/' "$root/etc/shadow"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"

touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
log "built: $out ($(du -sm "$out/rootfs" | cut -f1) MB)"
echo "$out"
