# shellcheck shell=bash
# Configuration files of the test cluster, written into the state directory by
# hack/kube/cluster.sh (sourced from there; every value comes from its
# variables). One function per file, so each setting sits next to its reason.

# write_pki: a CA and one certificate per identity. Keys are EC P-256 (fast to
# make). The apiserver serves on the bridge IP; the JobSet webhook and CoreDNS
# health are on 127.0.0.1.
write_pki() {
  local p=$S/pki
  mkdir -p "$p"
  openssl ecparam -name prime256v1 -genkey -noout -out "$p/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$p/ca.key" -subj /CN=jobset-flux-kube-ca -days 30 \
    -out "$p/ca.crt" 2>/dev/null
  make_cert apiserver kube-apiserver "" \
    "IP:$BR_IP,IP:127.0.0.1,IP:$SVC_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  make_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters ""
  make_cert admin admin system:masters ""
  make_cert controller-manager system:kube-controller-manager "" ""
  make_cert scheduler system:kube-scheduler "" ""
  make_cert kubelet "system:node:$NODE" system:nodes ""
  make_cert kubelet-serving "$NODE" "" "IP:$BR_IP,DNS:$NODE"
  make_cert jobset-webhook jobset-webhook "" "IP:127.0.0.1,DNS:localhost"
  openssl ecparam -name prime256v1 -genkey -noout -out "$p/sa.key" 2>/dev/null
  openssl ec -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  mkdir -p "$p/jobset"
  cp "$p/jobset-webhook.crt" "$p/jobset/tls.crt"
  cp "$p/jobset-webhook.key" "$p/jobset/tls.key"
}

# make_cert NAME CN ORG SANS: NAME.key and NAME.crt signed by the CA.
make_cert() {
  local p=$S/pki name=$1 cn=$2 org=$3 sans=$4 subj ext
  subj="/CN=$cn"
  [[ -z $org ]] || subj="/O=$org$subj"
  ext=$p/$name.ext
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [[ -z $sans ]] || echo "subjectAltName=$sans"
  } >"$ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$p/$name.key" 2>/dev/null
  openssl req -new -key "$p/$name.key" -subj "$subj" -out "$p/$name.csr" 2>/dev/null
  openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
    -days 30 -extfile "$ext" -out "$p/$name.crt" 2>/dev/null
  rm -f "$p/$name.csr" "$ext"
}

# write_kubeconfig NAME: a kubeconfig for the client certificate NAME.
write_kubeconfig() {
  local name=$1 p=$S/pki
  cat >"$S/$name.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: jobset-flux-kube
  cluster:
    server: https://$(host_port "$BR_IP" "$API_PORT")
    certificate-authority: $p/ca.crt
users:
- name: $name
  user:
    client-certificate: $p/$name.crt
    client-key: $p/$name.key
contexts:
- name: default
  context:
    cluster: jobset-flux-kube
    user: $name
current-context: default
EOF
}

# write_containerd_config: the cluster's own containerd 2.x (built by
# hack/kube/containerd/build.sh; own root, state and socket, never the docker
# engine's), in containerd 2's config version 3, where the CRI is split into
# an images and a runtime plugin. cgroupfs and restrict_oom_score_adj are what
# this machine needs (cgroups v1, no CAP_SYS_RESOURCE); images come only from
# the local registry through config_path (image volumes are pulled the same
# way). NRI is off: it would make a socket under the host's /var/run/nri.
# BASE is the node's directory: $S for the first node, $S/nodes/<w> for a
# worker (hack/kube/nodes.sh); each node has its own containerd.
write_containerd_config() {
  local base=$1
  mkdir -p "$base/containerd"
  cat >"$base/containerd/config.toml" <<EOF
version = 3
root = "$base/containerd/root"
state = "$base/containerd/state"
oom_score = 0
# The opt plugin would create /opt/containerd; the others need what is not here.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$base/containerd/containerd.sock"

[ttrpc]
  address = "$base/containerd/containerd.sock.ttrpc"

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "$base/certs.d"

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$base/cni/net.d"
EOF
}

# write_cni_config BASE BRIDGE I: node I's pod network, a bridge the node
# holds the gateway address of (family.sh's pod_host I 1). isGateway false and two
# routes: pods get no default route, only one to every node's pod subnet
# (PODS_CIDR) and one to the Service range (SVC_CIDR), through their node,
# so they reach other pods, the cluster's DNS on the first node's bridge
# address and the API server's Service, never another machine.
write_cni_config() {
  local base=$1 bridge=$2 i=$3 gateway
  gateway=$(pod_host "$i" 1)
  mkdir -p "$base/cni/net.d"
  cat >"$base/cni/net.d/10-jobset-flux.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "jobset-flux-kube",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": false,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$(pod_subnet "$i")", "rangeStart": "$(pod_host "$i" 10)", "rangeEnd": "$(pod_host "$i" 250)"}]],
        "routes": [{"dst": "$PODS_CIDR", "gw": "$gateway"}, {"dst": "$SVC_CIDR", "gw": "$gateway"}]
      }
    }
  ]
}
EOF
}

# write_kubelet_config BASE IP CGROUP_ROOT CERT [TAINT]: one node's kubelet.
# cgroups v1 (failCgroupV1 false, cgroupfs) under a cgroup root of the
# node's own, so cleanup knows exactly which cgroups are ours;
# protectKernelDefaults false (it would refuse to start: cluster.sh saves
# and restores the tunables it rewrites); DNS is CoreDNS on the first
# node's bridge address. CERT names the node's serving certificate in the
# PKI; TAINT, when given, is registered with the node (key=value:Effect).
write_kubelet_config() {
  local base=$1 ip=$2 cgroup_root=$3 cert=$4 taint=${5:-}
  mkdir -p "$base/kubelet-config"
  printf 'nameserver %s\n' "$BR_IP" >"$base/kubelet-config/resolv.conf"
  cat >"$base/kubelet-config/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$cgroup_root
# No QoS or pod-level cgroups: with them the kubelet would write the node's
# CPU list (16 here, see write_fake_cpus) into the kubepods cpuset, which the
# kernel refuses; each container still gets its own memory and CPU limits.
cgroupsPerQOS: false
enforceNodeAllocatable: ["none"]
containerRuntimeEndpoint: unix://$base/containerd/containerd.sock
address: $ip
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $S/pki/$cert.crt
tlsPrivateKeyFile: $S/pki/$cert.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $S/pki/ca.crt
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: ["$BR_IP"]
resolvConf: $base/kubelet-config/resolv.conf
protectKernelDefaults: false
failSwapOn: false
serializeImagePulls: false
maxPods: 110
# A shared build machine's disk fills up and down; do not evict test pods.
evictionHard:
  memory.available: 200Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
syncFrequency: 10s
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 5s
EOF
  if [[ -n $taint ]]; then
    local key=${taint%%=*} rest=${taint#*=}
    cat >>"$base/kubelet-config/config.yaml" <<EOF
registerWithTaints:
- key: $key
  value: "${rest%%:*}"
  effect: ${rest#*:}
EOF
  fi
}

# write_coredns_config: cluster.local from the API (headless Services give one
# record per pod hostname), NXDOMAIN for every other name: no forward plugin,
# so no query leaves the machine.
write_coredns_config() {
  mkdir -p "$S/coredns"
  cat >"$S/coredns/Corefile" <<EOF
cluster.local:$DNS_PORT {
    bind $BR_IP
    errors
    health 127.0.0.1:$DNS_HEALTH_PORT
    ready 127.0.0.1:$DNS_READY_PORT
    kubernetes cluster.local {
        kubeconfig $S/admin.kubeconfig default
        pods insecure
        ttl 5
    }
}
.:$DNS_PORT {
    bind $BR_IP
    errors
    template ANY ANY {
        rcode NXDOMAIN
    }
}
EOF
}

# write_jobset_config: the JobSet controller out of the cluster: webhook server
# on 127.0.0.1 with our certificate (its own cert rotation would want an
# in-cluster Service and Secret), no metrics, no leader election; the
# ElasticJobSet gate on, so that elastic instances can grow and shrink.
write_jobset_config() {
  mkdir -p "$S/jobset"
  cat >"$S/jobset/config.yaml" <<EOF
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $JOBSET_WEBHOOK_PORT
  certDir: $S/pki/jobset
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: 127.0.0.1:$JOBSET_HEALTH_PORT
featureGates:
  ElasticJobSet: true
EOF
}

# write_webhooks: the JobSet webhook configurations of the module's
# config/components/webhook, with url + caBundle instead of a Service, and
# the pod webhooks limited to JobSet pods as the upstream kustomize patch does.
write_webhooks() {
  local ca url
  ca=$(base64 -w0 <"$S/pki/ca.crt")
  url=https://127.0.0.1:$JOBSET_WEBHOOK_PORT
  cat >"$S/jobset/webhooks.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: jobset-mutating-webhook-configuration
webhooks:
$(webhook_entry mjobset.kb.io "$url/mutate-jobset-x-k8s-io-v1alpha2-jobset" "$ca" jobset.x-k8s.io jobsets CREATE)
$(webhook_entry mpod.kb.io "$url/mutate--v1-pod" "$ca" "" pods CREATE)
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: jobset-validating-webhook-configuration
webhooks:
$(webhook_entry vjobset.kb.io "$url/validate-jobset-x-k8s-io-v1alpha2-jobset" "$ca" jobset.x-k8s.io jobsets CREATE,UPDATE)
$(webhook_entry vpod.kb.io "$url/validate--v1-pod" "$ca" "" pods CREATE)
EOF
}

# webhook_entry NAME URL CA GROUP RESOURCE OPS: one webhooks[] item.
webhook_entry() {
  local name=$1 url=$2 ca=$3 group=$4 resource=$5 ops=$6 version=v1alpha2
  [[ -n $group ]] || version=v1
  cat <<EOF
- name: $name
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig:
    url: $url
    caBundle: $ca
  rules:
  - apiGroups: ["$group"]
    apiVersions: [$version]
    operations: [${ops//,/, }]
    resources: [$resource]
EOF
  if [[ -z $group ]]; then
    cat <<EOF
  objectSelector:
    matchExpressions:
    - key: jobset.sigs.k8s.io/jobset-name
      operator: Exists
EOF
  fi
}

# write_fake_cpus N DIR: what the kubelet's cAdvisor reads to count CPUs, for
# N CPUs: DIR/cpu (for /sys/devices/system/cpu: online and per-CPU topology)
# and DIR/cpuinfo (for /proc/cpuinfo). Only the kubelet and containerd see it
# (bind mounts in their private mount namespace); containers mount their own
# /proc and /sys and see the real CPUs.
write_fake_cpus() {
  local n=$1 dir=$2 i mhz
  mhz=$(awk -F': *' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)
  mkdir -p "$dir/cpu" "$dir/node"
  echo "0-$((n - 1))" >"$dir/cpu/online"
  echo "0-$((n - 1))" >"$dir/cpu/possible"
  echo "0-$((n - 1))" >"$dir/cpu/present"
  : >"$dir/cpuinfo"
  for ((i = 0; i < n; i++)); do
    mkdir -p "$dir/cpu/cpu$i/topology"
    echo "$i" >"$dir/cpu/cpu$i/topology/core_id"
    echo 0 >"$dir/cpu/cpu$i/topology/physical_package_id"
    printf 'processor\t: %d\nvendor_id\t: %s\nphysical id\t: 0\ncore id\t\t: %d\ncpu cores\t: %d\ncpu MHz\t\t: %s\n\n' \
      "$i" "$(awk -F': *' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)" "$i" "$n" "${mhz:-2000.000}" >>"$dir/cpuinfo"
  done
}
