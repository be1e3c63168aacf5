package jobsetrender

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAPIConstants holds this package's copies of API strings to the typed
// originals (pkg/jobset's test of the same name holds that package's).
func TestAPIConstants(t *testing.T) {
	if secretTypeOpaque != string(corev1.SecretTypeOpaque) {
		t.Errorf("secretTypeOpaque = %q, but the typed API says %q", secretTypeOpaque, corev1.SecretTypeOpaque)
	}
}
