#!/usr/bin/env bash
# NetworkPolicy enforcement on the test cluster of hack/kube/cluster.sh:
# kube-router's network policy controller (hack/kube/netpol, run with only
# its firewall on: no routing, no service proxy), a host process with the
# admin kubeconfig like the JobSet controller and Kueue. It programs
# iptables chains (KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*) and ipsets
# for the pods of its node; with no NetworkPolicy in a namespace, that
# namespace's traffic is untouched.
#
# Usage: hack/kube/netpol.sh build|up|down|status
#   build   build or reuse the binary (hack/kube/netpol/build.sh).
#   up      on a running cluster: start the controller and wait until it is
#           healthy and its chains are in place. A healthy running one is
#           left as is (FRESH=1 restarts it). cluster.sh up calls it.
#   down    stop it, remove every chain and rule it made and the ipsets
#           that were not there before up. cluster.sh down calls it.
#   status  exit 0 if it runs and is healthy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
S=${KUBE_STATE_DIR:-/var/lib/jobset-flux-kube}
N=$S/netpol
NODE=${KUBE_NODE_NAME:-jobset-flux-node}
# The cluster's address family, as cluster.sh up started it.
IP_FAMILY=$(cat "$S/ip-family" 2>/dev/null || echo ipv4)
# shellcheck source-path=SCRIPTDIR
source "$here/family.sh"
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

pid_file() { echo "$S/run/netpol.pid"; }

# alive: the PID file names a live process whose command line names the state
# directory (so a recycled PID is never taken for ours).
alive() {
  local f pid
  f=$(pid_file)
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
  curl -sf "http://127.0.0.1:$NETPOL_HEALTH_PORT/healthz" >/dev/null &&
    "$IPT" -w -S KUBE-ROUTER-FORWARD >/dev/null 2>&1
}

cmd_status() {
  alive || { log "not running"; return 1; }
  healthy || { log "not healthy"; return 1; }
  log "running: pid $(cat "$(pid_file)")"
}

cmd_up() {
  local start=$SECONDS bin
  if [[ ${FRESH:-} != 1 ]] && cmd_status 2>/dev/null; then
    log "already running and healthy (FRESH=1 restarts)"
    return 0
  fi
  cmd_down
  command -v ipset >/dev/null || die "ipset is not installed (.ci/apt/kube.txt; make system-deps)"
  [[ -f $S/admin.kubeconfig ]] || die "the cluster is not running (hack/kube/cluster.sh up)"
  bin=$(bash "$here/netpol/build.sh" | tail -n1)/bin/kube-router
  mkdir -p "$N" "$S/run" "$S/log"
  if [[ ! -f $N/sets-before ]]; then ipset list -n >"$N/sets-before" 2>/dev/null || :; fi
  cp "$S/admin.kubeconfig" "$N/kubeconfig"
  # A kube-router that exits at start is started once more: CI saw one exit
  # with nothing in its log and no reproduction since. The second exit is
  # an error that names the exit status.
  local attempt status
  for attempt in 1 2; do
    start_router "$bin"
    status=0
    wait_healthy "$(cat "$(pid_file)")" || status=$?
    case $status in
    0)
      log "up in $((SECONDS - start)) s"
      return 0
      ;;
    124) die "timed out waiting for kube-router (log: $S/log/netpol.log)" ;;
    esac
    log "kube-router exited with status $status at start (attempt $attempt): $(tail -n 3 "$S/log/netpol.log" 2>/dev/null)"
  done
  die "kube-router exited twice at start (log: $S/log/netpol.log)"
}

# start_router BIN: kube-router in the background, its PID in the PID file.
start_router() {
  # 9<&- 8<&- 7<&-: the cluster's, Kueue's and this script's locks stay with
  # their holders.
  setsid "$1" --kubeconfig "$N/kubeconfig" --hostname-override "$NODE" \
    --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
    --enable-cni=false --enable-ipv4="$([[ $IP_FAMILY == ipv4 ]] && echo true || echo false)" \
    --enable-ipv6="$([[ $IP_FAMILY == ipv6 ]] && echo true || echo false)" \
    --service-cluster-ip-range "$SVC_CIDR" --health-port "$NETPOL_HEALTH_PORT" --metrics-port 0 \
    --v 1 </dev/null >"$S/log/netpol.log" 2>&1 9<&- 8<&- 7<&- &
  echo $! >"$(pid_file)"
}

# wait_healthy PID: 0 once healthy, 124 on timeout, else the exit status of
# the kube-router that exited (PID is this shell's child, so wait has it).
wait_healthy() {
  local pid=$1 i status
  for ((i = 0; i < 300; i++)); do
    healthy && return 0
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
  local f pid i
  f=$(pid_file)
  if [[ -f $f ]]; then
    pid=$(cat "$f")
    if alive; then
      kill -TERM "$pid" 2>/dev/null || true
      for ((i = 0; i < 50 && ${#pid}; i++)); do
        [[ -d /proc/$pid ]] || break
        sleep 0.1
      done
      if [[ -d /proc/$pid ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$f"
  fi
  # Not kube-router --cleanup-config: v2.1.0's leaves the filter chains in
  # place and then crashes in the service proxy's cleanup.
  remove_chains
  if [[ -d $N ]]; then
    destroy_new_sets
    rm -rf "$N"
  fi
}

# remove_chains: kube-router's filter chains, and every rule that jumps to
# one, in iptables and ip6tables. Its rules carry quoted comments, so a
# rule from -S is read back as shell words (eval), not split on spaces.
remove_chains() {
  local ipt chains chain rule
  for ipt in iptables ip6tables; do
    mapfile -t chains < <("$ipt" -w -S 2>/dev/null | awk -v re="$CHAIN_PREFIXES" '$1 == "-N" && $2 ~ re { print $2 }')
    ((${#chains[@]})) || continue
    for chain in "${chains[@]}"; do "$ipt" -w -F "$chain"; done
    for chain in "${chains[@]}"; do
      while IFS= read -r rule; do
        eval "\"\$ipt\" -w ${rule/-A/-D}"
      done < <("$ipt" -w -S | grep -E -- "-j $chain( |\$)" || true)
    done
    for chain in "${chains[@]}"; do "$ipt" -w -X "$chain"; done
  done
}

# destroy_new_sets: kube-router's ipsets that were not there before up, once
# remove_chains took the rules that use them.
destroy_new_sets() {
  local set
  command -v ipset >/dev/null || return 0
  while IFS= read -r set; do
    [[ -n $set ]] || continue
    if [[ -f $N/sets-before ]] && grep -qxF -- "$set" "$N/sets-before"; then continue; fi
    ipset destroy "$set" 2>/dev/null || log "warning: ipset $set is still in use"
  done < <(ipset list -n 2>/dev/null | grep -E "$SET_PREFIXES" || true)
}

main "$@"
