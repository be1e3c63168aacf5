#!/usr/bin/env bash
# Prints the Debian packages (one per line, sorted) that hold the shared
# libraries the ELF files under the given roots need and do not carry
# themselves: readelf's NEEDED entries, found through this host's ldconfig
# cache, owned per `dpkg -S`. The Flux view is built on this host against
# Debian's libraries, so an image that runs it needs these packages.
#
# Usage: view-deps.sh ROOT...
set -euo pipefail

(($#)) || { echo "usage: $0 ROOT..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# readelf -d on every file (it skips what is not ELF): what they need, and
# what the roots provide themselves (library file names and SONAMEs).
for root in "$@"; do
  find "$root" -type f -print0
done | xargs -0 -r readelf -d 2>/dev/null >"$tmp/dynamic" || true
sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' "$tmp/dynamic" | sort -u >"$tmp/needed"
{ for root in "$@"; do find "$root" -name '*.so*' -printf '%f\n'; done
  sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p' "$tmp/dynamic"
} | sort -u >"$tmp/provided"

# Looked up in files, not pipes into head/awk exit: under pipefail a writer
# killed by SIGPIPE would end the loop early and silently drop packages.
ldconfig -p >"$tmp/ldcache"
: >"$tmp/packages"
comm -23 "$tmp/needed" "$tmp/provided" >"$tmp/wanted"
while IFS= read -r so; do
  path=$(awk -v so="$so" '$1 == so && /x86-64/ && !found { print $NF; found = 1 }' "$tmp/ldcache")
  [[ -n $path ]] || { echo "view-deps: $so: not in this host's ldconfig cache" >&2; exit 1; }
  # Debian 12 registers some libraries under /lib, others under /usr/lib.
  pkg=""
  for p in "$path" "/usr${path#/usr}" "${path#/usr}" "$(readlink -f "$path")"; do
    if dpkg -S "$p" >"$tmp/owner" 2>/dev/null; then
      pkg=$(awk -F: 'NR == 1 { print $1 }' "$tmp/owner")
      break
    fi
  done
  [[ -n $pkg ]] || { echo "view-deps: $so ($path): no Debian package owns it" >&2; exit 1; }
  printf '%s\n' "$pkg" >>"$tmp/packages"
done <"$tmp/wanted"
sort -u "$tmp/packages"
