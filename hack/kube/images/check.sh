#!/usr/bin/env bash
# Builds (or finds) the images and the registry tools, then runs
# hack/kube/registry's tests in one go test run (make lint formats, vets and
# staticchecks the module with every other one), among them
# TestContainerdPullImages: a private containerd pulls and unpacks every
# reference through hosts.toml from the registry and runs the view images'
# Flux. Prints the build timing.
#
# Usage: hack/kube/images/check.sh [FLUX_SRC]
# Needs root, containerd, runc (.ci/apt/kube-images.txt) and Go.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

start=$SECONDS
images=$(bash "$here/build.sh" "$@" | tail -n 1)
echo "check: images in $images ($((SECONDS - start)) s)"
du -sh "$images/oci" | sed 's/^/check: layout size /'

cd "$repo/hack/kube/registry"
# One run: with JOBSET_FLUX_IMAGES set the pull test pulls the images built
# above (it used to run a second time, on images it built itself: ~65 s).
JOBSET_FLUX_IMAGES=$images go test -count=1 ./...
