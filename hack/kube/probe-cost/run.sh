#!/usr/bin/env bash
# Measures what the startup probe costs: renders jobset.yaml (64 pods)
# with and without the probe, applies each to the running test cluster
# (make kube-up) in turn, and prints the time from apply to the JobSet's
# end and the machine's busy CPU over it (docs/contributing/faults.md).
# "one-test" is the probe of the releases before the waiting one: one
# file test per exec, every 5 s.
# PERIODS="5 10" adds a run of the rendered probe with each periodSeconds.
# Run it on an idle machine, alone: other load goes into the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
eval "$(bash "$repo/hack/kube/cluster.sh" env)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
JOBSET_FLUX_KEY_SEED=probe-bench-seed-0123456789abcdef0123 "$repo/bin/jobset-flux" "$here/jobset.yaml" >"$work/with.yaml"
read -ra periods <<<"${PERIODS:-}"
variants=(with without one-test)
for p in "${periods[@]}"; do variants+=("period$p"); done
python3 - "$work" "${periods[@]}" <<'PY'
import sys, yaml
w, periods = sys.argv[1], sys.argv[2:]
def write(name, edit):
    docs = list(yaml.safe_load_all(open(w + '/with.yaml')))
    for d in docs:
        if d and d['kind'] == 'JobSet':
            edit(d['spec']['replicatedJobs'][0]['template']['spec']['template']['spec']['containers'][0])
    yaml.safe_dump_all(docs, open(w + '/' + name + '.yaml', 'w'))
write('without', lambda c: c.pop('startupProbe', None))
def one_test(c):
    probe = c['startupProbe']
    probe['exec']['command'][2] = '[[ -e /mnt/flux/install/run/joined ]]'
    probe.pop('timeoutSeconds')
    probe['periodSeconds'] = 5
write('one-test', one_test)
for p in periods:
    write('period' + p, lambda c: c['startupProbe'].update(periodSeconds=int(p)))
PY
busy() { local _ user nice sys irq softirq steal; read -r _ user nice sys _ _ irq softirq steal _ </proc/stat; echo $((user + nice + sys + irq + softirq + steal)); }
for variant in "${variants[@]}"; do
  "$KUBECTL" create namespace probe64 >/dev/null
  sleep 3
  b0=$(busy); t0=$SECONDS
  "$KUBECTL" apply -f "$work/$variant.yaml" >/dev/null
  until st=$("$KUBECTL" -n probe64 get jobset p64 -o jsonpath='{.status.terminalState}' 2>/dev/null) && [[ -n $st ]]; do sleep 1; done
  echo "$variant probe: $st in $((SECONDS - t0)) s, machine busy $(( ($(busy) - b0) / 100 )) CPU-s"
  "$KUBECTL" delete namespace probe64 --wait=true >/dev/null
done
