package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlainStreamListBesideDocuments: class 7, a v1 List next to other
// documents of a plain YAML stream, on "-" or in a file, is read as its
// items: the Flux JobSet inside is rendered (it was refused as a List
// item, with advice to render the file, which failed the same way), and
// the List wrapper is dropped as kustomize and kpt drop it.
func TestPlainStreamListBesideDocuments(t *testing.T) {
	indented := "  " + strings.ReplaceAll(strings.TrimSuffix(goodJobSet, "\n"), "\n", "\n  ")
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\n---\n" +
		"apiVersion: v1\nkind: List\nitems:\n-" + strings.TrimPrefix(indented, " ") + "\n"
	file := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
	}{{"stdin", []string{"-"}, in}, {"file", []string{file}, ""}} {
		code, out, stderr := runFn(t, c.args, c.stdin)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", c.name, code, stderr)
			continue
		}
		for _, want := range []string{"name: other", "flux-installer", "name: good-flux-entrypoint", "name: good-flux-curve"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q:\n%s", c.name, want, out)
			}
		}
		if strings.Contains(out, "kind: List") {
			t.Errorf("%s: the List wrapper was kept:\n%s", c.name, out)
		}
	}
}
