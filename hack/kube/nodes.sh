# shellcheck shell=bash
# The test cluster's worker nodes, sourced by hack/kube/cluster.sh (every
# value comes from its variables). A worker is what kind makes of a
# container, without one: a network namespace of its own on the node
# network (a bridge on the host, the first node's side of it at
# HOST_NODE_IP), a mount namespace of its own holding its kubelet's,
# containerd's and CNI's directories, its own containerd and kubelet, its
# own pod bridge and pod subnet (family.sh's pod_subnet), and a route to
# every other node's pod subnet through that node, as kindnetd installs.
#
# Workers are tainted (WORKER_TAINT): only pods that tolerate it land there,
# so that the node tests' faults (power off, freeze, cut off, drain) never
# hit another test's pods. They carry labels for placement by topology:
# WORKER_POOL_LABEL on all, a block and a rack each (worker_rack).

# worker_name I, worker_ip I, worker_netns I, worker_dir I: worker I's node
# name, its address on the node network, its network namespace, its state.
worker_name() { echo "jobset-flux-worker-$1"; }
worker_ip() { node_ip "$1"; }
worker_netns() { echo "jfkube-w$1"; }
worker_dir() { echo "$S/nodes/w$1"; }
# worker_link I: the host's end of worker I's link to the node network:
# down is a cable pulled.
worker_link() { echo "jfkube-w$1"; }
# worker_rack I: racks of two workers, all in one block.
worker_rack() { echo "rack-$(((($1) - 1) / 2 + 1))"; }

# worker_index NAME: I from a worker's node name, or fail.
worker_index() {
  local i=${1#jobset-flux-worker-}
  [[ $i =~ ^[0-9]+$ && $1 == "$(worker_name "$i")" && -d $(worker_dir "$i") ]] ||
    die "no worker node named $1 (workers: $(worker_names))"
  echo "$i"
}

# worker_indexes: the workers this cluster was started with (their state
# directories), so that down and the faults work whatever KUBE_WORKERS says.
worker_indexes() {
  local d
  for d in "$S"/nodes/w*; do
    [[ -d $d ]] && echo "${d##*/w}"
  done | sort -n
}

worker_names() {
  local i
  for i in $(worker_indexes); do printf '%s ' "$(worker_name "$i")"; done
}

# --- configuration -----------------------------------------------------------

# write_worker_configs: certificates, kubeconfig, containerd, CNI and
# kubelet configuration and the CPU view of every worker.
write_worker_configs() {
  local i name ip w
  for ((i = 1; i <= WORKERS; i++)); do
    name=$(worker_name "$i") ip=$(worker_ip "$i") w=$(worker_dir "$i")
    mkdir -p "$w"
    make_cert "kubelet-$name" "system:node:$name" system:nodes ""
    make_cert "kubelet-serving-$name" "$name" "" "IP:$ip,DNS:$name"
    write_kubeconfig "kubelet-$name"
    write_containerd_config "$w"
    cp -r "$S/certs.d" "$w/certs.d"
    write_cni_config "$w" "$BR" "$i"
    write_kubelet_config "$w" "$ip" "$CGROUP_ROOT-w$i" "kubelet-serving-$name" "$WORKER_TAINT"
    write_fake_cpus "$WORKER_CPUS" "$w/fake"
  done
}

# --- network -----------------------------------------------------------------

# start_node_network: the node network's bridge, the first node's address
# on it (where the workers reach the registry), and forwarding between the
# pod subnets of every node, only: a pod still reaches no other address.
start_node_network() {
  ip link add "$NODE_BR" type bridge
  addr_add "$HOST_NODE_IP/$NODE_PREFIX_LEN" "$NODE_BR"
  ip link set "$NODE_BR" up
  # Before the chain's drops (start_network made it): pod to pod, across
  # nodes, and node to node (bridged, so it passes FORWARD too).
  "$IPT" -w -I "$FWD_CHAIN" 1 -i "$BR" -o "$NODE_BR" -s "$PODS_CIDR" -d "$PODS_CIDR" -j ACCEPT
  "$IPT" -w -I "$FWD_CHAIN" 1 -i "$NODE_BR" -o "$BR" -s "$PODS_CIDR" -d "$PODS_CIDR" -j ACCEPT
  "$IPT" -w -I "$FWD_CHAIN" 1 -i "$NODE_BR" -o "$NODE_BR" -j ACCEPT
}

# start_worker_network I: worker I's namespace, its link to the node
# network, its pod bridge, and the routes to and from its pod subnet.
start_worker_network() {
  local i=$1 ns link ip j
  ns=$(worker_netns "$i") link=$(worker_link "$i") ip=$(worker_ip "$i")
  ip netns add "$ns"
  ip link add "$link" type veth peer name eth0 netns "$ns"
  ip link set "$link" master "$NODE_BR" up
  ip -n "$ns" link set lo up
  addr_add "$ip/$NODE_PREFIX_LEN" eth0 -n "$ns"
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$HOST_NODE_IP"
  ip netns exec "$ns" sysctl -q -w "$FORWARDING_SYSCTL=1"
  # The API server's Service, as on the first node (start_service_route):
  # translated here, then routed to the first node like DNS.
  ip netns exec "$ns" "$IPT" -w -t nat -A PREROUTING -d "$SVC_IP" -p tcp --dport 443 -j DNAT --to-destination "$(host_port "$BR_IP" "$API_PORT")"
  ip -n "$ns" link add "$BR" type bridge
  addr_add "$(pod_host "$i" 1)/$POD_PREFIX_LEN" "$BR" -n "$ns"
  ip -n "$ns" link set "$BR" up
  ip route add "$(pod_subnet "$i")" via "$ip" dev "$NODE_BR"
  for ((j = 1; j <= WORKERS; j++)); do
    if ((j != i)); then ip -n "$ns" route add "$(pod_subnet "$j")" via "$(worker_ip "$j")"; fi
  done
}

# stop_worker_networks: every worker's namespace (its links and routes go
# with it), then the node network.
stop_worker_networks() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^jfkube-w[0-9]+$/ { print $1 }'); do
    ip netns del "$ns" 2>/dev/null || log "warning: network namespace $ns left"
  done
  if ip link show "$NODE_BR" >/dev/null 2>&1; then ip link del "$NODE_BR"; fi
}

# --- processes ---------------------------------------------------------------

# in_worker I CMD...: run CMD in worker I's mount and network namespaces.
in_worker() {
  local i=$1
  shift
  nsenter -t "$(cat "$S/run/w$i-mntns.pid")" -m -n -- "$@"
}

# start_workers: every worker's namespaces and daemons, started together;
# wait_workers waits for them.
start_workers() {
  local i
  for ((i = 1; i <= WORKERS; i++)); do
    start_worker_network "$i"
    start_worker_mounts "$i"
    start_worker_daemons "$i"
  done
}

# start_worker_mounts I: a process holding worker I's mount namespace,
# made inside its network namespace, with the node's directories bound over
# the host paths, as start_node does for the first node. nsenter, not `ip
# netns exec`: that mounts a new /sys, without the cgroup mounts the
# kubelet needs.
start_worker_mounts() {
  local i=$1 w b host sub
  w=$(worker_dir "$i")
  # shellcheck disable=SC2016 # $0 is the inner shell's
  daemon "w$i-mntns" nsenter --net="/run/netns/$(worker_netns "$i")" unshare --mount --propagation private -- \
    bash -c 'exec -a "$0" sleep infinity' "jobset-flux-kube-mntns-w$i $S"
  wait_for "worker $i's mount namespace" 5 mntns_ready "w$i-mntns"
  readlink "/proc/$(cat "$S/run/w$i-mntns.pid")/ns/mnt" >"$S/run/w$i-mntns.id"
  # shellcheck disable=SC2153 # cluster.sh's
  for b in "${BINDS[@]}"; do
    host=${b%% *} sub=${b#* }
    mkdir -p "$w/$sub"
    in_worker "$i" mount --bind "$w/$sub" "$host"
  done
  in_worker "$i" mount --bind "$w/fake/cpu" /sys/devices/system/cpu
  in_worker "$i" mount --bind "$w/fake/node" /sys/devices/system/node
  in_worker "$i" mount --bind "$w/fake/cpuinfo" /proc/cpuinfo
  make_cgroup_root "$CGROUP_ROOT-w$i"
}

# start_worker_daemons I: worker I's containerd and kubelet, inside its
# namespaces. A worker powered on again (node_power on) starts here too.
start_worker_daemons() {
  local i=$1 w name
  w=$(worker_dir "$i") name=$(worker_name "$i")
  daemon "w$i-containerd" nsenter -t "$(cat "$S/run/w$i-mntns.pid")" -m -n -- \
    env PATH="$CONTAINERD/bin:$PATH" "$CONTAINERD/bin/containerd" --config "$w/containerd/config.toml"
  wait_for "worker $i's containerd" 30 in_worker "$i" "$CONTAINERD/bin/ctr" --address "$w/containerd/containerd.sock" version
  daemon "w$i-kubelet" nsenter -t "$(cat "$S/run/w$i-mntns.pid")" -m -n -- "$BINS/bin/kubelet" \
    --config "$w/kubelet-config/config.yaml" --kubeconfig "$S/kubelet-$name.kubeconfig" \
    --hostname-override "$name" --node-ip "$(worker_ip "$i")" --v 1
}

# wait_workers: every worker Ready, labelled for placement, and its pods'
# network reaching the cluster's DNS.
wait_workers() {
  local i name
  for ((i = 1; i <= WORKERS; i++)); do
    name=$(worker_name "$i")
    wait_for "node $name Ready" 120 node_ready "$name"
    kubectl label node "$name" --overwrite "$WORKER_POOL_LABEL" \
      "$TOPOLOGY_BLOCK_LABEL=block-1" "$TOPOLOGY_RACK_LABEL=$(worker_rack "$i")" >/dev/null
  done
}

# worker_daemons KIND: the PID-file names of every worker's KIND daemon.
worker_daemons() {
  local f
  for f in "$S"/run/w*-"$1".pid; do
    [[ -f $f ]] && basename "$f" .pid
  done
}

# workers_alive: every worker's daemons run and its node is Ready.
workers_alive() {
  local i
  for i in $(worker_indexes); do
    if ! alive "w$i-mntns" || ! alive "w$i-containerd" || ! alive "w$i-kubelet"; then
      log "worker $i is not running"
      return 1
    fi
    node_ready "$(worker_name "$i")" || { log "node $(worker_name "$i") not Ready"; return 1; }
  done
}

# --- faults ------------------------------------------------------------------

# cmd_node ACTION NAME: what happens to a node on a real cluster, done to a
# worker. The node tests (test/kube/nodes_test.go) call it.
#   off        powered off: its link down first (nothing it sends after
#              leaves), then its containers, containerd and kubelet killed
#              at once (frozen, killed, thawed: none runs on meanwhile).
#   on         powered on again: its containerd and kubelet restarted,
#              its link up, its NetworkPolicy controller started anew
#              (hack/kube/netpol.sh up).
#   freeze     hung: its containers frozen (cgroup freezer), its kubelet,
#              containerd and shims stopped; its TCP connections stay up.
#   thaw       the hang ends.
#   cut        cut off from the others: its link down, all else running.
#   reconnect  its link up again.
cmd_node() {
  local action=${1:-} name=${2:-} i
  [[ -n $name ]] || die "usage: $0 node off|on|freeze|thaw|cut|reconnect NODE"
  i=$(worker_index "$name")
  case $action in
  off)
    ip link set "$(worker_link "$i")" down
    freeze_worker "$i" FROZEN STOP
    kill_worker "$i"
    freeze_worker "$i" THAWED CONT
    ;;
  on)
    kill_worker "$i"
    BINS=$(cat "$S/bins") CONTAINERD=$(cat "$S/containerd-dir")
    start_worker_daemons "$i"
    ip link set "$(worker_link "$i")" up
    # shellcheck disable=SC2154 # cluster.sh's
    bash "$here/netpol.sh" up
    ;;
  freeze) freeze_worker "$i" FROZEN STOP ;;
  thaw) freeze_worker "$i" THAWED CONT ;;
  cut) ip link set "$(worker_link "$i")" down ;;
  reconnect) ip link set "$(worker_link "$i")" up ;;
  *) die "usage: $0 node off|on|freeze|thaw|cut|reconnect NODE" ;;
  esac
  log "node $name: $action"
}

# worker_processes I: the PIDs of worker I's kubelet, containerd and shims
# (every process that names its directory).
worker_processes() {
  local w p
  w=$(worker_dir "$1")
  for p in /proc/[0-9]*; do
    if cmdline_names "$p" "$w"; then echo "${p#/proc/}"; fi
  done
}

# freeze_worker I STATE SIGNAL: STATE (FROZEN or THAWED) to the freezer
# cgroup of every container of worker I, SIGNAL to its daemons and shims.
freeze_worker() {
  local i=$1 state=$2 sig=$3 c pids
  for c in $(container_cgroups "$(worker_dir "$i")" freezer); do
    echo "$state" >"$c/freezer.state" 2>/dev/null || true
  done
  pids=$(worker_processes "$i")
  # shellcheck disable=SC2086 # a list of PIDs
  if [[ -n $pids ]]; then kill -"$sig" $pids 2>/dev/null || true; fi
}

# kill_worker I: KILL every process of worker I's containers and its
# daemons and shims; its namespaces stay, as a machine's disk does.
kill_worker() {
  local i=$1 c pids
  for c in $(container_cgroups "$(worker_dir "$i")" freezer); do
    pids=$(cat "$c/cgroup.procs" 2>/dev/null || true)
    # shellcheck disable=SC2086 # a list of PIDs
    if [[ -n $pids ]]; then kill -KILL $pids 2>/dev/null || true; fi
  done
  pids=$(worker_processes "$i")
  # shellcheck disable=SC2086 # a list of PIDs
  if [[ -n $pids ]]; then kill -KILL $pids 2>/dev/null || true; fi
  rm -f "$S/run/w$i-containerd.pid" "$S/run/w$i-kubelet.pid"
}
