package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The cluster's worker nodes (hack/kube/nodes.sh): tainted so that only
// the node tests' pods land there, labelled for placement.
const (
	workerTaint = "jobset-flux.test/worker"
	workerPool  = "jobset-flux.test/pool"
	hostnameKey = "kubernetes.io/hostname"
)

// workersNeeded is how many workers the node tests place one pod each on.
const workersNeeded = 3

// workers lists the Ready worker nodes, and fails the test unless there
// are enough for one pod of a three-pod instance each.
func workers(t *testing.T) []string {
	t.Helper()
	requireCluster(t)
	out, err := kubectl(t.Context(), nil, "get", "nodes", "-l", workerPool+"=workers", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Conditions []condition `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	var ready []string
	for _, n := range list.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" && c.Status == conditionTrue {
				ready = append(ready, n.Metadata.Name)
			}
		}
	}
	if len(ready) < workersNeeded {
		t.Fatalf("%d Ready worker nodes (%s), want %d: hack/kube/cluster.sh up starts KUBE_WORKERS=3", len(ready), strings.Join(ready, ", "), workersNeeded)
	}
	sort.Strings(ready)
	return ready
}

// onWorkers is the pod spec that puts a JobSet's pods on the workers,
// one pod per node: what a user writes for a pool of tainted nodes.
func onWorkers(jobSet string) map[string]any {
	return map[string]any{
		"nodeSelector": map[string]any{workerPool: "workers"},
		"tolerations":  []any{map[string]any{"key": workerTaint, "operator": "Exists", "effect": "NoSchedule"}},
		"affinity": map[string]any{"podAntiAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"topologyKey":   hostnameKey,
				"labelSelector": map[string]any{"matchLabels": map[string]any{labelJobSet: jobSet}},
			}},
		}},
	}
}

// nodesOf maps each pod of the snapshot to its node, and fails unless
// every pod is on a worker of its own.
func nodesOf(t *testing.T, s *snapshot, workers []string) map[string]string {
	t.Helper()
	nodes := map[string]string{}
	seen := map[string]string{}
	for _, p := range s.pods() {
		node := p.Spec.NodeName
		nodes[p.Metadata.Name] = node
		if !containsString(workers, node) {
			t.Errorf("pod %s is on %q, not on a worker (%s)", p.Metadata.Name, node, strings.Join(workers, ", "))
		}
		if other, ok := seen[node]; ok {
			t.Errorf("pods %s and %s share node %s", other, p.Metadata.Name, node)
		}
		seen[node] = p.Metadata.Name
	}
	return nodes
}

// TestAcrossNodes: an instance whose three brokers are on three nodes
// forms and ends right, in three shapes (one Job of three pods, three
// Jobs of one, a leader replicatedJob beside a worker one) and both
// view-mount modes: every rank's task runs on its own pod, the pods on
// three workers, nothing retried.
func TestAcrossNodes(t *testing.T) {
	t.Parallel()
	workers(t)
	for _, c := range []struct {
		name, mode string
		groups     func(pod map[string]any) []group
	}{
		{"one-job-copy", copyMode, func(pod map[string]any) []group {
			return []group{{name: "w", replicas: 1, completions: 3, pod: pod}}
		}},
		{"three-jobs-image", imageMode, func(pod map[string]any) []group {
			return []group{{name: "w", replicas: 3, completions: 1, pod: pod}}
		}},
		{"leader-and-workers-copy", copyMode, func(pod map[string]any) []group {
			return []group{{name: "lead", replicas: 1, completions: 1, pod: pod}, {name: "w", replicas: 1, completions: 2, pod: pod}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := holdWorkers(t)
			n := newNamespace(t, "nodes-"+c.name)
			groups := c.groups(onWorkers("across"))
			cmd := []string{"bash", "-c", `echo "task $FLUX_TASK_RANK of $FLUX_JOB_SIZE on $(hostname)"`}
			n.apply(render(t, jobSet(t, "across", withMode(c.mode, nil), cmd, groups...)))
			h := n.expectEnd("across", jobSetCompleted, instanceTimeout)
			nodes := nodesOf(t, h.last, ws)
			leader, _ := h.last.pod(groups[0].name, 0, 0)
			out := n.logs(leader.Metadata.Name, "app")
			for rank, host := range hostnames("across", groups...) {
				if line := fmt.Sprintf("task %d of 3 on %s", rank, host); countLines(out, line) != 1 {
					t.Errorf("the leader's log lacks %q once:\n%s", line, out)
				}
			}
			checkViewMount(t, c.mode, leader, out)
			checkNoRetries(t, n, h, groups)
			t.Logf("%s (%s): pods on %v", c.name, c.mode, nodes)
		})
	}
}

// TestExclusiveTopology: JobSet's exclusive placement by node
// (alpha.jobset.sigs.k8s.io/exclusive-topology) puts each Job on a node
// of its own, with all of that Job's pods: three Jobs of one pod each are
// an instance of one broker per node, and it Completes.
func TestExclusiveTopology(t *testing.T) {
	t.Parallel()
	ws := holdWorkers(t)
	n := newNamespace(t, "nodes-exclusive")
	pod := onWorkers("excl")
	delete(pod, "affinity")
	groups := []group{{name: "w", replicas: 3, completions: 1, pod: pod}}
	cmd := []string{"bash", "-c", `echo "task $FLUX_TASK_RANK of $FLUX_JOB_SIZE on $(hostname)"`}
	ann := map[string]string{"alpha.jobset.sigs.k8s.io/exclusive-topology": hostnameKey}
	rendered := render(t, jobSet(t, "excl", ann, cmd, groups...))
	if !strings.Contains(string(rendered), "alpha.jobset.sigs.k8s.io/exclusive-topology: "+hostnameKey) {
		t.Fatalf("the render dropped the exclusive-topology annotation:\n%s", rendered)
	}
	n.apply(rendered)
	h := n.expectEnd("excl", jobSetCompleted, instanceTimeout)
	nodes := nodesOf(t, h.last, ws)
	checkNoRetries(t, n, h, groups)
	t.Logf("pods on %v", nodes)
}

// workersInUse serializes the tests on the workers: a node fault would
// hit another test's pods, and Kueue's topology tests count on the
// workers' whole capacity.
var workersInUse sync.Mutex

// holdWorkers waits until no other test uses the workers, holds them
// until the test ends, and returns them as workers does.
func holdWorkers(t *testing.T) []string {
	t.Helper()
	workersInUse.Lock()
	t.Cleanup(workersInUse.Unlock)
	return workers(t)
}

// nodeFault does a fault to a worker with hack/kube/cluster.sh node.
func nodeFault(t *testing.T, action, node string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(env.repo, "hack/kube/cluster.sh"), "node", action, node).CombinedOutput()
	if err != nil {
		t.Errorf("cluster.sh node %s %s: %v\n%s", action, node, err, out)
	}
}

// waitNodeReady waits until a node is Ready and schedulable again after
// its fault was undone, so the next test finds every worker.
func waitNodeReady(t *testing.T, node string) {
	t.Helper()
	// It runs in a cleanup, where the test's context is already
	// cancelled.
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		out, err := kubectl(context.Background(), nil, "get", "node", node, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.unschedulable} {.spec.taints[*].key}`)
		if err == nil {
			f := strings.Fields(string(out))
			if len(f) > 0 && f[0] == conditionTrue && !strings.Contains(string(out), "true") &&
				!strings.Contains(string(out), "node.kubernetes.io/") {
				return
			}
		}
	}
	t.Fatalf("node %s not Ready and untainted 3 minutes after its fault was undone", node)
}

// outOfService is the taint an administrator puts on a node known to be
// down (Kubernetes' non-graceful node shutdown): the pod garbage collector
// then deletes the pods still bound to it, which nothing else does while
// its kubelet cannot answer.
const outOfService = "node.kubernetes.io/out-of-service"

// lateFluxEnd is when a node fault test keeps the logs of the pods off the
// faulted node, in case Flux does not end the instance in time: by the
// time the test fails, the JobSet has deleted those pods.
const lateFluxEnd = 45 * time.Second

// keepLogsOffNode reads the app logs of the pods not on node now, and
// prints them if the test fails.
func keepLogsOffNode(t *testing.T, n *namespace, s *snapshot, node string) {
	var logs strings.Builder
	for _, p := range s.pods() {
		if p.Spec.NodeName == node {
			continue
		}
		out, _ := n.run(nil, "logs", p.Metadata.Name, "-c", "app")
		fmt.Fprintf(&logs, "--- %s on %s, %s after the fault:\n%s\n", p.Metadata.Name, p.Spec.NodeName, lateFluxEnd, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("app logs off the faulted node while Flux had not ended the instance:\n%s", logs.String())
		}
	})
}

// nodeFaultRun is one node fault: when Flux ended the instance (the
// first app container to end on a node the fault did not hit), when
// Kubernetes saw the node NotReady, when the node was declared out of
// service, and how the JobSet ended.
type nodeFaultRun struct {
	faultRun
	node                     string
	fluxEnd, notReady, taint time.Duration
	// logsKept: keepLogsOffNode has run.
	logsKept bool
}

// runNodeFault applies the JobSet, waits until its pods are all Ready
// (joined), lets the job start, does the fault to the node of pod index
// of Job job, and follows the instance to its end. A lost node (lost) holds
// its pods until Kubernetes lets them go: with declare, once Flux has
// ended the instance and the node is NotReady, the test declares it out
// of service, as an administrator or a remediation controller does.
func runNodeFault(t *testing.T, n *namespace, ws []string, job, index int, fault string, lost, declare bool, bound time.Duration) *nodeFaultRun {
	t.Helper()
	r := &nodeFaultRun{faultRun: faultRun{n: n, name: "nf"}}
	h, ok := n.watch(instanceTimeout+3*time.Minute, func(s *snapshot) bool {
		if st, msg := s.jobSetState("nf"); st != "" {
			r.state, r.message = st, msg
			// Pods deleted between two polls (a drain) leave no ended
			// container to see: the JobSet's end bounds Flux's.
			if r.fluxEnd == 0 && !r.faultAt.IsZero() {
				r.fluxEnd = time.Since(r.faultAt)
			}
			return true
		}
		if r.faultAt.IsZero() {
			if allReady(s, 3) {
				nodesOf(t, s, ws)
				p, _ := s.pod("w", job, index)
				r.node = p.Spec.NodeName
				// Ready means joined; a moment more lands the fault mid-job.
				time.Sleep(2 * time.Second)
				r.faultAt = time.Now()
				if fault == "drain" {
					drain(t, r.node, false)
				} else {
					nodeFault(t, fault, r.node)
				}
			}
			return false
		}
		since := time.Since(r.faultAt)
		if r.fluxEnd == 0 && appEndedOffNode(s, r.node) {
			r.fluxEnd = since
		}
		if r.fluxEnd == 0 && since > lateFluxEnd && !r.logsKept {
			r.logsKept = true
			keepLogsOffNode(t, n, s, r.node)
		}
		if lost && r.notReady == 0 && nodeNotReady(t, r.node) {
			r.notReady = since
		}
		if declare && r.taint == 0 && r.fluxEnd > 0 && r.notReady > 0 {
			r.taint = since
			if out, err := kubectl(t.Context(), nil, "taint", "node", r.node, outOfService+"=nodeshutdown:NoExecute"); err != nil {
				t.Errorf("taint %s out of service: %v\n%s", r.node, err, out)
			}
		}
		return since > bound
	})
	r.h = h
	if !ok || r.faultAt.IsZero() {
		t.Fatalf("the instance never had 3 Ready pods, or never ended:\n%s", h.summary())
	}
	r.endAfter = time.Since(r.faultAt)
	if r.state == "" {
		t.Fatalf("JobSet nf had not ended %s after the fault (Flux ended it after %s, node NotReady after %s, out of service after %s):\n%s",
			bound, r.fluxEnd.Round(time.Second), r.notReady.Round(time.Second), r.taint.Round(time.Second), h.summary())
	}
	return r
}

// appEndedOffNode reports whether an app container of a pod that is not
// on node has ended: Flux's side of the end, whatever Kubernetes does
// with the pods on node.
func appEndedOffNode(s *snapshot, node string) bool {
	for _, p := range s.pods() {
		if p.Spec.NodeName == node {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "app" && cs.State.Terminated != nil {
				return true
			}
		}
	}
	return false
}

// nodeNotReady reports whether the node's Ready condition is no longer
// True (False or Unknown).
func nodeNotReady(t *testing.T, node string) bool {
	out, err := kubectl(t.Context(), nil, "get", "node", node, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	return err == nil && strings.TrimSpace(string(out)) != conditionTrue
}

// TestNodeFaults: what a node does to an instance whose three brokers
// are on three workers, each fault hitting the node of one pod once every
// pod is Ready (joined). Flux ends the instance in bounded time whatever
// the fault: a lost broker's jobs fail at once, a silent one is cut off
// after tbon.torpid_max (rank 0 exits 122), a silent rank 0 is left by
// its followers (exit 122). A node that is lost (powered off, hung, cut
// off) holds its pod until Kubernetes lets it go, and the Job, so the
// JobSet, is Failed only then: the test declares the node out of service
// once it is NotReady. A drain ends the JobSet by itself; a drain a
// PodDisruptionBudget forbids leaves the instance to Complete. Each logs
// a "node fault:" line: docs/contributing/faults.md's table.
func TestNodeFaults(t *testing.T) {
	t.Parallel()
	workers(t)
	// Flux's side: tbon.torpid_max, then rank 0's end (the job's
	// cleanup, rc3, the broker's exit), which on a loaded machine
	// waits for CPUs much longer than Flux took to notice.
	const fluxBound = 150 * time.Second
	for _, c := range []struct {
		name  string
		index int    // the pod whose node the fault hits
		fault string // cluster.sh node ACTION, or drain
		undo  string
		lost  bool // the node stops answering for its pods
		// jobPerPod: three Jobs of one pod, not one of three, so
		// that a Job fails with its own pod, not the lost node's.
		jobPerPod bool
	}{
		{"follower-off", 2, "off", "on", true, false},
		{"follower-off-job-per-pod", 2, "off", "on", true, true},
		{"leader-off", 0, "off", "on", true, false},
		{"follower-hung", 2, "freeze", "thaw", true, false},
		{"follower-cut", 1, "cut", "reconnect", true, false},
		{"follower-drained", 1, "drain", "uncordon", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := holdWorkers(t)
			n := newNamespace(t, "node-"+c.name)
			groups := []group{{name: "w", replicas: 1, completions: 3, pod: onWorkers("nf")}}
			if c.jobPerPod {
				groups[0].replicas, groups[0].completions = 3, 1
			}
			n.apply(faultJobSet(t, "nf", 600, nil, groups...))
			var r *nodeFaultRun
			t.Cleanup(func() {
				if r != nil && r.node != "" {
					undoFault(t, c.undo, r.node)
				}
			})
			job, index := 0, c.index
			if c.jobPerPod {
				job, index = c.index, 0
			}
			// With a Job per pod nothing waits for the lost node: the
			// test never declares it out of service.
			r = runNodeFault(t, n, ws, job, index, c.fault, c.lost, c.lost && !c.jobPerPod, fluxBound+2*faultBound)
			r.record(t, "the "+strings.Split(c.name, "-")[0]+"'s node: "+c.fault, jobSetFailed)
			if r.fluxEnd == 0 || r.fluxEnd > fluxBound {
				t.Errorf("Flux ended the instance %s after the fault, want within %s", r.fluxEnd.Round(time.Second), fluxBound)
			}
			if c.jobPerPod && r.endAfter-r.fluxEnd > faultBound {
				t.Errorf("with a Job per pod the JobSet ended %s after Flux did, want within %s: it waited for the lost node", (r.endAfter - r.fluxEnd).Round(time.Second), faultBound)
			}
			if r.taint != 0 && r.endAfter-r.taint > faultBound {
				t.Errorf("the JobSet ended %s after the node was declared out of service, want within %s", (r.endAfter - r.taint).Round(time.Second), faultBound)
			}
			checkNoRetries(t, n, r.h, groups)
			t.Logf("node fault: %s | Flux %.0f s | NotReady %.0f s | out of service %.0f s | %s %.0f s | %s | pods created %v",
				c.name, r.fluxEnd.Seconds(), r.notReady.Seconds(), r.taint.Seconds(), r.state, r.endAfter.Seconds(), endedBy(&r.faultRun), n.podsCreated())
		})
	}
	t.Run("drained-with-budget", func(t *testing.T) {
		ws := holdWorkers(t)
		n := newNamespace(t, "node-drain-pdb")
		groups := []group{{name: "w", replicas: 1, completions: 3, pod: onWorkers("nf")}}
		pdb := fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"nf"},"spec":{"minAvailable":3,"selector":{"matchLabels":{%q:"nf"}}}}`, labelJobSet)
		n.apply([]byte(pdb))
		n.apply(faultJobSet(t, "nf", 40, nil, groups...))
		var node string
		t.Cleanup(func() {
			if node != "" {
				undoFault(t, "uncordon", node)
			}
		})
		r := runFaultWithin(t, n, "nf", 3, 2*faultBound, func(s *snapshot) {
			nodesOf(t, s, ws)
			p, _ := s.pod("w", 0, 1)
			node = p.Spec.NodeName
			drain(t, node, true)
		})
		r.record(t, "the follower's node drained, with a PodDisruptionBudget", jobSetCompleted)
		checkNoRetries(t, n, r.h, groups)
		t.Logf("node fault: drained-with-budget | %s | %.0f s | %s | pods created %v", r.state, r.endAfter.Seconds(), endedBy(r), n.podsCreated())
	})
}

// drain runs kubectl drain on a node. With a PodDisruptionBudget that
// keeps every pod the drain must give up: it cannot evict the pod.
func drain(t *testing.T, node string, budget bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// The whole output: kubectl names the budget on the line of the pod
	// it could not evict, long before its summary.
	cmd := exec.CommandContext(ctx, env.kubectl, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=15s")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.kubeconfig)
	out, err := cmd.CombinedOutput()
	switch {
	case budget && err == nil:
		t.Errorf("drain of %s evicted a pod its PodDisruptionBudget keeps:\n%s", node, out)
	case budget && !strings.Contains(string(out), "disruption budget"):
		t.Errorf("drain of %s: %v\n%s\nwant it refused by the disruption budget", node, err, out)
	case !budget && err != nil:
		t.Errorf("drain of %s: %v\n%s", node, err, out)
	}
}

// undoFault restores a node after its fault, and waits until it is
// Ready again.
func undoFault(t *testing.T, undo, node string) {
	t.Helper()
	if undo == "uncordon" {
		if out, err := kubectl(context.Background(), nil, "uncordon", node); err != nil {
			t.Errorf("uncordon %s: %v\n%s", node, err, out)
		}
	} else {
		nodeFault(t, undo, node)
	}
	// The taint a lost node got; an error says it had none.
	_, _ = kubectl(context.Background(), nil, "taint", "node", node, outOfService+"-")
	waitNodeReady(t, node)
}

// endedBy says which side ended the instance: the exit code and
// termination message of every pod's app container that ended.
func endedBy(r *faultRun) string {
	var parts []string
	for _, p := range r.h.last.pods() {
		for _, cs := range p.Status.ContainerStatuses {
			if term := cs.State.Terminated; cs.Name == "app" && term != nil {
				msg := term.Message
				if i := strings.LastIndex(strings.TrimSpace(msg), "\n"); i >= 0 {
					msg = strings.TrimSpace(msg)[i+1:]
				}
				parts = append(parts, fmt.Sprintf("%s exit %d %q", p.Metadata.Name, term.ExitCode, strings.TrimSpace(msg)))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
