#!/usr/bin/env bash
# NetworkPolicy enforcement on the test cluster of hack/kube/cluster.sh:
# kube-router's network policy controller (hack/kube/netpol, run with only
# its firewall on: no routing, no service proxy) on every node, as a
# network plugin's DaemonSet runs it. The first node's is a host process
# with the admin kubeconfig like the JobSet controller and Kueue; a
# worker's runs inside the worker's namespaces, so that its chains and
# ipsets are that node's, and a node fault (hack/kube/nodes.sh) stops or
# kills it with the node. Each programs iptables chains (KUBE-ROUTER-*,
# KUBE-POD-FW-*, KUBE-NWPLCY-*) and ipsets for the pods of its node; with no
# NetworkPolicy in a namespace, that namespace's traffic is untouched.
#
# Usage: hack/kube/netpol.sh build|up|down|status
#   build   build or reuse the binary (hack/kube/netpol/build.sh).
#   up      on a running cluster: start each node's controller that does
#           not run (a worker's after it was powered off, for one) and wait
#           until it is healthy and its chains are in place. Healthy
#           running ones are left as they are (FRESH=1 restarts them).
#           cluster.sh up and `cluster.sh node on` call it.
#   down    stop them, remove every chain and rule they made and the ipsets
#           that were not there before up. cluster.sh down calls it.
#   status  exit 0 if every node's runs and is healthy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
S=${KUBE_STATE_DIR:-/var/lib/jobset-flux-kube}
N=$S/netpol
NODE=${KUBE_NODE_NAME:-jobset-flux-node}
# The cluster's address family, as cluster.sh up started it.
IP_FAMILY=$(cat "$S/ip-family" 2>/dev/null || echo ipv4)
# shellcheck source-path=SCRIPTDIR
source "$here/family.sh"
# shellcheck source-path=SCRIPTDIR
source "$here/nodes.sh"
NETPOL_HEALTH_PORT=18084
# The ipsets kube-router names (pkg/controllers/netpol): only these, and only
# those that were not there before up, are destroyed by down.
SET_PREFIXES='^(KUBE-SRC-|KUBE-DST-|kube-router-)'
# Its iptables chains (filter table), by the same source.
CHAIN_PREFIXES='^KUBE-(ROUTER-|POD-FW-|NWPLCY-)'

log() { printf 'netpol: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

main() {
  case ${1:-} in
  build) bash "$here/netpol/build.sh" | tail -n1 ;;
  up) need_root && lock && cmd_up ;;
  down) need_root && lock && cmd_down ;;
  status) cmd_status ;;
  *) die "usage: $0 build|up|down|status" ;;
  esac
}

need_root() { [[ $(id -u) == 0 ]] || die "run as root (iptables, ipset)"; }

# lock: one netpol up or down at a time; not cluster.sh's lock, which its own
# up and down hold while they call this script.
lock() {
  mkdir -p "$(dirname "$S")"
  exec 7>>"$S.netpol.lock"
  flock 7
}

# Nodes are numbered as nodes.sh numbers workers: 0 is the first node.

# nodes: 0 and each worker's index.
nodes() {
  echo 0
  worker_indexes
}

# node_name I, pid_file I, log_file I, kubeconfig I: node I's name, and its
# controller's PID file, log and kubeconfig. A worker's kubeconfig is in the
# worker's directory, so that its controller's command line names the
# worker, as nodes.sh's faults find the worker's processes.
node_name() { if (($1 == 0)); then echo "$NODE"; else worker_name "$1"; fi; }
pid_file() { if (($1 == 0)); then echo "$S/run/netpol.pid"; else echo "$S/run/w$1-netpol.pid"; fi; }
log_file() { if (($1 == 0)); then echo "$S/log/netpol.log"; else echo "$S/log/w$1-netpol.log"; fi; }
kubeconfig() { if (($1 == 0)); then echo "$N/kubeconfig"; else echo "$(worker_dir "$1")/netpol.kubeconfig"; fi; }

# on_node I CMD...: CMD in node I's network (and mount) namespace; fails
# when a worker's namespaces are gone.
on_node() {
  local i=$1
  shift
  if ((i == 0)); then
    "$@"
  else
    [[ -f $S/run/w$i-mntns.pid && -d /proc/$(cat "$S/run/w$i-mntns.pid") ]] || return 1
    in_worker "$i" "$@"
  fi
}

# alive I: the PID file names a live process whose command line names the
# state directory (so a recycled PID is never taken for ours).
alive() {
  local f pid
  f=$(pid_file "$1")
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ -d /proc/$pid ]] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$S/"
}

# running PID: the process is there and not a zombie. The wait after start
# asks this, not alive: until setsid has exec'd kube-router, the child's
# command line is still this script's.
running() {
  [[ -r /proc/$1/stat ]] && [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) != Z ]]
}

healthy() {
  on_node "$1" curl -sf "http://127.0.0.1:$NETPOL_HEALTH_PORT/healthz" >/dev/null &&
    on_node "$1" "$IPT" -w -S KUBE-ROUTER-FORWARD >/dev/null 2>&1
}

cmd_status() {
  local i
  for i in $(nodes); do
    alive "$i" || { log "node $(node_name "$i"): not running"; return 1; }
    healthy "$i" || { log "node $(node_name "$i"): not healthy"; return 1; }
  done
  log "running on $(nodes | wc -l) nodes"
}

cmd_up() {
  local start=$SECONDS bin i
  if [[ ${FRESH:-} == 1 ]]; then cmd_down; fi
  command -v ipset >/dev/null || die "ipset is not installed (.ci/apt/kube.txt; make system-deps)"
  [[ -f $S/admin.kubeconfig ]] || die "the cluster is not running (hack/kube/cluster.sh up)"
  bin=$(bash "$here/netpol/build.sh" | tail -n1)/bin/kube-router
  mkdir -p "$N" "$S/run" "$S/log"
  if [[ ! -f $N/sets-before ]]; then ipset list -n >"$N/sets-before" 2>/dev/null || :; fi
  # Every node's starts before any is waited on: each takes seconds to
  # list the cluster's pods and policies and sync its chains.
  local started=()
  for i in $(nodes); do
    if alive "$i" && healthy "$i"; then continue; fi
    # From a clean slate: a worker powered on again has the chains its
    # killed controller left, which a rebooted machine would not.
    node_down "$i"
    cp "$S/admin.kubeconfig" "$(kubeconfig "$i")"
    start_router "$i" "$bin"
    started+=("$i")
  done
  for i in "${started[@]}"; do node_wait "$i" "$bin"; done
  log "up in $((SECONDS - start)) s"
}

# node_wait I BIN: wait until node I's controller is healthy. One that
# exits at start is started once more: CI saw one exit with nothing in its
# log and no reproduction since. The second exit is an error that names
# the exit status.
node_wait() {
  local i=$1 bin=$2 attempt status
  for attempt in 1 2; do
    status=0
    wait_healthy "$i" "$(cat "$(pid_file "$i")")" || status=$?
    case $status in
    0) return 0 ;;
    124) die "timed out waiting for kube-router on $(node_name "$i") (log: $(log_file "$i"))" ;;
    esac
    log "kube-router on $(node_name "$i") exited with status $status at start (attempt $attempt): $(tail -n 3 "$(log_file "$i")" 2>/dev/null)"
    if ((attempt == 1)); then start_router "$i" "$bin"; fi
  done
  die "kube-router on $(node_name "$i") exited twice at start (log: $(log_file "$i"))"
}

# start_router I BIN: node I's kube-router in the background, its PID in
# the PID file.
start_router() {
  local i=$1 bin=$2 enter=()
  # nsenter and setsid exec what they run: the PID is kube-router's.
  if ((i > 0)); then enter=(nsenter -t "$(cat "$S/run/w$i-mntns.pid")" -m -n --); fi
  # 9<&- 8<&- 7<&-: the cluster's, Kueue's and this script's locks stay with
  # their holders.
  "${enter[@]}" setsid "$bin" --kubeconfig "$(kubeconfig "$i")" --hostname-override "$(node_name "$i")" \
    --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
    --enable-cni=false --enable-ipv4="$([[ $IP_FAMILY == ipv4 ]] && echo true || echo false)" \
    --enable-ipv6="$([[ $IP_FAMILY == ipv6 ]] && echo true || echo false)" \
    --service-cluster-ip-range "$SVC_CIDR" --health-port "$NETPOL_HEALTH_PORT" --metrics-port 0 \
    --v 1 </dev/null >"$(log_file "$i")" 2>&1 9<&- 8<&- 7<&- &
  echo $! >"$(pid_file "$i")"
}

# wait_healthy I PID: 0 once node I's is healthy, 124 on timeout, else the
# exit status of the kube-router that exited (PID is this shell's child, so
# wait has it).
wait_healthy() {
  local i=$1 pid=$2 n status
  for ((n = 0; n < 300; n++)); do
    healthy "$i" && return 0
    if ! running "$pid"; then
      status=0
      wait "$pid" || status=$?
      ((status != 0 && status != 124)) || status=1
      return "$status"
    fi
    sleep 0.2
  done
  return 124
}

cmd_down() {
  [[ -d $S ]] || return 0
  local i
  # TERM to all first: each takes a second or two to stop.
  for i in $(nodes); do
    if alive "$i"; then kill -TERM "$(cat "$(pid_file "$i")")" 2>/dev/null || true; fi
  done
  for i in $(nodes); do node_down "$i"; done
  if [[ -d $N ]]; then
    destroy_sets 0
    rm -rf "$N"
  fi
}

# node_down I: node I's controller stopped, and its chains and (on a
# worker) its ipsets removed; a worker whose namespaces are gone has none.
node_down() {
  local i=$1 f pid n
  f=$(pid_file "$i")
  if [[ -f $f ]]; then
    pid=$(cat "$f")
    if alive "$i"; then
      kill -TERM "$pid" 2>/dev/null || true
      for ((n = 0; n < 50; n++)); do
        [[ -d /proc/$pid ]] || break
        sleep 0.1
      done
      if [[ -d /proc/$pid ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$f"
  fi
  # A worker whose namespaces are gone has nothing left to remove.
  on_node "$i" true || return 0
  # Not kube-router --cleanup-config: v2.1.0's leaves the filter chains in
  # place and then crashes in the service proxy's cleanup.
  remove_chains "$i"
  # The first node's ipsets go only at down, with the list of those that
  # were there before up (cmd_down).
  if ((i > 0)); then destroy_sets "$i"; fi
}

# remove_chains I: kube-router's filter chains on node I, and every rule
# that jumps to one, in iptables and ip6tables. Its rules carry quoted
# comments, so a rule from -S is read back as shell words (eval), not split
# on spaces.
remove_chains() {
  local i=$1 ipt chains chain rule
  for ipt in iptables ip6tables; do
    mapfile -t chains < <(on_node "$i" "$ipt" -w -S 2>/dev/null | awk -v re="$CHAIN_PREFIXES" '$1 == "-N" && $2 ~ re { print $2 }')
    ((${#chains[@]})) || continue
    for chain in "${chains[@]}"; do on_node "$i" "$ipt" -w -F "$chain"; done
    for chain in "${chains[@]}"; do
      while IFS= read -r rule; do
        eval "on_node \"\$i\" \"\$ipt\" -w ${rule/-A/-D}"
      done < <(on_node "$i" "$ipt" -w -S | grep -E -- "-j $chain( |\$)" || true)
    done
    for chain in "${chains[@]}"; do on_node "$i" "$ipt" -w -X "$chain"; done
  done
}

# destroy_sets I: kube-router's ipsets on node I, once remove_chains took
# the rules that use them; on the first node only those that were not there
# before up (a worker's network namespace holds no other).
destroy_sets() {
  local i=$1 set
  command -v ipset >/dev/null || return 0
  while IFS= read -r set; do
    [[ -n $set ]] || continue
    if ((i == 0)) && [[ -f $N/sets-before ]] && grep -qxF -- "$set" "$N/sets-before"; then continue; fi
    on_node "$i" ipset destroy "$set" 2>/dev/null || log "warning: ipset $set on $(node_name "$i") is still in use"
  done < <(on_node "$i" ipset list -n 2>/dev/null | grep -E "$SET_PREFIXES" || true)
}

main "$@"
