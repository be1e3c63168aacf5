#!/usr/bin/env bash
# The first hour: from a fresh Debian machine to a Flux instance on the
# project's own single-node cluster, in one command (make quickstart).
#
# Usage: hack/quickstart.sh   (as root, in a clone)
#   1. checks what the machine needs (root, Debian, the Go of go.mod, the
#      Flux sources the cluster's Flux view is built from) and installs the
#      Debian packages (.ci/install-system-deps);
#   2. builds bin/jobset-flux and bin/kustomize (make build, make bin/kustomize);
#   3. brings the cluster up (make kube-up: builds or reuses its binaries and
#      images; a healthy running cluster is kept);
#   4. renders examples/broker-tuning with kustomize and the function, with a
#      key seed from outside the clone;
#   5. deletes the JobSet of an earlier run, applies the render and waits for
#      the JobSet to end;
#   6. prints the leader's output (rank 0's app container), the JobSet's end
#      condition and the commands to look around, re-run and clean up.
# Exits 0 only when the JobSet Completed. The cluster stays up.
#
# Environment:
#   JOBSET_FLUX_KEY_SEED, JOBSET_FLUX_KEY_SEED_FILE  the CURVE key seed; with
#       neither, one is made once in ${XDG_CONFIG_HOME:-~/.config}/jobset-flux/seed
#   QUICKSTART_TIMEOUT  seconds to wait for the JobSet to end (default 900:
#       past the instance's own 10-minute start-timeout)
#   FLUX_SRC            the Flux source tarballs (as mk/flux.mk)
#   KUBE_STATE_DIR      the cluster's state directory (as mk/kube.mk)
#
# The whole run holds the cluster's session lock, the one make test-kube
# holds, so it never changes the cluster under a running test, and a test
# never takes it down under this. make test-kube's session, which already
# holds it, says so with KUBE_SESSION_LOCK_HELD.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd -P)
state_dir=${KUBE_STATE_DIR:-/var/lib/jobset-flux-kube}
session_lock=$state_dir.session.lock
example=broker-tuning
jobset=tuned
namespace=default
leader_rj=leader
container=app
timeout=${QUICKSTART_TIMEOUT:-900}
out=$repo/_out/quickstart
# The entrypoint's own lines and the brokers' (log-stderr-mode=local).
log_lines='^(jobset-flux: |<[0-7]>)'

log() { printf 'quickstart: %s\n' "$*" >&2; }

main() {
  cd "$repo"
  check_machine
  hold_session_lock "$@"
  local start=$SECONDS
  install_debian_packages
  build_tools
  cluster_up
  eval "$(bash hack/kube/cluster.sh env)"
  local render
  render=$(render_example)
  run_jobset "$render"
  local applied=$SECONDS end
  end=$(wait_for_end)
  log "waited $((SECONDS - applied)) s from the apply; $((SECONDS - start)) s in all"
  show_leader_output
  show_end "$end"
  show_next_steps "$render"
  [[ $end == Completed* ]]
}

# check_machine: what no step here can install, each said plainly.
check_machine() {
  local missing=()
  [[ $(id -u) == 0 ]] || missing+=("root: the cluster changes the network, mounts and cgroups (sudo make quickstart)")
  if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
    missing+=("a Debian machine: the packages come from apt-get (.ci/apt/*.txt lists them)")
  fi
  local want have
  want=$(awk '$1 == "go" { print $2; exit }' go.mod)
  if ! have=$(go env GOVERSION 2>/dev/null); then
    missing+=("Go $want or later on PATH (https://go.dev/dl/)")
  elif ! version_at_least "${have#go}" "$want"; then
    missing+=("Go $want or later: PATH has $have (https://go.dev/dl/)")
  fi
  local flux_src
  flux_src=$(flux_sources)
  [[ -d $flux_src ]] || missing+=("the Flux source tarballs (flux-core, flux-sched, flux-pmix) in $flux_src, or FLUX_SRC=DIR")
  if ((${#missing[@]})); then
    log "this machine lacks what the quick start needs:"
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
  fi
}

# version_at_least HAVE WANT: dotted versions, compared field by field.
version_at_least() {
  [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1) == "$2" ]]
}

# flux_sources: where the Flux view's sources are, as mk/flux.mk finds them.
flux_sources() {
  if [[ -n ${FLUX_SRC:-} ]]; then
    echo "$FLUX_SRC"
  elif [[ -d $repo/../shared/flux-src ]]; then
    (cd "$repo/../shared/flux-src" && pwd)
  elif [[ -d /work/shared/flux-src ]]; then
    echo /work/shared/flux-src
  else
    echo "$repo/../shared/flux-src"
  fi
}

# hold_session_lock: run this script again under the session lock, unless
# it holds it already. flock -o keeps the lock's descriptor out of the
# cluster's daemons, which outlive this script.
hold_session_lock() {
  [[ ${KUBE_SESSION_LOCK_HELD:-} == "$session_lock" ]] && return 0
  mkdir -p "$(dirname "$session_lock")"
  flock -n "$session_lock" true ||
    log "a make test-kube or another quick start holds $session_lock; waiting for it"
  export KUBE_SESSION_LOCK_HELD=$session_lock
  exec flock -o "$session_lock" bash "$repo/hack/quickstart.sh" "$@"
}

install_debian_packages() {
  log "Debian packages (.ci/install-system-deps)"
  bash .ci/install-system-deps
}

build_tools() {
  log "building bin/jobset-flux and bin/kustomize"
  make --no-print-directory build kustomize
}

cluster_up() {
  local start=$SECONDS
  log "bringing the cluster up (make kube-up; the first time builds it, see docs/contributing/kubernetes.md)"
  FLUX_SRC=$(flux_sources) make --no-print-directory kube-up
  log "cluster up in $((SECONDS - start)) s"
}

# render_example: the example rendered with a seeded key; prints the file.
render_example() {
  local render=$out/$example.yaml
  mkdir -p "$out"
  if [[ -z ${JOBSET_FLUX_KEY_SEED:-} && -z ${JOBSET_FLUX_KEY_SEED_FILE:-} ]]; then
    # The function refuses both set, even one of them empty.
    unset JOBSET_FLUX_KEY_SEED
    export JOBSET_FLUX_KEY_SEED_FILE
    JOBSET_FLUX_KEY_SEED_FILE=$(key_seed_file)
  fi
  log "rendering examples/$example into ${render#"$repo"/}"
  PATH=$repo/bin:$PATH kustomize build --enable-alpha-plugins --enable-exec "examples/$example" >"$render"
  echo "$render"
}

# key_seed_file: the seed file of this user, made once, outside the clone,
# so every render of the quick start gives the same Secret and none is
# ever committed.
key_seed_file() {
  local file=${XDG_CONFIG_HOME:-$HOME/.config}/jobset-flux/seed
  if [[ ! -s $file ]]; then
    log "making a CURVE key seed in $file (keep it private; docs: README.md#the-curve-key)"
    (umask 077 && mkdir -p "$(dirname "$file")" && head -c 32 /dev/urandom | base64 >"$file")
  fi
  echo "$file"
}

# run_jobset RENDER: a JobSet of an earlier run goes first, with its Jobs,
# Service and pods (the new JobSet's have the same names); then the render
# is applied.
run_jobset() {
  if "$KUBECTL" get jobset "$jobset" -n "$namespace" >/dev/null 2>&1; then
    log "deleting the JobSet $namespace/$jobset of an earlier run"
    "$KUBECTL" delete jobset "$jobset" -n "$namespace" --cascade=foreground --wait=true --timeout=120s >&2
  fi
  if [[ -n $("$KUBECTL" get pods -n "$namespace" -o name -l "jobset.sigs.k8s.io/jobset-name=$jobset") ]]; then
    "$KUBECTL" wait pod -n "$namespace" -l "jobset.sigs.k8s.io/jobset-name=$jobset" --for=delete --timeout=120s >&2
  fi
  log "applying the render"
  "$KUBECTL" apply -f "$1" >&2
}

# wait_for_end: prints the JobSet's end condition (type, then its message)
# once it is Completed or Failed; fails after the timeout.
wait_for_end() {
  local deadline=$((SECONDS + timeout)) last_report=$SECONDS cond
  log "waiting for the JobSet to end (at most $timeout s)"
  while ((SECONDS < deadline)); do
    cond=$("$KUBECTL" get jobset "$jobset" -n "$namespace" -o \
      jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{": "}{.message}{"\n"}{end}' 2>/dev/null |
      grep -E '^(Completed|Failed): ' | head -n1 || true)
    if [[ -n $cond ]]; then
      echo "$cond"
      return 0
    fi
    if ((SECONDS - last_report >= 15)); then
      log "pods: $(pod_phases)"
      last_report=$SECONDS
    fi
    sleep 2
  done
  log "the JobSet did not end within $timeout s; its pods: $(pod_phases)"
  "$KUBECTL" get jobset "$jobset" -n "$namespace" -o jsonpath='{.status}' >&2 || true
  echo "Timeout: no end condition after $timeout s"
}

pod_phases() {
  "$KUBECTL" get pods -n "$namespace" -l "jobset.sigs.k8s.io/jobset-name=$jobset" --no-headers \
    -o custom-columns=NAME:.metadata.name,PHASE:.status.phase 2>/dev/null | awk '{ printf "%s%s %s", NR > 1 ? ", " : "", $1, $2 }'
}

leader_pod() {
  "$KUBECTL" get pods -n "$namespace" -o name -l \
    "jobset.sigs.k8s.io/jobset-name=$jobset,jobset.sigs.k8s.io/replicatedjob-name=$leader_rj,jobset.sigs.k8s.io/job-index=0,batch.kubernetes.io/job-completion-index=0"
}

# show_leader_output: rank 0's container log without the entrypoint's
# "jobset-flux:" lines and the broker's own "<level>" lines, which say how
# many there were.
show_leader_output() {
  local pod all left_out
  pod=$(leader_pod)
  [[ -n $pod ]] || { log "no leader pod found"; return 0; }
  pod=${pod#pod/}
  all=$("$KUBECTL" logs -n "$namespace" "$pod" -c "$container" 2>&1 || true)
  left_out=$(grep -cE "$log_lines" <<<"$all" || true)
  echo
  echo "== the leader's output (pod $pod, container $container) =="
  grep -vE "$log_lines" <<<"$all" || true
  echo "($left_out entrypoint and broker log lines left out: \"\$KUBECTL\" logs -n $namespace $pod -c $container)"
}

show_end() {
  echo
  echo "== the JobSet $namespace/$jobset =="
  echo "$1"
}

show_next_steps() {
  local render=${1#"$repo"/}
  cat <<EOF

== next ==
The cluster stays up. Look around (kubectl of the cluster's build, its admin kubeconfig):
  eval "\$(bash hack/kube/cluster.sh env)"      # sets KUBECONFIG and KUBECTL
  "\$KUBECTL" get jobset,pods -n $namespace
  "\$KUBECTL" logs -n $namespace -l jobset.sigs.k8s.io/jobset-name=$jobset -c $container --prefix
Run it again (deletes and re-applies the JobSet):
  make quickstart
Delete the JobSet, its ConfigMap and Secret:
  "\$KUBECTL" delete -f $render
Take the cluster down (restores what it changed on the machine):
  make kube-down
EOF
}

main "$@"
