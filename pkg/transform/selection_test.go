package transform_test

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestUnselectedJobSetAnnotations: class 2, a misspelt selector or setting under
// flux-framework.org/ is an error even on a JobSet that is not rendered.
func TestUnselectedJobSetAnnotations(t *testing.T) {
	p := hProcessor(t)
	for name, tc := range map[string]struct {
		ann     map[string]string
		sev     fn.Severity
		ok      bool
		field   string
		message string
	}{
		"enable":                 {map[string]string{"flux-framework.org/enable": "true"}, fn.Error, false, "metadata.annotations[flux-framework.org/enable]", `did you mean "flux-framework.org/enabled"`},
		"Enabled":                {map[string]string{"flux-framework.org/Enabled": "true"}, fn.Error, false, "metadata.annotations[flux-framework.org/Enabled]", "did you mean"},
		"disabled, misspelt":     {map[string]string{"flux-framework.org/enabled": "false", "flux-framework.org/taks-per-node": "2"}, fn.Error, false, "metadata.annotations[flux-framework.org/taks-per-node]", `tasks-per-node`},
		"setting, no selector":   {map[string]string{"flux-framework.org/tasks-per-node": "2"}, fn.Warning, true, "metadata.annotations[flux-framework.org/tasks-per-node]", "is not rendered"},
		"selected, misspelt too": {map[string]string{"flux-framework.org/enabled": "true", "flux-framework.org/taks-per-node": "2"}, fn.Error, false, "metadata.annotations[flux-framework.org/taks-per-node]", "tasks-per-node"},
	} {
		t.Run(name, func(t *testing.T) {
			obj := hJobSet{ann: tc.ann, namespace: "ns"}.object()
			if _, set := tc.ann["flux-framework.org/enabled"]; !set {
				delete(obj["metadata"].(map[string]any)["annotations"].(map[string]any), "flux-framework.org/enabled")
			}
			rl, ok, _ := hRun(t, p, hList(t, nil, obj))
			got := w4Messages(rl, tc.sev)
			if ok != tc.ok || !strings.Contains(got, tc.field+": ") || !strings.Contains(got, tc.message) {
				t.Errorf("ok %v (want %v); want a result at %s saying %q, got:\n%s", ok, tc.ok, tc.field, tc.message, hDump(rl))
			}
			if n := strings.Count(got, tc.field+": "); n != 1 {
				t.Errorf("%d results at %s, want one:\n%s", n, tc.field, got)
			}
		})
	}
}

// TestListItemHoldingMarkedJobSet: class 6, a JobSet marked for Flux inside a v1 List
// item of a ResourceList is refused at the List's items, naming a fix
// that works (class 7: it named plain-file mode and kpt, which both left
// a List next to other documents as it was), and the List is left as it
// was; a List without one passes.
func TestListItemHoldingMarkedJobSet(t *testing.T) {
	p := hProcessor(t)
	js := hJobSet{namespace: "ns", ann: map[string]string{"flux-framework.org/enabled": "true"}}.object()
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "ns"}}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{js, cm}}
	rl, ok, _, err := hKRM(t, p, hList(t, nil, list))
	if err != nil || ok {
		t.Fatalf("a List holding a Flux JobSet passed (%v):\n%s", err, hDump(rl))
	}
	// The advice must work where the List came from: kpt unwraps a List
	// only alone in its file, and plain mode unwraps it anywhere.
	errs := w4Messages(rl, fn.Error)
	for _, want := range []string{"items: holds the JobSet", "emit the List's items as items", "give the List a file of its own", "only when it is its file's only document", "jobset-flux FILE, or - for stdin"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the error does not say %q:\n%s", want, errs)
		}
	}
	if len(rl.Items) != 1 || rl.Items[0].GetKind() != "List" {
		t.Errorf("the refused List was changed:\n%s", hDump(rl))
	}
	// A List without a Flux JobSet stays a List.
	plain := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{cm}}
	rl, ok, _, _ = hKRM(t, p, hList(t, nil, plain))
	if !ok || len(rl.Items) != 1 || rl.Items[0].GetKind() != "List" {
		t.Errorf("a List without a Flux JobSet was changed:\n%s", hDump(rl))
	}
}
