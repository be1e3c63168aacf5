package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// listDoc is goodJobSet inside a v1 List.
func listDoc() string {
	return "apiVersion: v1\nkind: List\nitems:\n" + indentItem(goodJobSet)
}

// TestListRenderedOrRefused: issue 31, class 6. A JobSet inside a
// v1 List is rendered in plain-file mode (kyaml's reader unwraps the
// List) as goodJobSet renders on its own; in KRM mode, where the List is
// one item, it is refused with exit 1 instead of passing unrendered.
func TestListRenderedOrRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.yaml")
	if err := os.WriteFile(path, []byte(listDoc()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, plain, stderr := runFn(t, []string{path}, "")
	if code != exitOK {
		t.Fatalf("plain-file mode: exit %d: %s", code, stderr)
	}
	// KRM mode refuses it (exit 1, naming the field and the fix) rather
	// than passing it unrendered with exit 0.
	code, _, stderr = runFn(t, nil, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+indentItem(listDoc()))
	if code != exitFailed || !strings.Contains(stderr, "items: holds the JobSet") {
		t.Fatalf("KRM mode: exit %d, want %d and the List refused: %s", code, exitFailed, stderr)
	}
	_, bare, _ := runFn(t, nil, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+indentItem(goodJobSet))
	want := jobSetOf(t, bare, true)
	if got := jobSetOf(t, plain, false); got != want {
		t.Errorf("plain-file mode rendered the List's JobSet as\n%s\nwant\n%s", got, want)
	}
}

// jobSetOf returns the JobSet "good" of an output, as YAML.
func jobSetOf(t *testing.T, out string, list bool) string {
	t.Helper()
	var docs []*yaml.RNode
	if list {
		rl, err := yaml.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		items, err := rl.Pipe(yaml.Lookup("items"))
		if err != nil || items == nil {
			t.Fatalf("no items: %v", err)
		}
		docs, _ = items.Elements()
	} else {
		for _, d := range strings.Split(out, "\n---\n") {
			n, err := yaml.Parse(d)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, n)
		}
	}
	for _, d := range docs {
		if d.GetKind() == "JobSet" && d.GetName() == "good" {
			return d.MustString()
		}
	}
	t.Fatalf("no JobSet good in:\n%s", out)
	return ""
}

// TestNoCommandWarns: issue 31, class 2. A container with neither
// command nor args makes the instance interactive with a warning printed
// without -v; interactive: "true" says it is meant, and silences it.
func TestNoCommandWarns(t *testing.T) {
	noCommand := strings.Replace(goodJobSet, `              command: [sh, -c, "echo hello"]`+"\n", "", 1)
	path := filepath.Join(t.TempDir(), "js.yaml")
	if err := os.WriteFile(path, []byte(noCommand), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runFn(t, []string{path}, "")
	if code != exitOK || !strings.Contains(stderr, "[warning]") || !strings.Contains(stderr, "has no command or args, so the Flux instance is interactive") {
		t.Errorf("exit %d, stderr %q; want exit 0 and the warning without -v", code, stderr)
	}
	meant := strings.Replace(noCommand, `    flux-framework.org/enabled: "true"`, `    flux-framework.org/enabled: "true"`+"\n"+`    flux-framework.org/interactive: "true"`, 1)
	if err := os.WriteFile(path, []byte(meant), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runFn(t, []string{path}, ""); code != exitOK || strings.Contains(stderr, "interactive") {
		t.Errorf("interactive set: exit %d, stderr %q; want exit 0 and no word of it", code, stderr)
	}
}
