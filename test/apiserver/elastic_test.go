package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// elasticJobSet is a launcher JobSet whose workers may be 2 to 4 pods.
func elasticJobSet(name string, elastic bool) map[string]any {
	annotations := map[string]any{"flux-framework.org/enabled": "true", "flux-framework.org/launcher": "true"}
	if elastic {
		annotations["flux-framework.org/min-size"] = "w=2"
		annotations["flux-framework.org/max-size"] = "w=4"
	}
	return map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": name, "namespace": "elastic", "annotations": annotations},
		"spec": map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "w", "template": map[string]any{"spec": map[string]any{
				"completions": 2, "parallelism": 2,
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "example.com/app:1", "command": []any{"bash", "run.sh"}},
				}}},
			}}},
		}},
	}
}

// resize sets the first replicatedJob's parallelism and completions, as
// JobSet's elastic update does.
func resize(t *testing.T, js *unstructured.Unstructured, n int64) *unstructured.Unstructured {
	t.Helper()
	js = js.DeepCopy()
	rj := js.Object["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
	spec := rj["template"].(map[string]any)["spec"].(map[string]any)
	spec["parallelism"], spec["completions"] = n, n
	return js
}

// TestElasticSizesPolicy: deploy/elastic's ValidatingAdmissionPolicy,
// applied as a user would, holds on a real kube-apiserver an elastic
// JobSet to the sizes it was rendered for: a resize within
// them is accepted, one above max-size or below min-size is refused with
// a message naming the replicatedJob and the sizes; a JobSet rendered
// without sizes is not its business.
func TestElasticSizesPolicy(t *testing.T) {
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	createNamespace(t, "elastic", nil)
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy/elastic/sizes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		gvr := mustGVR(t, o.GroupVersionKind().Group, o.GroupVersionKind().Version, o.GetKind())
		if _, err := env.dyn.Resource(gvr).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %s", o.GetKind(), o.GetName(), describeErr(err))
		}
		t.Cleanup(func() { _ = env.dyn.Resource(gvr).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{}) })
	}
	jsGVR := mustGVR(t, "jobset.x-k8s.io", "v1alpha2", "JobSet")
	create := func(name string, elastic bool) *unstructured.Unstructured {
		t.Helper()
		js := fluxJobSets(renderObject(t, elasticJobSet(name, elastic)))[0]
		got, err := env.dyn.Resource(jsGVR).Namespace("elastic").Create(ctx, js, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %s", name, describeErr(err))
		}
		return got
	}
	update := func(js *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return env.dyn.Resource(jsGVR).Namespace("elastic").Update(ctx, js, metav1.UpdateOptions{})
	}

	js := create("grows", true)
	// The policy is enforced a moment after it is created: wait until a
	// resize beyond max-size is refused. (Its type check is reported by
	// kube-controller-manager, which this server runs without: test/kube
	// reads it on the cluster.)
	var refused error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, refused = env.dyn.Resource(jsGVR).Namespace("elastic").Update(ctx, resize(t, js, 5), metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return refused != nil, nil
	})
	for _, c := range []struct {
		pods int64
		ok   bool
	}{{4, true}, {3, true}, {2, true}, {5, false}, {1, false}, {100, false}} {
		got, err := update(resize(t, js, c.pods))
		switch {
		case c.ok && err != nil:
			t.Errorf("resize to %d pods: refused: %s", c.pods, describeErr(err))
		case !c.ok && err == nil:
			t.Errorf("resize to %d pods: accepted, want refused", c.pods)
		case !c.ok:
			msg := describeErr(err)
			if !apierrors.IsInvalid(err) || !strings.Contains(msg, "replicatedJob w asks for ") || !strings.Contains(msg, "outside the 2 to 4 its Flux instance was rendered for") {
				t.Errorf("resize to %d pods: refused, but not by the policy's message: %s", c.pods, msg)
			}
			t.Logf("resize to %d pods: %s", c.pods, msg)
		default:
			js = got
		}
	}

	plain := create("fixed", false)
	if _, err := update(resize(t, plain, 9)); err != nil {
		t.Errorf("a JobSet rendered without sizes: resize refused: %s", describeErr(err))
	}
}
