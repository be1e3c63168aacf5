package jobset

import (
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// TestPolicyConstants holds the copies of the policy values to the typed
// originals, as TestAPIConstants does for the others.
func TestPolicyConstants(t *testing.T) {
	for _, c := range []struct{ name, ours, typed string }{
		{"DNSDefault", DNSDefault, string(corev1.DNSDefault)},
		{"DNSNone", DNSNone, string(corev1.DNSNone)},
		{"DNSClusterFirstWithHostNet", DNSClusterFirstWithHostNet, string(corev1.DNSClusterFirstWithHostNet)},
		{"PodFailurePolicyIgnore", PodFailurePolicyIgnore, string(batchv1.PodFailurePolicyActionIgnore)},
		{"FailJobSet", FailJobSet, string(jobsetapi.FailJobSet)},
		{"RestartJobSet", RestartJobSet, string(jobsetapi.RestartJobSet)},
		{"RestartIgnoringMaxRestarts", RestartIgnoringMaxRestarts, string(jobsetapi.RestartJobSetAndIgnoreMaxRestarts)},
		{"RestartJob", RestartJob, string(jobsetapi.RestartJob)},
		{"RestartJobIgnoringMax", RestartJobIgnoringMax, string(jobsetapi.RestartJobAndIgnoreMaxRestarts)},
		{"StartupInOrder", StartupInOrder, string(jobsetapi.InOrder)},
		{"DependencyComplete", DependencyComplete, string(jobsetapi.DependencyComplete)},
		{"DependencyReady", DependencyReady, string(jobsetapi.DependencyReady)},
	} {
		if c.ours != c.typed {
			t.Errorf("%s = %q, but the typed API says %q", c.name, c.ours, c.typed)
		}
	}
}

const policies = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  startupPolicy: {startupPolicyOrder: InOrder}
  failurePolicy:
    maxRestarts: 2
    rules:
    - {name: a, action: FailJobSet, onJobFailureReasons: [PodFailurePolicy]}
    - {name: b, action: RestartJobSet, onJobFailureMessagePatterns: [".*oom.*"], targetReplicatedJobs: [w]}
    - {name: c, action: FailJobSet}
  replicatedJobs:
  - name: l
    template: {spec: {template: {spec: {containers: [{name: app, image: app}]}}}}
  - name: w
    dependsOn: [{name: l, status: Ready}]
    template:
      spec:
        backoffLimitPerIndex: 1
        maxFailedIndexes: 2
        podFailurePolicy: {rules: [{action: Ignore}, {action: FailJob}]}
        template:
          spec:
            dnsPolicy: None
            dnsConfig: {searches: [ns.svc.cluster.local, example.com]}
            containers: [{name: app, image: app, readinessProbe: {exec: {command: [true]}}}]
`

// TestReadPolicies: the fields whose Kubernetes semantics matter to an
// instance are read as written, with their paths.
func TestReadPolicies(t *testing.T) {
	js, found := mustRead(t, policies)
	if len(found) > 0 {
		t.Fatalf("findings: %v", found)
	}
	p := js.Policies
	if p.StartupOrder != "InOrder" || p.MaxRestarts == nil || *p.MaxRestarts != 2 || len(p.FailureRules) != 3 {
		t.Fatalf("policies %+v", p)
	}
	if r := p.FailureRules[1]; r.Path != "spec.failurePolicy.rules[1]" || r.Action != "RestartJobSet" || len(r.Messages) != 1 || len(r.Targets) != 1 || r.MatchesAll() {
		t.Errorf("rule 1: %+v", r)
	}
	if !p.FailureRules[2].MatchesAll() || p.FailureRules[0].MatchesAll() {
		t.Errorf("MatchesAll: %+v", p.FailureRules)
	}
	w := js.ReplicatedJobs[1]
	if len(w.DependsOn) != 1 || w.DependsOn[0] != (Dependency{Path: "spec.replicatedJobs[1].dependsOn[0]", Name: "l", Status: "Ready"}) {
		t.Errorf("dependsOn %+v", w.DependsOn)
	}
	rt := w.Retries
	if *rt.BackoffLimitPerIndex != 1 || *rt.MaxFailedIndexes != 2 || len(rt.PodFailureActions) != 2 ||
		rt.PodFailureActions[0] != (Field{Path: "spec.replicatedJobs[1].template.spec.podFailurePolicy.rules[0].action", Value: "Ignore"}) {
		t.Errorf("retries %+v", rt)
	}
	if d := w.Pod.DNS; d.Policy != "None" || !slices.Equal(d.Searches, []string{"ns.svc.cluster.local", "example.com"}) {
		t.Errorf("dns %+v", d)
	}
	if !w.Pod.Containers[0].ReadinessProbe || js.ReplicatedJobs[0].Pod.Containers[0].ReadinessProbe {
		t.Error("readinessProbe not read")
	}
}

// TestPolicyWrongTypes: a policy field of the wrong type is an error at
// its path, like every other field read.
func TestPolicyWrongTypes(t *testing.T) {
	for _, tc := range []struct{ from, to, path string }{
		{"maxRestarts: 2", "maxRestarts: two", "spec.failurePolicy.maxRestarts"},
		{"startupPolicy: {startupPolicyOrder: InOrder}", "startupPolicy: [InOrder]", "spec.startupPolicy"},
		{"dependsOn: [{name: l, status: Ready}]", "dependsOn: {name: l}", "spec.replicatedJobs[1].dependsOn"},
		{"dnsPolicy: None", "dnsPolicy: 5", "spec.replicatedJobs[1].template.spec.template.spec.dnsPolicy"},
		{"searches: [ns.svc.cluster.local, example.com]", "searches: ns.svc.cluster.local", "spec.replicatedJobs[1].template.spec.template.spec.dnsConfig.searches"},
		{"backoffLimitPerIndex: 1", "backoffLimitPerIndex: [1]", "spec.replicatedJobs[1].template.spec.backoffLimitPerIndex"},
		{"{action: Ignore}", "{action: [Ignore]}", "spec.replicatedJobs[1].template.spec.podFailurePolicy.rules[0].action"},
	} {
		_, found := mustRead(t, strings.Replace(policies, tc.from, tc.to, 1))
		if len(found) != 1 || found[0].Path != tc.path || found[0].Severity != finding.Error {
			t.Errorf("%s: findings %v, want one error at %s", tc.to, found, tc.path)
		}
	}
}
