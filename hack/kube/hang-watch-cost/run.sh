#!/usr/bin/env bash
# Measures what the hang watches cost at 64 pods: applies the probe-cost
# JobSet (64 pods, view-mount image) with a command that keeps the
# instance up for DURATION seconds (default 120) to the running test
# cluster (make kube-up), and while it runs reads /proc for the watches'
# processes: rank 0's journal reader (flux python) and each follower's
# `flux event sub heartbeat.pulse`. Prints their count, CPU seconds and
# resident memory at the end of the run (docs/contributing/faults.md).
# Run it on an idle machine, alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
eval "$(bash "$repo/hack/kube/cluster.sh" env)"
duration=${DURATION:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"; "$KUBECTL" delete namespace probe64 --wait=false >/dev/null 2>&1 || :' EXIT
sed "s/command: \[\"bash\", \"-c\", \"true\"\]/command: [\"sleep\", \"$duration\"]/" \
  "$repo/hack/kube/probe-cost/jobset.yaml" >"$work/in.yaml"
grep -q "sleep" "$work/in.yaml" || { echo "hang-watch-cost: the command was not replaced" >&2; exit 1; }
JOBSET_FLUX_KEY_SEED=probe-bench-seed-0123456789abcdef0123 "$repo/bin/jobset-flux" "$work/in.yaml" >"$work/out.yaml"
"$KUBECTL" create namespace probe64 >/dev/null
"$KUBECTL" apply -f "$work/out.yaml" >/dev/null
"$KUBECTL" -n probe64 wait --for=condition=Ready pod --all --timeout=600s >/dev/null
echo "64 pods Ready (joined); sampling the watches until the job ends"
hz=$(getconf CLK_TCK)
# sample prints: kind pid cpu-ticks rss-kB for each watch process now.
sample() {
  local p cmd stat rss kind
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    case $cmd in
    *ResourceJournalConsumer*) kind=journal ;;
    *"sub heartbeat.pulse"*) kind=pulse ;;
    *) continue ;;
    esac
    read -ra stat 2>/dev/null <"$p/stat" || continue
    rss=$(awk '/^VmRSS/ {print $2}' "$p/status" 2>/dev/null) || continue
    echo "$kind ${p#/proc/} $((stat[13] + stat[14])) ${rss:-0}"
  done
}
: >"$work/samples"
until st=$("$KUBECTL" -n probe64 get jobset p64 -o jsonpath='{.status.terminalState}' 2>/dev/null) && [[ -n $st ]]; do
  sample >>"$work/samples"
  sleep 5
done
echo "JobSet $st"
# The last sample of each process: its CPU so far and its memory.
awk -v hz="$hz" '
  { cpu[$1" "$2] = $3; rss[$1" "$2] = $4 }
  END {
    for (k in cpu) { split(k, a, " "); n[a[1]]++; c[a[1]] += cpu[k]; r[a[1]] += rss[k]; if (rss[k] > m[a[1]]) m[a[1]] = rss[k] }
    for (kind in n) printf "%s: %d processes, %.2f CPU-s in all, %.1f MB resident in all (largest %.1f MB)\n", kind, n[kind], c[kind] / hz, r[kind] / 1024, m[kind] / 1024
  }' "$work/samples"
