#!/usr/bin/env bash
# The two systems the start-up benchmark (test/kube/cmd/startbench) measures
# jobset-flux against, built from the pinned tarballs of ../shared/anchors-src
# and run as host processes against the test cluster of hack/kube/cluster.sh,
# the way that cluster runs the JobSet controller and Kueue:
#
#   the Flux Operator      (MiniCluster, flux-framework.org/v1alpha2), no webhooks;
#   the Kubeflow Trainer   (TrainJob on a ClusterTrainingRuntime with the Flux
#                           plugin, trainer.kubeflow.org/v1alpha1), its webhooks
#                           served on 127.0.0.1 and registered by clientConfig.url.
#
# Usage: hack/anchors/anchors.sh build|up|down|status|env
#   build   verify the tarballs (sha256sum -c), unpack and build both managers
#           into JOBSET_FLUX_CACHE (default ~/.cache/jobset-flux) under
#           anchors/<key>/ (<key>: the tarballs' checksums, the build recipe
#           and the Go version); a second run only prints the path.
#   up      on a running cluster: build if needed, apply the CRDs, start both
#           managers, register the Trainer's webhooks and wait until both are
#           healthy. Running and healthy managers are left as they are.
#   down    delete the Trainer's webhook configurations, stop both managers
#           (ANCHORS_DELETE_CRDS=1 deletes their CRDs too, with every object).
#   status  exit 0 if both managers run and answer their health checks.
#   env     print shell assignments for a benchmark (ANCHORS_DIR, ...).
# State (PID files, logs, certificates, config) lives in
# $KUBE_STATE_DIR/anchors (default /var/lib/jobset-flux-kube/anchors), beside
# the cluster's kubeconfig: it goes with the cluster, and cluster.sh down
# kills the managers with the rest (their command lines name that directory).
# See hack/anchors/README.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SRC=${ANCHORS_SRC:-$repo/../shared/anchors-src}
cache_root=${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}
S=${KUBE_STATE_DIR:-/var/lib/jobset-flux-kube}
A=$S/anchors

FLUX_OPERATOR=flux-operator-0d75cef855
TRAINER=kubeflow-trainer-8c0f5059bd
# Bump when the build steps below change (the key does not hash this script,
# so that editing up/down does not rebuild).
RECIPE=1

# Ports beside the cluster's (JobSet 19443/18082, Kueue 19543/18083).
TRAINER_WEBHOOK_PORT=19643
TRAINER_HEALTH_PORT=18084
TRAINER_METRICS_PORT=18085
OPERATOR_HEALTH_PORT=18086
OPERATOR_METRICS_PORT=18087

# The Trainer's webhook configurations (the names its kustomize patches give
# manifests/base/webhook/manifests.yaml).
TRAINER_MUTATING=defaulter.trainer.kubeflow.org
TRAINER_VALIDATING=validator.trainer.kubeflow.org
OPERATOR_CRD=$FLUX_OPERATOR/config/crd/bases/flux-framework.org_miniclusters.yaml
TRAINER_CRDS=(trainjobs clustertrainingruntimes trainingruntimes optimizationjobs)

log() { printf 'anchors: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

main() {
  case ${1:-} in
  build) cmd_build ;;
  up) need_root && lock && cmd_up ;;
  down) need_root && lock && cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) die "usage: $0 build|up|down|status|env" ;;
  esac
}

need_root() { [[ $(id -u) == 0 ]] || die "run as root (the cluster's state dir $S is root's)"; }

# lock: one up or down at a time (not the cluster's lock nor Kueue's).
lock() {
  mkdir -p "$(dirname "$S")"
  exec 7>>"$S.anchors.lock"
  flock 7
}

# --- build -------------------------------------------------------------------

# build_key: the tarballs' checksums, the recipe and the Go version.
build_key() {
  {
    grep -E " ($FLUX_OPERATOR|$TRAINER)\.tar\.xz\$" "$SRC/SHA256SUMS" | sort
    echo "recipe $RECIPE"
    go env GOVERSION
  } | sha256sum | cut -c1-16
}

# build_dir: the cache directory the current inputs build into.
build_dir() { echo "$cache_root/anchors/$(build_key)"; }

cmd_build() {
  command -v go >/dev/null || die "go is not on PATH"
  [[ -f $SRC/SHA256SUMS ]] || die "no $SRC/SHA256SUMS (set ANCHORS_SRC to the anchors-src directory)"
  local t
  for t in "$FLUX_OPERATOR" "$TRAINER"; do
    [[ -f $SRC/$t.tar.xz ]] || die "missing tarball $SRC/$t.tar.xz"
  done
  local out
  out=$(build_dir)
  mkdir -p "$cache_root/anchors"
  exec 9>"$cache_root/anchors/.lock"
  flock 9 # concurrent callers wait for one build, then find it
  if [[ -f $out/.complete ]]; then
    log "cached: $out"
    echo "$out"
    return 0
  fi
  (cd "$SRC" && sha256sum --quiet -c SHA256SUMS) || die "checksums of $SRC do not match SHA256SUMS"
  need_czmq
  local tmp start=$SECONDS
  tmp=$cache_root/anchors/.tmp-$(build_key)-$$
  # shellcheck disable=SC2064 # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  rm -rf "$tmp"
  mkdir -p "$tmp/src" "$tmp/bin"
  log "unpacking into $tmp/src"
  tar -xJf "$SRC/$FLUX_OPERATOR.tar.xz" -C "$tmp/src"
  tar -xJf "$SRC/$TRAINER.tar.xz" -C "$tmp/src"
  # One go build at a time (two shared cores), niced.
  log "building the Kubeflow Trainer manager (go build ./cmd/trainer-controller-manager)"
  (cd "$tmp/src/$TRAINER" && nice -n 10 go build -trimpath -o "$tmp/bin/trainer-controller-manager" ./cmd/trainer-controller-manager)
  log "building the Flux Operator manager (cgo, czmq)"
  cp "$tmp/src/$FLUX_OPERATOR/pkg/flux/keygen.go.template" "$tmp/src/$FLUX_OPERATOR/pkg/flux/keygen.go"
  (cd "$tmp/src/$FLUX_OPERATOR" && CGO_ENABLED=1 CGO_LDFLAGS="-lstdc++ -lczmq -lzmq" \
    nice -n 10 go build -trimpath -o "$tmp/bin/flux-operator-manager" .)

  touch "$tmp/.complete"
  rm -rf "$out"
  mv "$tmp" "$out"
  trap - EXIT
  log "built in $((SECONDS - start)) s: $out"
  echo "$out"
}

# need_czmq: the Flux Operator's CURVE key generation links czmq and zmq;
# install their Debian development packages only when missing.
need_czmq() {
  local p missing=()
  for p in libczmq-dev libzmq3-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  [[ $(id -u) == 0 ]] || die "missing ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root"
  log "installing ${missing[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

# --- up, down, status ----------------------------------------------------------

kubectl() { "$BINS/bin/kubectl" --kubeconfig "$S/admin.kubeconfig" "$@"; }

# cluster_bins: the cluster's binaries (kubectl), recorded by cluster.sh up.
cluster_bins() {
  [[ -f $S/bins && -f $S/admin.kubeconfig ]] || die "the test cluster is not running (hack/kube/cluster.sh up / make kube-up)"
  cat "$S/bins"
}

cmd_up() {
  local start=$SECONDS out
  BINS=$(cluster_bins)
  bash "$repo/hack/kube/cluster.sh" status >/dev/null 2>&1 ||
    die "the test cluster is not healthy (bash hack/kube/cluster.sh status)"
  out=$(cmd_build | tail -n1)
  mkdir -p "$A/run" "$A/log"
  echo "$out" >"$A/build"
  write_pki
  write_trainer_config
  apply_crds "$out"
  if alive operator && healthy "$OPERATOR_HEALTH_PORT"; then
    log "Flux Operator already running"
  else
    stop operator
    daemon operator "$out/bin/flux-operator-manager" --kubeconfig "$S/admin.kubeconfig" \
      --metrics-bind-address "127.0.0.1:$OPERATOR_METRICS_PORT" \
      --health-probe-bind-address "127.0.0.1:$OPERATOR_HEALTH_PORT" --leader-elect=false
  fi
  if alive trainer && healthy "$TRAINER_HEALTH_PORT"; then
    log "Kubeflow Trainer already running"
  else
    stop trainer
    # Its webhook server reads tls.crt and tls.key from
    # $TMPDIR/k8s-webhook-server/serving-certs (controller-runtime's default).
    TMPDIR=$A/trainer/tmp daemon trainer "$out/bin/trainer-controller-manager" \
      --config "$A/trainer/config.yaml" --kubeconfig "$S/admin.kubeconfig"
  fi
  wait_for "the Flux Operator (log: $A/log/operator.log)" 60 healthy "$OPERATOR_HEALTH_PORT"
  wait_for "the Kubeflow Trainer (log: $A/log/trainer.log)" 60 healthy "$TRAINER_HEALTH_PORT"
  write_webhooks
  kubectl apply -f "$A/trainer/webhooks.yaml" >/dev/null
  wait_for "the Trainer's webhooks" 60 webhooks_answer
  log "up in $((SECONDS - start)) s (state: $A)"
}

cmd_down() {
  if [[ -f $S/bins && -f $S/admin.kubeconfig ]]; then
    BINS=$(cat "$S/bins")
    if kubectl get --raw /readyz >/dev/null 2>&1; then
      kubectl delete --ignore-not-found mutatingwebhookconfiguration "$TRAINER_MUTATING" >/dev/null
      kubectl delete --ignore-not-found validatingwebhookconfiguration "$TRAINER_VALIDATING" >/dev/null
      if [[ ${ANCHORS_DELETE_CRDS:-} == 1 ]]; then
        local c crds=(miniclusters.flux-framework.org)
        for c in "${TRAINER_CRDS[@]}"; do crds+=("$c.trainer.kubeflow.org"); done
        kubectl delete --ignore-not-found --wait=true crd "${crds[@]}" >/dev/null
        log "deleted the CRDs ${crds[*]}"
      fi
    else
      log "warning: the API server does not answer; webhook configurations not deleted"
    fi
  fi
  stop trainer
  stop operator
  log "down"
}

cmd_status() {
  local ok=0
  if alive operator && healthy "$OPERATOR_HEALTH_PORT"; then
    log "Flux Operator: running (pid $(cat "$A/run/operator.pid"))"
  else
    log "Flux Operator: not running or not healthy"
    ok=1
  fi
  if alive trainer && healthy "$TRAINER_HEALTH_PORT"; then
    log "Kubeflow Trainer: running (pid $(cat "$A/run/trainer.pid"))"
  else
    log "Kubeflow Trainer: not running or not healthy"
    ok=1
  fi
  return "$ok"
}

cmd_env() {
  local out=""
  command -v go >/dev/null && out=$(build_dir)
  printf 'export ANCHORS_DIR=%q ANCHORS_STATE=%q ANCHORS_EXAMPLES=%q\n' "$out" "$A" "$here/examples"
  printf 'export ANCHORS_APP_IMAGE=%q ANCHORS_VIEW_IMAGE=%q\n' \
    jobset-flux.test/debian:bookworm ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy
  printf 'export ANCHORS_TRAINER_LOG=%q ANCHORS_OPERATOR_LOG=%q\n' "$A/log/trainer.log" "$A/log/operator.log"
}

# daemon NAME CMD...: start CMD in its own session, log and PID file in $A.
daemon() {
  local name=$1
  shift
  # 7<&- 9<&-: not the locks.
  setsid "$@" </dev/null >"$A/log/$name.log" 2>&1 7<&- 9<&- &
  echo $! >"$A/run/$name.pid"
  log "started $name (pid $!, log $A/log/$name.log)"
}

# alive NAME: the PID file names a live process whose command line is one of
# our managers' (so a recycled PID is never taken for one).
alive() {
  local f=$A/run/$1.pid pid
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null |
    grep -qE -e "/bin/(flux-operator-manager|trainer-controller-manager) .*--kubeconfig $S/admin.kubeconfig"
}

healthy() { curl -sf "http://127.0.0.1:$1/readyz" >/dev/null 2>&1; }

# stop NAME: TERM the manager, wait up to 10 s, then KILL it.
stop() {
  local f=$A/run/$1.pid pid i
  [[ -f $f ]] || return 0
  if alive "$1"; then
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      [[ -d /proc/$pid ]] || break
      sleep 0.1
    done
    if [[ -d /proc/$pid ]]; then
      log "killing $1 (TERM did not stop it)"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "stopped $1"
  fi
  rm -f "$f"
}

# wait_for WHAT SECONDS CMD...: poll CMD every 0.2 s.
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "timed out after ${secs} s waiting for $what"
}

# apply_crds OUT: the MiniCluster CRD and the Trainer's (server-side: too big
# for the last-applied annotation), from the unpacked sources.
apply_crds() {
  local out=$1 c files=()
  files+=(-f "$out/src/$OPERATOR_CRD")
  for c in "${TRAINER_CRDS[@]}"; do
    files+=(-f "$out/src/$TRAINER/manifests/base/crds/trainer.kubeflow.org_$c.yaml")
  done
  kubectl apply --server-side --force-conflicts --field-manager jobset-flux-anchors "${files[@]}" >/dev/null
  local crds=(miniclusters.flux-framework.org)
  for c in "${TRAINER_CRDS[@]}"; do crds+=("$c.trainer.kubeflow.org"); done
  kubectl wait --for condition=Established --timeout 60s crd "${crds[@]}" >/dev/null ||
    die "the CRDs ${crds[*]} are not Established"
}

# write_pki: a CA of our own and the Trainer's webhook serving certificate
# for 127.0.0.1 (EC P-256), kept while valid for another day.
write_pki() {
  local p=$A/pki certs=$A/trainer/tmp/k8s-webhook-server/serving-certs
  mkdir -p "$p" "$certs"
  if [[ -f $p/webhook.crt ]] && openssl x509 -checkend 86400 -noout -in "$p/webhook.crt" >/dev/null 2>&1 &&
    cmp -s "$p/webhook.crt" "$certs/tls.crt"; then
    return 0
  fi
  openssl ecparam -name prime256v1 -genkey -noout -out "$p/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$p/ca.key" -subj /CN=jobset-flux-anchors-ca -days 30 -out "$p/ca.crt" 2>/dev/null
  printf '%s\n' basicConstraints=CA:FALSE keyUsage=critical,digitalSignature,keyEncipherment \
    extendedKeyUsage=serverAuth subjectAltName=IP:127.0.0.1,DNS:localhost >"$p/webhook.ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$p/webhook.key" 2>/dev/null
  openssl req -new -key "$p/webhook.key" -subj /CN=trainer-webhook -out "$p/webhook.csr" 2>/dev/null
  openssl x509 -req -in "$p/webhook.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 30 \
    -extfile "$p/webhook.ext" -out "$p/webhook.crt" 2>/dev/null
  rm -f "$p/webhook.csr" "$p/webhook.ext"
  cp "$p/webhook.crt" "$certs/tls.crt"
  cp "$p/webhook.key" "$certs/tls.key"
  # A running Trainer would keep serving the old certificate.
  stop trainer
}

# write_trainer_config: out of the cluster: no cert management (our
# certificate), no leader election, webhook, health and metrics on 127.0.0.1.
write_trainer_config() {
  mkdir -p "$A/trainer"
  cat >"$A/trainer/config.yaml" <<EOF
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
certManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $TRAINER_WEBHOOK_PORT
health:
  healthProbeBindAddress: 127.0.0.1:$TRAINER_HEALTH_PORT
metrics:
  bindAddress: 127.0.0.1:$TRAINER_METRICS_PORT
  secureServing: false
EOF
}

# write_webhooks: the Trainer's webhooks (manifests/base/webhook, as its
# kustomization names them) with url + caBundle instead of a Service.
write_webhooks() {
  local ca url
  ca=$(base64 -w0 <"$A/pki/ca.crt")
  url=https://127.0.0.1:$TRAINER_WEBHOOK_PORT
  cat >"$A/trainer/webhooks.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $TRAINER_MUTATING
webhooks:
$(webhook_entry defaulter.trainjob.trainer.kubeflow.org "$url/mutate-trainer-kubeflow-org-v1alpha1-trainjob" "$ca" trainjobs)
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $TRAINER_VALIDATING
webhooks:
$(webhook_entry validator.clustertrainingruntime.trainer.kubeflow.org "$url/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime" "$ca" clustertrainingruntimes skippable)
$(webhook_entry validator.trainingruntime.trainer.kubeflow.org "$url/validate-trainer-kubeflow-org-v1alpha1-trainingruntime" "$ca" trainingruntimes skippable)
$(webhook_entry validator.trainjob.trainer.kubeflow.org "$url/validate-trainer-kubeflow-org-v1alpha1-trainjob" "$ca" trainjobs)
EOF
}

# webhook_entry NAME URL CA RESOURCE [skippable]: one webhooks[] item; a
# skippable one ignores objects labelled
# trainer.kubeflow.org/webhook-validation=disabled, as upstream's do.
webhook_entry() {
  cat <<EOF
- name: $1
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig:
    url: $2
    caBundle: $3
  rules:
  - apiGroups: [trainer.kubeflow.org]
    apiVersions: [v1alpha1]
    operations: [CREATE, UPDATE]
    resources: [$4]
EOF
  if [[ ${5:-} == skippable ]]; then
    cat <<EOF
  objectSelector:
    matchExpressions:
    - key: trainer.kubeflow.org/webhook-validation
      operator: NotIn
      values: [disabled]
EOF
  fi
}

# webhooks_answer: a server dry-run of a TrainJob naming a runtime that does
# not exist is denied by the Trainer's validating webhook.
webhooks_answer() {
  local msg
  msg=$(kubectl create --dry-run=server -o name -f - 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: anchors-probe, namespace: default}
spec:
  runtimeRef: {name: anchors-probe-no-such-runtime}
EOF
  ) && return 1
  grep -q 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied' <<<"$msg"
}

main "$@"
