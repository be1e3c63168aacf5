#!/usr/bin/env bash
# Adds flux-pmix (the job shell plugin that serves PMIx, which Open MPI 5 and
# Open MPI 4 with an external PMIx need) to the Flux view roots of build.sh,
# as a layer of its own: build.sh's result (flux-core, Fluxion) stays cached
# under its own key, and only this layer is rebuilt when flux-pmix or this
# script changes.
#
# flux-pmix is built against the view's flux-core (pkg-config from flux-core's
# prefix, an RPATH to its lib/ as Spack links) and Debian's PMIx
# (libpmix-dev), installed with DESTDIR into a Spack-style prefix of its own,
# /opt/software/<arch>/<compiler>/flux-pmix-<version>-<hash>, with what
# Spack's package adds: etc/flux/shell/lua.d/pmix.lua, a plugin.load of
# lib/flux/shell/plugins/pmix.so. Spack puts that lua.d in
# FLUX_SHELL_RC_PATH of the package's run environment (a view's activate
# script exports it); a copied view carries no such variable, which is what
# the function's entrypoint has to make up for.
#
# Two roots come out, like build.sh's:
#   full/       flux-core + Fluxion + flux-pmix + the stand-in python3,
#               a view with a hash of its own
#   core-only/  build.sh's core-only/ unchanged (no Fluxion, no flux-pmix)
#
# Usage: hack/flux-view/pmix.sh [SRC_DIR]  (SRC_DIR as for build.sh; it also
#   holds flux-pmix-<v>.tar.xz, listed in SHA256SUMS)
# The result is cached in $JOBSET_FLUX_CACHE/flux-view-pmix/<key>, the key
# hashing build.sh's key, the flux-pmix tarball, this script and its package
# list. Prints that directory (holding full/ and core-only/) as its last line.
# Needs root (apt-get, a private mount namespace for the build).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=$(cd "${1:-${FLUX_SRC:-$repo/../shared/flux-src}}" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
jobs=${FLUX_BUILD_JOBS:-$(nproc)}

log() { printf 'flux-view-pmix: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- the base layer: flux-core and Fluxion, cached by build.sh ----------------
base=$(bash "$here/build.sh" "$src" | tail -n 1)
[[ -f $base/.complete && -f $base/manifest ]] || die "build.sh printed $base, which is not a complete view build"
base_key=$(basename "$base")

# --- inputs, checked -------------------------------------------------------
tars=("$src"/flux-pmix-*.tar.xz)
[[ -f ${tars[0]} ]] || die "no flux-pmix-<version>.tar.xz in $src"
pmix_tar=$(basename "${tars[0]}")
grep -qE "  \\*?$pmix_tar\$" "$src/SHA256SUMS" || die "$pmix_tar is not listed in $src/SHA256SUMS"
(cd "$src" && grep -E "  \\*?$pmix_tar\$" SHA256SUMS | sha256sum --check --quiet --strict) ||
  die "checksum mismatch for $pmix_tar in $src (see SHA256SUMS)"
pmix_version=${pmix_tar#flux-pmix-}; pmix_version=${pmix_version%.tar.xz}
pmix_sum=$(grep -E "  \\*?$pmix_tar\$" "$src/SHA256SUMS" | cut -c1-64)

# --- Debian packages (checked on every run: pmix.so links libpmix at run time) --
mapfile -t pkgs < <(sed 's/#.*//' "$here/pmix-packages.txt" | awk 'NF')
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

key=$( { echo "base $base_key"; echo "$pmix_sum  $pmix_tar"
         sha256sum "$here/pmix.sh" "$here/pmix-packages.txt" | cut -d' ' -f1
       } | sha256sum | cut -c1-16)
out=$cache_root/flux-view-pmix/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

# --- Spack-style names, from the base layer's manifest -------------------------
manifest() { awk -v n="$1" '$1 == n { print $3 }' "$base/manifest"; }
arch=$(awk '$1 == "arch" { print $2 }' "$base/manifest")
compiler=$(awk '$1 == "compiler" { print $2 }' "$base/manifest")
core_prefix=$(manifest flux-core)
[[ -n $arch && -n $compiler && -n $core_prefix ]] || die "$base/manifest lacks arch, compiler or flux-core"
spack_hash() { # the same 32-character base32 hash build.sh names prefixes with
  printf '%s' "$*" | sha256sum | cut -c1-40 | xxd -r -p | base32 | tr '[:upper:]' '[:lower:]' | cut -c1-32
}
pmix_prefix=/opt/software/$arch/$compiler/flux-pmix-$pmix_version-$(spack_hash "flux-pmix $pmix_sum $core_prefix")

work=$cache_root/flux-view-pmix/$key.work
rm -rf "$work" "$out"
mkdir -p "$work/stage/opt/software"
stage=$work/stage
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# --- flux-pmix -------------------------------------------------------------------
log "flux-pmix $pmix_version -> $pmix_prefix (against $core_prefix)"
tar -C "$work" -xJf "$src/$pmix_tar"
tree=$work/flux-pmix-$pmix_version
# configure.ac takes its version from `git describe`; a tree without git
# history would get none, so the version of the tarball's name goes in.
sed -i "s/^ *m4_esyscmd(\[git describe.*\]))\$/        [$pmix_version])/" "$tree/configure.ac"
grep -q "^        \\[$pmix_version\\])\$" "$tree/configure.ac" || die "could not set the version in $tree/configure.ac"
# flux-core's pkg-config files name its final prefix, so the base layer's /opt
# is bind-mounted (read-only) over /opt in a private mount namespace for this
# build; the install goes to DESTDIR. Nothing on the host changes. (The
# inner script is single-quoted: its arguments expand inside it.)
# shellcheck disable=SC2016
unshare --mount --propagation private -- bash -euo pipefail -c '
  mount --bind "$1/opt" /opt && mount -o remount,bind,ro /opt
  cd "$2"
  ./autogen.sh >"$3/autogen.log" 2>&1
  ./configure --prefix="$4" --without-openmpi \
    PKG_CONFIG_PATH="$5/lib/pkgconfig" LDFLAGS="-Wl,-rpath,$5/lib" >"$3/configure.log" 2>&1
  make -j"$6" >"$3/make.log" 2>&1
  make install DESTDIR="$7" >"$3/install.log" 2>&1
' _ "$base/full" "$tree" "$work" "$pmix_prefix" "$core_prefix" "$jobs" "$stage" ||
  die "flux-pmix build failed; logs in $work"
grep -q "^PACKAGE_VERSION='$pmix_version'\$" "$tree/configure" || die "configure of $tree has no version $pmix_version"
plugin=$pmix_prefix/lib/flux/shell/plugins/pmix.so
[[ -f $stage$plugin ]] || die "the install has no $plugin"
# libtool's .la files name the build tree; a Spack install keeps them, but
# nothing loads them and they would only put build paths into the view.
find "$stage$pmix_prefix" -name '*.la' -delete
find "$stage$pmix_prefix" -name '*.so' -type f -exec strip --strip-debug {} +

# The rc file Spack's flux-pmix package writes: load the plugin by its
# absolute path (it stays valid wherever /opt/software is put back).
mkdir -p "$stage$pmix_prefix/etc/flux/shell/lua.d"
printf 'plugin.load { file = "%s", conf = {} }\n' "$plugin" >"$stage$pmix_prefix/etc/flux/shell/lua.d/pmix.lua"

# --- roots -------------------------------------------------------------------------
tmp_out=$out.tmp
rm -rf "$tmp_out"
mkdir -p "$tmp_out"
cp -al "$base/core-only" "$tmp_out/core-only"   # hard links: the bytes are shared
mkdir -p "$tmp_out/full/opt"
cp -al "$base/full/opt/software" "$tmp_out/full/opt/software"
mkdir -p "$tmp_out/full$(dirname "$pmix_prefix")"
cp -a "$stage$pmix_prefix" "$tmp_out/full$pmix_prefix"
# A new view: the base view's links, then flux-pmix's (first prefix wins, as
# in a merged Spack view), under a hash of its own.
base_view=$(readlink -f "$base/full/opt/views/view")
view_hash=$(spack_hash "view $key $(basename "$base_view") $pmix_prefix")
view=$tmp_out/full/opt/views/._view/$view_hash
mkdir -p "$(dirname "$view")"
cp -a "$base_view" "$view"
(cd "$tmp_out/full$pmix_prefix" && find . -mindepth 1 \( -type f -o -type l \) -printf '%P\n') |
  while IFS= read -r rel; do
    [[ -e $view/$rel || -L $view/$rel ]] && continue
    mkdir -p "$(dirname "$view/$rel")"
    ln -s "$pmix_prefix/$rel" "$view/$rel"
  done
ln -s "._view/$view_hash" "$tmp_out/full/opt/views/view"
ln -s views/view "$tmp_out/full/opt/view"
{ cat "$base/manifest"; echo "flux-pmix $pmix_version $pmix_prefix"; echo "base $base_key"; } >"$tmp_out/manifest"
touch "$tmp_out/.complete"
mv "$tmp_out" "$out"
rm -rf "$work"
log "built: $out"
echo "$out"
