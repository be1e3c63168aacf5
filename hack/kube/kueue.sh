#!/usr/bin/env bash
# Kueue (sigs.k8s.io/kueue, the version hack/kube/kueue/go.mod pins) on the
# test cluster of hack/kube/cluster.sh, run like the JobSet controller: a host
# process with the admin kubeconfig, its webhooks served on 127.0.0.1 and
# registered by clientConfig.url, its CRDs from the same module. See
# docs/user/kueue.md (for users) and docs/contributing/kueue.md (the tests).
#
# Usage: hack/kube/kueue.sh build|up|down|status
#   build   build or reuse the binary and CRDs (hack/kube/kueue/build.sh);
#           prints their cache directory.
#   up      on a running cluster: apply the CRDs, start Kueue, register its
#           webhooks and wait until they admit. A healthy running Kueue is
#           left as is (FRESH=1 restarts it). cluster.sh up calls it.
#   down    delete the webhook configurations, stop Kueue and undo what up
#           changed on the machine; the CRDs and their objects stay (they go
#           with the cluster). cluster.sh down calls it.
#   status  exit 0 if Kueue runs and answers.
#
# Kueue touches only JobSets with the kueue.x-k8s.io/queue-name label: its
# JobSet webhooks select only such objects, and manageJobsWithoutQueueName
# is false, so the other tests' JobSets never reach it, also when it is down.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
S=${KUBE_STATE_DIR:-/var/lib/jobset-flux-kube}
K=$S/kueue
KUEUE_WEBHOOK_PORT=19543
KUEUE_HEALTH_PORT=18083
# waitForPodsReady: how long an admitted workload may take to have all its
# pods Ready before Kueue evicts and requeues it; short, for the tests (a
# production cluster wants minutes: docs/user/kueue.md).
KUEUE_PODS_READY_TIMEOUT=${KUEUE_PODS_READY_TIMEOUT:-90s}
# Kueue's metrics server reads its certificate from this fixed path when its
# own cert management is off, even with metrics disabled; it is bind-mounted
# from the state dir in Kueue's private mount namespace.
METRICS_CERT_DIR=/etc/kueue/metrics/certs
# The JobSet webhooks see only JobSets that ask for a queue.
QUEUE_LABEL=kueue.x-k8s.io/queue-name
WEBHOOKS=(kueue-mutating-webhook-configuration kueue-validating-webhook-configuration)

# make_cert, for the webhook certificate from the cluster's CA.
# shellcheck source-path=SCRIPTDIR
source "$here/config.sh"

log() { printf 'kueue: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

main() {
  case ${1:-} in
  build) bash "$here/kueue/build.sh" | tail -n1 ;;
  up) need_root && lock && cmd_up ;;
  down) need_root && lock && cmd_down ;;
  status) cmd_status ;;
  *) die "usage: $0 build|up|down|status" ;;
  esac
}

need_root() { [[ $(id -u) == 0 ]] || die "run as root (a mount namespace)"; }

# lock: one kueue up or down at a time; not cluster.sh's lock, which its own
# up and down hold while they call this script.
lock() {
  mkdir -p "$(dirname "$S")"
  exec 8>>"$S.kueue.lock"
  flock 8
}

kubectl() { "$BINS/bin/kubectl" --kubeconfig "$S/admin.kubeconfig" "$@"; }

# cluster_bins: the cluster's binaries (kubectl), recorded by cluster.sh up.
cluster_bins() {
  [[ -f $S/bins ]] || die "the cluster is not running (hack/kube/cluster.sh up)"
  cat "$S/bins"
}

pid_file() { echo "$S/run/kueue.pid"; }

# alive: the PID file names a live process whose command line names our
# config (so a recycled PID is never taken for Kueue).
alive() {
  local f pid
  f=$(pid_file)
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ -d /proc/$pid ]] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$K/config.yaml"
}

cmd_status() {
  alive || { log "not running"; return 1; }
  curl -sf "http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz" >/dev/null || { log "not ready"; return 1; }
  log "running: pid $(cat "$(pid_file)")"
}

cmd_up() {
  local start=$SECONDS
  if [[ ${FRESH:-} != 1 ]] && cmd_status 2>/dev/null && [[ -f $K/.up ]]; then
    log "already running and healthy (FRESH=1 restarts)"
    return 0
  fi
  cmd_down
  BINS=$(cluster_bins)
  KUEUE=$(bash "$here/kueue/build.sh" | tail -n1)
  mkdir -p "$K" "$S/run" "$S/log"
  write_kueue_certs
  write_kueue_config
  write_kueue_webhooks
  kubectl apply --server-side --force-conflicts -f "$K/crd/" >/dev/null
  wait_for "the Kueue CRDs" 60 crds_established
  start_kueue
  wait_for "Kueue" 120 curl -sf "http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz"
  kubectl apply -f "$K/webhooks.yaml" >/dev/null
  wait_for "the Kueue webhooks" 60 webhooks_answer
  touch "$K/.up"
  log "up in $((SECONDS - start)) s"
}

cmd_down() {
  [[ -d $S ]] || return 0
  rm -f "$K/.up"
  if [[ -f $S/bins ]] && [[ -f $S/admin.kubeconfig ]]; then
    BINS=$(cat "$S/bins")
    # The webhooks first: with Kueue gone, a queued JobSet is refused
    # (failurePolicy Fail) rather than run unqueued.
    kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration "${WEBHOOKS[@]}" \
      --ignore-not-found --request-timeout=10s >/dev/null 2>&1 || log "warning: could not delete the webhook configurations"
  fi
  stop_kueue
  remove_created_paths
}

# --- files -------------------------------------------------------------------

# write_kueue_certs: a serving certificate for 127.0.0.1 from the cluster's CA
# (hack/kube/config.sh make_cert), for the webhooks and, by the fixed path
# above, the metrics server.
write_kueue_certs() {
  [[ -f $S/pki/ca.key ]] || die "no cluster CA in $S/pki"
  make_cert kueue-webhook kueue-webhook "" "IP:127.0.0.1,DNS:localhost"
  mkdir -p "$K/certs"
  cp "$S/pki/kueue-webhook.crt" "$K/certs/tls.crt"
  cp "$S/pki/kueue-webhook.key" "$K/certs/tls.key"
  rm -rf "$K/crd"
  cp -r "$KUEUE/crd" "$K/crd"
  patch_conversion
}

# patch_conversion: Kueue's CRDs serve v1beta1 and v1beta2; upstream's
# kustomize patches route conversion to Kueue's webhook by a Service, here
# by URL, so a v1beta1 client gets converted objects, not mislabelled ones.
patch_conversion() {
  local crd f ca
  ca=$(base64 -w0 <"$S/pki/ca.crt")
  for crd in localqueues clusterqueues cohorts workloads multikueueclusters; do
    f=$K/crd/kueue.x-k8s.io_$crd.yaml
    [[ -f $f ]] || die "no CRD $f in the Kueue module"
    # The CRD's spec: key is at column 0 of the file's second level; the
    # conversion block goes right under it.
    awk -v url="https://127.0.0.1:$KUEUE_WEBHOOK_PORT/convert" -v ca="$ca" '
      { print }
      /^spec:$/ && !done {
        print "  conversion:"
        print "    strategy: Webhook"
        print "    webhook:"
        print "      conversionReviewVersions: [v1]"
        print "      clientConfig:"
        print "        url: " url
        print "        caBundle: " ca
        done = 1
      }' "$f" >"$f.tmp"
    mv "$f.tmp" "$f"
  done
}

# write_kueue_config: Kueue's Configuration. Only the JobSet integration; jobs
# without the queue label are not Kueue's; no leader election, no cert
# rotation (certs by path), no metrics, no visibility API server (an
# aggregated API would need the cluster to reach this host process).
write_kueue_config() {
  cat >"$K/config.yaml" <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
manageJobsWithoutQueueName: false
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $KUEUE_WEBHOOK_PORT
  certDir: $K/certs
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: 127.0.0.1:$KUEUE_HEALTH_PORT
# A workload whose pods are not all Ready within the timeout is evicted and
# requeued after a backoff of about base * 2^(n-1) s; after
# backoffLimitCount requeues it is deactivated.
waitForPodsReady:
  timeout: $KUEUE_PODS_READY_TIMEOUT
  blockAdmission: false
  requeuingStrategy:
    timestamp: Eviction
    backoffLimitCount: 2
    backoffBaseSeconds: 5
    backoffMaxSeconds: 30
integrations:
  frameworks:
  - jobset.x-k8s.io/jobset
featureGates:
  VisibilityOnDemand: false
EOF
}

# write_kueue_webhooks: the webhook configurations of the module's
# config/components/webhook for Kueue's own kinds and for JobSets (the
# only integration on), by URL. The JobSet webhooks select only JobSets
# with the queue label: a JobSet without it never reaches Kueue, so
# failurePolicy Fail (upstream's) cannot refuse it when Kueue is down.
write_kueue_webhooks() {
  local ca url
  ca=$(base64 -w0 <"$S/pki/ca.crt")
  url=https://127.0.0.1:$KUEUE_WEBHOOK_PORT
  cat >"$K/webhooks.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: ${WEBHOOKS[0]}
webhooks:
$(hook mclusterqueue.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 clusterqueues CREATE)
$(hook mresourceflavor.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 resourceflavors CREATE)
$(hook mworkload.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 workloads CREATE)
$(hook mjobset.kb.io "$url" "$ca" jobset.x-k8s.io v1alpha2 jobsets CREATE)
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ${WEBHOOKS[1]}
webhooks:
$(hook vclusterqueue.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 clusterqueues CREATE,UPDATE)
$(hook vcohort.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 cohorts CREATE,UPDATE)
$(hook vresourceflavor.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 resourceflavors CREATE,UPDATE)
$(hook vworkload.kb.io "$url" "$ca" kueue.x-k8s.io v1beta2 workloads,workloads/status CREATE,UPDATE)
$(hook vjobset.kb.io "$url" "$ca" jobset.x-k8s.io v1alpha2 jobsets CREATE,UPDATE)
EOF
}

# hook NAME URL CA GROUP VERSION RESOURCES OPS: one webhooks[] item; its
# path is the one controller-runtime derives from the name's kind
# (/mutate-<group with dashes>-<version>-<kind>), as upstream's manifests.
hook() {
  local name=$1 url=$2 ca=$3 group=$4 version=$5 resources=$6 ops=$7 kind verb
  kind=${resources%%,*}
  kind=${kind%s}
  verb=mutate
  [[ $name == v* ]] && verb=validate
  cat <<EOF
- name: $name
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig:
    url: $url/$verb-${group//./-}-$version-$kind
    caBundle: $ca
  rules:
  - apiGroups: [$group]
    apiVersions: [$version]
    operations: [${ops//,/, }]
    resources: [${resources//,/, }]
EOF
  if [[ $group == jobset.x-k8s.io ]]; then
    cat <<EOF
  objectSelector:
    matchExpressions:
    - key: $QUEUE_LABEL
      operator: Exists
EOF
  fi
}

# --- process -----------------------------------------------------------------

# start_kueue: Kueue in a mount namespace of its own, where the state dir's
# certificate is bind-mounted on the fixed metrics path; the mount point is
# made on the host if missing (and removed by down).
start_kueue() {
  make_mount_point
  # 8<&- 9<&-: the daemon must not inherit the locks of this script or of
  # cluster.sh, or every later up or down waits on them.
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid unshare --mount --propagation private -- bash -c \
    'mount --bind "$1" "$2" && exec "$3" --config "$4" --kubeconfig "$5" --zap-log-level "$6"' \
    kueue "$K/certs" "$METRICS_CERT_DIR" "$KUEUE/bin/kueue" "$K/config.yaml" "$S/admin.kubeconfig" \
    "${KUEUE_LOG_LEVEL:-info}" </dev/null >"$S/log/kueue.log" 2>&1 8<&- 9<&- &
  echo $! >"$(pid_file)"
}

# make_mount_point: create what is missing of the metrics cert path,
# recording each directory made, outermost first.
make_mount_point() {
  local p=$METRICS_CERT_DIR missing=()
  while [[ ! -e $p ]]; do
    missing=("$p" "${missing[@]}")
    p=$(dirname "$p")
  done
  for p in "${missing[@]}"; do
    mkdir "$p"
    echo "$p" >>"$K/created-paths"
  done
}

remove_created_paths() {
  [[ -f $K/created-paths ]] || return 0
  local p
  # innermost first
  tac "$K/created-paths" | while IFS= read -r p; do
    if [[ -n $p ]]; then rmdir "$p" 2>/dev/null || log "warning: could not remove $p"; fi
  done
  rm -f "$K/created-paths"
}

# stop_kueue: TERM, wait up to 10 s, then KILL.
stop_kueue() {
  local i pid
  alive || { rm -f "$(pid_file)"; return 0; }
  pid=$(cat "$(pid_file)")
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    [[ -d /proc/$pid ]] || break
    sleep 0.1
  done
  if [[ -d /proc/$pid ]]; then
    log "killing Kueue (pid $pid): TERM did not stop it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$(pid_file)"
}

# --- health ------------------------------------------------------------------

wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    # Gone, not merely unlike Kueue: while unshare and bash exec into
    # Kueue, its command line can read empty for a moment.
    if [[ -f $(pid_file) ]] && [[ ! -d /proc/$(cat "$(pid_file)") ]]; then die "Kueue exited while waiting for $what (log: $S/log/kueue.log): $(tail -n 3 "$S/log/kueue.log" 2>/dev/null)"; fi
    sleep 0.2
  done
  die "timed out after ${secs} s waiting for $what (log: $S/log/kueue.log)"
}

crds_established() {
  local crd
  for crd in workloads clusterqueues localqueues resourceflavors workloadpriorityclasses; do
    [[ $(kubectl get crd "$crd.kueue.x-k8s.io" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}') == True ]] || return 1
  done
}

# webhooks_answer: a server dry-run of a queued JobSet comes back suspended
# by Kueue's mutating webhook, and a ResourceFlavor with a bad node label is
# denied by its validating webhook.
webhooks_answer() {
  probe_jobset | dry_run jobset.x-k8s.io/v1alpha2 jobsets default | grep -Eq '"suspend": ?true' || return 1
  echo '{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "kueue-probe"},
    "spec": {"nodeLabels": {"bad key!": "x"}}}' |
    dry_run kueue.x-k8s.io/v1beta2 resourceflavors "" | grep -q 'vresourceflavor.kb.io.* denied'
}

# dry_run GROUPVERSION RESOURCE NAMESPACE: POST the JSON on stdin with
# dryRun=All; prints the response or the error.
dry_run() {
  local path=/apis/$1
  [[ -z $3 ]] || path+=/namespaces/$3
  kubectl create --raw "$path/$2?dryRun=All" -f - 2>&1 || true
}

probe_jobset() {
  cat <<EOF
{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
 "metadata": {"name": "kueue-probe", "namespace": "default", "labels": {"$QUEUE_LABEL": "kueue-probe"}},
 "spec": {"replicatedJobs": [{"name": "a", "template": {"spec": {"template": {"spec":
   {"containers": [{"name": "c", "image": "jobset-flux.test/pause:1"}]}}}}}]}}
EOF
}

main "$@"
