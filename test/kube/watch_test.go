package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// object is the part of a JobSet, Job or Pod the tests read, as kubectl
// prints it in JSON; each kind fills the fields it has.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Suspend        *bool       `json:"suspend"` // a JobSet's
		NodeName       string      `json:"nodeName"`
		InitContainers []container `json:"initContainers"`
		Containers     []container `json:"containers"`
		Volumes        []struct {
			Name  string `json:"name"`
			Image *struct {
				Reference string `json:"reference"`
			} `json:"image"`
		} `json:"volumes"`
	} `json:"spec"`
	Status struct {
		Phase                 string            `json:"phase"`
		PodIP                 string            `json:"podIP"`
		PodIPs                []podIP           `json:"podIPs"`
		Conditions            []condition       `json:"conditions"`
		ContainerStatuses     []containerStatus `json:"containerStatuses"`
		InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
		Active                int               `json:"active"`
		Failed                int               `json:"failed"`
		Succeeded             int               `json:"succeeded"`
		Restarts              int               `json:"restarts"`
	} `json:"status"`
}

type podIP struct {
	IP string `json:"ip"`
}

type container struct {
	Name string `json:"name"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type containerStatus struct {
	Name         string `json:"name"`
	ContainerID  string `json:"containerID"` // containerd://<id>
	RestartCount int    `json:"restartCount"`
	State        struct {
		Running    *struct{} `json:"running"`
		Terminated *struct {
			ExitCode int    `json:"exitCode"`
			Reason   string `json:"reason"`
			Message  string `json:"message"`
		} `json:"terminated"`
	} `json:"state"`
}

// Labels the Job and JobSet controllers put on pods.
const (
	labelJobSet     = "jobset.sigs.k8s.io/jobset-name"
	labelReplicated = "jobset.sigs.k8s.io/replicatedjob-name"
	labelJobIndex   = "jobset.sigs.k8s.io/job-index"
	labelRestart    = "jobset.sigs.k8s.io/restart-attempt"
	labelJobName    = "batch.kubernetes.io/job-name"
	labelCompletion = "batch.kubernetes.io/job-completion-index"
	conditionTrue   = "True"
	jobSetCompleted = "Completed"
	jobSetFailed    = "Failed"
)

// snapshot is one look at the namespace's JobSets, Jobs and pods.
type snapshot struct {
	Items []object `json:"items"`
	at    time.Time
}

// snapshot lists the namespace's JobSets, Jobs and pods (in that order,
// so a pod is never older than the Job that made it appears to be).
func (n *namespace) snapshot() (*snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := &snapshot{at: time.Now()}
	for _, c := range []struct{ path, kind string }{
		{"/apis/jobset.x-k8s.io/v1alpha2/namespaces/" + n.name + "/jobsets", "JobSet"},
		{"/apis/batch/v1/namespaces/" + n.name + "/jobs", "Job"},
		{"/api/v1/namespaces/" + n.name + "/pods", "Pod"},
	} {
		items, err := env.api.list(ctx, c.path, c.kind)
		if err != nil {
			return nil, err
		}
		s.Items = append(s.Items, items...)
	}
	return s, nil
}

func (s *snapshot) ofKind(kind string) []object {
	var out []object
	for _, o := range s.Items {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Name < out[j].Metadata.Name })
	return out
}

func (s *snapshot) pods() []object { return s.ofKind("Pod") }
func (s *snapshot) jobs() []object { return s.ofKind("Job") }

// jobSetState is Completed or Failed once the JobSet has that condition,
// else "".
func (s *snapshot) jobSetState(name string) (state, message string) {
	for _, js := range s.ofKind("JobSet") {
		if js.Metadata.Name != name {
			continue
		}
		for _, c := range js.Status.Conditions {
			if (c.Type == jobSetCompleted || c.Type == jobSetFailed) && c.Status == conditionTrue {
				return c.Type, c.Reason + ": " + c.Message
			}
		}
	}
	return "", ""
}

// pod finds the pod of a replicatedJob's job and completion index; of
// several (a retry), the one still running or pending, else one not being
// deleted, else any.
func (s *snapshot) pod(rj string, job, index int) (object, bool) {
	var found []object
	for _, p := range s.pods() {
		l := p.Metadata.Labels
		if l[labelReplicated] == rj && l[labelJobIndex] == fmt.Sprint(job) && l[labelCompletion] == fmt.Sprint(index) {
			found = append(found, p)
		}
	}
	live := func(p object) bool { return p.Metadata.DeletionTimestamp == nil }
	active := func(p object) bool { return live(p) && p.Status.Phase != "Failed" && p.Status.Phase != "Succeeded" }
	for _, ok := range []func(object) bool{active, live} {
		for _, p := range found {
			if ok(p) {
				return p, true
			}
		}
	}
	if len(found) > 0 {
		return found[0], true
	}
	return object{}, false
}

// history is everything the polls saw: every pod and Job that existed at
// some poll, by UID: pods with the most restarts they ever showed, Jobs by
// name.
type history struct {
	pods  map[string]*seenPod
	jobs  map[string]string
	last  *snapshot
	start time.Time
}

type seenPod struct {
	name, job, index, restartAttempt string
	restarts                         int // the largest restartCount of any container
	firstSeen                        time.Duration
}

func newHistory() *history {
	return &history{pods: map[string]*seenPod{}, jobs: map[string]string{}, start: time.Now()}
}

func (h *history) add(s *snapshot) {
	h.last = s
	for _, p := range s.pods() {
		sp := h.pods[p.Metadata.UID]
		if sp == nil {
			l := p.Metadata.Labels
			sp = &seenPod{name: p.Metadata.Name, job: l[labelJobName], index: l[labelCompletion], restartAttempt: l[labelRestart], firstSeen: s.at.Sub(h.start)}
			h.pods[p.Metadata.UID] = sp
		}
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			sp.restarts = max(sp.restarts, c.RestartCount)
		}
	}
	for _, j := range s.jobs() {
		h.jobs[j.Metadata.UID] = j.Metadata.Name
	}
}

// podsPerIndex counts the pods seen for each "<job>/<index>".
func (h *history) podsPerIndex() map[string]int {
	m := map[string]int{}
	for _, p := range h.pods {
		m[p.job+"/"+p.index]++
	}
	return m
}

// retries describes every sign of a retry or restart the polls saw: a
// container restarted, two pods for one index, two Jobs of one name.
func (h *history) retries() []string {
	var out []string
	for _, p := range h.pods {
		if p.restarts > 0 {
			out = append(out, fmt.Sprintf("pod %s: a container restarted %d times", p.name, p.restarts))
		}
	}
	for key, n := range h.podsPerIndex() {
		if n > 1 {
			out = append(out, fmt.Sprintf("%d pods for job/index %s", n, key))
		}
	}
	// A Job's failed count is no sign of a retry: it also counts the pods
	// the Job controller deletes when backoffLimit 0 is exceeded. In the
	// grid's shape three, the leader failed while its Job's other pod was
	// still running; that pod was deleted (SuccessfulDelete) and the Job
	// counted 2 failed pods, with one pod per index all along. Retries show
	// as two pods for one index (above) and as more SuccessfulCreate
	// events than completions (checkNoRetries).
	names := map[string]int{}
	for _, name := range h.jobs {
		names[name]++
	}
	for name, n := range names {
		if n > 1 {
			out = append(out, fmt.Sprintf("job %s created %d times", name, n))
		}
	}
	slices.Sort(out)
	return out
}

// pollInterval is how often watch lists a namespace. Each poll is three
// LISTs; at one a second in six namespaces at once the API server used 130
// CPU-s of a 566 s suite (cluster.sh down's figures), time the pods under
// test did not get on a 2-CPU node. A pod created and deleted between two
// polls is still counted, from the Job controller's events (podsCreated).
const pollInterval = 2 * time.Second

// watch polls the namespace every pollInterval until done says so or
// timeout passes; it returns the history and whether done was reached.
func (n *namespace) watch(timeout time.Duration, done func(*snapshot) bool) (*history, bool) {
	n.t.Helper()
	h := newHistory()
	failed := 0
	for deadline := time.Now().Add(timeout); ; time.Sleep(pollInterval) {
		s, err := n.snapshot()
		if err != nil {
			// The first failure says why; a count says how long it lasted.
			if failed++; failed == 1 {
				n.t.Logf("poll: %v", err)
			}
		} else {
			if failed > 1 {
				n.t.Logf("%d polls failed", failed)
			}
			failed = 0
			h.add(s)
			if done(s) {
				return h, true
			}
		}
		if time.Now().After(deadline) {
			return h, false
		}
	}
}

// waitEnd waits for the JobSet to be Completed or Failed and returns which
// (and the condition's reason and message); a timeout fails the test.
func (n *namespace) waitEnd(jobSet string, timeout time.Duration) (state, message string, h *history) {
	n.t.Helper()
	h, ok := n.watch(timeout, func(s *snapshot) bool {
		st, _ := s.jobSetState(jobSet)
		return st != ""
	})
	if !ok {
		n.t.Errorf("JobSet %s neither Completed nor Failed after %s", jobSet, timeout)
		return "", "", h
	}
	state, message = h.last.jobSetState(jobSet)
	n.t.Logf("JobSet %s %s after %s (%s)", jobSet, state, time.Since(h.start).Round(time.Second), message)
	return state, message, h
}

// expectEnd waits for the JobSet's end and fails the test unless it is want.
func (n *namespace) expectEnd(jobSet, want string, timeout time.Duration) *history {
	n.t.Helper()
	state, msg, h := n.waitEnd(jobSet, timeout)
	if state != want && state != "" {
		n.t.Errorf("JobSet %s %s (%s), want %s", jobSet, state, msg, want)
	}
	return h
}

// summary is one line per pod seen, for logs.
func (h *history) summary() string {
	var lines []string
	for _, p := range h.pods {
		lines = append(lines, fmt.Sprintf("%s job=%s index=%s restart-attempt=%s restarts=%d seen at %s", p.name, p.job, p.index, p.restartAttempt, p.restarts, p.firstSeen.Round(time.Second)))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
