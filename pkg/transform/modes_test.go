package transform_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestModesRerenderToNothingNew: the function's output for each mode,
// rendered again, is the same output (the golden cases show one render;
// a second kpt render or Argo CD refresh must change nothing).
func TestModesRerenderToNothingNew(t *testing.T) {
	for _, dir := range []string{"launcher-mode", "rerender-switch-to-launcher", "broker-escape-hatches", "setup-script", "image-flux-path", "rerender-switch-to-image-flux", "view-mount-image", "rerender-switch-to-view-mount-image", "rerender-switch-to-view-mount-copy"} {
		t.Run(dir, func(t *testing.T) {
			in, err := os.ReadFile("testdata/golden/" + dir + "/resources.yaml")
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := kio.FromBytes(in)
			if err != nil {
				t.Fatal(err)
			}
			var wrapped bytes.Buffer
			w := kio.ByteWriter{Writer: &wrapped, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
			if err := w.Write(nodes); err != nil {
				t.Fatal(err)
			}
			p := hProcessor(t)
			rl, ok, out := hRun(t, p, wrapped.Bytes())
			if !ok {
				t.Fatalf("render failed:\n%s", hDump(rl))
			}
			again, ok := rerender(t, p, out)
			if !ok {
				t.Fatalf("re-render failed:\n%s", hDump(again))
			}
			first, second := itemsYAML(t, rl.Items), itemsYAML(t, again.Items)
			if first != second {
				t.Errorf("re-rendering changed the output:\n--- first\n%s\n--- second\n%s", first, second)
			}
		})
	}
}

func itemsYAML(t *testing.T, items fn.KubeObjects) string {
	t.Helper()
	var b bytes.Buffer
	for _, it := range items {
		b.WriteString(it.String() + "---\n")
	}
	return b.String()
}

// TestSetupIsAFileOfItsOwn: the setup text is shipped verbatim as
// setup.sh and never spliced into the entrypoint; removing the setting
// and rendering again removes the file and the step that sources it.
func TestSetupIsAFileOfItsOwn(t *testing.T) {
	setup := "export A=\"$(id)\" B='x'\"'\"'y'\nEOF\n`date`; exit 0 # }}{{ %p\n"
	js := map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"name": "js", "annotations": map[string]any{"flux-framework.org/enabled": "true", "flux-framework.org/setup": setup}},
		"spec": map[string]any{"replicatedJobs": []any{map[string]any{"name": "w", "template": map[string]any{"spec": map[string]any{"completions": 2, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "app", "command": []any{"hostname"}}}}}}}}}},
	}
	p := hProcessor(t)
	rl, ok, out := hRun(t, p, hList(t, nil, js))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(rl))
	}
	cm := hFind(rl, "ConfigMap", "js-flux-entrypoint")
	if got, _, _ := cm.NestedString("data", "setup.sh"); got != setup {
		t.Errorf("setup.sh = %q, want the setting's text verbatim %q", got, setup)
	}
	if ep, _, _ := cm.NestedString("data", "entrypoint.sh"); strings.Contains(ep, "$(id)") || !strings.Contains(ep, `"${setup_shell}" setup.sh "${setup_state}" "${setup_script}"`) {
		t.Errorf("the entrypoint holds the setup text, or does not source setup.sh")
	}

	// Switch it off on the rendered output.
	again, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	again.Results = nil
	jsObj := hFind(again, "JobSet", "js")
	anns := jsObj.GetAnnotations()
	delete(anns, "flux-framework.org/setup")
	if err := jsObj.SetNestedStringMap(anns, "metadata", "annotations"); err != nil {
		t.Fatal(err)
	}
	in, err := again.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	rl2, ok, _ := hRun(t, p, in)
	if !ok {
		t.Fatalf("re-render failed:\n%s", hDump(rl2))
	}
	cm = hFind(rl2, "ConfigMap", "js-flux-entrypoint")
	if _, found, _ := cm.NestedString("data", "setup.sh"); found {
		t.Errorf("setup.sh is still in the ConfigMap without the setting")
	}
	if ep, _, _ := cm.NestedString("data", "entrypoint.sh"); strings.Contains(ep, "jobset_flux_setup") {
		t.Errorf("the entrypoint still sources a setup script")
	}
}
