package plan_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kueueSeed makes the render's key, and so its output, reproducible.
const kueueSeed = "a kueue test seed of 32 bytes or more, for the render"

// queuedJobSet is a Flux JobSet with the queue label (when queue is not
// "") and the spec fields given.
func queuedJobSet(t *testing.T, queue string, spec map[string]any) string {
	t.Helper()
	b := jobsettest.New("queued").Namespace("team").Jobs(jobsettest.Job("workers").Completions(2))
	for k, v := range spec {
		b.Spec(k, v)
	}
	obj := b.Obj()
	if queue != "" {
		obj["metadata"].(map[string]any)["labels"] = map[string]any{plan.QueueLabel: queue}
	}
	rn, err := yaml.FromMap(obj)
	if err != nil {
		t.Fatal(err)
	}
	return rn.MustString()
}

// renderOne runs the function on one JobSet and returns the rendered
// JobSet (nil when it was refused) and the results.
func renderOne(t *testing.T, doc string) (*yaml.RNode, fn.Results) {
	t.Helper()
	rl, err := fn.ParseResourceList([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " +
		strings.ReplaceAll(strings.TrimSpace(doc), "\n", "\n  ") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	proc, err := transform.New(transform.Options{Seed: []byte(kueueSeed)})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := proc.Process(rl)
	if err != nil {
		t.Fatalf("process: %v", err)
	}
	if !ok {
		return nil, rl.Results
	}
	for _, item := range rl.Items {
		if item.GetKind() == "JobSet" {
			return item.CopyToResourceNode(), rl.Results
		}
	}
	t.Fatal("the render has no JobSet")
	return nil, nil
}

// resultsAt returns the results of a severity at a field path.
func resultsAt(results fn.Results, severity fn.Severity, path string) []string {
	var out []string
	for _, r := range results {
		if r.Severity == severity && r.Field != nil && r.Field.Path == path {
			out = append(out, r.Message)
		}
	}
	return out
}

// TestRenderLeavesSuspendToKueue: a queued JobSet renders with no
// spec.suspend (Kueue's webhook sets it) and its label intact; a
// spec.suspend the user wrote is kept as written, with a warning only when
// the JobSet is queued.
func TestRenderLeavesSuspendToKueue(t *testing.T) {
	for _, tc := range []struct {
		name, queue string
		suspend     any // nil: unset
		want        string
		warned      bool
	}{
		{name: "queued", queue: "team-queue", want: ""},
		{name: "queued-suspend-true", queue: "team-queue", suspend: true, want: "true", warned: true},
		{name: "queued-suspend-false", queue: "team-queue", suspend: false, want: "false", warned: true},
		{name: "unqueued-suspend-true", suspend: true, want: "true"},
		{name: "unqueued", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := map[string]any{}
			if tc.suspend != nil {
				spec["suspend"] = tc.suspend
			}
			js, results := renderOne(t, queuedJobSet(t, tc.queue, spec))
			if js == nil {
				t.Fatalf("refused: %v", results)
			}
			got := ""
			if n, err := js.Pipe(yaml.Lookup("spec", "suspend")); err == nil && n != nil {
				got = yaml.GetValue(n)
			}
			if got != tc.want {
				t.Errorf("rendered spec.suspend %q, want %q (the user's or none)", got, tc.want)
			}
			if label := js.GetLabels()[plan.QueueLabel]; label != tc.queue {
				t.Errorf("rendered queue label %q, want %q", label, tc.queue)
			}
			warnings := resultsAt(results, fn.Warning, "spec.suspend")
			if warned := len(warnings) > 0; warned != tc.warned {
				t.Errorf("warned about spec.suspend %v, want %v: %v", warned, tc.warned, results)
			}
			for _, w := range warnings {
				for _, word := range []string{"Kueue owns spec.suspend", tc.queue, "remove spec.suspend"} {
					if !strings.Contains(w, word) {
						t.Errorf("the warning does not say %q: %s", word, w)
					}
				}
			}
		})
	}
}

// TestRenderRefusesMultiKueue: MultiKueue's managedBy would send the
// JobSet to a worker cluster without its ConfigMap and Secret; the render
// refuses it at spec.managedBy with the fix. Another managedBy is not
// Kueue's business.
func TestRenderRefusesMultiKueue(t *testing.T) {
	js, results := renderOne(t, queuedJobSet(t, "team-queue", map[string]any{"managedBy": plan.MultiKueueManager}))
	if js != nil {
		t.Fatalf("rendered a JobSet MultiKueue would dispatch; results: %v", results)
	}
	errs := resultsAt(results, fn.Error, "spec.managedBy")
	if len(errs) != 1 {
		t.Fatalf("want one error at spec.managedBy, got %v", results)
	}
	for _, word := range []string{plan.MultiKueueManager, "queued-flux-entrypoint", "remove spec.managedBy", plan.QueueLabel} {
		if !strings.Contains(errs[0], word) {
			t.Errorf("the error does not say %q: %s", word, errs[0])
		}
	}
	js, results = renderOne(t, queuedJobSet(t, "", map[string]any{"managedBy": "example.com/other"}))
	if js == nil || len(resultsAt(results, fn.Error, "spec.managedBy"))+len(resultsAt(results, fn.Warning, "spec.managedBy")) > 0 {
		t.Errorf("another controller's managedBy: rendered %v, results %v", js != nil, results)
	}
}

// TestRenderQueuedIsIdempotent: the render of a queued JobSet, rendered
// again, is unchanged (the label and the absent suspend included).
func TestRenderQueuedIsIdempotent(t *testing.T) {
	first, results := renderOne(t, queuedJobSet(t, "team-queue", nil))
	if first == nil {
		t.Fatalf("refused: %v", results)
	}
	second, results := renderOne(t, first.MustString())
	if second == nil {
		t.Fatalf("the render refused its own output: %v", results)
	}
	if a, b := first.MustString(), second.MustString(); a != b {
		t.Errorf("rendering the render changed it:\n--- first\n%s\n--- second\n%s", a, b)
	}
}
