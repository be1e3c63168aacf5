#!/usr/bin/env bash
# Measures a cold `.ci/run`: a fresh clone of COMMIT run with an empty HOME,
# so the Go module and build caches, ~/.cache/jobset-flux (Flux view, cluster
# binaries, images) and the private Docker engine's data all start empty.
# It runs `make test` as CI does, into DIR/make-test.log, and writes its
# time, the machine's CPU busy share and each target's "make test:" line to
# DIR/times.txt. SERIAL=1 runs the targets one by one instead, each timed
# alone with its busy share (where the idle time is), logs in
# DIR/<target>.log. The Debian packages are not removed, so `system-deps`
# is quick (a machine without them adds the apt installs).
#
# Usage: hack/cold-run.sh [COMMIT] [DIR]   (default HEAD, /var/tmp/jobset-flux-cold)
#        WARM=1 hack/cold-run.sh ...       the same fresh clone with this HOME's
#                                          caches: a warm run
#        SERIAL=1 ...                      target by target
# Run it on an idle machine: other load goes straight into the figures.
# Needs what `make test` needs (root, Go 1.26); cold, it took 36 min on
# 2 CPUs (docs/contributing/development.md, "How long it takes").
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse "${1:-HEAD}") || exit 2
dir=${2:-/var/tmp/jobset-flux-cold}

rm -rf "$dir"
mkdir -p "$dir/home"
git clone -q "$repo" "$dir/src" && git -C "$dir/src" checkout -q "$commit" || exit 1
cd "$dir/src" || exit 1
export CI=true
if [[ ${WARM:-0} != 1 ]]; then
  export HOME=$dir/home
fi

log=$dir/times.txt
echo "commit ${commit:0:12} $([[ ${WARM:-0} == 1 ]] && echo warm || echo cold) start $(date -u +%H:%M:%S)" >"$log"

# cpu_ticks prints the machine's busy and total CPU ticks (/proc/stat):
# a target's busy share says whether it waits (room to overlap) or computes.
cpu_ticks() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

# timed NAME LOG CMD...: runs CMD into LOG and appends NAME's line (exit
# code, seconds, the machine's CPU busy share, load) to times.txt.
timed() {
  local name=$1 out=$2 s=$SECONDS rc busy0 total0 busy1 total1
  shift 2
  read -r busy0 total0 < <(cpu_ticks)
  "$@" >"$out" 2>&1
  rc=$?
  read -r busy1 total1 < <(cpu_ticks)
  echo "$name rc=$rc $((SECONDS - s)) s cpu $(((busy1 - busy0) * 100 / (total1 - total0 + 1)))% load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
  return "$rc"
}

start=$SECONDS
failed=0
if [[ ${SERIAL:-0} == 1 ]]; then
  for t in $(make -s print-test-targets); do
    timed "$t" "$dir/$t.log" make "$t" || failed=1
  done
else
  timed "make test" "$dir/make-test.log" make test || failed=1
  grep '^make test: ' "$dir/make-test.log" >>"$log"
fi
echo "total $((SECONDS - start)) s end $(date -u +%H:%M:%S)" >>"$log"
cat "$log"
exit "$failed"
