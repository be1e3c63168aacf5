package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// run builds a result whose milestones are the given seconds.
func run(kind string, pods int, fail bool, ms map[string]float64) *result {
	return &result{Variant: kind, Pods: pods, Fail: fail, Milestones: ms, Load1: 1.5, End: map[bool]string{false: "Completed", true: "Failed"}[fail], EndWhy: "Failed FailedJobs: x|y"}
}

// TestTables: the side-by-side table has every kind, Flux's own start
// measured from its flux start, the target and each Flux variant's ratio
// to (floor + own); the growth table flags a part that grows faster than
// the pods; failures are listed apart; each size has its own tables.
func TestTables(t *testing.T) {
	kinds := timedKinds([]string{kindCopy, kindImage}, []string{kindOperator}, true)
	var runs []*result
	for _, n := range []int{3, 6} {
		k := float64(n) / 3
		runs = append(runs,
			run(kindFloor, n, false, map[string]float64{msRunning: 1, msFirstOutput: 1, msCompleted: 3}),
			run(kindFluxOwn, n, false, map[string]float64{msBrokerStart: 2, msRC1: 2.5, msJoined: 2.8, msFirstOutput: 3, msCompleted: 4}),
			run(kindCopy, n, false, map[string]float64{msInitStart: 1, msInitDone: 1 + k*k, msBrokerStart: 2 + k*k, msRC1: 2.5 + k*k, msJoined: 3 + k*k, msFirstOutput: 3.5 + k*k, msCompleted: 6 + k*k}),
			run(kindImage, n, false, map[string]float64{msBrokerStart: 1, msJoined: 2, msFirstOutput: 2.4, msCompleted: 5}),
			run(kindOperator, n, false, map[string]float64{msRunning: 2, msJoined: 4, msFirstOutput: 5, msCompleted: 8}),
			run(kindCopy, n, true, map[string]float64{msFirstOutput: 3, msCompleted: 7}),
			run(kindOperator, n, true, map[string]float64{msFirstOutput: 5, msCompleted: 9}),
		)
	}
	runs[2].InitCopy = []float64{1, 2}
	warm := map[string]*result{warmKey(3, kindCopy): {Disk: []diskUsage{{Bytes: 2e8, Allocated: 2.1e8, Files: 100}}}}
	out := tables([]int{3, 6}, kinds, runs, warm)
	for _, want := range []string{
		"| pods | load | no-Flux floor | Flux's own start (`--test-size`) | target | jobset-flux, copy | jobset-flux, image | Flux Operator | copy / (floor + own) | image / (floor + own) | operator / (floor + own) |",
		// own = 3 - 2 = 1; target 1.2 x (1 + 1); copy 3.5 + 1 at 3 pods
		"| 3 | 1.5-1.5 | 1.00 s | 1.00 s | 2.40 s | 4.50 s | 2.40 s | 5.00 s | 2.25x | 1.20x | 2.50x |",
		"| 6 | 1.5-1.5 | 1.00 s | 1.00 s | 2.40 s | 7.50 s | 2.40 s | 5.00 s | 3.75x | 1.20x | 2.50x |",
		"| pods | no-Flux floor | Flux's own start (`--test-size`) | jobset-flux, copy | jobset-flux, image | Flux Operator |",
		"| 6 | 3.00 s | 4.00 s | 10.00 s | 5.00 s | 8.00 s |",
		// the copy grows with the square of the pods: 1 -> 4
		"| jobset-flux, copy | the view copy | 1.00 | 4.00 | **4.00x** |",
		"| jobset-flux, image | apply to the last broker started | 1.00 | 1.00 | 1.00x |",
		"| Flux's own start (`--test-size`) | flux start to first output | 1.00 | 1.00 | 1.00x |",
		"| 3 | jobset-flux, copy | 3.00 s | 7.00 s | **Failed** (Failed FailedJobs: x/y) |",
		"| 6 | Flux Operator | 5.00 s | 9.00 s | **Failed** (Failed FailedJobs: x/y) |",
		"### 3 pods", "### 6 pods",
		"Runs, interleaved: 1 no-Flux floor, 1 Flux's own start (`--test-size`), 1 jobset-flux, copy, 1 jobset-flux, image, 1 Flux Operator;",
		"| **the end**: JobSet Completed (a MiniCluster's Job, a TrainJob: Complete) | 3.00 s | 4.00 s | 7.00 s | 5.00 s | 8.00 s | 2.33x | 1.67x | 2.67x |",
		"| init container: one pod's view copy | 1.50 s (1.00-2.00) (2 pods) | none |",
		"200.0 MB apparent, 210.0 MB allocated, 100 entries; 210.0 MB for the 1 pods",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| 3 | jobset-flux, image | ") {
		t.Error("a failure row for a variant that had no failing run")
	}
}

// TestEnding: Completed and Complete succeed, Failed fails, other
// conditions and false ones do not end a run.
func TestEnding(t *testing.T) {
	for _, c := range []struct{ conds, want string }{
		{`[{"type":"Completed","status":"True","reason":"AllJobsCompleted"}]`, "Completed"},
		{`[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]`, "Completed"},
		{`[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True","reason":"BackoffLimitExceeded"}]`, "Failed"},
		{`[{"type":"Suspended","status":"True"},{"type":"Failed","status":"False"}]`, ""},
		{`[]`, ""},
	} {
		o, err := decodeEnding(json.RawMessage(`{"status":{"conditions":` + c.conds + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := o.end(); got != c.want {
			t.Errorf("%s: %q, want %q", c.conds, got, c.want)
		}
	}
	if _, err := decodeEnding(json.RawMessage(`{"status":3}`)); err == nil {
		t.Error("decodeEnding took a status that is a number")
	}
}

// TestFluxStart reads the clock printed before flux start, and says so
// when it is missing.
func TestFluxStart(t *testing.T) {
	logs := parseLog("2026-12-03T10:00:00.1Z hello\n2026-12-03T10:00:00.2Z " + fluxStartMark + " 1764756000.250000000\n")
	at, err := fluxStart(logs)
	if err != nil || !at.Equal(time.Unix(1764756000, 250000000)) {
		t.Errorf("%v %v", at, err)
	}
	if _, err := fluxStart(logs[:1]); err == nil {
		t.Error("no error without the line")
	}
}

// TestWorkloads: Flux's own start is one pod of the app image with the
// view image mounted as view-mount image mounts it, running flux start
// --test-size=N over the job script; the anchors get the script in a
// ConfigMap and run it as `bash FILE`; the Trainer's runtime is named as
// the run and its size is the pods.
func TestWorkloads(t *testing.T) {
	s := newSpec(variant{kind: kindFluxOwn}, "sbo8-1", "ns", "img", 8, false)
	b, err := s.manifest("", "")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"kind: Pod", "restartPolicy: Never", "reference: " + viewImage, "subPath: opt/software", "subPath: opt/views",
		"--test-size=8", `run -N 8 -n 8 bash -c "$STARTBENCH_JOB"`, fluxStartMark, "medium: Memory"} {
		if !strings.Contains(text, want) {
			t.Errorf("flux-own: no %q in\n%s", want, text)
		}
	}
	if s.endResource() != "" {
		t.Errorf("flux-own ends with its pod, not %q", s.endResource())
	}
	for _, kind := range []string{kindOperator, kindTrainer} {
		s := newSpec(variant{kind: kind, fail: true}, "sbm3-1", "ns", "img", 3, false)
		b, err := s.manifest("", "")
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(strings.TrimSuffix(string(b), "---\n"), "---\n")
		var cm struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(docs[0]), &cm); err != nil || cm.Kind != "ConfigMap" || cm.Data["job.sh"] != failScript+"\n" {
			t.Errorf("%s: the script's ConfigMap: %+v %v", kind, cm, err)
		}
		want := map[string]int{kindOperator: 2, kindTrainer: 3}[kind]
		if len(docs) != want {
			t.Errorf("%s: %d objects, want %d", kind, len(docs), want)
		}
		if !strings.Contains(string(b), scriptMount+"/job.sh") {
			t.Errorf("%s: the command does not run the mounted script", kind)
		}
	}
	if _, err := newSpec(variant{kind: kindFloor}, "n", "ns", "img", 3, false).anchorManifest(); err == nil {
		t.Error("anchorManifest of the floor")
	}
}

// TestStaleNamespace: every kind's namespace, the failing runs' too, is
// recognised as the benchmark's; others are not.
func TestStaleNamespace(t *testing.T) {
	for _, ns := range []string{"sb-b3-a1b2c3", "sb-f64-a1b2c3", "sb-xi8-a1b2c3", "sb-o16-a1b2c3", "sb-m3-a1b2c3", "sb-xt32-a1b2c3"} {
		if !staleNamespace.MatchString(ns) {
			t.Errorf("%s not matched", ns)
		}
	}
	for _, ns := range []string{"sb-z3-a1b2c3", "default", "sb-b3-a1b2c", "anchor-x"} {
		if staleNamespace.MatchString(ns) {
			t.Errorf("%s matched", ns)
		}
	}
}

// TestKeptRuns: -keep keeps the runs and warm-ups of the pod counts not
// measured again, and nothing of those that are.
func TestKeptRuns(t *testing.T) {
	path := t.TempDir() + "/runs.json"
	old := []*result{run(kindCopy, 3, false, nil), run(kindFloor, 64, false, nil), run(kindImage, 8, true, nil)}
	warm := map[string]*result{warmKey(3, kindCopy): {Pods: 3}, warmKey(64, kindCopy): {Pods: 64}}
	if err := writeRuns(path, old, warm); err != nil {
		t.Fatal(err)
	}
	runs, w, err := keptRuns(path, []int{64})
	if err != nil {
		t.Fatal(err)
	}
	if got := keptSizes(runs); len(got) != 2 || got[0] != 3 || got[1] != 8 {
		t.Errorf("kept sizes %v, want [3 8]", got)
	}
	if len(w) != 1 || w[warmKey(3, kindCopy)] == nil {
		t.Errorf("kept warm-ups %v, want only 3-copy", w)
	}
	if !runs[1].Fail || runs[1].Variant != kindImage {
		t.Errorf("a kept run lost its fields: %+v", runs[1])
	}
	if got := sortedWith([]int{3, 64}, 8); len(got) != 3 || got[1] != 8 {
		t.Errorf("sortedWith: %v", got)
	}
	if _, _, err := keptRuns(t.TempDir()+"/none.json", nil); err == nil {
		t.Error("no error for a missing -keep file")
	}
	if r, w, err := keptRuns("", []int{3}); err != nil || r != nil || len(w) != 0 {
		t.Errorf("no -keep: %v %v %v", r, w, err)
	}
}
