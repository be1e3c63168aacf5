package jobset

import (
	"testing"

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
