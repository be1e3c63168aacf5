package transform

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// TestRenderedObjectsAreTyped decodes every JobSet, ConfigMap, Secret and
// NetworkPolicy of the golden outputs into the typed API objects, refusing unknown
// fields, so a misspelled or misplaced field in what the function writes
// fails here. For rendered JobSets it also reads, through the types, the
// fields Flux depends on.
func TestRenderedObjectsAreTyped(t *testing.T) {
	files, err := filepath.Glob("testdata/golden*/*/_expected.yaml")
	if err != nil || len(files) < 25 {
		t.Fatalf("golden outputs: %d files, %v", len(files), err)
	}
	rendered := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rl, err := fn.ParseResourceList(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		failed := false
		for _, r := range rl.Results {
			failed = failed || r.Severity == fn.Error
		}
		for _, item := range rl.Items {
			// Outputs with errors keep bad input as it was; only what
			// the function wrote is held to the types.
			var target any
			switch {
			case item.GetKind() == "JobSet" && !failed && item.GetAnnotation("flux-framework.org/enabled") == "true" && !item.IsLocalConfig():
				target = &jobsetapi.JobSet{}
			case item.GetLabel(plan.ManagedByLabel) != plan.ManagedByValue:
				continue
			case item.GetKind() == "ConfigMap":
				target = &corev1.ConfigMap{}
			case item.GetKind() == "Secret":
				target = &corev1.Secret{}
			case item.GetKind() == "NetworkPolicy":
				target = &networkingv1.NetworkPolicy{}
			case item.GetKind() == "Role":
				target = &rbacv1.Role{}
			case item.GetKind() == "RoleBinding":
				target = &rbacv1.RoleBinding{}
			default:
				t.Errorf("%s: the function made a %s", f, item.GetKind())
				continue
			}
			if err := decodeStrict(item, target); err != nil {
				t.Errorf("%s: %s %s: %v", f, item.GetKind(), item.GetName(), err)
				continue
			}
			if js, ok := target.(*jobsetapi.JobSet); ok {
				if !hasInstaller(js) {
					t.Errorf("%s: JobSet %s was not rendered", f, js.Name)
					continue
				}
				rendered++
				checkTypedJobSet(t, f, js)
			}
		}
	}
	if rendered < 15 {
		t.Errorf("found %d rendered JobSets in the golden outputs, want the golden cases' renders", rendered)
	}
}

func decodeStrict(item *fn.KubeObject, target any) error {
	j, err := item.CopyToResourceNode().MarshalJSON()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(target)
}

func hasInstaller(js *jobsetapi.JobSet) bool {
	for _, rj := range js.Spec.ReplicatedJobs {
		if hasInstallerIn(rj.Template.Spec) {
			return true
		}
	}
	return false
}

func checkTypedJobSet(t *testing.T, file string, js *jobsetapi.JobSet) {
	t.Helper()
	for _, rj := range js.Spec.ReplicatedJobs {
		job := rj.Template.Spec
		if !hasInstallerIn(job) {
			continue // a replicatedJob outside the Flux instance
		}
		switch {
		case job.CompletionMode == nil || *job.CompletionMode != batchv1.IndexedCompletion:
			t.Errorf("%s: %s/%s: completionMode %v, want Indexed", file, js.Name, rj.Name, job.CompletionMode)
		case job.Parallelism == nil || job.Completions == nil || *job.Parallelism != *job.Completions:
			t.Errorf("%s: %s/%s: parallelism %v != completions %v", file, js.Name, rj.Name, job.Parallelism, job.Completions)
		case job.BackoffLimit == nil:
			t.Errorf("%s: %s/%s: no backoffLimit (0 unless the user set one)", file, js.Name, rj.Name)
		case job.Template.Spec.RestartPolicy != corev1.RestartPolicyNever && job.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure:
			t.Errorf("%s: %s/%s: restartPolicy %q, want Never (or the user's OnFailure)", file, js.Name, rj.Name, job.Template.Spec.RestartPolicy)
		}
		var shm *corev1.Volume
		for i, v := range job.Template.Spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				shm = &job.Template.Spec.Volumes[i]
			}
		}
		if shm == nil {
			t.Errorf("%s: %s/%s: no memory-backed emptyDir for /dev/shm", file, js.Name, rj.Name)
		}
	}
}

// hasInstallerIn reports whether a replicatedJob joined the instance: it
// has the flux-installer init container or, when the image carries Flux
// itself (view-image none), a container wrapped in the entrypoint.
func hasInstallerIn(job batchv1.JobSpec) bool {
	for _, c := range job.Template.Spec.InitContainers {
		if c.Name == plan.InitContainerName {
			return true
		}
	}
	for _, c := range job.Template.Spec.Containers {
		if len(c.Command) > 0 && c.Command[0] == plan.EntrypointPath {
			return true
		}
	}
	return false
}
