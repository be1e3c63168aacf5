#!/usr/bin/env bash
# Builds (or finds) the images and the registry tools, then has a private
# containerd pull and unpack every reference through hosts.toml from the
# registry and run the view images' Flux (hack/kube/registry's
# TestContainerdPullImages), after the module's own tests, vet and
# staticcheck. Prints the build and pull timings.
#
# Usage: hack/kube/images/check.sh [FLUX_SRC]
# Needs root, containerd, runc (.ci/apt/kube-images.txt) and Go.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
staticcheck=${STATICCHECK:-$repo/bin/staticcheck}

start=$SECONDS
images=$(bash "$here/build.sh" "$@" | tail -n 1)
echo "check: images in $images ($((SECONDS - start)) s)"
du -sh "$images/oci" | sed 's/^/check: layout size /'

cd "$repo/hack/kube/registry"
test -z "$(gofmt -l .)" || { gofmt -l .; echo "check: gofmt: files above need formatting" >&2; exit 1; }
go vet ./...
if [[ -x $staticcheck ]]; then "$staticcheck" ./...; else echo "check: no $staticcheck (make tools), staticcheck not run" >&2; fi
go test -count=1 ./...
JOBSET_FLUX_IMAGES=$images go test -count=1 -v -run 'TestContainerdPullImages$' ./cmd/registry
