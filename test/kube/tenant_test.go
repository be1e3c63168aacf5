package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// A tenant namespace of a shared cluster, as platform teams hand them out:
// Pod Security "restricted" enforced, a ResourceQuota on the requests and
// limits of cpu and memory, a LimitRange with defaults and a limit to
// request ratio, and a NetworkPolicy that denies every flow but DNS. A
// JobSet whose own containers meet all of it must be admitted, form and
// end there as it does in an empty namespace, and be charged only what its
// containers ask for.

// tenantPolicies are the namespace's quota and limit range.
const tenantPolicies = `apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {requests.cpu: "16", requests.memory: 16Gi, limits.cpu: "32", limits.memory: 32Gi}
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
    - type: Container
      default: {cpu: "1", memory: 512Mi}
      defaultRequest: {cpu: 250m, memory: 128Mi}
      maxLimitRequestRatio: {cpu: "4"}
`

// newTenantNamespace is a namespace with every policy above: its
// JobSets' pods reach each other only with the render's network-policy.
func newTenantNamespace(t *testing.T, prefix string) *namespace {
	t.Helper()
	n := newNamespace(t, prefix)
	if out, err := kubectl(context.Background(), nil, "label", "namespace", n.name, "pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n.apply([]byte(tenantPolicies + "---\n" + denyAllButDNS(clusterDNS(t).server)))
	return n
}

// restrictedContainer meets the restricted profile in its own
// securityContext (none at the pod), as many charts write it.
func restrictedContainer(resources map[string]any) map[string]any {
	c := map[string]any{"name": "app", "image": appImage,
		"command": []string{"bash", "-c", `echo "uid $(id -u) on $(hostname)"`},
		"securityContext": map[string]any{
			"runAsNonRoot": true, "runAsUser": 1001, "allowPrivilegeEscalation": false,
			"capabilities":   map[string]any{"drop": []any{"ALL"}},
			"seccompProfile": map[string]any{"type": "RuntimeDefault"},
		}}
	if resources != nil {
		c["resources"] = resources
	}
	return c
}

// TestTenantNamespace: in a tenant namespace a 2-pod instance whose
// container meets each policy is admitted, forms and Completes in both
// view-mount modes; with resources of its own (requests and larger limits)
// and with none (the LimitRange's defaults fill them in), each pod is
// charged what its app container asks for, not more.
func TestTenantNamespace(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, c := range []struct {
		name      string
		resources map[string]any
	}{
		{"own", map[string]any{"requests": map[string]any{"cpu": "200m", "memory": "128Mi"}, "limits": map[string]any{"cpu": "400m", "memory": "256Mi"}}},
		{"defaults", nil},
	} {
		for _, mode := range viewMounts {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				const js = "tenant"
				n := newTenantNamespace(t, "tenant-"+mode+"-"+c.name)
				groups := []group{{name: "w", replicas: 1, completions: 2, container: restrictedContainer(c.resources)}}
				n.apply(render(t, jobSet(t, js, withMode(mode, map[string]string{"flux-framework.org/start-timeout": "2m", "flux-framework.org/network-policy": "true"}), nil, groups...)))
				h := n.expectEnd(js, jobSetCompleted, instanceTimeout)
				leader, _ := h.last.pod("w", 0, 0)
				if out := n.logs(leader.Metadata.Name, "app"); !strings.Contains(out, "uid 1001 on "+js+"-w-0-1") {
					t.Errorf("no task ran as 1001 on the follower:\n%s", out)
				}
				checkNoRetries(t, n, h, groups)
				checkCharged(t, n, js)
			})
		}
	}
}

// checkCharged reads each admitted pod of the JobSet back and checks that
// what it requests, counted as the scheduler, quota and Kueue count it
// (the sum of its containers, or its largest init container when more),
// is what its app containers request.
func checkCharged(t *testing.T, n *namespace, jobSet string) {
	t.Helper()
	out, err := n.run(nil, "get", "pods", "-l", "jobset.sigs.k8s.io/jobset-name="+jobSet, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Name      string `json:"name"`
		Resources struct {
			Requests map[string]string `json:"requests"`
		} `json:"resources"`
	}
	var pods struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				InitContainers []container `json:"initContainers"`
				Containers     []container `json:"containers"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("no pods of %s", jobSet)
	}
	for _, p := range pods.Items {
		for _, r := range []string{"cpu", "memory"} {
			var apps int64
			for _, c := range p.Spec.Containers {
				if v, ok := c.Resources.Requests[r]; ok {
					apps += milli(t, v)
				}
			}
			charged := apps
			var inits []string
			for _, c := range p.Spec.InitContainers {
				v, ok := c.Resources.Requests[r]
				if !ok {
					continue
				}
				inits = append(inits, fmt.Sprintf("%s %s", c.Name, v))
				charged = max(charged, milli(t, v))
			}
			t.Logf("%s %s: app containers %d milli-units, init containers %v", p.Metadata.Name, r, apps, inits)
			if charged != apps {
				t.Errorf("%s is charged %d milli-units of %s, its app containers request %d (init containers: %v)", p.Metadata.Name, charged, r, apps, inits)
			}
		}
	}
}

// milli is a quantity as the API server writes requests back (an integer
// with an optional m, k, M, G, Ki, Mi or Gi suffix), in thousandths.
func milli(t *testing.T, q string) int64 {
	t.Helper()
	scale := map[string]int64{"m": 1, "": 1000, "k": 1e6, "M": 1e9, "G": 1e12, "Ki": 1024e3, "Mi": 1024 * 1024e3, "Gi": 1024 * 1024 * 1024e3}
	digits := strings.TrimRight(q, "mkMGKi")
	n, err := strconv.ParseInt(digits, 10, 64)
	f, ok := scale[q[len(digits):]]
	if err != nil || !ok {
		t.Fatalf("quantity %q: not an integer with a known suffix", q)
	}
	return n * f
}
