#!/usr/bin/env bash
# Builds Flux "view image" roots from flux-core and flux-sched source tarballs,
# laid out the way the flux-view images lay out their Spack installation:
#
#   /opt/software/<arch>/<compiler>/<name>-<version>-<hash>/   one prefix per package
#   /opt/views/._view/<hash>/                                  symlinks into those prefixes
#   /opt/views/view -> ._view/<hash>,  /opt/view -> views/view
#
# Two roots come out, each a directory to lay under a container as its image:
#   full/       flux-core + flux-sched (Fluxion) + a stand-in Spack python3
#   core-only/  flux-core + the stand-in python3 (no Fluxion)
#
# Like a real Spack view, each view carries a python3 of its own in bin/ (a
# small stand-in that says where it comes from), so a job that picks up the
# view's PATH instead of its image's is visible.
#
# Usage: hack/flux-view/build.sh [SRC_DIR]
#   SRC_DIR (or FLUX_SRC) holds flux-core-<v>.tar.xz, flux-sched-<v>.tar.xz and
#   SHA256SUMS; default: ../shared/flux-src next to the repository.
#   JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) holds the result under
#   flux-view/<key>, where <key> hashes the tarballs, this script and its
#   package list: a second run with the same inputs only prints the path.
# Prints the cache directory (holding full/ and core-only/) as its last line.
# Needs root (apt-get, and a private mount namespace for the flux-sched build).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=$(cd "${1:-${FLUX_SRC:-$repo/../shared/flux-src}}" && pwd)
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
jobs=${FLUX_BUILD_JOBS:-$(nproc)}

log() { printf 'flux-view: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- inputs, checked -------------------------------------------------------
[[ -f $src/SHA256SUMS ]] || die "$src/SHA256SUMS not found (set FLUX_SRC or pass the source directory)"
core_tar=$(cd "$src" && ls flux-core-*.tar.xz 2>/dev/null | head -n1) || true
sched_tar=$(cd "$src" && ls flux-sched-*.tar.xz 2>/dev/null | head -n1) || true
[[ -n $core_tar ]] || die "no flux-core-<version>.tar.xz in $src"
[[ -n $sched_tar ]] || die "no flux-sched-<version>.tar.xz in $src"
for f in "$core_tar" "$sched_tar"; do
  grep -qE "  \\*?$f\$" "$src/SHA256SUMS" || die "$f is not listed in $src/SHA256SUMS"
done
(cd "$src" && grep -E "  \\*?($core_tar|$sched_tar)\$" SHA256SUMS | sha256sum --check --quiet --strict) ||
  die "checksum mismatch in $src (see SHA256SUMS)"
core_version=${core_tar#flux-core-}; core_version=${core_version%.tar.xz}
sched_version=${sched_tar#flux-sched-}; sched_version=${sched_version%.tar.xz}

# --- Debian packages ---------------------------------------------------------
# Checked on every run, cached or not: the built Flux links against these
# libraries at run time too. Quick when they are installed.
[[ $(id -u) == 0 ]] || die "run as root (apt-get and mount namespaces)"
mapfile -t pkgs < <(sed 's/#.*//' "$here/debian-packages.txt" | awk 'NF')
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

key=$( { grep -E "  \\*?($core_tar|$sched_tar)\$" "$src/SHA256SUMS" | sort
         sha256sum "$here/build.sh" "$here/debian-packages.txt" "$here/python3-standin.sh" | cut -d' ' -f1
       } | sha256sum | cut -c1-16)
out=$cache_root/flux-view/$key
if [[ -f $out/.complete ]]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

# --- Spack-style names -----------------------------------------------------
arch=linux-$(. /etc/os-release && echo "${ID}${VERSION_ID}")-$(uname -m)
compiler=gcc-$(gcc -dumpfullversion)
spack_hash() { # a 32-character lowercase base32 hash, as Spack names prefixes
  printf '%s' "$*" | sha256sum | cut -c1-40 | xxd -r -p | base32 | tr 'A-Z' 'a-z' | cut -c1-32
}
core_sum=$(grep -E "  \\*?$core_tar\$" "$src/SHA256SUMS" | cut -c1-64)
sched_sum=$(grep -E "  \\*?$sched_tar\$" "$src/SHA256SUMS" | cut -c1-64)
core_prefix=/opt/software/$arch/$compiler/flux-core-$core_version-$(spack_hash "flux-core $core_sum")
sched_prefix=/opt/software/$arch/$compiler/flux-sched-$sched_version-$(spack_hash "flux-sched $sched_sum $core_sum")
python_prefix=/opt/software/$arch/$compiler/python-3.11.9-$(spack_hash "python stand-in $key")

work=$cache_root/flux-view/$key.work
rm -rf "$work" "$out"
mkdir -p "$work"
stage=$work/stage  # DESTDIR: everything installed lands under $stage/opt/software
mkdir -p "$stage/opt/software"
# Debian's python3, not a pyenv or virtualenv one: the bindings and the modules
# Flux imports (cffi, yaml, jsonschema) come from Debian packages.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV

# --- flux-core ---------------------------------------------------------------
log "flux-core $core_version -> $core_prefix"
tar -C "$work" -xJf "$src/$core_tar"
(
  cd "$work/flux-core-$core_version"
  FLUX_VERSION=$core_version ./autogen.sh >"$work/core-autogen.log" 2>&1
  ./configure --prefix="$core_prefix" --disable-docs \
    PYTHON=/usr/bin/python3 LUA=/usr/bin/lua5.3 >"$work/core-configure.log" 2>&1
  make -j"$jobs" >"$work/core-make.log" 2>&1
  make install DESTDIR="$stage" >"$work/core-install.log" 2>&1
) || die "flux-core build failed; logs in $work"

# --- flux-sched --------------------------------------------------------------
# flux-sched finds flux-core through pkg-config at flux-core's final prefix, so
# the staged /opt is bind-mounted over /opt in a private mount namespace for
# this build (nothing on the host changes, not even an empty /opt/software).
log "flux-sched $sched_version -> $sched_prefix"
tar -C "$work" -xJf "$src/$sched_tar"
# Fluxion's own unit tests are not installed and not needed in a view.
sed -i 's/^add_subdirectory( *t *)$/# (tests not built for the view)/' "$work/flux-sched-$sched_version/CMakeLists.txt"
unshare --mount --propagation private -- bash -euo pipefail -c '
  mount --bind "$1/opt" /opt
  cd "$2" && mkdir -p build && cd build
  export PKG_CONFIG_PATH=$3/lib/pkgconfig
  FLUX_SCHED_VERSION=$4 cmake .. -DCMAKE_INSTALL_PREFIX="$5" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DENABLE_DOCS=Off -DPython_EXECUTABLE=/usr/bin/python3 >"$6/sched-cmake.log" 2>&1
  make -j"$7" >"$6/sched-make.log" 2>&1
  make install DESTDIR="$1" >"$6/sched-install.log" 2>&1
' _ "$stage" "$work/flux-sched-$sched_version" "$core_prefix" "$sched_version" "$sched_prefix" "$work" "$jobs" ||
  die "flux-sched build failed; logs in $work"

# Debug information is most of the bytes (flux-sched's RelWithDebInfo build)
# and every pod copies the view: keep the symbols, drop the debug sections.
find "$stage/opt/software" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
  xargs -0 -r sh -c 'for f; do if head -c4 "$f" | grep -q "ELF"; then strip --strip-debug "$f"; fi; done' _

# --- the stand-in Spack python3 ------------------------------------------------
mkdir -p "$stage$python_prefix/bin"
install -m 0755 "$here/python3-standin.sh" "$stage$python_prefix/bin/python3.11"
ln -s python3.11 "$stage$python_prefix/bin/python3"
ln -s python3.11 "$stage$python_prefix/bin/python"

# --- views ---------------------------------------------------------------------
# make_view ROOT PREFIX...: a root with /opt/software holding PREFIX... and a
# Spack view over them: every file of every prefix linked (absolute symlinks
# into /opt/software) at the same relative path under /opt/views/._view/<hash>.
make_view() {
  local root=$1; shift
  local view_hash; view_hash=$(spack_hash "view $key $*")
  local view=$root/opt/views/._view/$view_hash
  mkdir -p "$view" "$root/opt/software"
  local p rel
  for p in "$@"; do
    mkdir -p "$root$(dirname "$p")"
    cp -al "$stage$p" "$root$p"   # hard links: the two roots share the bytes
    (cd "$root$p" && find . -mindepth 1 \( -type f -o -type l \) -not -path './.spack/*' -printf '%P\n') |
      while IFS= read -r rel; do
        [[ -e $view/$rel || -L $view/$rel ]] && continue   # first prefix wins, as in a merged view
        mkdir -p "$(dirname "$view/$rel")"
        ln -s "$p/$rel" "$view/$rel"
      done
  done
  ln -s "._view/$view_hash" "$root/opt/views/view"
  ln -s views/view "$root/opt/view"
}
tmp_out=$out.tmp
rm -rf "$tmp_out"
make_view "$tmp_out/full" "$core_prefix" "$sched_prefix" "$python_prefix"
make_view "$tmp_out/core-only" "$core_prefix" "$python_prefix"
cat >"$tmp_out/manifest" <<EOF
flux-core $core_version $core_prefix
flux-sched $sched_version $sched_prefix
python-standin 3.11.9 $python_prefix
arch $arch
compiler $compiler
EOF
touch "$tmp_out/.complete"
mv "$tmp_out" "$out"
rm -rf "$work"
log "built: $out"
echo "$out"
