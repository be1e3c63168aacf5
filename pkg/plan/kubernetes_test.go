package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// kubeCase is a JobSet and the one finding it must give (none when
// severity is 0 and path is "").
type kubeCase struct {
	name     string
	js       *jobsettest.JobSet
	severity finding.Severity
	path     string
	// says are parts of the message: the value, why, the fix.
	says []string
}

// findingAt returns the error or warning at path, if any.
func findingAt(found finding.List, path string) (finding.Finding, bool) {
	for _, f := range found {
		if f.Path == path && f.Severity != finding.Info {
			return f, true
		}
	}
	return finding.Finding{}, false
}

// kubeFindings are the errors and warnings of a JobSet's pipeline up to
// the plan.
func kubeFindings(t *testing.T, js *jobsettest.JobSet) finding.List {
	t.Helper()
	_, found := build(read(t, js.YAML()), settings.Defaults())
	return slicesWithout(found, finding.Info)
}

func slicesWithout(found finding.List, sev finding.Severity) finding.List {
	var out finding.List
	for _, f := range found {
		if f.Severity != sev {
			out = append(out, f)
		}
	}
	return out
}

func runKubeCases(t *testing.T, cases []kubeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			found := kubeFindings(t, tc.js)
			if tc.path == "" {
				if len(found) > 0 {
					t.Fatalf("want no error or warning, got %+v", found)
				}
				return
			}
			// A startupProbe of the user's is warned about on its own
			// field (podfacts.go); the rest must be this one finding.
			others := slices.DeleteFunc(slices.Clone(found), func(f finding.Finding) bool { return strings.HasSuffix(f.Path, ".startupProbe") })
			f, ok := findingAt(found, tc.path)
			if !ok || f.Severity != tc.severity || len(others) != 1 {
				t.Fatalf("want one %v at %s, got %+v", tc.severity, tc.path, found)
			}
			// The message starts with the field path, as kubectl users
			// search for it.
			if !strings.HasPrefix(f.Message, tc.path+" ") {
				t.Errorf("the message does not start with the path %s: %s", tc.path, f.Message)
			}
			for _, s := range tc.says {
				if !strings.Contains(f.Message, s) {
					t.Errorf("the message does not say %q: %s", s, f.Message)
				}
			}
		})
	}
}

const job0 = "spec.replicatedJobs[0].template.spec"

func TestRetriesRefused(t *testing.T) {
	w := func() *jobsettest.ReplicatedJob { return jobsettest.Job("w").Completions(2) }
	runKubeCases(t, []kubeCase{
		{"backoffLimit 0 is fine", jobsettest.New("js").Jobs(w().JobField("backoffLimit", 0)), 0, "", nil},
		{"backoffLimit above 0", jobsettest.New("js").Jobs(w().JobField("backoffLimit", 2)), finding.Error, job0 + ".backoffLimit",
			[]string{"is 2", "replaces a failed pod up to 2 times", "instance that is gone", "set backoffLimit to 0 or remove it"}},
		{"backoffLimitPerIndex", jobsettest.New("js").Jobs(w().JobField("backoffLimitPerIndex", 1)), finding.Warning, job0 + ".backoffLimitPerIndex",
			[]string{"is 1, but it never applies", "backoffLimit 0", "first failed pod", "remove backoffLimitPerIndex and maxFailedIndexes"}},
		{"podFailurePolicy Ignore", jobsettest.New("js").Jobs(w().JobField("podFailurePolicy", map[string]any{"rules": []any{
			map[string]any{"action": "FailJob", "onExitCodes": map[string]any{"operator": "In", "values": []any{1}}},
			map[string]any{"action": "Ignore", "onPodConditions": []any{map[string]any{"type": "DisruptionTarget"}}},
		}})), finding.Error, job0 + ".podFailurePolicy.rules[1].action",
			[]string{"is Ignore", "not counted", "use FailJob, or Count"}},
		{"podFailurePolicy FailJob and Count are fine", jobsettest.New("js").Jobs(w().JobField("podFailurePolicy", map[string]any{"rules": []any{
			map[string]any{"action": "FailJob", "onExitCodes": map[string]any{"operator": "In", "values": []any{1}}},
			map[string]any{"action": "Count", "onPodConditions": []any{map[string]any{"type": "DisruptionTarget"}}},
		}})), 0, "", nil},
		{"a replicatedJob outside the instance may retry", jobsettest.New("js").Annotation("flux-framework.org/replicated-jobs", "w").
			Jobs(w(), jobsettest.Job("setup").JobField("backoffLimit", 3)), 0, "", nil},
	})
	found := kubeFindings(t, jobsettest.New("js").Jobs(w().JobField("backoffLimitPerIndex", 1).JobField("maxFailedIndexes", 1)))
	if f, ok := findingAt(found, job0+".maxFailedIndexes"); !ok || f.Severity != finding.Warning || f.Current != "1" || !strings.Contains(f.Message, "remove both") {
		t.Errorf("maxFailedIndexes: %+v", found)
	}
}

func TestDNSPolicies(t *testing.T) {
	pod := job0 + ".template.spec"
	w := func() *jobsettest.ReplicatedJob { return jobsettest.Job("w").Completions(2) }
	none := func(searches ...any) *jobsettest.ReplicatedJob {
		return w().PodField("dnsPolicy", "None").PodField("dnsConfig", map[string]any{"nameservers": []any{"10.96.0.10"}, "searches": searches})
	}
	runKubeCases(t, []kubeCase{
		{"ClusterFirst is fine", jobsettest.New("js").Jobs(w().PodField("dnsPolicy", "ClusterFirst")), 0, "", nil},
		{"Default", jobsettest.New("js").Jobs(w().PodField("dnsPolicy", "Default")), finding.Error, pod + ".dnsPolicy",
			[]string{"is Default", "node's resolv.conf", "<hostname>.js", "remove dnsPolicy"}},
		{"None without the service domain", jobsettest.New("js").Namespace("team").Jobs(none("example.com")), finding.Error, pod + ".dnsConfig.searches",
			[]string{"no <namespace>.svc.<cluster domain> entry", "dnsPolicy is None", "add team.svc.cluster.local"}},
		{"None with another namespace's domain", jobsettest.New("js").Namespace("team").Jobs(none("other.svc.cluster.local")), finding.Error, pod + ".dnsConfig.searches", nil},
		{"None without dnsConfig", jobsettest.New("js").Jobs(w().PodField("dnsPolicy", "None")), finding.Error, pod + ".dnsConfig.searches",
			[]string{"<namespace>.svc.cluster.local"}},
		{"None with the service domain", jobsettest.New("js").Namespace("team").Jobs(none("team.svc.example.org", "example.com")), 0, "", nil},
		{"None with a service domain, no namespace yet", jobsettest.New("js").Jobs(none("team.svc.cluster.local")), 0, "", nil},
	})
}

func TestStartupGates(t *testing.T) {
	a := func() *jobsettest.ReplicatedJob { return jobsettest.Job("a") }
	dep := func(status string) []any { return []any{map[string]any{"name": "a", "status": status}} }
	runKubeCases(t, []kubeCase{
		{"dependsOn Complete within the instance", jobsettest.New("js").Jobs(a(), jobsettest.Job("b").DependsOn(dep("Complete"))), finding.Error, "spec.replicatedJobs[1].dependsOn[0].status",
			[]string{"is Complete", `"a"'s brokers wait for "b"'s to join`, "never completes", "remove dependsOn"}},
		{"dependsOn Ready within the instance", jobsettest.New("js").Jobs(a(), jobsettest.Job("b").DependsOn(dep("Ready"))), finding.Error, "spec.replicatedJobs[1].dependsOn[0].status",
			[]string{"is Ready", "joined the whole instance", "never starts", "remove dependsOn"}},
		{"dependsOn Ready on a container with its own startupProbe", jobsettest.New("js").Jobs(a().ContainerField("startupProbe", map[string]any{"exec": map[string]any{"command": []any{"true"}}}), jobsettest.Job("b").DependsOn(dep("Ready"))), finding.Warning, "spec.replicatedJobs[1].dependsOn[0].status",
			[]string{"one group after the other", "your own startupProbe", `the startupProbe of "a"'s container must pass before Flux is up`}},
		{"dependsOn Complete on a Job outside the instance", jobsettest.New("js").Annotation("flux-framework.org/replicated-jobs", "b").Jobs(a(), jobsettest.Job("b").DependsOn(dep("Complete"))), 0, "", nil},
		{"InOrder", jobsettest.New("js").Spec("startupPolicy", map[string]any{"startupPolicyOrder": "InOrder"}).Jobs(a(), jobsettest.Job("b")), finding.Error, "spec.startupPolicy.startupPolicyOrder",
			[]string{"is InOrder", "joined the whole instance", "never forms", "remove startupPolicy"}},
		{"InOrder with the user's startupProbes", jobsettest.New("js").Spec("startupPolicy", map[string]any{"startupPolicyOrder": "InOrder"}).Jobs(a().ContainerField("startupProbe", map[string]any{"exec": map[string]any{"command": []any{"true"}}}), jobsettest.Job("b")), finding.Warning, "spec.startupPolicy.startupPolicyOrder",
			[]string{"is InOrder", "first group's brokers wait for the rest", "your own startupProbe", "remove startupPolicy"}},
		{"InOrder with one group", jobsettest.New("js").Spec("startupPolicy", map[string]any{"startupPolicyOrder": "InOrder"}).Jobs(a()), 0, "", nil},
		{"AnyOrder", jobsettest.New("js").Spec("startupPolicy", map[string]any{"startupPolicyOrder": "AnyOrder"}).Jobs(a(), jobsettest.Job("b")), 0, "", nil},
	})
}

func TestFailurePolicyRestarts(t *testing.T) {
	policy := func(maxRestarts int, rules ...any) *jobsettest.JobSet {
		fp := map[string]any{"maxRestarts": maxRestarts}
		if len(rules) > 0 {
			fp["rules"] = rules
		}
		return jobsettest.New("js").Spec("failurePolicy", fp)
	}
	rule := func(action string, fields ...any) map[string]any {
		r := map[string]any{"name": "r", "action": action}
		for i := 0; i+1 < len(fields); i += 2 {
			r[fields[i].(string)] = fields[i+1]
		}
		return r
	}
	runKubeCases(t, []kubeCase{
		{"no restarts", policy(0), 0, "", nil},
		{"maxRestarts", policy(3), finding.Warning, "spec.failurePolicy.maxRestarts",
			[]string{"is 3", "new Flux instance", "lost", "set maxRestarts to 0"}},
		{"maxRestarts behind a FailJobSet rule for every failure", policy(3, rule("FailJobSet")), 0, "", nil},
		{"maxRestarts behind a FailJobSet rule for some failures", policy(3, rule("FailJobSet", "onJobFailureReasons", []any{"PodFailurePolicy"})), finding.Warning, "spec.failurePolicy.maxRestarts", nil},
		{"maxRestarts behind a RestartJobSet rule", policy(3, rule("RestartJobSet"), rule("FailJobSet")), finding.Warning, "spec.failurePolicy.maxRestarts", nil},
		{"a rule that ignores maxRestarts", policy(0, rule("RestartJobSetAndIgnoreMaxRestarts", "targetReplicatedJobs", []any{"workers"}), rule("FailJobSet")), finding.Warning, "spec.failurePolicy.rules[0].action",
			[]string{"whatever maxRestarts says", "new Flux instance"}},
		{"a rule hidden behind one for every failure", policy(0, rule("FailJobSet"), rule("RestartJobSetAndIgnoreMaxRestarts")), 0, "", nil},
		{"RestartJob", policy(0, rule("RestartJobAndIgnoreMaxRestarts")), finding.Warning, "spec.failurePolicy.rules[0].action",
			[]string{"recreates only the failed Job", "rank 0"}},
	})
}
