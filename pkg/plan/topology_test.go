package plan_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

const (
	rack  = "example.com/rack"
	block = "example.com/block"
	// podMeta and jobMeta are the template metadata of replicatedJob i.
	podMeta = ".template.spec.template.metadata.annotations["
	jobMeta = ".template.metadata.annotations["
)

// topologyWarnings renders the JobSet and returns its warnings that name
// a topology annotation, by field path; the render must not refuse it.
func topologyWarnings(t *testing.T, js *jobsettest.JobSet) map[string]string {
	t.Helper()
	out, results := renderOne(t, js.YAML())
	if out == nil {
		t.Fatalf("refused: %v", results)
	}
	got := map[string]string{}
	for _, r := range results {
		if r.Severity == fn.Error {
			t.Errorf("error: %s", r.Message)
		}
		if r.Severity == fn.Warning && r.Field != nil && (strings.Contains(r.Field.Path, "kueue.x-k8s.io/podset-") || strings.Contains(r.Field.Path, plan.ExclusiveTopology)) {
			got[r.Field.Path] = r.Message
		}
	}
	// The render leaves every request where the user wrote it.
	rendered := out.MustString()
	for _, key := range []string{plan.RequiredTopology, plan.PreferredTopology, plan.TopologyGroup} {
		if strings.Count(js.YAML(), key) != strings.Count(rendered, key) {
			t.Errorf("the render changed the %s annotations:\n%s", key, rendered)
		}
	}
	return got
}

// wantWarnings checks that the warnings are at exactly the paths given,
// each saying every word listed.
func wantWarnings(t *testing.T, got map[string]string, want map[string][]string) {
	t.Helper()
	for path, words := range want {
		msg, ok := got[path]
		if !ok {
			t.Errorf("no warning at %s; warnings: %v", path, got)
			continue
		}
		for _, w := range words {
			if !strings.Contains(msg, w) {
				t.Errorf("the warning at %s does not say %q: %s", path, w, msg)
			}
		}
	}
	for path, msg := range got {
		if _, ok := want[path]; !ok {
			t.Errorf("unexpected warning at %s: %s", path, msg)
		}
	}
}

func queuedJobs(rjs ...*jobsettest.ReplicatedJob) *jobsettest.JobSet {
	return jobsettest.New("placed").Namespace("team").Label(plan.QueueLabel, "q").Jobs(rjs...)
}

func TestTopologyRequestsThatPlaceTheInstance(t *testing.T) {
	for _, tc := range []struct {
		name string
		js   *jobsettest.JobSet
	}{
		{"one replicatedJob, required", queuedJobs(jobsettest.Job("w").Completions(4).PodAnnotation(plan.RequiredTopology, rack))},
		{"one replicatedJob, preferred", queuedJobs(jobsettest.Job("w").Replicas(2).Completions(2).PodAnnotation(plan.PreferredTopology, block))},
		{"one replicatedJob, slices of a Job", queuedJobs(jobsettest.Job("w").Replicas(2).Completions(2).
			PodAnnotation(plan.RequiredTopology, block).PodAnnotation(plan.SliceRequiredTopology, rack).PodAnnotation(plan.SliceSize, "2"))},
		{"two replicatedJobs in one group", queuedJobs(
			jobsettest.Job("leader").PodAnnotation(plan.RequiredTopology, rack).PodAnnotation(plan.TopologyGroup, "flux"),
			jobsettest.Job("w").Completions(3).PodAnnotation(plan.RequiredTopology, rack).PodAnnotation(plan.TopologyGroup, "flux"))},
		{"exclusive placement alone", jobsettest.New("placed").Annotation(plan.ExclusiveTopology, "kubernetes.io/hostname").
			Jobs(jobsettest.Job("w").Replicas(3))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantWarnings(t, topologyWarnings(t, tc.js), nil)
		})
	}
}

func TestTopologyRequestsTheInstanceDisagreesWith(t *testing.T) {
	rj0, rj1 := "spec.replicatedJobs[0]", "spec.replicatedJobs[1]"
	for _, tc := range []struct {
		name string
		js   *jobsettest.JobSet
		want map[string][]string
	}{
		{"not queued",
			jobsettest.New("placed").Jobs(jobsettest.Job("w").Completions(2).PodAnnotation(plan.RequiredTopology, rack)),
			map[string][]string{rj0 + podMeta + plan.RequiredTopology + "]": {"does nothing", "not queued", plan.QueueLabel}}},
		{"on the Job template",
			queuedJobs(jobsettest.Job("w").Completions(2).JobAnnotation(plan.RequiredTopology, rack)),
			map[string][]string{rj0 + jobMeta + plan.RequiredTopology + "]": {"Job template", rj0 + ".template.spec.template.metadata.annotations", "move it there"}}},
		{"on the JobSet",
			queuedJobs(jobsettest.Job("w").Completions(2)).Annotation(plan.PreferredTopology, rack),
			map[string][]string{"metadata.annotations[" + plan.PreferredTopology + "]": {"does nothing on the JobSet", "pod template", "every replicatedJob"}}},
		{"with exclusive placement on the JobSet",
			queuedJobs(jobsettest.Job("w").Replicas(2).PodAnnotation(plan.RequiredTopology, rack)).Annotation(plan.ExclusiveTopology, "kubernetes.io/hostname"),
			map[string][]string{rj0 + podMeta + plan.RequiredTopology + "]": {plan.ExclusiveTopology, `"w"`, "Pending", plan.SliceRequiredTopology, plan.SliceSize}}},
		{"with exclusive placement on the Job template",
			queuedJobs(jobsettest.Job("w").Replicas(2).JobAnnotation(plan.ExclusiveTopology, "kubernetes.io/hostname").PodAnnotation(plan.PreferredTopology, rack)),
			map[string][]string{rj0 + podMeta + plan.PreferredTopology + "]": {plan.ExclusiveTopology, "never forms"}}},
		{"on one replicatedJob of two",
			queuedJobs(jobsettest.Job("leader"), jobsettest.Job("w").Completions(3).PodAnnotation(plan.RequiredTopology, rack)),
			map[string][]string{rj1 + podMeta + plan.RequiredTopology + "]": {"part of the instance", "leader, w", "leader (none)", rack, plan.TopologyGroup}}},
		{"the same level, no group",
			queuedJobs(jobsettest.Job("leader").PodAnnotation(plan.RequiredTopology, rack), jobsettest.Job("w").Completions(3).PodAnnotation(plan.RequiredTopology, rack)),
			map[string][]string{rj0 + podMeta + plan.RequiredTopology + "]": {"part of the instance", "no group", plan.TopologyGroup}}},
		{"one group, two levels",
			queuedJobs(jobsettest.Job("leader").PodAnnotation(plan.RequiredTopology, rack).PodAnnotation(plan.TopologyGroup, "g"),
				jobsettest.Job("w").Completions(3).PodAnnotation(plan.RequiredTopology, block).PodAnnotation(plan.TopologyGroup, "g")),
			map[string][]string{rj0 + podMeta + plan.RequiredTopology + "]": {"part of the instance", rack, block}}},
		{"one group, required and preferred",
			queuedJobs(jobsettest.Job("leader").PodAnnotation(plan.RequiredTopology, rack).PodAnnotation(plan.TopologyGroup, "g"),
				jobsettest.Job("w").Completions(3).PodAnnotation(plan.PreferredTopology, rack).PodAnnotation(plan.TopologyGroup, "g")),
			map[string][]string{rj0 + podMeta + plan.RequiredTopology + "]": {"part of the instance", "preferred-topology"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantWarnings(t, topologyWarnings(t, tc.js), tc.want)
		})
	}
}
