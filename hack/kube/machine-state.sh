#!/usr/bin/env bash
# Prints the parts of the machine's state that hack/kube/cluster.sh changes
# while a cluster runs, in a stable form, so a snapshot before `up` and one
# after `down` can be diffed (docs/contributing/kubernetes.md shows how):
# kernel tunables, iptables and ip6tables rules (no counters), mounts, network
# namespaces, links and addresses, cgroup directories two levels deep and the
# host paths the kubelet, containerd and CNI use by default.
# Usage: hack/kube/machine-state.sh > FILE
set -euo pipefail

section() { printf '\n== %s\n' "$1"; }

section sysctl
# Counters and random values change on their own; leave them out.
sysctl -a 2>/dev/null | grep -vE '^(fs\.(dentry-state|inode-nr|inode-state|file-nr|quota)|kernel\.(random|ns_last_pid|pty\.nr|sched_domain)|net\.netfilter\.nf_conntrack_count|vm\.stat)' | LC_ALL=C sort
section iptables
iptables-save 2>/dev/null | grep -vE '^#' | sed -E 's/\[[0-9]+:[0-9]+\]/[-]/'
section ip6tables
ip6tables-save 2>/dev/null | grep -vE '^#' | sed -E 's/\[[0-9]+:[0-9]+\]/[-]/'
section mounts
awk '{ print $2, $3 }' /proc/self/mounts | LC_ALL=C sort
section netns
ip netns list 2>/dev/null || true
section links
ip -o link show | awk '{ print $2 }'
ip -o addr show | awk '{ print $2, $3, $4 }'
section cgroups
find /sys/fs/cgroup -mindepth 1 -maxdepth 2 -type d | grep -v '/process_api/' | LC_ALL=C sort
section mount-namespaces
# Processes whose mounts name a cluster directory: a namespace left alive.
for p in /proc/[0-9]*; do
  if grep -qs -e jobset-flux-kube -e /var/lib/kubelet "$p/mountinfo"; then
    echo "${p#/proc/} $(readlink "$p/ns/mnt") $(tr '\0' ' ' <"$p/cmdline" | cut -c1-60)"
  fi
done
section paths
for p in /var/lib/kubelet /var/lib/cni /run/netns /var/log/containers /var/log/pods /run/containerd \
  /opt/containerd /etc/cni /var/lib/jobset-flux-kube; do
  if [[ -e $p ]]; then echo "$p exists"; else echo "$p absent"; fi
done
