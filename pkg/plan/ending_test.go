package plan

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// TestEndingTruthfully: every JobSet field that decides when the JobSet
// ends is refused where Completed would not mean rank 0's command
// succeeded, or where the API refuses the Job the render writes; each
// error names the field and the fix, and the truthful forms pass.
func TestEndingTruthfully(t *testing.T) {
	leader := func() *jobsettest.ReplicatedJob { return jobsettest.Job("leader").Completions(1) }
	workers := func(n int) *jobsettest.ReplicatedJob { return jobsettest.Job("workers").Replicas(n).Completions(2) }
	setup := func() *jobsettest.ReplicatedJob { return jobsettest.Job("setup").Completions(1) }
	success := func(op string, targets ...any) map[string]any {
		m := map[string]any{"operator": op}
		if targets != nil {
			m["targetReplicatedJobs"] = targets
		}
		return m
	}
	instance := map[string]string{"flux-framework.org/enabled": "true", "flux-framework.org/replicated-jobs": "leader,workers"}
	for _, tc := range []struct {
		name  string
		js    *jobsettest.JobSet
		field string // "" when accepted
		fix   string
	}{
		{"success All on the workers", jobsetOf(instance, leader(), workers(1)).Spec("successPolicy", success("All", "workers")), "spec.successPolicy.targetReplicatedJobs", "targetReplicatedJobs including \"leader\""},
		{"success Any on a setup Job outside the instance", jobsetOf(instance, leader(), workers(1), setup()).Spec("successPolicy", success("Any", "setup")), "spec.successPolicy.targetReplicatedJobs", "remove successPolicy"},
		{"success All on a setup Job outside the instance", jobsetOf(instance, leader(), workers(1), setup()).Spec("successPolicy", success("All", "setup")), "spec.successPolicy.targetReplicatedJobs", "remove successPolicy"},
		{"success Any over every Job", jobsetOf(instance, leader(), workers(1)).Spec("successPolicy", success("Any")), "spec.successPolicy.operator", "operator: All"},
		{"success Any on rank 0's and the workers'", jobsetOf(instance, leader(), workers(1)).Spec("successPolicy", success("Any", "leader", "workers")), "spec.successPolicy.operator", "operator: All"},
		{"success Any on rank 0's group of two Jobs", jobsetOf(nil, workers(2)).Spec("successPolicy", success("Any", "workers")), "spec.successPolicy.operator", "operator: All"},
		{"success All on rank 0's", jobsetOf(instance, leader(), workers(2)).Spec("successPolicy", success("All", "leader")), "", ""},
		{"success All on rank 0's and setup", jobsetOf(instance, leader(), workers(2), setup()).Spec("successPolicy", success("All", "leader", "setup")), "", ""},
		{"success All over every Job", jobsetOf(instance, leader(), workers(2)).Spec("successPolicy", success("All")), "", ""},
		{"success Any on rank 0's one Job", jobsetOf(instance, leader(), workers(2)).Spec("successPolicy", success("Any", "leader")), "", ""},
		{"coordinator label over 63", jobsetOf(nil, jobsettest.Job("a-rather-long-replicated-job-name").Completions(2)).Spec("coordinator", map[string]any{"replicatedJob": "a-rather-long-replicated-job-name", "jobIndex": 0, "podIndex": 1}).Spec("network", map[string]any{"subdomain": "a-subdomain-of-twenty-six"}), "spec.coordinator", "shorten"},
		{"coordinator label within 63", jobsetOf(nil, workers(1)).Spec("coordinator", map[string]any{"replicatedJob": "workers"}), "", ""},
		{"InPlaceRestart", jobsetOf(nil, workers(1)).Spec("failurePolicy", map[string]any{"restartStrategy": "InPlaceRestart", "maxRestarts": 0}), "spec.failurePolicy.restartStrategy", "remove restartStrategy"},
		{"BlockingRecreate", jobsetOf(nil, workers(1)).Spec("failurePolicy", map[string]any{"restartStrategy": "BlockingRecreate"}), "", ""},
		{"Job successPolicy by count", jobsetOf(nil, workers(1).JobField("successPolicy", map[string]any{"rules": []any{map[string]any{"succeededCount": 1}}})), "spec.replicatedJobs[0].template.spec.successPolicy.rules[0]", "include 0"},
		{"Job successPolicy without index 0", jobsetOf(nil, workers(1).JobField("successPolicy", map[string]any{"rules": []any{map[string]any{"succeededIndexes": "1"}}})), "spec.replicatedJobs[0].template.spec.successPolicy.rules[0]", "include 0"},
		{"Job successPolicy with index 0", jobsetOf(nil, workers(1).JobField("successPolicy", map[string]any{"rules": []any{map[string]any{"succeededIndexes": "0-1"}}})), "", ""},
		{"Job successPolicy on a follower group", jobsetOf(instance, leader(), workers(1).JobField("successPolicy", map[string]any{"rules": []any{map[string]any{"succeededCount": 1}}})), "", ""},
		{"FailIndex without backoffLimitPerIndex", jobsetOf(nil, workers(1).JobField("podFailurePolicy", map[string]any{"rules": []any{map[string]any{"action": "FailIndex", "onExitCodes": map[string]any{"operator": "In", "values": []any{3}}}}})), "spec.replicatedJobs[0].template.spec.podFailurePolicy.rules[0].action", "use FailJob"},
		{"podFailurePolicy with OnFailure", jobsetOf(nil, workers(1).PodField("restartPolicy", "OnFailure").JobField("podFailurePolicy", map[string]any{"rules": []any{map[string]any{"action": "FailJob", "onExitCodes": map[string]any{"operator": "In", "values": []any{3}}}}})), "spec.replicatedJobs[0].template.spec.template.spec.restartPolicy", "remove restartPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, found := build(read(t, tc.js.YAML()), settings.Defaults())
			errs := strings.Join(errorsOf(found), "\n")
			if tc.field == "" {
				if errs != "" {
					t.Fatalf("refused: %s", errs)
				}
				return
			}
			if !strings.Contains(errs, tc.field+": ") || !strings.Contains(errs, tc.fix) {
				t.Fatalf("want an error at %s naming %q, got %q", tc.field, tc.fix, errs)
			}
		})
	}
}

// TestBrokerSize: [resource] exclude takes its ranks out of flux run -N
// (a hostlist, or every rank, is refused), broker.quorum below the size
// is refused; neither matters to a launcher.
func TestBrokerSize(t *testing.T) {
	ann := func(kv ...string) map[string]string {
		m := map[string]string{"flux-framework.org/enabled": "true"}
		for i := 0; i < len(kv); i += 2 {
			m["flux-framework.org/"+kv[i]] = kv[i+1]
		}
		return m
	}
	for exclude, nodes := range map[string]int{`"0"`: 3, `"0,2"`: 2, `"1-2"`: 2, `"[0-1]"`: 2, `"7"`: 4} {
		p, found := build(read(t, jobsetYAML(ann("broker-config", "[resource]\nexclude = "+exclude+"\n", "tasks-per-node", "2"), "w:1:4")), settings.Defaults())
		if p == nil {
			t.Fatalf("exclude = %s: %v", exclude, errorsOf(found))
		}
		if p.JobNodes != nodes || p.Tasks != 2*nodes {
			t.Errorf("exclude = %s: flux run -N %d -n %d, want -N %d -n %d", exclude, p.JobNodes, p.Tasks, nodes, 2*nodes)
		}
	}
	for name, tc := range map[string]struct {
		ann  map[string]string
		want string
	}{
		"exclude as a hostlist": {ann("broker-config", "[resource]\nexclude = \"js-w-0-[0-1]\"\n"), "write it as ranks"},
		"exclude every rank":    {ann("broker-config", "[resource]\nexclude = \"0-3\"\n"), "withholds all 4 brokers"},
		"quorum below the size": {ann("broker-attributes", "broker.quorum=2"), "broker.quorum=2 is below the instance's 4 brokers"},
	} {
		_, found := build(read(t, jobsetYAML(tc.ann, "w:1:4")), settings.Defaults())
		errs := strings.Join(errorsOf(found), "\n")
		if !strings.Contains(errs, tc.want) || !strings.Contains(errs, "metadata.annotations[flux-framework.org/") {
			t.Errorf("%s: want an error at the annotation saying %q, got %q", name, tc.want, errs)
		}
		launcher := map[string]string{"flux-framework.org/launcher": "true"}
		for k, v := range tc.ann {
			launcher[k] = v
		}
		if _, found := build(read(t, jobsetYAML(launcher, "w:1:4")), settings.Defaults()); found.HasErrors() && !strings.Contains(name, "every rank") {
			t.Errorf("%s with launcher: refused %v", name, errorsOf(found))
		}
	}
	if _, found := build(read(t, jobsetYAML(ann("broker-attributes", "broker.quorum=4"), "w:1:4")), settings.Defaults()); found.HasErrors() {
		t.Errorf("quorum = size refused: %v", errorsOf(found))
	}
}
