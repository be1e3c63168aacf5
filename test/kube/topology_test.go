package kube

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Node labels of the workers' topology (hack/kube/nodes.sh): block-1
// holds every worker, rack-1 two of them and rack-2 the third.
const (
	blockLabel = "jobset-flux.test/block"
	rackLabel  = "jobset-flux.test/rack"
)

// tasQueue makes a Kueue Topology over the workers' labels (block, rack,
// host), a ResourceFlavor on the workers with that topology and the
// workers' toleration, a ClusterQueue admitting only the namespace and a
// LocalQueue "queue": the objects a platform team writes for
// topology-aware scheduling. All are deleted when the test ends.
func tasQueue(t *testing.T, n *namespace) *kueueQueue {
	t.Helper()
	requireKueue(t)
	q := &kueueQueue{n: n, flavor: n.name + "-rf", clusterQueue: n.name + "-cq", local: "queue"}
	topology := n.name + "-topology"
	objects := fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: %[1]s}
spec:
  levels:
  - nodeLabel: %[2]s
  - nodeLabel: %[3]s
  - nodeLabel: %[4]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: %[5]s}
spec:
  nodeLabels: {%[6]s: workers}
  topologyName: %[1]s
  tolerations:
  - {key: %[7]s, operator: Exists, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %[8]s}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: %[9]s}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: %[5]s
      resources:
      - {name: cpu, nominalQuota: "12"}
      - {name: memory, nominalQuota: 4Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %[10]s, namespace: %[9]s}
spec: {clusterQueue: %[8]s}
`, topology, blockLabel, rackLabel, hostnameKey, q.flavor, workerPool, workerTaint, q.clusterQueue, n.name, q.local)
	t.Cleanup(func() {
		for _, obj := range []string{"clusterqueue/" + q.clusterQueue, "resourceflavor/" + q.flavor, "topology.kueue.x-k8s.io/" + topology} {
			if _, err := n.run(nil, "delete", obj, "--ignore-not-found", "--wait=false"); err != nil {
				t.Errorf("delete %s: %v", obj, err)
			}
		}
	})
	n.apply([]byte(objects))
	return q
}

// nodeLabels returns each worker's value of a node label.
func nodeLabels(t *testing.T, key string) map[string]string {
	t.Helper()
	out, err := kubectl(t.Context(), nil, "get", "nodes", "-l", workerPool+"=workers", "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.`+strings.ReplaceAll(key, ".", `\.`)+`}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for _, line := range strings.Fields(string(out)) {
		if name, value, ok := strings.Cut(line, "="); ok {
			values[name] = value
		}
	}
	return values
}

// TestKueueTopology: Kueue's topology-aware scheduling places a queued
// Flux JobSet as its pod template asks, over the workers' racks and
// block. Each pod asks for 3 of a worker's 4 CPUs, so a node holds one
// pod: two pods fit rack-1, three fit no rack but the block. An instance
// placed in a rack or the block forms and Completes there; one that
// requires a rack for three pods is never admitted, and has no pods.
func TestKueueTopology(t *testing.T) {
	t.Parallel()
	workers(t)
	cmd := []string{"bash", "-c", `echo "task $FLUX_TASK_RANK of $FLUX_JOB_SIZE on $(hostname)"`}
	for _, c := range []struct {
		name, key, level string
		pods             int
		admitted         bool
		sameDomain       string // the label every pod's node shares
	}{
		{"required-rack", "kueue.x-k8s.io/podset-required-topology", rackLabel, 2, true, rackLabel},
		{"required-block", "kueue.x-k8s.io/podset-required-topology", blockLabel, 3, true, blockLabel},
		{"preferred-rack", "kueue.x-k8s.io/podset-preferred-topology", rackLabel, 3, true, blockLabel},
		{"required-rack-too-big", "kueue.x-k8s.io/podset-required-topology", rackLabel, 3, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := holdWorkers(t)
			n := newNamespace(t, "tas-"+c.name)
			q := tasQueue(t, n)
			container := app("3", "64Mi", cmd...)
			// The pods tolerate the workers' taint themselves: Kueue adds
			// the flavor's tolerations to the pods it starts, but its
			// node-failure check reads the pod template's, and evicts a
			// workload whose nodes carry a taint the template does not
			// tolerate.
			pod := map[string]any{"tolerations": onWorkers("tas")["tolerations"]}
			groups := []group{{name: "w", replicas: 1, completions: c.pods, container: container, pod: pod,
				podAnnotations: map[string]any{c.key: c.level}}}
			rendered := q.queued(t, "tas", "", groups...)
			if !strings.Contains(string(rendered), c.key+": "+c.level) {
				t.Fatalf("the render dropped %s:\n%s", c.key, rendered)
			}
			n.apply(rendered)
			k := newKueueWatch(n)
			if !c.admitted {
				polls := 0
				k.until("30 s unadmitted", time.Minute, []string{"tas"}, func(s *snapshot, w map[string]*workload) bool {
					if wl := w["tas"]; wl != nil && (wl.is("QuotaReserved", "") || wl.is("Admitted", "")) {
						t.Fatalf("Kueue admitted %d pods that no %s can hold: %s", c.pods, c.level, wl.state())
					}
					if p := podsOf(s, "tas"); len(p) > 0 || !s.suspended("tas") {
						t.Fatalf("the unadmitted JobSet has %d pods, suspended %v", len(p), s.suspended("tas"))
					}
					polls++
					return time.Since(k.start) > 30*time.Second
				})
				wl, err := n.workloadOf("tas")
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("after %d polls: %s", polls, wl.state())
				return
			}
			h := n.expectEnd("tas", jobSetCompleted, instanceTimeout)
			nodes := nodesOf(t, h.last, ws)
			domains := nodeLabels(t, c.sameDomain)
			seen := map[string]bool{}
			for pod, node := range nodes {
				seen[domains[node]] = true
				t.Logf("%s on %s (%s %s)", pod, node, c.sameDomain, domains[node])
			}
			if len(seen) != 1 {
				t.Errorf("the pods are in %d domains of %s, want one: %v", len(seen), c.sameDomain, seen)
			}
			leader, _ := h.last.pod("w", 0, 0)
			out := n.logs(leader.Metadata.Name, "app")
			for rank := range c.pods {
				if line := fmt.Sprintf("task %d of %d on tas-w-0-%d", rank, c.pods, rank); countLines(out, line) != 1 {
					t.Errorf("the leader's log lacks %q once:\n%s", line, out)
				}
			}
			checkNoRetries(t, n, h, groups)
		})
	}
}
