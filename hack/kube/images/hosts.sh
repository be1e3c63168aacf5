#!/usr/bin/env bash
# Writes containerd registry host configuration (config_path format of
# containerd 1.5+, CERTS_DIR/<host>/hosts.toml) for every registry host of
# the test images, sending every pull for that host to the local registry
# (hack/kube/registry) at 127.0.0.1:PORT over plain HTTP, under the host's
# own prefix: docker.io/library/ubuntu:24.04 is fetched from
# http://127.0.0.1:PORT/v2/docker.io/library/ubuntu/manifests/24.04
# (override_path: the URL's path is the API root), where the registry keeps
# it. Both the mirror entry and the fallback `server` are the local
# registry, so no pull ever leaves the machine, even for a reference the
# registry does not have (that pull fails with "not found").
#
# Usage: hosts.sh CERTS_DIR PORT [REFS_FILE]
#   REFS_FILE: full references, one per line (IMAGES/refs.txt); default: the
#   references of images.txt here (the same set).
# containerd: [plugins."io.containerd.grpc.v1.cri".registry] config_path = CERTS_DIR;
# ctr: ctr images pull --hosts-dir CERTS_DIR REF.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
(($# == 2 || $# == 3)) || { echo "usage: $0 CERTS_DIR PORT [REFS_FILE]" >&2; exit 2; }
dir=$1 port=$2
if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
  echo "hosts.sh: bad port: $port" >&2
  exit 2
fi
if (($# == 3)); then
  refs=$(sed 's/#.*//' "$3" | awk 'NF { print $1 }')
else
  refs=$(sed 's/#.*//' "$here/images.txt" | awk 'NF { print $2 }')
fi
[[ -n $refs ]] || { echo "hosts.sh: no references" >&2; exit 1; }

for host in $(printf '%s\n' "$refs" | cut -d/ -f1 | sort -u); do
  url=http://127.0.0.1:$port/v2/$host
  mkdir -p "$dir/$host"
  cat >"$dir/$host/hosts.toml.tmp" <<EOF
# Written by hack/kube/images/hosts.sh: $host's images come from the local
# read-only registry of the test cluster, never from $host.
server = "$url"
override_path = true

[host."$url"]
  capabilities = ["pull", "resolve"]
  override_path = true
EOF
  mv "$dir/$host/hosts.toml.tmp" "$dir/$host/hosts.toml"
  echo "$dir/$host/hosts.toml"
done
