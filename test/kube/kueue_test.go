package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// Kueue on the test cluster (hack/kube/kueue.sh, docs/contributing/kueue.md): each test
// makes its own ResourceFlavor, ClusterQueue (selecting only its own
// namespace) and LocalQueue, and queues rendered JobSets in it with the
// label a user writes.
const (
	queueLabel    = "kueue.x-k8s.io/queue-name"
	priorityLabel = "kueue.x-k8s.io/priority-class"
	kueueAPI      = "/apis/kueue.x-k8s.io/v1beta2"
	// podsReadyTimeout is hack/kube/kueue.sh's waitForPodsReady timeout.
	podsReadyTimeout = 90 * time.Second
	// kueuePoll is how often the Kueue tests look at a Workload: a
	// condition that holds for less than that may be missed, but each
	// condition's lastTransitionTime and the events keep the sequence.
	kueuePoll = 2 * time.Second
)

// requireKueue fails the test under CI=true (skips it elsewhere) unless
// Kueue's API is served and its JobSet webhook is registered.
func requireKueue(t *testing.T) {
	t.Helper()
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := env.api.get(ctx, kueueAPI); err != nil {
		testsupport.SkipOrFail(t, "Kueue's API is not served (hack/kube/kueue.sh up): %v", err)
	}
	if _, err := env.api.get(ctx, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kueue-mutating-webhook-configuration"); err != nil {
		testsupport.SkipOrFail(t, "Kueue's webhooks are not registered (hack/kube/kueue.sh up): %v", err)
	}
}

// kueueQueue is one test's own queue.
type kueueQueue struct {
	n                           *namespace
	flavor, clusterQueue, local string
	priorityLow, priorityHigh   string
}

// newKueueQueue makes a ResourceFlavor, a ClusterQueue with the cpu and
// memory quota given (preempting lower priorities within itself) that
// admits only the namespace's workloads, a LocalQueue pointing at it, and
// two WorkloadPriorityClasses; all are deleted when the test ends.
func newKueueQueue(t *testing.T, n *namespace, cpu, memory string) *kueueQueue {
	t.Helper()
	requireKueue(t)
	q := &kueueQueue{n: n, flavor: n.name + "-rf", clusterQueue: n.name + "-cq", local: "queue",
		priorityLow: n.name + "-low", priorityHigh: n.name + "-high"}
	objects := fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: %[1]s}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %[2]s}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: %[3]s}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: %[1]s
      resources:
      - {name: cpu, nominalQuota: "%[4]s"}
      - {name: memory, nominalQuota: "%[5]s"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %[6]s, namespace: %[3]s}
spec: {clusterQueue: %[2]s}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: %[7]s}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: %[8]s}
value: 1000
`, q.flavor, q.clusterQueue, n.name, cpu, memory, q.local, q.priorityLow, q.priorityHigh)
	t.Cleanup(func() {
		// Not waited for: the ClusterQueue keeps its finalizer until its
		// workloads are gone, which the namespace's deletion (after this)
		// does.
		for _, obj := range []string{"clusterqueue/" + q.clusterQueue, "resourceflavor/" + q.flavor,
			"workloadpriorityclass/" + q.priorityLow, "workloadpriorityclass/" + q.priorityHigh} {
			if _, err := n.run(nil, "delete", obj, "--ignore-not-found", "--wait=false"); err != nil {
				t.Errorf("delete %s: %v", obj, err)
			}
		}
	})
	n.apply([]byte(objects))
	return q
}

// queued renders a Flux JobSet in the queue (and priority class, if not
// ""), after checking the render left spec.suspend to Kueue and kept the
// labels.
func (q *kueueQueue) queued(t *testing.T, name, priority string, groups ...group) []byte {
	t.Helper()
	in := decode(t, []byte(jobSet(t, name, nil, nil, groups...)))
	labels := map[string]any{queueLabel: q.local}
	if priority != "" {
		labels[priorityLabel] = priority
	}
	set(t, in[0], labels, "metadata", "labels")
	out := render(t, string(in.encode(t)))
	js := decode(t, out).find(t, "JobSet", name)
	if s := at(t, js, "spec", "suspend"); s != nil {
		t.Errorf("the render wrote spec.suspend: %v (Kueue's webhook owns it)", s)
	}
	if l := at(t, js, "metadata", "labels", queueLabel); l != q.local {
		t.Errorf("the render's queue label is %v, want %s", l, q.local)
	}
	return out
}

// app is a Flux app container running command with requests of cpu and
// memory.
func app(cpu, memory string, command ...string) map[string]any {
	return map[string]any{"name": "app", "image": appImage, "command": command,
		"resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": memory}}}
}

// workload is the part of a Kueue Workload the tests read.
type workload struct {
	Metadata struct {
		Name            string `json:"name"`
		OwnerReferences []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type               string `json:"type"`
			Status             string `json:"status"`
			Reason             string `json:"reason"`
			Message            string `json:"message"`
			LastTransitionTime string `json:"lastTransitionTime"`
		} `json:"conditions"`
		Admission *struct {
			ClusterQueue      string `json:"clusterQueue"`
			PodSetAssignments []struct {
				Name          string            `json:"name"`
				ResourceUsage map[string]string `json:"resourceUsage"`
				Count         int               `json:"count"`
			} `json:"podSetAssignments"`
		} `json:"admission"`
		RequeueState *struct {
			Count int `json:"count"`
		} `json:"requeueState"`
	} `json:"status"`
}

// is reports whether the Workload has the condition with status True
// (and the reason, when not "").
func (w *workload) is(condition, reason string) bool {
	for _, c := range w.Status.Conditions {
		if c.Type == condition && c.Status == conditionTrue && (reason == "" || c.Reason == reason) {
			return true
		}
	}
	return false
}

// state is the Workload's conditions in one line, for logs and for
// noticing a change.
func (w *workload) state() string {
	var parts []string
	for _, c := range w.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)@%s", c.Type, c.Status, c.Reason, c.LastTransitionTime))
	}
	if w.Status.RequeueState != nil {
		parts = append(parts, fmt.Sprintf("requeued %d", w.Status.RequeueState.Count))
	}
	return strings.Join(parts, " ")
}

var errNoWorkload = errors.New("no Workload yet")

// workloadOf returns the Workload Kueue made for the JobSet.
func (n *namespace) workloadOf(jobSet string) (*workload, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := env.api.get(ctx, kueueAPI+"/namespaces/"+n.name+"/workloads")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []workload `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode workloads: %w", err)
	}
	for i, w := range list.Items {
		for _, o := range w.Metadata.OwnerReferences {
			if o.Kind == "JobSet" && o.Name == jobSet {
				return &list.Items[i], nil
			}
		}
	}
	return nil, errNoWorkload
}

// kueueWatch follows the namespace's JobSets through Kueue, logging every
// change of a Workload's conditions as it was seen.
type kueueWatch struct {
	n     *namespace
	start time.Time
	seen  map[string]string // JobSet -> last logged state
}

func newKueueWatch(n *namespace) *kueueWatch {
	return &kueueWatch{n: n, start: time.Now(), seen: map[string]string{}}
}

// until polls until done returns true for the snapshot and the Workloads
// of the JobSets named, or fails the test after timeout.
func (k *kueueWatch) until(what string, timeout time.Duration, jobSets []string, done func(s *snapshot, w map[string]*workload) bool) *snapshot {
	t := k.n.t
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(kueuePoll) {
		// The Workloads before the snapshot: a JobSet's end comes before
		// the quota it frees goes to the next one, so a Workload seen
		// admitted here is never paired with an older JobSet state.
		wls := map[string]*workload{}
		var err error
		for _, js := range jobSets {
			w, werr := k.n.workloadOf(js)
			if werr == nil {
				wls[js] = w
				if st := w.state(); st != k.seen[js] {
					t.Logf("+%s %s: %s", time.Since(k.start).Round(time.Second), js, st)
					k.seen[js] = st
				}
			} else if !errors.Is(werr, errNoWorkload) {
				err = werr
			}
		}
		s, serr := k.n.snapshot()
		if serr != nil {
			err = serr
		}
		if err == nil && done(s, wls) {
			t.Logf("+%s %s", time.Since(k.start).Round(time.Second), what)
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, err)
		}
	}
}

// suspended reports whether the snapshot's JobSet has spec.suspend true.
func (s *snapshot) suspended(name string) bool {
	for _, js := range s.ofKind("JobSet") {
		if js.Metadata.Name == name {
			return js.Spec.Suspend != nil && *js.Spec.Suspend
		}
	}
	return false
}

// jobSetSuspended reports whether the JobSet's spec.suspend is true.
func (n *namespace) jobSetSuspended(name string) bool {
	n.t.Helper()
	out, err := n.run(nil, "get", "jobset.jobset.x-k8s.io/"+name, "-o", "jsonpath={.spec.suspend}")
	if err != nil {
		n.t.Errorf("suspend of %s: %v", name, err)
	}
	return string(out) == "true"
}

// podsOf lists the JobSet's pods in the snapshot.
func podsOf(s *snapshot, jobSet string) []object {
	var out []object
	for _, p := range s.pods() {
		if p.Metadata.Labels[labelJobSet] == jobSet {
			out = append(out, p)
		}
	}
	return out
}

// kueueEvents logs the Workloads' and JobSets' events in time order: the
// admission, preemption and requeue sequence as the cluster recorded it
// (docs/contributing/kueue.md quotes them).
func (n *namespace) kueueEvents() {
	n.t.Helper()
	out, err := n.run(nil, "get", "events", "-o", "json")
	if err != nil {
		n.t.Errorf("events: %v", err)
		return
	}
	var list struct {
		Items []struct {
			InvolvedObject struct{ Kind, Name string } `json:"involvedObject"`
			Reason         string                      `json:"reason"`
			Message        string                      `json:"message"`
			FirstTimestamp string                      `json:"firstTimestamp"`
			EventTime      string                      `json:"eventTime"`
			Count          int                         `json:"count"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		n.t.Errorf("decode events: %v", err)
		return
	}
	var lines []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind != "Workload" && e.InvolvedObject.Kind != "JobSet" {
			continue
		}
		ts := e.FirstTimestamp
		if ts == "" {
			ts = e.EventTime
		}
		lines = append(lines, fmt.Sprintf("%s %s/%s %s (x%d): %s", ts, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, max(e.Count, 1), e.Message))
	}
	sort.Strings(lines)
	n.t.Logf("Kueue and JobSet events:\n%s", strings.Join(lines, "\n"))
}

// eventCount counts the namespace's events of a reason on objects of a
// kind (an event repeated counts its repeats).
func (n *namespace) eventCount(kind, reason string) int {
	n.t.Helper()
	out, err := n.run(nil, "get", "events", "--field-selector", "reason="+reason+",involvedObject.kind="+kind, "-o", "json")
	if err != nil {
		n.t.Errorf("events: %v", err)
		return 0
	}
	var list struct {
		Items []struct {
			Count int `json:"count"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		n.t.Errorf("decode events: %v", err)
		return 0
	}
	c := 0
	for _, e := range list.Items {
		c += max(e.Count, 1)
	}
	return c
}

// recordHealth writes the JobSet as the API server returns it (without
// managedFields) to $JOBSET_FLUX_RECORD_HEALTH/<state>.json, the Argo CD
// health test's input (test/argocd/testdata/health); nothing when unset.
func (n *namespace) recordHealth(jobSet, state string) {
	n.t.Helper()
	dir := os.Getenv("JOBSET_FLUX_RECORD_HEALTH")
	if dir == "" {
		return
	}
	out, err := n.run(nil, "get", "jobset.jobset.x-k8s.io/"+jobSet, "-o", "json")
	if err != nil {
		n.t.Errorf("record %s: %v", state, err)
		return
	}
	var obj map[string]any
	if err := json.Unmarshal(out, &obj); err != nil {
		n.t.Errorf("record %s: %v", state, err)
		return
	}
	delete(obj["metadata"].(map[string]any), "managedFields")
	b, _ := json.MarshalIndent(obj, "", "  ")
	path := filepath.Join(dir, state+".json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		n.t.Errorf("record %s: %v", state, err)
		return
	}
	n.t.Logf("recorded JobSet %s %s in %s", jobSet, state, path)
}

// TestKueueAdmits: a rendered JobSet with the queue label is suspended by
// Kueue's webhook, admitted, runs and Completes; the quota Kueue charges
// is what the user's containers request (the function's flux-installer
// init container and /dev/shm add nothing), and is released at the end.
// A queued JobSet that fails ends Failed and releases its quota too.
func TestKueueAdmits(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "kueue-admit")
	q := newKueueQueue(t, n, "2", "2Gi")
	k := newKueueWatch(n)
	groups := []group{{name: "w", replicas: 1, completions: 2, container: app("250m", "96Mi", "sleep", "15")}}
	n.apply(q.queued(t, "admit", "", groups...))
	s := k.until("admit admitted, its pods running", 3*time.Minute, []string{"admit"}, func(s *snapshot, w map[string]*workload) bool {
		return w["admit"] != nil && w["admit"].is("Admitted", "") && len(running(podsOf(s, "admit"))) == 2
	})
	w, err := n.workloadOf("admit")
	if err != nil {
		t.Fatal(err)
	}
	checkCharge(t, w, map[string]string{"cpu": "500m", "memory": "192Mi"})
	checkClusterQueueUsage(t, q.clusterQueue, map[string]string{"cpu": "500m", "memory": "192Mi"})
	t.Logf("rendered pod requests: %s", n.podRequests(podsOf(s, "admit")[0].Metadata.Name))
	n.recordHealth("admit", "running")
	k.until("admit Completed", instanceTimeout, []string{"admit"}, func(s *snapshot, w map[string]*workload) bool {
		st, _ := s.jobSetState("admit")
		return st == jobSetCompleted && w["admit"] != nil && w["admit"].is("Finished", "")
	})
	n.recordHealth("admit", "completed")
	checkClusterQueueUsage(t, q.clusterQueue, map[string]string{"cpu": "0", "memory": "0"})

	fail := []group{{name: "w", replicas: 1, completions: 1, container: app("100m", "64Mi", "false")}}
	n.apply(q.queued(t, "fails", "", fail...))
	k.until("fails Failed", instanceTimeout, []string{"fails"}, func(s *snapshot, w map[string]*workload) bool {
		st, _ := s.jobSetState("fails")
		return st == jobSetFailed && w["fails"] != nil && w["fails"].is("Finished", "")
	})
	n.recordHealth("fails", "failed")
	checkClusterQueueUsage(t, q.clusterQueue, map[string]string{"cpu": "0", "memory": "0"})
	n.kueueEvents()
}

// running keeps the pods whose phase is Running.
func running(pods []object) []object {
	var out []object
	for _, p := range pods {
		if p.Status.Phase == "Running" && p.Metadata.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// checkCharge compares the Workload's admitted usage, summed over its
// PodSets, with want (quantities as Kueue writes them).
func checkCharge(t *testing.T, w *workload, want map[string]string) {
	t.Helper()
	if w.Status.Admission == nil {
		t.Fatalf("workload %s has no admission", w.Metadata.Name)
	}
	got := map[string][]string{}
	for _, a := range w.Status.Admission.PodSetAssignments {
		for r, v := range a.ResourceUsage {
			got[r] = append(got[r], v)
		}
	}
	for r, v := range want {
		if len(got[r]) != 1 || got[r][0] != v {
			t.Errorf("Kueue charged %s %v for workload %s, want %s (the user's requests)", r, got[r], w.Metadata.Name, v)
		}
	}
	t.Logf("Kueue charged %v (admission %+v)", got, w.Status.Admission.PodSetAssignments)
}

// checkClusterQueueUsage compares the ClusterQueue's flavorsUsage totals
// with want, waiting a little for its status to catch up.
func checkClusterQueueUsage(t *testing.T, name string, want map[string]string) {
	t.Helper()
	var got map[string]string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		got = clusterQueueUsage(t, name)
		ok := true
		for r, v := range want {
			if g := got[r]; g != v && !(v == "0" && g == "") {
				ok = false
			}
		}
		if ok {
			t.Logf("ClusterQueue %s usage %v", name, got)
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Errorf("ClusterQueue %s usage %v, want %v", name, got, want)
}

func clusterQueueUsage(t *testing.T, name string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := env.api.get(ctx, kueueAPI+"/clusterqueues/"+name)
	if err != nil {
		t.Fatalf("ClusterQueue %s: %v", name, err)
	}
	var cq struct {
		Status struct {
			FlavorsUsage []struct {
				Resources []struct {
					Name  string `json:"name"`
					Total string `json:"total"`
				} `json:"resources"`
			} `json:"flavorsUsage"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &cq); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range cq.Status.FlavorsUsage {
		for _, r := range f.Resources {
			got[r.Name] = r.Total
		}
	}
	return got
}

// podRequests describes what a rendered pod's containers request, for
// the log: what Kueue's formula, max(sum of the app containers, the
// largest init container), was given.
func (n *namespace) podRequests(pod string) string {
	out, err := n.run(nil, "get", "pod", pod, "-o",
		`jsonpath={range .spec.initContainers[*]}init container {.name}: {.resources.requests}; {end}{range .spec.containers[*]}container {.name}: {.resources.requests}; {end}`)
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// TestKueueWaitsForCapacity: a JobSet that does not fit next to another
// in its ClusterQueue waits suspended, with no pods, and starts once the
// first one finishes and frees its quota.
func TestKueueWaitsForCapacity(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "kueue-wait")
	q := newKueueQueue(t, n, "1", "1Gi")
	k := newKueueWatch(n)
	shape := func(secs string) []group {
		return []group{{name: "w", replicas: 1, completions: 2, container: app("400m", "64Mi", "sleep", secs)}}
	}
	n.apply(q.queued(t, "first", "", shape("25")...))
	k.until("first admitted", 3*time.Minute, []string{"first"}, func(s *snapshot, w map[string]*workload) bool {
		return w["first"] != nil && w["first"].is("Admitted", "")
	})
	n.apply(q.queued(t, "second", "", shape("5")...))
	waited := 0
	k.until("first Completed, second admitted", instanceTimeout, []string{"first", "second"}, func(s *snapshot, w map[string]*workload) bool {
		first, _ := s.jobSetState("first")
		second := w["second"]
		if first == "" && second != nil {
			// While the first runs, the second must wait suspended.
			if second.is("QuotaReserved", "") || !s.suspended("second") || len(podsOf(s, "second")) > 0 {
				t.Errorf("second got quota, was resumed or has pods while first runs: %s, %d pods", second.state(), len(podsOf(s, "second")))
			}
			if waited++; waited == 2 {
				n.recordHealth("second", "queued")
			}
		}
		return first == jobSetCompleted && second != nil && second.is("Admitted", "")
	})
	if waited < 2 {
		t.Errorf("second was seen waiting in %d polls only, want at least 2", waited)
	}
	n.expectEnd("second", jobSetCompleted, instanceTimeout)
	n.kueueEvents()
}

// TestKueuePreemption: a higher-priority JobSet preempts a running one in
// a full ClusterQueue; Kueue suspends the low one and the JobSet
// controller deletes its pods; once the high one is done, the low one is
// admitted again and runs from scratch (new Jobs, new pods, a new Flux
// instance) to Completed.
func TestKueuePreemption(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "kueue-preempt")
	q := newKueueQueue(t, n, "1", "1Gi")
	k := newKueueWatch(n)
	shape := func(secs string) []group {
		return []group{{name: "w", replicas: 1, completions: 2, container: app("400m", "64Mi", "sleep", secs)}}
	}
	n.apply(q.queued(t, "low", q.priorityLow, shape("40")...))
	s := k.until("low running", 3*time.Minute, []string{"low"}, func(s *snapshot, w map[string]*workload) bool {
		return w["low"] != nil && w["low"].is("Admitted", "") && len(running(podsOf(s, "low"))) == 2
	})
	before := uids(podsOf(s, "low"))
	n.apply(q.queued(t, "high", q.priorityHigh, shape("5")...))
	// Each part of the preemption is latched when a poll sees it: the
	// old pods' graceful stop and the high one's short run can overlap,
	// so no single poll need see low suspended with no pods at all while
	// high is admitted (low may be readmitted the moment high ends).
	var preempted, oldPodsGone, highAdmitted bool
	k.until("low preempted (suspended), its pods deleted, high admitted", 3*time.Minute, []string{"low", "high"}, func(s *snapshot, w map[string]*workload) bool {
		if !preempted && w["low"] != nil && w["low"].is("Evicted", "Preempted") && s.suspended("low") {
			preempted = true
			t.Logf("+%s low preempted and suspended, %d pods left", time.Since(k.start).Round(time.Second), len(podsOf(s, "low")))
		}
		if preempted && !oldPodsGone && !slices.ContainsFunc(uids(podsOf(s, "low")), func(uid string) bool { return slices.Contains(before, uid) }) {
			oldPodsGone = true
			t.Logf("+%s low's pods from before the preemption are gone (suspended now: %v)", time.Since(k.start).Round(time.Second), s.suspended("low"))
		}
		highAdmitted = highAdmitted || (w["high"] != nil && w["high"].is("Admitted", ""))
		return preempted && oldPodsGone && highAdmitted
	})
	s = k.until("high Completed, low running again", instanceTimeout, []string{"low", "high"}, func(s *snapshot, w map[string]*workload) bool {
		high, _ := s.jobSetState("high")
		return high == jobSetCompleted && w["low"] != nil && w["low"].is("Admitted", "") && len(running(podsOf(s, "low"))) == 2
	})
	for _, uid := range uids(podsOf(s, "low")) {
		if slices.Contains(before, uid) {
			t.Errorf("low's pod %s survived the preemption; want every pod new", uid)
		}
	}
	if created := n.podsCreated()["low-w-0"]; created != 4 {
		t.Errorf("low's Job created %d pods, want 4 (2 before the preemption, 2 after)", created)
	}
	n.expectEnd("low", jobSetCompleted, instanceTimeout)
	n.kueueEvents()
}

func uids(pods []object) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Metadata.UID)
	}
	return out
}

// TestKueuePodsReadyTimeout: an admitted instance that cannot form (one
// pod asks for more CPU than the node has, within the queue's quota) is
// evicted by waitForPodsReady once its timeout passes, its pods deleted,
// and requeued: admitted again after the backoff.
func TestKueuePodsReadyTimeout(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "kueue-ready")
	q := newKueueQueue(t, n, "64", "2Gi")
	k := newKueueWatch(n)
	groups := []group{
		{name: "a", replicas: 1, completions: 1, container: app("100m", "64Mi", "true")},
		{name: "b", replicas: 1, completions: 1, container: app("40", "64Mi", "true")},
	}
	n.apply(q.queued(t, "stuck", "", groups...))
	var admitted time.Time
	k.until("stuck admitted", 3*time.Minute, []string{"stuck"}, func(s *snapshot, w map[string]*workload) bool {
		admitted = time.Now()
		return w["stuck"] != nil && w["stuck"].is("Admitted", "")
	})
	// The eviction, the pods' deletion and the requeue take seconds (the
	// backoff is 5 s), shorter than a poll may catch: they are read from
	// the events once the Workload shows it was requeued and admitted again.
	k.until("stuck evicted, requeued and admitted again", podsReadyTimeout+2*time.Minute, []string{"stuck"}, func(s *snapshot, w map[string]*workload) bool {
		wl := w["stuck"]
		return wl != nil && wl.Status.RequeueState != nil && wl.Status.RequeueState.Count >= 1 && wl.is("Admitted", "")
	})
	if took := time.Since(admitted); took < podsReadyTimeout-10*time.Second {
		t.Errorf("requeued %s after admission, before the %s timeout", took.Round(time.Second), podsReadyTimeout)
	}
	if got := n.eventCount("Workload", "EvictedDueToPodsReadyTimeout"); got < 1 {
		t.Error("no EvictedDueToPodsReadyTimeout event on the Workload")
	}
	if got := n.eventCount("Job", "SuccessfulDelete"); got < 1 {
		t.Error("the eviction deleted no pod (no SuccessfulDelete event on the Jobs)")
	}
	// The Workload is Admitted again before the JobSet controller resumes
	// the Jobs and the Job controller creates their pods: the new pod
	// comes after the admission the poll saw, so it is waited for.
	k.until("stuck-a-0's second pod: one before the eviction, one after", time.Minute, []string{"stuck"}, func(*snapshot, map[string]*workload) bool {
		return n.podsCreated()["stuck-a-0"] >= 2
	})
	n.kueueEvents()
}

// TestKueueDownLeavesJobSetsAlone: Kueue's JobSet webhooks reach only
// JobSets with the queue label, so other JobSets never depend on Kueue.
// Shown live: the registered JobSet webhooks are copied to a
// configuration of this test's whose URL nothing serves (Kueue down), also
// limited to this test's label so no other test's JobSet meets it; a
// server dry-run of a JobSet without the queue label is then admitted,
// one with it refused by the dead webhook. And a JobSet without the label
// is not suspended by the running Kueue and gets no Workload.
func TestKueueDownLeavesJobSetsAlone(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "kueue-down")
	requireKueue(t)
	testLabel := "jobset-flux.test/dead-kueue"
	for _, kind := range []string{"mutatingwebhookconfiguration", "validatingwebhookconfiguration"} {
		live := map[string]string{"mutatingwebhookconfiguration": "kueue-mutating-webhook-configuration",
			"validatingwebhookconfiguration": "kueue-validating-webhook-configuration"}[kind]
		out, err := n.run(nil, "get", kind, live, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		dead := deadJobSetWebhooks(t, out, n.name+"-dead-"+kind[:1], testLabel, n.name)
		t.Cleanup(func() {
			if _, err := n.run(nil, "delete", kind, n.name+"-dead-"+kind[:1], "--ignore-not-found"); err != nil {
				t.Errorf("delete the dead webhook copy: %v", err)
			}
		})
		n.apply(dead)
	}
	plain := func(name string, labels map[string]any) []byte {
		d := decode(t, render(t, jobSet(t, name, nil, []string{"true"}, group{name: "w", replicas: 1, completions: 1})))
		if labels != nil {
			set(t, d[0], labels, "metadata", "labels")
		}
		return d.encode(t)
	}
	if out, err := n.run(plain("plain", map[string]any{testLabel: n.name}), "create", "--dry-run=server", "-f", "-"); err != nil {
		t.Errorf("a JobSet without the queue label was refused with Kueue's webhook down: %v\n%s", err, out)
	}
	out, err := n.run(plain("queued", map[string]any{testLabel: n.name, queueLabel: "queue"}), "create", "--dry-run=server", "-f", "-")
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("a JobSet with the queue label was not refused by the dead webhook (err %v):\n%s", err, out)
	} else {
		t.Logf("queued JobSet with Kueue down: %v", err)
	}
	n.apply(plain("untouched", nil))
	time.Sleep(5 * time.Second)
	if n.jobSetSuspended("untouched") {
		t.Error("Kueue suspended a JobSet without the queue label")
	}
	if _, err := n.workloadOf("untouched"); !errors.Is(err, errNoWorkload) {
		t.Errorf("a JobSet without the queue label has a Workload (or: %v)", err)
	}
	n.expectEnd("untouched", jobSetCompleted, instanceTimeout)
}

// deadJobSetWebhooks returns a copy of the JobSet webhooks of a live
// webhook configuration (JSON) named name, pointing at a URL nothing
// serves, and limited to objects with label=value as well.
func deadJobSetWebhooks(t *testing.T, live []byte, name, label, value string) []byte {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(live, &cfg); err != nil {
		t.Fatal(err)
	}
	var hooks []any
	for _, h := range cfg["webhooks"].([]any) {
		hook := h.(map[string]any)
		if !strings.HasSuffix(hook["name"].(string), "jobset.kb.io") {
			continue
		}
		sel, _ := json.Marshal(hook["objectSelector"])
		if !strings.Contains(string(sel), `"key":"`+queueLabel+`","operator":"Exists"`) {
			t.Errorf("webhook %s has objectSelector %s, want %s Exists", hook["name"], sel, queueLabel)
		}
		t.Logf("live webhook %s: failurePolicy %v, objectSelector %s", hook["name"], hook["failurePolicy"], sel)
		cc := hook["clientConfig"].(map[string]any)
		cc["url"] = "https://127.0.0.1:1/dead"
		selector := hook["objectSelector"].(map[string]any)
		selector["matchExpressions"] = append(selector["matchExpressions"].([]any),
			map[string]any{"key": label, "operator": "In", "values": []any{value}})
		hook["failurePolicy"] = "Fail"
		hooks = append(hooks, hook)
	}
	if len(hooks) != 1 {
		t.Fatalf("want one JobSet webhook in %s, found %d", cfg["metadata"].(map[string]any)["name"], len(hooks))
	}
	out, err := json.Marshal(map[string]any{"apiVersion": cfg["apiVersion"], "kind": cfg["kind"],
		"metadata": map[string]any{"name": name}, "webhooks": hooks})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
