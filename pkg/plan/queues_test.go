package plan

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

const (
	queuesOn   = "flux-framework.org/queues"
	gpuLimit   = "resources:\n  limits:\n    nvidia.com/gpu: 2"
	cpuLimit2  = "resources:\n  limits:\n    cpu: 2"
	cpuLimit8  = "resources:\n  limits:\n    cpu: 8"
	noCommand  = "command: null"
	launcherOn = "flux-framework.org/launcher"
)

// The default queue is the group the command's flux run runs on, or rank
// 0's when the jobs are the user's (launcher, interactive); none without
// the setting.
func TestDefaultQueue(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		specs       []string
		want        string
	}{
		{"off", map[string]string{}, []string{"cpu:1:1", "gpu:1:2:" + gpuLimit}, ""},
		{"off is false", map[string]string{queuesOn: "false"}, []string{"cpu:1:1", "gpu:1:2:" + gpuLimit}, ""},
		{"one group", map[string]string{queuesOn: "true"}, []string{"w:2:2"}, "w"},
		{"run mode, the GPU group", map[string]string{queuesOn: "true"}, []string{"cpu:1:1", "gpu:1:2:" + gpuLimit}, "gpu"},
		{"run mode, the group whose cores fit", map[string]string{queuesOn: "true", "flux-framework.org/tasks-per-node": "4"}, []string{"small:1:1:" + cpuLimit2, "big:1:2:" + cpuLimit8}, "big"},
		{"launcher, rank 0's", map[string]string{queuesOn: "true", launcherOn: "true"}, []string{"cpu:1:1", "gpu:1:2:" + gpuLimit}, "cpu"},
		{"launcher, rank 0's in replicated-jobs order", map[string]string{queuesOn: "true", launcherOn: "true", "flux-framework.org/replicated-jobs": "gpu,cpu"}, []string{"cpu:1:1", "gpu:1:2:" + gpuLimit}, "gpu"},
		{"interactive, rank 0's", map[string]string{queuesOn: "true", "flux-framework.org/interactive": "true"}, []string{"a:1:1", "b:1:2"}, "a"},
		{"interactive by no command", map[string]string{queuesOn: "true"}, []string{"a:1:1:" + noCommand, "b:1:2:" + noCommand}, "a"},
	} {
		p, found := build(read(t, jobsetYAML(tc.annotations, tc.specs...)), settings.Defaults())
		if p == nil {
			t.Errorf("%s: build failed: %v", tc.name, errorsOf(found))
			continue
		}
		if p.DefaultQueue != tc.want {
			t.Errorf("%s: default queue %q, want %q", tc.name, p.DefaultQueue, tc.want)
		}
	}
}

// A command whose one flux run spans several groups has no queue to run
// in: the error names the JobSet, the setting, the groups and the fix.
// Launcher and interactive instances, whose jobs are the user's, are not
// refused; nor is the same JobSet without queues.
func TestQueuesRefuseJobOverGroups(t *testing.T) {
	js := read(t, jobsetYAML(map[string]string{queuesOn: "true"}, "a:1:1", "b:2:1"))
	p, found := build(js, settings.Defaults())
	errs := errorsOf(found)
	if p != nil || len(errs) != 1 {
		t.Fatalf("want one error, got %q", errs)
	}
	for _, want := range []string{
		"metadata.annotations[flux-framework.org/queues]: ",
		`JobSet "js"`, `replicatedJobs "a", "b"`, "a Flux job runs in one queue",
		`flux-framework.org/launcher: "true"`, "flux submit -q a", "leave queues off",
	} {
		if !strings.Contains(errs[0], want) {
			t.Errorf("error %q does not say %q", errs[0], want)
		}
	}
	for name, annotations := range map[string]map[string]string{
		"without queues": {},
		"launcher":       {queuesOn: "true", launcherOn: "true"},
		"interactive":    {queuesOn: "true", "flux-framework.org/interactive": "true"},
	} {
		if p, found := build(read(t, jobsetYAML(annotations, "a:1:1", "b:2:1")), settings.Defaults()); p == nil {
			t.Errorf("%s: want no error, got %q", name, errorsOf(found))
		}
	}
}

// A group named like one of the instance's pods is refused with queues
// on, at its name, naming the pod; a name that only looks like one (an
// index out of range, a leading zero, another JobSet's prefix) is not, nor
// is any name without queues.
func TestQueuesRefuseHostnameNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rjs   []*jobsettest.ReplicatedJob
		error string // "" for none
	}{
		{"pod 0 of another group", []*jobsettest.ReplicatedJob{jobsettest.Job("b"), jobsettest.Job("js-b-0-0")},
			`spec.replicatedJobs[1].name: replicatedJob "js-b-0-0" is also the hostname of one of JobSet "js"'s pods (replicatedJob "b", Job 0, pod 0)`},
		{"a later pod of another group", []*jobsettest.ReplicatedJob{jobsettest.Job("js-w-1-2"), jobsettest.Job("w").Replicas(2).Completions(3)},
			`spec.replicatedJobs[0].name: replicatedJob "js-w-1-2" is also the hostname of one of JobSet "js"'s pods (replicatedJob "w", Job 1, pod 2)`},
		{"Job index out of range", []*jobsettest.ReplicatedJob{jobsettest.Job("b"), jobsettest.Job("js-b-1-0")}, ""},
		{"pod index out of range", []*jobsettest.ReplicatedJob{jobsettest.Job("b"), jobsettest.Job("js-b-0-1")}, ""},
		{"leading zero", []*jobsettest.ReplicatedJob{jobsettest.Job("b").Replicas(2), jobsettest.Job("js-b-01-0")}, ""},
		{"not a pod's shape", []*jobsettest.ReplicatedJob{jobsettest.Job("b"), jobsettest.Job("js-b-0")}, ""},
		{"another JobSet's prefix", []*jobsettest.ReplicatedJob{jobsettest.Job("b"), jobsettest.Job("other-b-0-0")}, ""},
	} {
		for _, on := range []bool{true, false} {
			js := jobsettest.New("js").Jobs(tc.rjs...).Annotation(launcherOn, "true")
			if on {
				js.Annotation(queuesOn, "true")
			}
			_, found := build(read(t, js.YAML()), settings.Defaults())
			errs := errorsOf(found)
			switch {
			case tc.error == "" || !on:
				if len(errs) > 0 {
					t.Errorf("%s (queues %v): want no error, got %q", tc.name, on, errs)
				}
			case len(errs) != 1 || !strings.HasPrefix(errs[0], tc.error) ||
				!strings.Contains(errs[0], "metadata.annotations[flux-framework.org/queues]") ||
				!strings.Contains(errs[0], "rename the replicatedJob, or leave queues off"):
				t.Errorf("%s: want one error starting %q, got %q", tc.name, tc.error, errs)
			}
		}
	}
}
