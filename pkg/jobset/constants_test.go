package jobset

import (
	"reflect"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// TestAPIConstants holds the package's copies of API strings to the typed
// originals, so that an upstream rename fails here rather than in a cluster.
func TestAPIConstants(t *testing.T) {
	for _, c := range []struct{ name, ours, typed string }{
		{"APIVersion", APIVersion, jobsetapi.GroupVersion.String()},
		{"Kind", Kind, reflect.TypeOf(jobsetapi.JobSet{}).Name()}, // the scheme registers types by name
		{"IndexedCompletion", IndexedCompletion, string(batchv1.IndexedCompletion)},
		{"RestartPolicyNever", RestartPolicyNever, string(corev1.RestartPolicyNever)},
		{"RestartPolicyOnFailure", RestartPolicyOnFailure, string(corev1.RestartPolicyOnFailure)},
		{"StorageMediumMemory", StorageMediumMemory, string(corev1.StorageMediumMemory)},
		{"SeccompRuntimeDefault", SeccompRuntimeDefault, string(corev1.SeccompProfileTypeRuntimeDefault)},
		{"PodFailurePolicyFailIndex", PodFailurePolicyFailIndex, string(batchv1.PodFailurePolicyActionFailIndex)},
		{"InPlaceRestart", InPlaceRestart, string(jobsetapi.InPlaceRestart)},
		{"SuccessAny", SuccessAny, string(jobsetapi.OperatorAny)},
	} {
		if c.ours != c.typed {
			t.Errorf("%s = %q, but the typed API says %q", c.name, c.ours, c.typed)
		}
	}
}
