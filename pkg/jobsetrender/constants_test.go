package jobsetrender

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// TestAPIConstants holds this package's copies of API strings and limits
// to the typed originals (pkg/jobset's test of the same name holds that
// package's).
func TestAPIConstants(t *testing.T) {
	if secretTypeOpaque != string(corev1.SecretTypeOpaque) {
		t.Errorf("secretTypeOpaque = %q, but the typed API says %q", secretTypeOpaque, corev1.SecretTypeOpaque)
	}
	if LastAppliedAnnotation != corev1.LastAppliedConfigAnnotation {
		t.Errorf("LastAppliedAnnotation = %q, but the typed API says %q", LastAppliedAnnotation, corev1.LastAppliedConfigAnnotation)
	}
	if TotalAnnotationSize != apivalidation.TotalAnnotationSizeLimitB {
		t.Errorf("TotalAnnotationSize = %d, but apimachinery's validation says %d", TotalAnnotationSize, apivalidation.TotalAnnotationSizeLimitB)
	}
}
