package apiserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The examples the project promises (examples/<name>/jobset.yaml); any other
// example directory found is checked too.
var wantExamples = []string{"lammps", "gpu", "interactive", "multi-job"}

// TestExamplesAccepted renders every examples/*/jobset.yaml with the real
// function and dry-run-creates everything it prints, plus each
// replicatedJob's template as a batch/v1 Job.
func TestExamplesAccepted(t *testing.T) {
	requireCluster(t)
	dir := examplesDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "jobset.yaml"))
	found := map[string]bool{}
	for _, f := range files {
		found[filepath.Base(filepath.Dir(f))] = true
	}
	for _, name := range wantExamples {
		if !found[name] {
			t.Errorf("example %s missing: no %s", name, filepath.Join(dir, name, "jobset.yaml"))
		}
	}
	if len(files) == 0 {
		t.Fatalf("no examples to check in %s", dir)
	}
	createNamespace(t, "examples", nil)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			objs := render(t, f)
			checkContract(t, objs)
			checkAccepted(t, objs, "examples")
		})
	}
}

// gridCase is one generated user JobSet.
type gridCase struct {
	name        string
	rjs         [][2]int // per replicatedJob: replicas, completions
	gpu         bool     // nvidia.com/gpu limit 2 + gpus-per-node annotation
	interactive bool     // interactive annotation, container without command/args
	nonRoot     bool     // runAsUser 1000, runAsNonRoot true
	fsGroup     bool     // fsGroup 2000
}

// gridCases covers 1..3 replicatedJobs x replicas 1..5 x completions 1..5:
// the first replicatedJob takes every (replicas, completions) pair for each
// replicatedJob count, the others rotate through the range, and uniform
// corner cases are added for 2 and 3 replicatedJobs. The user-side variants
// (GPUs, interactive, non-root, fsGroup, all at once) cycle over the cases.
func gridCases() []gridCase {
	var cases []gridCase
	variant := 0
	add := func(rjs [][2]int) {
		c := gridCase{name: fmt.Sprintf("grid-%03d", len(cases)), rjs: rjs}
		switch variant % 6 {
		case 1:
			c.gpu = true
		case 2:
			c.interactive = true
		case 3:
			c.nonRoot = true
		case 4:
			c.fsGroup = true
		case 5:
			c.gpu, c.interactive, c.nonRoot, c.fsGroup = true, true, true, true
		}
		variant++
		cases = append(cases, c)
	}
	for n := 1; n <= 3; n++ {
		for r := 1; r <= 5; r++ {
			for c := 1; c <= 5; c++ {
				rjs := [][2]int{{r, c}}
				for i := 1; i < n; i++ {
					rjs = append(rjs, [2]int{(r-1+i)%5 + 1, (c-1+2*i)%5 + 1})
				}
				add(rjs)
			}
		}
	}
	// The longest names the function must accept: the hostname of the last
	// pod, <jobset>-rj0-4-4, is 57 characters (a 63-character pod name with
	// the Job controller's 6-character random suffix).
	longName := "grid-long-" + strings.Repeat("x", 39)
	add([][2]int{{5, 5}})
	cases[len(cases)-1].name = longName
	for n := 2; n <= 3; n++ {
		for _, corner := range [][2]int{{1, 1}, {1, 5}, {5, 1}, {5, 5}} {
			var rjs [][2]int
			for i := 0; i < n; i++ {
				rjs = append(rjs, corner)
			}
			add(rjs)
		}
	}
	return cases
}

// jobSet builds the user's (not yet rendered) JobSet for c.
func (c gridCase) jobSet() map[string]any {
	annotations := map[string]any{"flux-framework.org/enabled": "true"}
	if c.gpu {
		annotations["flux-framework.org/gpus-per-node"] = "2"
	}
	if c.interactive {
		annotations["flux-framework.org/interactive"] = "true"
	}
	var rjs []any
	for i, rc := range c.rjs {
		container := map[string]any{"name": "app", "image": "ghcr.io/example/app:1.0"}
		if !c.interactive {
			container["command"] = []any{"/bin/sh", "-c"}
			container["args"] = []any{"echo hello from $(hostname)"}
		}
		if c.gpu {
			container["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(2)}}
		}
		podSpec := map[string]any{"containers": []any{container}}
		psc := map[string]any{}
		if c.nonRoot {
			psc["runAsUser"] = int64(1000)
			psc["runAsNonRoot"] = true
		}
		if c.fsGroup {
			psc["fsGroup"] = int64(2000)
		}
		if len(psc) > 0 {
			podSpec["securityContext"] = psc
		}
		rjs = append(rjs, map[string]any{
			"name":     fmt.Sprintf("rj%d", i),
			"replicas": int64(rc[0]),
			"template": map[string]any{"spec": map[string]any{
				"completions": int64(rc[1]),
				"template":    map[string]any{"spec": podSpec},
			}},
		})
	}
	return map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": c.name, "annotations": annotations},
		"spec":       map[string]any{"replicatedJobs": rjs},
	}
}

func (c gridCase) String() string {
	var b strings.Builder
	for i, rc := range c.rjs {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%dx%d", rc[0], rc[1])
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{c.gpu, "gpu"}, {c.interactive, "interactive"}, {c.nonRoot, "nonroot"}, {c.fsGroup, "fsgroup"}} {
		if f.on {
			b.WriteString("_" + f.name)
		}
	}
	return c.name + "_" + b.String()
}

// TestGridAccepted renders the generated grid with the real function and
// dry-run-creates the output and each replicatedJob template as a Job.
func TestGridAccepted(t *testing.T) {
	requireCluster(t)
	createNamespace(t, "grid", nil)
	cases := gridCases()
	begin := time.Now()
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			objs := renderObject(t, c.jobSet())
			checkContract(t, objs)
			checkAccepted(t, objs, "grid")
		})
	}
	t.Logf("%d grid JobSets rendered and dry-run in %s", len(cases), time.Since(begin).Round(time.Millisecond))
}

// restrictedJobSet is a user JobSet whose own pod template meets the
// "restricted" Pod Security Standard.
func restrictedJobSet(name string, interactive bool, replicatedJobs int) map[string]any {
	container := map[string]any{
		"name":  "app",
		"image": "ghcr.io/example/app:1.0",
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false,
			"runAsNonRoot":             true,
			"capabilities":             map[string]any{"drop": []any{"ALL"}},
		},
	}
	annotations := map[string]any{"flux-framework.org/enabled": "true"}
	if interactive {
		annotations["flux-framework.org/interactive"] = "true"
	} else {
		container["command"] = []any{"/bin/sh", "-c"}
		container["args"] = []any{"echo restricted"}
	}
	var rjs []any
	for i := 0; i < replicatedJobs; i++ {
		rjs = append(rjs, map[string]any{
			"name":     fmt.Sprintf("rj%d", i),
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{
				"completions": int64(2),
				"template": map[string]any{"spec": map[string]any{
					"securityContext": map[string]any{
						"runAsNonRoot":   true,
						"runAsUser":      int64(1000),
						"runAsGroup":     int64(1000),
						"fsGroup":        int64(1000),
						"seccompProfile": map[string]any{"type": "RuntimeDefault"},
					},
					"containers": []any{container},
				}},
			}},
		})
	}
	return map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": name, "annotations": annotations},
		"spec":       map[string]any{"replicatedJobs": rjs},
	}
}

// restrictedLabels enforce (and warn about) the restricted Pod Security Standard.
var restrictedLabels = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
	"pod-security.kubernetes.io/warn":            "restricted",
	"pod-security.kubernetes.io/warn-version":    "latest",
}

// TestRestrictedPodSecurity renders restricted-compliant user JobSets and
// checks the pods they produce are admitted in a namespace enforcing the
// restricted Pod Security Standard: what the function adds must not break it.
func TestRestrictedPodSecurity(t *testing.T) {
	requireCluster(t)
	const ns = "psa-restricted"
	createNamespace(t, ns, restrictedLabels)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, tc := range []struct {
		name        string
		interactive bool
		rjs         int
	}{{"restricted-batch", false, 1}, {"restricted-interactive", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderObject(t, restrictedJobSet(tc.name, tc.interactive, tc.rjs))
			checkContract(t, objs)
			for _, js := range fluxJobSets(objs) {
				for _, rj := range replicatedJobs(t, js) {
					jobSpec, _, _ := unstructured.NestedMap(rj, "template", "spec")
					checkInstallerHardened(t, jobSpec)

					job := jobFromReplicatedJob(t, js, rj, 0)
					env.warnings.take()
					if err := dryRunCreate(ctx, env.warnDyn, job, ns); err != nil {
						t.Errorf("Job %s rejected in the restricted namespace: %s", job.GetName(), describeErr(err))
					}
					for _, w := range env.warnings.take() {
						t.Errorf("Job %s: API server warning in the restricted namespace: %s", job.GetName(), w)
					}
					pod := podFromJob(t, job, 0)
					if err := dryRunCreate(ctx, env.dyn, pod, ns); err != nil {
						t.Errorf("Pod %s (replicatedJob %v) not admitted under restricted Pod Security: %s", pod.GetName(), rj["name"], describeErr(err))
					}
				}
			}
		})
	}
}

// checkInstallerHardened asserts the rendered flux-installer init container
// itself disallows privilege escalation and drops all capabilities.
func checkInstallerHardened(t *testing.T, jobSpec map[string]any) {
	t.Helper()
	c := findContainer(jobSpec, "initContainers", "flux-installer")
	if c == nil {
		t.Error("no flux-installer init container")
		return
	}
	if ape, found, _ := unstructured.NestedBool(c, "securityContext", "allowPrivilegeEscalation"); !found || ape {
		t.Errorf("flux-installer: securityContext.allowPrivilegeEscalation = %v (set: %v), want false", ape, found)
	}
	drop, _, _ := unstructured.NestedStringSlice(c, "securityContext", "capabilities", "drop")
	hasAll := false
	for _, d := range drop {
		hasAll = hasAll || d == "ALL"
	}
	if !hasAll {
		t.Errorf("flux-installer: securityContext.capabilities.drop = %v, want it to contain ALL", drop)
	}
}

// privilegedPod is otherwise restricted-compliant but runs a privileged container.
func privilegedPod() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "privileged"},
		"spec": map[string]any{
			"securityContext": map[string]any{
				"runAsNonRoot":   true,
				"runAsUser":      int64(1000),
				"seccompProfile": map[string]any{"type": "RuntimeDefault"},
			},
			"containers": []any{map[string]any{
				"name":  "app",
				"image": "ghcr.io/example/app:1.0",
				"securityContext": map[string]any{
					"privileged":               true,
					"allowPrivilegeEscalation": true,
					"capabilities":             map[string]any{"drop": []any{"ALL"}},
				},
			}},
		},
	}}
}

// TestNegativeControls proves the harness can fail: objects known to be
// invalid are rejected, and the hand-written fixture they derive from is
// accepted, so each rejection is caused by the one defect put in.
func TestNegativeControls(t *testing.T) {
	requireCluster(t)
	const ns = "controls"
	createNamespace(t, ns, nil)
	createNamespace(t, "controls-restricted", restrictedLabels)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	data, err := os.ReadFile(filepath.Join("testdata", "fixture-rendered.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := decodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	kindOf := func(kind string) *unstructured.Unstructured {
		for _, o := range fixture {
			if o.GetKind() == kind {
				return o.DeepCopy()
			}
		}
		t.Fatalf("fixture has no %s", kind)
		return nil
	}

	t.Run("fixture-accepted", func(t *testing.T) {
		checkContract(t, fixture)
		checkAccepted(t, fixture, ns)
	})

	t.Run("missing-volume-accepted-as-JobSet-rejected-as-Job", func(t *testing.T) {
		js := kindOf("JobSet")
		// Unstructured accessors return copies: edit the live maps.
		rj := js.Object["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
		podSpec := rj["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		c := podSpec["containers"].([]any)[0].(map[string]any)
		c["volumeMounts"] = append(c["volumeMounts"].([]any), map[string]any{"name": "does-not-exist", "mountPath": "/nowhere"})
		// The JobSet CRD's schema does not validate pod templates, so the
		// JobSet is accepted: this is why every template is also checked as a Job.
		if err := dryRunCreate(ctx, env.dyn, js, ns); err != nil {
			t.Errorf("JobSet with a dangling volumeMount: want accepted (CRD schema only), got: %s", describeErr(err))
		}
		job := jobFromReplicatedJob(t, js, rj, 0)
		err := dryRunCreate(ctx, env.dyn, job, ns)
		wantRejected(t, err, apierrors.IsInvalid, "does-not-exist")
	})

	t.Run("configmap-invalid-key", func(t *testing.T) {
		cm := kindOf("ConfigMap")
		if err := unstructured.SetNestedField(cm.Object, "x", "data", "bad key!"); err != nil {
			t.Fatal(err)
		}
		wantRejected(t, dryRunCreate(ctx, env.dyn, cm, ns), apierrors.IsInvalid, "bad key!")
	})

	t.Run("secret-not-base64", func(t *testing.T) {
		sec := kindOf("Secret")
		if err := unstructured.SetNestedField(sec.Object, "%%% not base64 %%%", "data", "curve.cert"); err != nil {
			t.Fatal(err)
		}
		wantRejected(t, dryRunCreate(ctx, env.dyn, sec, ns), apierrors.IsBadRequest, "base64")
	})

	t.Run("jobset-unknown-field-strict", func(t *testing.T) {
		js := kindOf("JobSet")
		if err := unstructured.SetNestedField(js.Object, "x", "spec", "noSuchField"); err != nil {
			t.Fatal(err)
		}
		wantRejected(t, dryRunCreate(ctx, env.dyn, js, ns), apierrors.IsBadRequest, "noSuchField")
	})

	t.Run("privileged-pod-rejected-under-restricted", func(t *testing.T) {
		// Admitted where no Pod Security level is enforced, so the rejection
		// below is Pod Security's doing (the server runs --allow-privileged).
		if err := dryRunCreate(ctx, env.dyn, privilegedPod(), ns); err != nil {
			t.Errorf("privileged pod in an unrestricted namespace: want admitted, got: %s", describeErr(err))
		}
		err := dryRunCreate(ctx, env.dyn, privilegedPod(), "controls-restricted")
		wantRejected(t, err, apierrors.IsForbidden, "violates PodSecurity")
	})
}

// wantRejected asserts err is an API error of the given class whose message
// contains substr.
func wantRejected(t *testing.T, err error, is func(error) bool, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want rejected (%q)", substr)
	}
	msg := describeErr(err)
	if !is(err) || !strings.Contains(msg, substr) {
		t.Fatalf("rejected, but not as expected (want %q): %s", substr, msg)
	}
	t.Logf("rejected as expected: %s", msg)
}
