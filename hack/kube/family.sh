# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are the sourcing scripts'
# The test cluster's addresses, all of one family (KUBE_IP_FAMILY):
#   ipv4  the default: pods in 10.250.0.0/16, Services in 10.251.0.0/24,
#         the node network 10.249.0.0/24.
#   ipv6  a single-stack IPv6 cluster, as kind's ipFamily: ipv6 makes one:
#         pods, Services, nodes and the API server's address all IPv6
#         (unique local addresses, fd00:250::/48, fd00:251::/112,
#         fd00:249::/64); no pod has an IPv4 address but loopback.
# Sourced by cluster.sh and netpol.sh: every address they use comes from
# here, so no other file knows a family's syntax. Node 0 is the first node,
# node I worker I. The addresses clash with nothing on `ip route` here
# (docker: 172.17/16; this machine's own IPv6: fd00::/64).

IP_FAMILY=${IP_FAMILY:-${KUBE_IP_FAMILY:-ipv4}}
case $IP_FAMILY in
ipv4)
  PODS_CIDR=10.250.0.0/16
  SVC_CIDR=10.251.0.0/24
  SVC_IP=10.251.0.1
  POD_PREFIX_LEN=24
  NODE_PREFIX_LEN=24
  # The iptables of the family: the Service's translation and the
  # forwarding between the node network and the pod bridges.
  IPT=iptables
  FORWARDING_SYSCTL=net.ipv4.ip_forward
  ;;
ipv6)
  PODS_CIDR=fd00:250::/48
  # kube-apiserver takes an IPv6 Service range of at most 20 bits.
  SVC_CIDR=fd00:251::/112
  SVC_IP=fd00:251::1
  POD_PREFIX_LEN=64
  NODE_PREFIX_LEN=64
  IPT=ip6tables
  FORWARDING_SYSCTL=net.ipv6.conf.all.forwarding
  ;;
*)
  printf 'kube: error: KUBE_IP_FAMILY is %s, want ipv4 or ipv6\n' "$IP_FAMILY" >&2
  exit 1
  ;;
esac

# pod_prefix I: the part of node I's pod addresses before the host part.
# An IPv6 node's /64 is the fourth group, inside PODS_CIDR's /48. IPv6
# addresses are written as the tools print them (fd00:250::1, not
# fd00:250:0:0::1), so that they compare equal as strings.
pod_prefix() {
  case $IP_FAMILY in
  ipv4) echo "10.250.$1." ;;
  ipv6) if (($1 == 0)); then echo "fd00:250::"; else echo "fd00:250:0:$1::"; fi ;;
  esac
}

# pod_subnet I: node I's pod subnet.
pod_subnet() {
  case $IP_FAMILY in
  ipv4) echo "$(pod_prefix "$1")0/24" ;;
  ipv6) echo "$(pod_prefix "$1")/64" ;;
  esac
}

# pod_host I N: address N of node I's pod subnet (1 is the node's own,
# the pods' gateway; the pods get 10 to 250, which IPv6 reads as hex).
pod_host() { echo "$(pod_prefix "$1")$2"; }

# node_ip I: node I's address on the node network (the first node's is
# where the workers reach the registry).
node_ip() {
  local host=1
  (($1 == 0)) || host=$((10 + $1))
  case $IP_FAMILY in
  ipv4) echo "10.249.0.$host" ;;
  ipv6) echo "fd00:249::$host" ;;
  esac
}

# host_port ADDR PORT: ADDR:PORT as a URL or a listen address writes it
# (an IPv6 address in brackets).
host_port() {
  case $1 in
  *:*) echo "[$1]:$2" ;;
  *) echo "$1:$2" ;;
  esac
}

# addr_add ADDR/LEN DEV [ip -n NS]: the address on the device, usable at
# once: an IPv6 address skips duplicate address detection, which would
# keep it tentative (unbindable) for a second or two, on a network where
# nothing else can hold it.
addr_add() {
  local addr=$1 dev=$2
  shift 2
  if [[ $IP_FAMILY == ipv6 ]]; then
    ip "$@" addr add "$addr" dev "$dev" nodad
  else
    ip "$@" addr add "$addr" dev "$dev"
  fi
}

# The first node's pod bridge address: the API server's, CoreDNS's and its
# pods' gateway.
BR_IP=$(pod_host 0 1)
POD_SUBNET=$(pod_subnet 0)
HOST_NODE_IP=$(node_ip 0)
