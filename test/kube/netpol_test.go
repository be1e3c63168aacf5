package kube

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// NetworkPolicy in a tenant namespace: the cluster enforces policies
// (hack/kube/netpol.sh, kube-router), so a namespace whose policy denies
// every flow but DNS is what a shared cluster gives a tenant. There the
// brokers cannot reach each other's TBON port and the instance never
// forms: the start deadline must end it, truthfully, and the policy the
// render writes with network-policy, which lets the instance's own pods
// reach each other and nothing else, must be enough for it to Complete.

// denyAllButDNS is a tenant namespace's baseline: no ingress, no egress
// but DNS to the cluster's resolver.
func denyAllButDNS(dns string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{ipBlock: {cidr: %s}}]
      ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
`, hostCIDR(dns))
}

// TestNetworkPolicyDefaultDeny: in a namespace that denies every flow but
// DNS, an instance's brokers never connect, and the JobSet Fails once the
// start-timeout passes, a broker's log naming the rank that never joined
// or the parent it never reached; with network-policy: "true" the same
// JobSet, with the NetworkPolicy the render writes, Completes. Both on the
// first node and across two workers, each of which enforces policies
// itself, as every node of a real cluster does.
func TestNetworkPolicyDefaultDeny(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	dns := clusterDNS(t).server
	t.Run("node", func(t *testing.T) {
		t.Parallel()
		networkPolicyCases(t, dns, nil, nil)
	})
	t.Run("workers", func(t *testing.T) {
		t.Parallel()
		ws := holdWorkers(t)
		networkPolicyCases(t, dns, onWorkers("np"), ws)
	})
}

// networkPolicyCases runs the denied and the allowed instance, their pods
// with the pod spec fields given; with workers, each pod of the allowed one
// must be on a worker of its own.
func networkPolicyCases(t *testing.T, dns string, pod map[string]any, workers []string) {
	const timeout = 30 * time.Second
	groups := []group{{name: "w", replicas: 1, completions: 2, pod: pod}}
	for _, c := range []struct {
		name string
		// annotations beside the start-timeout.
		annotations map[string]string
		// startTimeout is the case's flux-framework.org/start-timeout.
		startTimeout time.Duration
		want         string
	}{
		{"denied", nil, timeout, jobSetFailed},
		// A start-timeout of its own: kube-router opens a new pod's
		// policy only once it has synced, which on a loaded machine can
		// take longer than the denied case's timeout.
		{"network-policy", map[string]string{"flux-framework.org/network-policy": "true"}, 90 * time.Second, jobSetCompleted},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "netpol-"+c.name)
			n.apply([]byte(denyAllButDNS(dns)))
			annotations := map[string]string{"flux-framework.org/start-timeout": fmt.Sprintf("%ds", int(c.startTimeout.Seconds()))}
			maps.Copy(annotations, c.annotations)
			start := time.Now()
			n.apply(faultJobSet(t, "np", 1, annotations, groups...))
			state, msg, h := n.waitEnd("np", c.startTimeout+faultBound)
			took := time.Since(start)
			t.Logf("netpol: %s | %s after %.0f s from apply | %s", c.name, state, took.Seconds(), msg)
			if state != c.want {
				t.Fatalf("JobSet %q (%s), want %s", state, msg, c.want)
			}
			checkNoRetries(t, n, h, groups)
			if c.want != jobSetFailed {
				if workers != nil {
					t.Logf("pods on %v", nodesOf(t, h.last, workers))
				}
				return
			}
			if took < timeout {
				t.Errorf("Failed after %v, before the start-timeout", took)
			}
			// Either side may tell: rank 0 names the rank that never
			// joined, rank 1 the parent it never reached. Pods of a
			// Failed JobSet may be gone by its last snapshot, so every
			// pod seen is asked.
			var logs []string
			told := false
			for _, p := range h.pods {
				out, err := n.run(nil, "logs", p.name, "-c", "app")
				if err != nil {
					continue
				}
				logs = append(logs, string(out))
				told = told || strings.Contains(string(out), "did not form within start-timeout (30s)") && strings.Contains(string(out), "np-w-0-1")
			}
			if !told {
				t.Errorf("no pod's log says the instance did not form for want of rank 1 (np-w-0-1):\n%s", strings.Join(logs, "\n---\n"))
			}
		})
	}
}
