package transform_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestModesRerenderToNothingNew: the function's output for each mode,
// rendered again, is the same output (the golden cases show one render;
// a second kpt render or Argo CD refresh must change nothing).
func TestModesRerenderToNothingNew(t *testing.T) {
	for _, dir := range []string{"launcher-mode", "rerender-switch-to-launcher", "broker-escape-hatches"} {
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
