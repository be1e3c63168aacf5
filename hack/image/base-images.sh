#!/usr/bin/env bash
# Makes the two local base images the Dockerfile is built from in CI, where
# no registry is reachable. Both come from files already on this machine:
#
#   local/go:<go version>   the host's Go toolchain (/usr/local/go) plus /tmp;
#                           no shell: the Dockerfile's build stage runs only
#                           exec-form RUN instructions.
#   local/static:nobody     a distroless-style static base: /etc/passwd and
#                           /etc/group with root and nobody (65534), the
#                           host's CA bundle, /tmp (1777). Nothing else.
#
# Prints the two references as GO_IMAGE=... and BASE_IMAGE=... lines.
#
# `base-images.sh sidecar` makes and prints the stand-ins of
# deploy/argocd/Dockerfile.sidecar's bases instead, which need a shell
# (shell-form RUN; jobset-flux-cmp is a POSIX sh script using find and grep):
#
#   local/go-busybox:<go version>  local/go plus Debian's busybox-static as
#                                  /bin/busybox with its applets in /bin
#   local/busybox:argocd           busybox and its applets, passwd/group
#                                  with root, nobody and argocd (999), the
#                                  CA bundle, /tmp; user 999
#
# Each image carries a label with a hash of what went into it and is
# re-imported only when that changes. Needs a running engine (docker CLI).
set -euo pipefail

mode=${1:-function}
[[ $mode == function || $mode == sidecar ]] || { echo "usage: $0 [function|sidecar]" >&2; exit 2; }
busybox=${BUSYBOX:-/bin/busybox}

goroot=${GOROOT_SRC:-/usr/local/go}
certs=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
label=org.jobset-flux.base.inputs

go_version=$("$goroot/bin/go" env GOVERSION) # go1.26.8
go_ref=local/go:${go_version#go}
base_ref=local/static:nobody

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

current_label() { docker image inspect --format "{{index .Config.Labels \"$label\"}}" "$1" 2>/dev/null || true; }

# Deterministic tar: fixed owner, order and times, so the same inputs give
# the same hash (and, for the base, the same layer digest).
dtar() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=posix --pax-option=delete=atime,delete=ctime "$@"; }

# --- local/go ---------------------------------------------------------------
go_inputs="$go_version $goroot $(stat -c %Y "$goroot/VERSION")"
go_hash=$(printf '%s' "$go_inputs" | sha256sum | cut -c1-16)
if [[ $mode != sidecar && $(current_label "$go_ref") != "$go_hash" ]]; then
  mkdir -p "$work/go/tmp"
  chmod 1777 "$work/go/tmp"
  echo "base-images: importing $go_ref from $goroot" >&2
  # Imported untagged and tagged only when tar succeeded (pipefail), so a
  # failed tar never leaves a half image under the label of a good one.
  id=$(dtar -c -C "$work/go" tmp -C / "${goroot#/}" |
    docker import \
      --change "ENV PATH=/go/bin:$goroot/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      --change "ENV GOPATH=/go" \
      --change "ENV GOTOOLCHAIN=local" \
      --change "LABEL $label=$go_hash" \
      --message "Go toolchain from $goroot ($go_version)" \
      -)
  docker tag "$id" "$go_ref"
fi

# busybox_tree DIR: /bin/busybox and a symbolic link for each applet.
busybox_tree() {
  [[ -x $busybox ]] || { echo "base-images: $busybox not found; install Debian busybox-static (.ci/apt/image.txt)" >&2; return 1; }
  mkdir -p "$1/bin"
  install -m 0755 "$busybox" "$1/bin/busybox"
  local a
  for a in $("$busybox" --list); do
    [[ $a == busybox || -e $1/bin/$a ]] || ln -s busybox "$1/bin/$a"
  done
}

if [[ $mode == sidecar ]]; then
  # --- local/go-busybox ------------------------------------------------------
  gosh_ref=local/go-busybox:${go_version#go}
  busybox_tree "$work/gosh"
  mkdir -p "$work/gosh/tmp"
  chmod 1777 "$work/gosh/tmp"
  gosh_hash=$(printf '%s %s' "$go_inputs" "$(sha256sum <"$busybox")" | sha256sum | cut -c1-16)
  if [[ $(current_label "$gosh_ref") != "$gosh_hash" ]]; then
    echo "base-images: importing $gosh_ref from $goroot and $busybox" >&2
    id=$(dtar -c -C "$work/gosh" bin tmp -C / "${goroot#/}" |
      docker import \
        --change "ENV PATH=/go/bin:$goroot/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        --change "ENV GOPATH=/go" \
        --change "ENV GOTOOLCHAIN=local" \
        --change "LABEL $label=$gosh_hash" \
        --message "Go toolchain from $goroot ($go_version) with busybox" \
        -)
    docker tag "$id" "$gosh_ref"
  fi

  # --- local/busybox:argocd --------------------------------------------------
  sroot=$work/sidecar
  busybox_tree "$sroot"
  mkdir -p "$sroot/etc/ssl/certs" "$sroot/tmp" "$sroot/home/argocd"
  chmod 1777 "$sroot/tmp"
  cat >"$sroot/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
argocd:x:999:999:argocd:/home/argocd:/bin/sh
PASSWD
  cat >"$sroot/etc/group" <<'GROUP'
root:x:0:
nobody:x:65534:
argocd:x:999:
GROUP
  install -m 0644 "$certs" "$sroot/etc/ssl/certs/ca-certificates.crt"
  chmod 0644 "$sroot/etc/passwd" "$sroot/etc/group"
  dtar -c -C "$sroot" bin etc home tmp >"$work/sidecar.tar"
  sidecar_ref=local/busybox:argocd
  sidecar_hash=$(sha256sum <"$work/sidecar.tar" | cut -c1-16)
  if [[ $(current_label "$sidecar_ref") != "$sidecar_hash" ]]; then
    echo "base-images: importing $sidecar_ref (busybox, passwd/group with argocd 999, CA bundle, /tmp)" >&2
    docker import \
      --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
      --change "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" \
      --change "USER 999:999" \
      --change "LABEL $label=$sidecar_hash" \
      --message "busybox base for the Argo CD plugin sidecar" \
      "$work/sidecar.tar" "$sidecar_ref" >/dev/null
  fi
  echo "GO_IMAGE=$gosh_ref"
  echo "BASE_IMAGE=$sidecar_ref"
  exit 0
fi

# --- local/static:nobody ----------------------------------------------------
root=$work/static
mkdir -p "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nobody:x:65534:
GROUP
install -m 0644 "$certs" "$root/etc/ssl/certs/ca-certificates.crt"
chmod 0755 "$root" "$root/etc" "$root/etc/ssl" "$root/etc/ssl/certs"
chmod 0644 "$root/etc/passwd" "$root/etc/group"
dtar -c -C "$root" etc tmp >"$work/static.tar"
base_hash=$(sha256sum <"$work/static.tar" | cut -c1-16)
if [[ $(current_label "$base_ref") != "$base_hash" ]]; then
  echo "base-images: importing $base_ref (passwd/group with nobody, CA bundle, /tmp)" >&2
  docker import \
    --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
    --change "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" \
    --change "USER 65534:65534" \
    --change "LABEL $label=$base_hash" \
    --message "static base: root and nobody, CA bundle, /tmp" \
    "$work/static.tar" "$base_ref" >/dev/null
fi

echo "GO_IMAGE=$go_ref"
echo "BASE_IMAGE=$base_ref"
