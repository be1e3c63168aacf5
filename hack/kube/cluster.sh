#!/usr/bin/env bash
# A real Kubernetes cluster on this machine, from nothing: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, a first node
# (kubelet, containerd + runc, the CNI bridge) and KUBE_WORKERS worker nodes
# of their own network and mount namespaces (hack/kube/nodes.sh), CoreDNS,
# the JobSet controller and Kueue
# (hack/kube/kueue.sh) with their webhooks, NetworkPolicy enforcement
# (hack/kube/netpol.sh, kube-router), every daemon a background process
# with a PID file and a log in the state directory (no systemd here). See
# docs/contributing/kubernetes.md.
#
# Usage: hack/kube/cluster.sh up|down|status|env|node
#   up      build or reuse everything (hack/kube/build.sh, the images and
#           registry of hack/kube/images and hack/kube/registry), clean what a
#           killed run left behind, start, and wait until every node is Ready,
#           DNS answers and the JobSet webhooks admit a good JobSet and reject
#           a bad one. A healthy running cluster is left as is (FRESH=1
#           restarts it).
#   down    stop everything and restore what up changed on the machine.
#   status  exit 0 if the cluster is running and healthy.
#   env     print `export KUBECONFIG=... KUBECTL=...`.
#   node ACTION NODE
#           a node fault done to a worker: off, on, freeze, thaw, cut,
#           reconnect (hack/kube/nodes.sh, cmd_node).
# KUBE_STATE_DIR (default /var/lib/jobset-flux-kube) holds all state.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

S=${KUBE_STATE_DIR:-/var/lib/jobset-flux-kube}
NODE=${KUBE_NODE_NAME:-jobset-flux-node}
NODE_CPUS=${KUBE_NODE_CPUS:-16}
NODE_GPUS=${KUBE_NODE_GPUS:-8}
WORKERS=${KUBE_WORKERS:-3}
WORKER_CPUS=${KUBE_WORKER_CPUS:-4}
# The first node's pod bridge, and the node network's bridge the workers
# are on; their addresses are family.sh's.
BR=jfkube0
NODE_BR=jfnodes0
WORKER_TAINT=jobset-flux.test/worker=true:NoSchedule
WORKER_POOL_LABEL=jobset-flux.test/pool=workers
TOPOLOGY_BLOCK_LABEL=jobset-flux.test/block
TOPOLOGY_RACK_LABEL=jobset-flux.test/rack
# Ports away from the usual defaults, so a cluster of another kind can coexist.
ETCD_PORT=23790
ETCD_PEER_PORT=23800
API_PORT=16443
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
DNS_PORT=53
DNS_HEALTH_PORT=18080
DNS_READY_PORT=18181
JOBSET_WEBHOOK_PORT=19443
JOBSET_HEALTH_PORT=18082
REGISTRY_PORT=25000
CGROUP_ROOT=jobset-flux-kube
SOCK=$S/containerd/containerd.sock
CNI_BIN=/usr/lib/cni
PAUSE_IMAGE=jobset-flux.test/pause:1
FWD_CHAIN=JFKUBE-FORWARD
SVC_CHAIN=JFKUBE-SERVICES
# Kernel tunables the kubelet (protectKernelDefaults: false) or the CNI bridge
# may rewrite: saved before up, restored by down.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward
  net.ipv6.conf.all.forwarding net.ipv4.conf.all.route_localnet)
# Host paths the kubelet, containerd and CNI write to whatever we configure:
# inside the private mount namespace each is a bind mount of a directory in
# the state dir (listed as "host-path state-subdir").
BINDS=("/var/lib/kubelet kubelet" "/var/log/containers log/containers" "/var/log/pods log/pods"
  "/var/lib/cni cni/var" "/run/netns netns" "/run/containerd containerd/run")

# up starts the address family asked for (KUBE_IP_FAMILY, ipv4 unless
# set); every other command works on the cluster as it was started.
if [[ ${1:-} == up || ! -f $S/ip-family ]]; then
  IP_FAMILY=${KUBE_IP_FAMILY:-ipv4}
else
  IP_FAMILY=$(cat "$S/ip-family")
fi
# shellcheck source-path=SCRIPTDIR
source "$here/family.sh"
# shellcheck source-path=SCRIPTDIR
source "$here/config.sh"
# shellcheck source-path=SCRIPTDIR
source "$here/nodes.sh"

log() { printf 'kube: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

main() {
  [[ $(id -u) == 0 ]] || die "run as root (network, mounts, cgroups)"
  case ${1:-} in
  up) lock && cmd_up ;;
  down) lock && cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  node) shift && cmd_node "$@" ;;
  *) die "usage: $0 up|down|status|env|node" ;;
  esac
}

# lock: one up or down at a time on this machine (two engineers' `make
# kube-up` would otherwise race). The lock sits beside the state directory it
# guards, so every clone and every HOME (a cold CI run has its own) takes the
# same one.
lock() {
  mkdir -p "$(dirname "$S")"
  exec 9>>"$S.lock"
  flock 9
}

kubectl() { "$BINS/bin/kubectl" --kubeconfig "$S/admin.kubeconfig" "$@"; }

cmd_env() {
  BINS=$(bins_dir)
  printf 'export KUBECONFIG=%s KUBECTL=%s\n' "$S/admin.kubeconfig" "$BINS/bin/kubectl"
}

# bins_dir: the cached binaries (quick once built).
bins_dir() {
  if [[ -f $S/bins ]] && [[ -f $(cat "$S/bins")/.complete ]]; then
    cat "$S/bins"
  else
    bash "$here/build.sh" | tail -n1
  fi
}

cmd_status() {
  [[ -f $S/bins ]] || { log "not running"; return 1; }
  BINS=$(cat "$S/bins")
  local d
  for d in etcd apiserver controller-manager scheduler registry mntns containerd kubelet coredns jobset; do
    alive "$d" || { log "$d is not running"; return 1; }
  done
  kubectl get --raw /readyz >/dev/null 2>&1 || { log "apiserver not ready"; return 1; }
  node_ready "$NODE" || { log "node not Ready"; return 1; }
  workers_alive || return 1
  log "running: $(kubectl get nodes --no-headers 2>/dev/null | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')"
}

cmd_up() {
  local start=$SECONDS
  if [[ ${FRESH:-} != 1 ]] && [[ $(cat "$S/ip-family" 2>/dev/null) == "$IP_FAMILY" ]] && cmd_status 2>/dev/null; then
    log "already running and healthy (FRESH=1 restarts)"
    bash "$here/netpol.sh" up
    bash "$here/kueue.sh" up
    return 0
  fi
  log "cleaning up whatever a previous run left"
  cmd_down
  BINS=$(bash "$here/build.sh" | tail -n1)
  CONTAINERD=$(bash "$here/containerd/build.sh" | tail -n1)
  IMAGES=$(bash "$here/images/build.sh" | tail -n1)
  REGISTRY=$(bash "$here/registry/build.sh" | tail -n1)
  bash "$here/kueue.sh" build >/dev/null
  bash "$here/netpol.sh" build >/dev/null
  local built=$SECONDS
  mkdir -p "$S/run" "$S/log" "$S/saved"
  echo "$BINS" >"$S/bins"
  echo "$IP_FAMILY" >"$S/ip-family"
  echo "$CONTAINERD" >"$S/containerd-dir"
  save_machine_state
  write_all_configs
  start_network
  start_node_network
  start_control_plane
  start_node
  start_workers
  start_addons
  wait_healthy
  wait_workers
  bash "$here/netpol.sh" up
  bash "$here/kueue.sh" up
  log "up in $((SECONDS - built)) s after $((built - start)) s of build checks (total $((SECONDS - start)) s)"
}

write_all_configs() {
  write_pki
  local k
  for k in admin controller-manager scheduler kubelet; do write_kubeconfig "$k"; done
  write_containerd_config "$S"
  write_cni_config "$S" "$BR" 0
  write_kubelet_config "$S" "$BR_IP" "$CGROUP_ROOT" kubelet-serving
  write_coredns_config
  write_jobset_config
  write_webhooks
  write_fake_cpus "$NODE_CPUS" "$S/fake"
  bash "$here/images/hosts.sh" "$S/certs.d" "$REGISTRY_PORT" "$IMAGES/refs.txt" >/dev/null
  # Every node pulls from the registry on the node network, where the
  # workers reach it (and no pod does).
  sed -i "s|127.0.0.1:$REGISTRY_PORT|$(host_port "$HOST_NODE_IP" "$REGISTRY_PORT")|g" "$S"/certs.d/*/hosts.toml
  write_worker_configs
}

# --- processes ---------------------------------------------------------------

# daemon NAME CMD...: start CMD in its own session, log and PID file in $S.
daemon() {
  local name=$1
  shift
  # 9<&-: the daemon must not inherit the up/down lock (fd 9), or every
  # later `down` waits on it for as long as the cluster runs.
  setsid "$@" </dev/null >"$S/log/$name.log" 2>&1 9<&- &
  echo $! >"$S/run/$name.pid"
}

# alive NAME: the daemon's PID file names a live process of ours.
alive() {
  local f=$S/run/$1.pid pid
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ -d /proc/$pid ]] && ours "$pid"
}

# ours PID: the process's command line names the state directory (every
# daemon's does), so a recycled PID is never killed.
ours() { cmdline_names "/proc/$1" "$S"; }

# cmdline_names /proc/PID PATH: the command line has PATH as a word or a
# directory of one ("$S/etcd"), not merely as a prefix: the locks beside the
# state dir ("$S.session.lock") are held by processes down must not kill.
cmdline_names() {
  tr '\0' ' ' 2>/dev/null <"$1/cmdline" | grep -qF -e "$2/" -e "$2 "
}

# cpu_seconds PID: the CPU time the process and its waited-for children
# used, in whole seconds (utime+stime+cutime+cstime of /proc/PID/stat;
# the fields after the command, which may hold spaces, in parentheses).
cpu_seconds() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($12 + $13 + $14 + $15) / hz }' <<<"${stat##*) }"
}

# stop_daemons NAME...: TERM them all, wait up to 10 s, then KILL the rest.
# Logs the CPU each used: on a 2-CPU node the control plane's share of a
# test run is time the pods did not get.
stop_daemons() {
  local name f pid pids=() i used=""
  for name in "$@"; do
    f=$S/run/$name.pid
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    if [[ -d /proc/$pid ]] && ours "$pid"; then
      used+="${used:+, }$name $(cpu_seconds "$pid") s"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$f"
  done
  if [[ -n $used ]]; then log "CPU used: $used"; fi
  for ((i = 0; i < 100 && ${#pids[@]}; i++)); do
    for pid in "${!pids[@]}"; do
      [[ -d /proc/${pids[pid]} ]] || unset "pids[pid]"
    done
    sleep 0.1
  done
  if ((${#pids[@]})); then
    log "killing what TERM did not stop: $(for pid in "${pids[@]}"; do tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-60; done)"
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
}

# wait_for WHAT SECONDS CMD...: poll CMD every 0.2 s.
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "timed out after ${secs} s waiting for $what (logs: $S/log)"
}


# --- machine state -----------------------------------------------------------

# save_machine_state: what down restores. Kept from the first up on: a run
# that died half way must not save the state it had already changed.
save_machine_state() {
  local d=$S/saved s b host
  [[ -f $d/.complete ]] && return 0
  : >"$d/sysctl"
  for s in "${SYSCTLS[@]}"; do
    if [[ -e /proc/sys/${s//.//} ]]; then echo "$s=$(sysctl -n "$s")" >>"$d/sysctl"; fi
  done
  iptables-save >"$d/iptables" 2>/dev/null || true
  ip6tables-save >"$d/ip6tables" 2>/dev/null || true
  : >"$d/created-cgroups"
  for b in $(cgroup_dirs); do
    if [[ ! -e $b/k8s.io ]]; then echo "$b/k8s.io" >>"$d/created-cgroups"; fi
  done
  : >"$d/created-paths"
  for b in "${BINDS[@]}"; do
    host=${b%% *}
    [[ -e $host ]] || { mkdir -p "$host"; echo "$host" >>"$d/created-paths"; }
  done
  touch "$d/.complete"
}

restore_machine_state() {
  local d=$S/saved line p
  [[ -f $d/sysctl ]] || return 0
  while IFS= read -r line; do
    if [[ -n $line ]]; then sysctl -q -w "$line" >/dev/null; fi
  done <"$d/sysctl"
  if [[ -f $d/created-paths ]]; then
    while IFS= read -r p; do
      if [[ -n $p ]]; then rmdir "$p" 2>/dev/null || true; fi
    done <"$d/created-paths"
  fi
}

# --- network -----------------------------------------------------------------

start_network() {
  ip link add "$BR" type bridge
  addr_add "$BR_IP/$POD_PREFIX_LEN" "$BR"
  ip link set "$BR" up
  # Pod to pod across nodes is routed here (cluster.sh saves and restores
  # the tunable).
  sysctl -q -w "$FORWARDING_SYSCTL=1"
  local ipt
  for ipt in iptables ip6tables; do
    # Bridged traffic passes FORWARD (br_netfilter): pod to pod on the bridge
    # only; nothing is routed into or out of the pod network (what a pod
    # reaches on this host, DNS and the API server, it reaches by INPUT).
    "$ipt" -w -N "$FWD_CHAIN"
    "$ipt" -w -A "$FWD_CHAIN" -i "$BR" -o "$BR" -j ACCEPT
    "$ipt" -w -A "$FWD_CHAIN" -i "$BR" -j DROP
    "$ipt" -w -A "$FWD_CHAIN" -o "$BR" -j DROP
    "$ipt" -w -I FORWARD 1 -j "$FWD_CHAIN"
  done
  start_service_route
}

# start_service_route: the one Service a pod reaches, as on any cluster: the
# API server's (default/kubernetes, whose address the kubelet gives every
# container as KUBERNETES_SERVICE_HOST). Its address is translated to the
# API server's, which this host serves, so no packet leaves the host; there
# is no service proxy for any other Service.
start_service_route() {
  "$IPT" -w -t nat -N "$SVC_CHAIN"
  "$IPT" -w -t nat -A "$SVC_CHAIN" -d "$SVC_IP" -p tcp --dport 443 -j DNAT --to-destination "$(host_port "$BR_IP" "$API_PORT")"
  "$IPT" -w -t nat -I PREROUTING 1 -j "$SVC_CHAIN"
}

stop_network() {
  if ip link show "$BR" >/dev/null 2>&1; then ip link del "$BR"; fi
  local ipt
  for ipt in iptables ip6tables; do
    remove_chains "$ipt" "$S/saved/$ipt"
  done
}

# remove_chains IPT SAVED: delete our forward chain and every KUBE-* chain the
# kubelet made (absent from the SAVED iptables-save of before up), with the
# rules that jump to them.
remove_chains() {
  local ipt=$1 saved=$2 table chain rule
  for table in filter nat mangle; do
    for chain in $("$ipt" -w -t "$table" -S 2>/dev/null | awk '$1 == "-N" { print $2 }'); do
      [[ $chain == "$FWD_CHAIN" || $chain == "$SVC_CHAIN" || $chain == KUBE-* ]] || continue
      if [[ -f $saved ]] && chain_in_saved "$saved" "$table" "$chain"; then continue; fi
      "$ipt" -w -t "$table" -S | { grep -E -- "-j $chain( |\$)" || true; } | while IFS= read -r rule; do
        # A rule is shell words: a comment in it is quoted (eval).
        eval "\"\$ipt\" -w -t \"\$table\" ${rule/-A/-D}"
      done
      "$ipt" -w -t "$table" -F "$chain"
      "$ipt" -w -t "$table" -X "$chain"
    done
  done
}

# chain_in_saved FILE TABLE CHAIN: the chain existed before up.
chain_in_saved() {
  awk -v t="*$2" -v c=":$3" '$1 ~ /^\*/ { in_t = ($1 == t) } in_t && $1 == c { found = 1 } END { exit !found }' "$1"
}

# --- control plane -----------------------------------------------------------

start_control_plane() {
  daemon etcd "$BINS/bin/etcd" --name default --data-dir "$S/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --unsafe-no-fsync --log-level warn
  wait_for etcd 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  local p=$S/pki
  daemon apiserver "$BINS/bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$BR_IP" --advertise-address "$BR_IP" --secure-port "$API_PORT" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$SVC_CIDR" --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction --allow-privileged=true --profiling=false
  wait_for kube-apiserver 90 kubectl get --raw /readyz
  daemon controller-manager "$BINS/bin/kube-controller-manager" --kubeconfig "$S/controller-manager.kubeconfig" \
    --secure-port 0 --leader-elect=false --service-account-private-key-file "$p/sa.key" \
    --root-ca-file "$p/ca.crt" --use-service-account-credentials=true --controllers '*'
  daemon scheduler "$BINS/bin/kube-scheduler" --kubeconfig "$S/scheduler.kubeconfig" \
    --secure-port 0 --leader-elect=false
}

# --- node --------------------------------------------------------------------

# in_ns CMD...: run CMD in the node's private mount namespace.
in_ns() { nsenter -t "$(cat "$S/run/mntns.pid")" -m -- "$@"; }

# start_node: the registry, a private mount namespace for containerd and the
# kubelet (their mounts, the pods' netns files and the CPU view live and die
# with it), then the two daemons inside it.
start_node() {
  daemon registry "$REGISTRY" -layout "$IMAGES/oci" -listen "$(host_port "$HOST_NODE_IP" "$REGISTRY_PORT")" \
    -log "$S/log/registry-access.log"
  # One process holds the namespace: sleep, named so its command line shows
  # the state dir (a child of a killed shell would keep the namespace alive).
  # shellcheck disable=SC2016 # $0 is the inner shell's
  daemon mntns unshare --mount --propagation private -- \
    bash -c 'exec -a "$0" sleep infinity' "jobset-flux-kube-mntns $S"
  wait_for "the mount namespace" 5 mntns_ready mntns
  readlink "/proc/$(cat "$S/run/mntns.pid")/ns/mnt" >"$S/run/mntns.id"
  local b host sub
  for b in "${BINDS[@]}"; do
    host=${b%% *} sub=${b#* }
    mkdir -p "$S/$sub"
    in_ns mount --bind "$S/$sub" "$host"
  done
  in_ns mount --bind "$S/fake/cpu" /sys/devices/system/cpu
  in_ns mount --bind "$S/fake/node" /sys/devices/system/node
  in_ns mount --bind "$S/fake/cpuinfo" /proc/cpuinfo
  make_cgroup_root "$CGROUP_ROOT"
  # PATH: containerd looks its shim up there first, and must find its own
  # (a Debian containerd-shim-runc-v2 1.6 may be installed too).
  daemon containerd nsenter -t "$(cat "$S/run/mntns.pid")" -m -- \
    env PATH="$CONTAINERD/bin:$PATH" "$CONTAINERD/bin/containerd" --config "$S/containerd/config.toml"
  wait_for containerd 30 "$CONTAINERD/bin/ctr" --address "$SOCK" version
  daemon kubelet nsenter -t "$(cat "$S/run/mntns.pid")" -m -- "$BINS/bin/kubelet" \
    --config "$S/kubelet-config/config.yaml" --kubeconfig "$S/kubelet.kubeconfig" \
    --hostname-override "$NODE" --node-ip "$BR_IP" --v 1
}

# mntns_ready NAME: the holder NAME runs in a mount namespace other than ours.
mntns_ready() {
  local ns
  ns=$(readlink "/proc/$(cat "$S/run/$1.pid")/ns/mnt") || return 1
  [[ $ns != "$(readlink /proc/self/ns/mnt)" ]]
}

# cgroup_dirs: every cgroup v1 hierarchy (and the v2 one) that may hold ours.
cgroup_dirs() {
  local d
  for d in /sys/fs/cgroup/*/; do
    if [[ -f $d/cgroup.procs ]]; then echo "${d%/}"; fi
  done
}

# make_cgroup_root NAME: a kubelet wants its cgroupRoot to exist. cpuset
# starts empty in cgroups v1: copy the parent's CPUs and memory nodes.
make_cgroup_root() {
  local d root=$1
  for d in $(cgroup_dirs); do
    [[ $d == */unified ]] && continue
    mkdir -p "$d/$root"
  done
  if [[ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$root/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$root/cpuset.mems"
  fi
}

# node_ready NAME
node_ready() {
  [[ $(kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# --- add-ons -----------------------------------------------------------------

start_addons() {
  daemon coredns "$BINS/bin/coredns" -conf "$S/coredns/Corefile"
  kubectl apply --server-side -f "$BINS/crd/" >/dev/null
  wait_for "the JobSet CRD" 60 crd_established
  daemon jobset "$BINS/bin/jobset-controller" --config "$S/jobset/config.yaml" \
    --kubeconfig "$S/admin.kubeconfig" --zap-log-level info
  wait_for "the JobSet controller" 60 curl -sf "http://127.0.0.1:$JOBSET_HEALTH_PORT/readyz"
  kubectl apply -f "$S/jobset/webhooks.yaml" >/dev/null
}

crd_established() {
  [[ $(kubectl get crd jobsets.jobset.x-k8s.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}') == True ]]
}

# --- health ------------------------------------------------------------------

wait_healthy() {
  wait_for "node $NODE Ready" 120 node_ready "$NODE"
  # Extended resources are what a device plugin would advertise; the kubelet
  # keeps capacity it does not manage, so a status patch stands in for one.
  kubectl patch node "$NODE" --subresource status --type json \
    -p "[{\"op\":\"add\",\"path\":\"/status/capacity/nvidia.com~1gpu\",\"value\":\"$NODE_GPUS\"}]" >/dev/null
  wait_for "nvidia.com/gpu in the node's allocatable" 30 gpus_allocatable
  wait_for "CoreDNS" 60 dns_answers
  wait_for "the JobSet webhooks" 60 webhooks_answer
  log "node: $(kubectl get node "$NODE" -o jsonpath='cpu={.status.allocatable.cpu} memory={.status.allocatable.memory} gpu={.status.allocatable.nvidia\.com/gpu}')"
}

# gpus_allocatable: the kubelet copied the patched capacity to allocatable.
gpus_allocatable() {
  [[ $(kubectl get node "$NODE" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}') == "$NODE_GPUS" ]]
}

# dns_answers: the API's Service name resolves, any other name is NXDOMAIN.
dns_answers() {
  busybox nslookup kubernetes.default.svc.cluster.local "$BR_IP" | grep -q "$SVC_IP" || return 1
  ! busybox nslookup example.com "$BR_IP" >/dev/null 2>&1
}

# webhooks_answer: a server dry-run of a good JobSet comes back defaulted by
# the mutating webhook (completionMode Indexed), a bad one (dependsOn on its
# first replicatedJob) is denied by the validating webhook. curl, not
# kubectl: kubectl prints only the causes, not which admission denied.
webhooks_answer() {
  probe_jobset '' | api_dry_run_create | grep -q '"completionMode": "Indexed"' || return 1
  probe_jobset '      dependsOn: [{name: b, status: Ready}]' | api_dry_run_create |
    grep -q 'admission webhook \\"vjobset.kb.io\\" denied the request'
}

# api_dry_run_create: POST the JobSet YAML on stdin with dryRun=All, as admin.
api_dry_run_create() {
  curl -s --cacert "$S/pki/ca.crt" --cert "$S/pki/admin.crt" --key "$S/pki/admin.key" \
    -H 'Content-Type: application/yaml' --data-binary @- \
    "https://$(host_port "$BR_IP" "$API_PORT")/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets?dryRun=All"
}

# probe_jobset EXTRA: a small JobSet with EXTRA under its first replicatedJob.
probe_jobset() {
  cat <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: probe, namespace: default}
spec:
  replicatedJobs:
    - name: a
$1
      template:
        spec:
          template:
            spec:
              containers: [{name: c, image: $PAUSE_IMAGE}]
    - name: b
      template:
        spec:
          template:
            spec:
              containers: [{name: c, image: $PAUSE_IMAGE}]
EOF
}

# --- down --------------------------------------------------------------------

cmd_down() {
  local start=$SECONDS
  down_step bash "$here/kueue.sh" down
  down_step bash "$here/netpol.sh" down
  # shellcheck disable=SC2046 # a list of names
  down_step stop_daemons jobset coredns kubelet $(worker_daemons kubelet)
  down_step kill_pods
  # shellcheck disable=SC2046 # a list of names
  down_step stop_daemons containerd $(worker_daemons containerd)
  down_step kill_shims
  down_step kill_pods
  # The API server before etcd, which its shutdown still talks to: stopped
  # together after a test run, it outlived TERM by 10 s and was killed.
  # shellcheck disable=SC2046 # a list of names
  down_step stop_daemons mntns $(worker_daemons mntns) registry scheduler controller-manager apiserver
  down_step stop_daemons etcd
  down_step kill_by_cmdline "$S"
  down_step kill_in_mntns
  down_step remove_cgroups
  down_step stop_worker_networks
  down_step stop_network
  down_step restore_machine_state
  down_step unmount_under "$S"
  remove_state_dir
  log "down in $((SECONDS - start)) s"
}

# remove_state_dir: the state directory goes at once (renamed), its
# contents in the background: containerd's unpacked images took 8-9 s of
# a 20 s down to delete. A removal a killed run left is finished here too.
remove_state_dir() {
  local d
  if [[ -e $S ]]; then mv -T -- "$S" "$S.removing.$$"; fi
  for d in "$S".removing.*; do
    [[ -e $d ]] || continue
    setsid rm -rf -- "$d" </dev/null >/dev/null 2>&1 9>&- &
  done
}

# down_step CMD...: one step of down, logged when it takes 3 s or more
# (after a loaded run down once took 61 s, and nothing said where).
down_step() {
  local s=$SECONDS
  "$@"
  if ((SECONDS - s >= 3)); then log "down: $1${2:+ $2} took $((SECONDS - s)) s"; fi
}

# node_dirs: the state directory of every node, the first one's and each
# worker's.
node_dirs() {
  echo "$S"
  local i
  for i in $(worker_indexes); do worker_dir "$i"; done
}

# container_cgroups BASE [HIERARCHY]: the cgroups of the containers of the
# node whose directory is BASE, in every hierarchy or in HIERARCHY. With no
# QoS cgroups containerd puts each under k8s.io/<container id>; the ids are
# those of the tasks in the node's containerd state dir (it survives a
# kill -9).
container_cgroups() {
  local tasks=$1/containerd/state/io.containerd.runtime.v2.task/k8s.io d id ids=()
  [[ -d $tasks ]] || return 0
  mapfile -t ids < <(ls "$tasks")
  for d in $(cgroup_dirs); do
    [[ -z ${2:-} || $d == */"$2" ]] || continue
    for id in "${ids[@]}"; do
      if [[ -d $d/k8s.io/$id ]]; then echo "$d/k8s.io/$id"; fi
    done
  done
}

# pod_cgroups: the cgroups of every node's containers in every hierarchy,
# and the nodes' cgroup roots.
pod_cgroups() {
  local d base
  for d in $(cgroup_dirs); do
    for base in "$d/$CGROUP_ROOT" "$d/$CGROUP_ROOT"-w*; do
      if [[ -d $base ]]; then echo "$base"; fi
    done
  done
  for base in $(node_dirs); do container_cgroups "$base"; done
}

# kill_shims: containerd's shims outlive a killed containerd; each names
# its node's socket.
kill_shims() {
  local base
  for base in $(node_dirs); do kill_by_cmdline "$base/containerd/containerd.sock"; done
}

# kill_pods: every process in our pods' cgroups, until none is left.
kill_pods() {
  local i pids cgroups
  cgroups=$(pod_cgroups)
  [[ -n $cgroups ]] || return 0
  for ((i = 0; i < 50; i++)); do
    # shellcheck disable=SC2086 # a list of directories
    pids=$(find $cgroups -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u || true)
    [[ -n $pids ]] || return 0
    # shellcheck disable=SC2086 # a list of PIDs
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  log "warning: pod processes left: $pids"
}

# kill_by_cmdline PATH: KILL every process whose command line names PATH.
kill_by_cmdline() {
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" || ${p#/proc/} == "$BASHPID" ]] && continue
    if cmdline_names "$p" "$1"; then
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
}

# kill_in_mntns: KILL whatever still runs in a node's mount namespace (it
# lives as long as one process does, and its mounts with it).
kill_in_mntns() {
  local f
  for f in "$S"/run/*mntns.id; do
    if [[ -f $f ]]; then kill_in_mntns_of "$(cat "$f")"; fi
  done
}

# kill_in_mntns_of NS: KILL every process in mount namespace NS.
kill_in_mntns_of() {
  local ns=$1 p i left
  for ((i = 0; i < 20; i++)); do
    left=0
    for p in /proc/[0-9]*; do
      if [[ $(readlink "$p/ns/mnt" 2>/dev/null) == "$ns" ]]; then
        kill -KILL "${p#/proc/}" 2>/dev/null || true
        left=1
      fi
    done
    ((left)) || return 0
    sleep 0.1
  done
  log "warning: processes left in a node's mount namespace $ns"
}

remove_cgroups() {
  local c
  for c in $(pod_cgroups); do
    find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
    if [[ -d $c ]]; then log "warning: cgroup left: $c"; fi
  done
  if [[ -f $S/saved/created-cgroups ]]; then
    while IFS= read -r c; do
      if [[ -n $c ]]; then rmdir "$c" 2>/dev/null || true; fi
    done <"$S/saved/created-cgroups"
  fi
}

# unmount_under DIR: any mount in this (the host's) namespace below DIR, the
# deepest first; there should be none, all of them live in the node's.
unmount_under() {
  local m
  findmnt -rn -o TARGET | grep -E "^$1(/|\$)" | sort -r | while read -r m; do
    log "warning: unmounting $m"
    umount -l "$m"
  done || true
}

main "$@"
