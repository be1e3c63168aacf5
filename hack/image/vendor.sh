#!/usr/bin/env bash
# Writes what the Dockerfile's build stage needs to build without network
# into DEST (make image uses _out/image/gomod), which the Dockerfile copies
# to the module root:
#
#   DEST/vendor/              `go mod vendor` from the host's module cache
#   DEST/imagedeps/main.go    a main package importing every package outside
#                             this module that ./fn imports, so the build
#                             stage compiles all dependencies in a layer of
#                             their own, reused until they change
#
# DEST is replaced as a whole, and only when everything was written.
set -euo pipefail

dest=${1:?usage: $0 DEST}
cd "$(dirname "$0")/../.."

new=$dest.new
rm -rf "$new"
mkdir -p "$new"
go mod vendor -o "$new/vendor"
hack/image/imagedeps.sh "$new/imagedeps"

rm -rf "$dest"
mv "$new" "$dest"
