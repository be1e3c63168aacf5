package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Milestones, in the order a Flux JobSet passes them; every value is the
// time since kubectl apply started, in seconds. "All"/"last" milestones
// are the moment the last pod passed them.
const (
	msCreated     = "created"      // every pod exists (watch)
	msInitStart   = "init-start"   // the last flux-installer logged its first line
	msInitDone    = "init-done"    // the last flux-installer logged done
	msRunning     = "running"      // every pod Running or past it (watch)
	msBrokerStart = "broker-start" // the last entrypoint logged "starting:" (exec flux start)
	msRC1         = "rc1"          // rank 0's broker finished rc1 (its modules are loaded)
	msJoined      = "joined"       // rank 0's broker logged quorum-full: every broker joined
	msFirstOutput = "first-output" // the first task's clock
	msLastOutput  = "last-output"  // the last task's clock
	msCompleted   = "completed"    // the JobSet's Completed condition (watch)
)

// result is one run, as written to runs.json.
type result struct {
	Variant    string             `json:"variant"`
	Fail       bool               `json:"fail,omitempty"`
	Pods       int                `json:"pods"`
	Rep        int                `json:"rep"`
	Name       string             `json:"name"`
	Namespace  string             `json:"namespace"`
	Start      time.Time          `json:"start"`
	Load1      float64            `json:"load1"`
	OtherPods  int                `json:"otherPods"`
	End        string             `json:"end,omitempty"`    // Completed or Failed
	EndWhy     string             `json:"endWhy,omitempty"` // the condition's type, reason and message
	Milestones map[string]float64 `json:"milestones"`
	InitCopy   []float64          `json:"initCopy,omitempty"`   // per pod, seconds (log lines)
	InitStatus []string           `json:"initStatus,omitempty"` // per pod, the pod status's startedAt-finishedAt (whole seconds)
	Disk       []diskUsage        `json:"disk,omitempty"`       // warm-up only
	// ImageVolumes are the writable layers of the image volumes mounted
	// while the warm-up of view-mount image held its pods.
	ImageVolumes []diskUsage `json:"imageVolumes,omitempty"`
}

// variant is the run's variant, back from runs.json's fields.
func (r *result) variant() variant { return variant{kind: r.Variant, fail: r.Fail} }

// bench is what every run needs.
type bench struct {
	c          *cluster
	function   string
	image      string
	dir        string
	kubeletDir string
	stateDir   string // the cluster's state directory (hack/kube), where containerd's PID is
	timeout    time.Duration
}

func randomName(prefix string) string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// run measures one JobSet of pods in a namespace of its own, fresh names
// both, and deletes the namespace afterwards. hold is the warm-up: its
// pods sleep until their emptyDirs are measured, and no times are kept.
func (b *bench) run(v variant, pods, rep int, hold bool) (*result, error) {
	code := map[string]string{kindFloor: "b", kindCopy: "f", kindImage: "i", kindFluxOwn: "o", kindOperator: "m", kindTrainer: "t"}[v.kind]
	if v.fail {
		code = "x" + code
	}
	ns, err := b.c.newNamespace(fmt.Sprintf("sb-%s%d", code, pods))
	if ns != "" {
		defer func() {
			if derr := b.c.deleteNamespace(ns); derr != nil {
				fmt.Fprintf(os.Stderr, "startbench: %v\n", derr)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	s := newSpec(v, randomName("sb"+code+strconv.Itoa(pods)+"-"), ns, b.image, pods, hold)
	manifest, err := s.manifest(b.function, b.dir)
	if err != nil {
		return nil, err
	}
	defer b.deleteClusterScoped(s)
	r := &result{Variant: v.kind, Fail: v.fail, Pods: pods, Rep: rep, Name: s.name, Namespace: ns, Milestones: map[string]float64{}}
	r.OtherPods = b.otherPods(ns)
	tr, err := b.applyAndWatch(r, s, manifest, hold)
	if err != nil {
		return r, err
	}
	if hold {
		if at, ok := tr.latest(tr.started); ok {
			r.Milestones[msRunning] = tr.since(at)
		}
		if r.Disk, err = b.disk(tr); err != nil || v.copies() {
			return r, err
		}
		r.ImageVolumes, err = b.imageVolumes()
		return r, err
	}
	return r, b.collect(r, s, tr)
}

// otherPods counts the pods of other namespaces that are not done: other
// work on the node while a run is timed (the test suites, for example).
func (b *bench) otherPods(ns string) int {
	out, err := b.c.run(30*time.Second, nil, "get", "pods", "-A", "--no-headers",
		"--field-selector", "status.phase!=Succeeded,status.phase!=Failed")
	if err != nil {
		return -1
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] != ns && f[0] != "kube-system" {
			n++
		}
	}
	return n
}

// load1 is the 1-minute load average.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// tracker follows a run's pods and JobSet through their watch events.
type tracker struct {
	t0      time.Time
	pods    int
	created map[string]time.Time // pod name -> first seen
	started map[string]time.Time // pod name -> first seen Running or past it
	uids    map[string]string    // pod name -> UID
	podEnds bool                 // the run ends with its one pod (Flux's own start)
	end     string               // Completed or Failed
	why     string
	endAt   time.Time
}

func (t *tracker) pod(e event) error {
	p, err := decodePod(e.object)
	if err != nil {
		return err
	}
	name := p.Metadata.Name
	if _, ok := t.created[name]; !ok {
		t.created[name] = e.at
		t.uids[name] = p.Metadata.UID
	}
	if _, ok := t.started[name]; !ok && p.started() {
		t.started[name] = e.at
	}
	if n := p.restarts(); n > 0 {
		return fmt.Errorf("pod %s: a container restarted %d times", name, n)
	}
	if t.podEnds && t.end == "" {
		switch p.Status.Phase {
		case "Succeeded":
			t.end, t.why, t.endAt = "Completed", "pod Succeeded", e.at
		case "Failed":
			t.end, t.why, t.endAt = "Failed", "pod Failed", e.at
		}
	}
	return nil
}

// ended reads the end of the run's end object (JobSet, Job, TrainJob).
func (t *tracker) ended(e event) error {
	o, err := decodeEnding(e.object)
	if err != nil {
		return err
	}
	if t.end == "" {
		if state, why := o.end(); state != "" {
			t.end, t.why, t.endAt = state, why, e.at
		}
	}
	return nil
}

// latest is the latest time of a per-pod map, once every pod is in it.
func (t *tracker) latest(m map[string]time.Time) (time.Time, bool) {
	if len(m) < t.pods {
		return time.Time{}, false
	}
	var last time.Time
	for _, at := range m {
		if at.After(last) {
			last = at
		}
	}
	return last, true
}

// since is the time from t0 to at, in seconds.
func (t *tracker) since(at time.Time) float64 { return at.Sub(t.t0).Seconds() }

// marshal is json.MarshalIndent for runs.json.
func marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return append(b, '\n'), nil
}
