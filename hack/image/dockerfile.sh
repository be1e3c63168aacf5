#!/usr/bin/env bash
# Builds the top-level Dockerfile with the docker engine at DOCKER_HOST
# without a registry or network, as CI must: the Dockerfile's public bases
# are replaced by stand-ins made from what this machine has, imported into
# the engine when missing (each tag names what went into it):
#
#   GO_IMAGE    local/go:<go version>-<hash>: the host's Go toolchain (GOROOT)
#               and Debian's busybox-static as /bin/sh with its applets (the
#               build stage's RUN lines are shell form), GOPATH /go, /tmp
#   BASE_IMAGE  local/static:<digest>: the static base layer of `make image`'s
#               image (IMAGE_OUT), so the two images share the same
#               passwd/group, CA bundle and /tmp
#
# The modules come from the host: _out/dockerfile/gomod/ holds vendor/
# (`go mod vendor`) and imports.txt (the packages outside this module that
# ./fn imports, which the Dockerfile compiles in a layer of their own),
# passed as OFFLINE_MODULES and removed after the build. The build runs
# with --network none.
#
# Usage: hack/image/dockerfile.sh REF
#   IMAGE_OUT                the output of `make image` (its build.log names the static layer)
#   VERSION, COMMIT          the release metadata, passed as build args
set -euo pipefail
umask 022

target=${1:?usage: $0 REF}
: "${IMAGE_OUT:?IMAGE_OUT not set}" "${VERSION:?VERSION not set}" "${COMMIT:?COMMIT not set}"
repo=$(cd "$(dirname "$0")/../.." && pwd)
busybox=${BUSYBOX:-/bin/busybox}
goroot=$(go env GOROOT)

log() { printf 'dockerfile: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Reproducible tar: fixed owner, order and times.
dtar() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 "$@"; }

have_image() { docker image inspect --format '{{.Id}}' "$1" >/dev/null 2>&1; }

work=$(mktemp -d)
# The vendor tree goes too: the engine keeps what it copied, and a tree of
# third-party sources in the checkout would meet every `gofmt -l .`.
trap 'rm -rf "$work" "$repo/_out/dockerfile"' EXIT

# gomod: written fresh each time, as a new import of an already required
# module changes both files without touching go.mod.
gomod() {
  local dest=$repo/_out/dockerfile/gomod
  rm -rf "$dest.new"
  mkdir -p "$dest.new"
  (cd "$repo" &&
    go mod vendor -o "$dest.new/vendor" &&
    go list -deps -f '{{with .Module}}{{if not .Main}}{{$.ImportPath}}{{end}}{{end}}' ./fn >"$dest.new/imports.txt")
  [[ -s $dest.new/imports.txt ]] || die "./fn imports no package outside this module?"
  rm -rf "$dest"
  mv "$dest.new" "$dest"
}

# go_image: the builder stand-in's reference, imported when missing.
go_image() {
  [[ -x $busybox ]] || die "$busybox not found: install Debian's busybox-static (.ci/apt/image.txt)"
  local hash ref a
  hash=$({ go version; echo "$goroot"; stat -c %Y "$goroot/VERSION"; sha256sum <"$busybox"; } | sha256sum | cut -c1-12)
  ref=local/go:$(go env GOVERSION | sed 's/^go//')-$hash
  if ! have_image "$ref"; then
    log "importing $ref from $goroot and $busybox"
    mkdir -p "$work/go/bin" "$work/go/tmp"
    chmod 1777 "$work/go/tmp"
    install -m 0755 "$busybox" "$work/go/bin/busybox"
    for a in $("$busybox" --list); do
      [[ -e $work/go/bin/$a ]] || ln -s busybox "$work/go/bin/$a"
    done
    dtar -c -C "$work/go" bin tmp -C / "${goroot#/}" |
      docker import \
        --change "ENV PATH=/go/bin:$goroot/bin:/usr/local/bin:/usr/bin:/bin" \
        --change "ENV GOPATH=/go" \
        --change "ENV GOTOOLCHAIN=local" \
        --message "Go toolchain from $goroot with busybox" \
        - "$ref" >/dev/null
  fi
  echo "$ref"
}

# base_image: the static base stand-in's reference, imported when missing.
base_image() {
  local digest ref
  digest=$(sed -n 's/^ocibuild: layer static: sha256:\([0-9a-f]*\),.*/\1/p' "$IMAGE_OUT/build.log")
  [[ -n $digest && -f $IMAGE_OUT/oci/blobs/sha256/$digest ]] ||
    die "no static layer in $IMAGE_OUT (make image writes it)"
  ref=local/static:${digest:0:12}
  if ! have_image "$ref"; then
    log "importing $ref from $IMAGE_OUT's static layer"
    docker import --message "the static base layer of make image" \
      "$IMAGE_OUT/oci/blobs/sha256/$digest" "$ref" >/dev/null
  fi
  echo "$ref"
}

gomod
go_ref=$(go_image)
base_ref=$(base_image)
docker build --network none \
  --build-arg GO_IMAGE="$go_ref" \
  --build-arg BASE_IMAGE="$base_ref" \
  --build-arg OFFLINE_MODULES=_out/dockerfile/gomod/ \
  --build-arg GOPROXY=off \
  --build-arg VERSION="$VERSION" \
  --build-arg COMMIT="$COMMIT" \
  -t "$target" "$repo"
