package argocd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// healthKey is the argocd-cm key Argo CD reads a JobSet's health check from.
const healthKey = "resource.customizations.health.jobset.x-k8s.io_JobSet"

// healthCases are the JobSets test/kube recorded from the real cluster
// (testdata/health, JOBSET_FLUX_RECORD_HEALTH; docs/user/argocd-health.md), each
// with the health Argo CD must give it and a word its message must hold.
var healthCases = []struct {
	file    string
	status  health.HealthStatusCode
	message string
}{
	{"queued.json", health.HealthStatusSuspended, "Kueue LocalQueue"},
	{"running.json", health.HealthStatusProgressing, "Running"},
	{"completed.json", health.HealthStatusHealthy, "Completed"},
	{"failed.json", health.HealthStatusDegraded, "Failed"},
}

// TestHealthCheck runs Argo CD's own path from argocd-cm to a health
// status: the stock argocd-cm of the pinned release patched by kustomize
// with deploy/argocd/argocd-cm-health-patch.yaml, read by Argo CD's
// settings manager into resource overrides, and evaluated by its Lua VM
// (standard libraries off, as in the application controller) on each
// recorded JobSet.
func TestHealthCheck(t *testing.T) {
	overrides := healthOverrides(t, patchedArgoCDConfigMap(t))
	for _, tc := range healthCases {
		t.Run(strings.TrimSuffix(tc.file, ".json"), func(t *testing.T) {
			obj := recordedJobSet(t, tc.file)
			got, err := lua.ResourceHealthOverrides(overrides).GetResourceHealth(obj)
			if err != nil {
				t.Fatalf("health of %s: %v", tc.file, err)
			}
			if got == nil {
				t.Fatalf("no health check applied to %s", tc.file)
			}
			if got.Status != tc.status || !strings.Contains(got.Message, tc.message) {
				t.Errorf("%s: health %s %q, want %s with %q", tc.file, got.Status, got.Message, tc.status, tc.message)
			}
			t.Logf("%s: %s: %s", tc.file, got.Status, got.Message)
		})
	}
}

// TestHealthCheckEdges: what the cluster did not record: a JobSet with no
// status yet (just created) is Progressing, a user's spec.suspend without a
// queue is Suspended, and Failed wins over a stale Completed.
func TestHealthCheckEdges(t *testing.T) {
	overrides := healthOverrides(t, patchedArgoCDConfigMap(t))
	for _, tc := range []struct {
		name, doc string
		status    health.HealthStatusCode
		message   string
	}{
		{"no-status", `{"spec": {"replicatedJobs": []}}`, health.HealthStatusProgressing, "0 Jobs ready"},
		{"user-suspend", `{"spec": {"suspend": true}}`, health.HealthStatusSuspended, "spec.suspend is true"},
		{"failed-and-completed", `{"status": {"conditions": [
			{"type": "Completed", "status": "False"},
			{"type": "Failed", "status": "True", "reason": "FailedJobs", "message": "jobset failed due to job a-0"}]}}`,
			health.HealthStatusDegraded, "jobset failed due to job a-0"},
		{"restarted", `{"status": {"restarts": 2, "replicatedJobsStatus": [{"name": "a", "active": 1, "ready": 1}]}}`,
			health.HealthStatusProgressing, "1 Jobs ready, 1 active, 0 succeeded, 2 restarts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(tc.doc), &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetAPIVersion("jobset.x-k8s.io/v1alpha2")
			obj.SetKind("JobSet")
			obj.SetName(tc.name)
			got, err := lua.ResourceHealthOverrides(overrides).GetResourceHealth(obj)
			if err != nil || got == nil {
				t.Fatalf("health: %v, %v", got, err)
			}
			if got.Status != tc.status || !strings.Contains(got.Message, tc.message) {
				t.Errorf("health %s %q, want %s with %q", got.Status, got.Message, tc.status, tc.message)
			}
		})
	}
}

// TestHealthPatchMatchesLua: the argocd-cm patch carries the Lua file byte
// for byte, so what is reviewed and tested is what is installed.
func TestHealthPatchMatchesLua(t *testing.T) {
	deploy := deployDir(t)
	lua, err := os.ReadFile(filepath.Join(deploy, "health", "jobset.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	raw, err := os.ReadFile(filepath.Join(deploy, "argocd-cm-health-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatalf("argocd-cm-health-patch.yaml: %v", err)
	}
	if cm.Name != "argocd-cm" || len(cm.Data) != 1 {
		t.Fatalf("the patch is for %q with %d keys, want argocd-cm with only %s", cm.Name, len(cm.Data), healthKey)
	}
	if got := cm.Data[healthKey]; got != string(lua) {
		t.Errorf("the patch's %s differs from health/jobset.lua; re-indent the file's content into it (4 spaces)\n--- patch\n%s\n--- lua\n%s", healthKey, got, lua)
	}
}

// patchedArgoCDConfigMap applies the health patch with kustomize to the
// argocd-cm of the pinned argo-cd release (from the module cache).
func patchedArgoCDConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	deploy := deployDir(t)
	kustomize := filepath.Join(filepath.Dir(deploy), "..", "bin", "kustomize")
	if err := testsupport.Executable(kustomize); err != nil {
		testsupport.SkipOrFail(t, "kustomize: %v (make bin/kustomize)", err)
	}
	argoDir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		t.Fatalf("locate the argo-cd module: %v\n%s", err, stderrOf(err))
	}
	stock, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(argoDir)), "manifests", "base", "config", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	patch, err := os.ReadFile(filepath.Join(deploy, "argocd-cm-health-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"argocd-cm.yaml":     string(stock),
		"patch.yaml":         string(patch),
		"kustomization.yaml": "resources: [argocd-cm.yaml]\npatches:\n  - path: patch.yaml\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(kustomize, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build with the patch: %v\n%s", err, stderrOf(err))
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(out, &cm); err != nil {
		t.Fatalf("the patched argocd-cm: %v\n%s", err, out)
	}
	if cm.Labels["app.kubernetes.io/part-of"] != "argocd" {
		t.Fatalf("the patched argocd-cm lost its part-of label (Argo CD would not read it):\n%s", out)
	}
	return &cm
}

// healthOverrides reads the resource overrides from argocd-cm the way the
// application controller does (its settings manager, here on a fake API).
func healthOverrides(t *testing.T, cm *corev1.ConfigMap) map[string]appv1.ResourceOverride {
	t.Helper()
	const ns = "argocd"
	cm.Namespace = ns
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: ns,
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}}
	mgr := settings.NewSettingsManager(t.Context(), fake.NewClientset(cm, secret), ns)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatalf("Argo CD's settings manager on the patched argocd-cm: %v", err)
	}
	if o, ok := overrides["jobset.x-k8s.io/JobSet"]; !ok || o.HealthLua == "" {
		t.Fatalf("Argo CD read no health check for jobset.x-k8s.io/JobSet from the patched argocd-cm (overrides: %v)", keys(overrides))
	}
	return overrides
}

// deployDir is the repository's deploy/argocd.
func deployDir(t *testing.T) string {
	t.Helper()
	root, err := testsupport.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "argocd")
}

// recordedJobSet reads one of testdata/health's JobSets, which must be
// what a cluster returned (it has a uid and a status).
func recordedJobSet(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "health", file))
	if err != nil {
		t.Fatalf("%v (record it: docs/user/argocd-health.md)", err)
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &obj.Object); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if obj.GetKind() != "JobSet" || obj.GetUID() == "" || obj.Object["status"] == nil {
		t.Fatalf("%s is not a JobSet as the cluster returns it (kind %q, uid %q, status %v)", file, obj.GetKind(), obj.GetUID(), obj.Object["status"] != nil)
	}
	return obj
}
