package resourcelist

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 19, class 8: a stub is a shell and a record (record.go). A
// reader that forgets Compactor.Meta must fail, not read "": every
// getter of a shell panics. And a record must answer as the tree stub
// it replaces did (Stub read through the SDK), whatever the metadata
// holds.

// shellUses are the SDK getters and setters the function uses, and the
// uses of the tree itself, each of which must panic on a shell (of a
// Compactor or of a Lazy).
var shellUses = map[string]func(*fn.KubeObject){
	"GetAPIVersion":   func(s *fn.KubeObject) { s.GetAPIVersion() },
	"GetKind":         func(s *fn.KubeObject) { s.GetKind() },
	"GetName":         func(s *fn.KubeObject) { s.GetName() },
	"GetNamespace":    func(s *fn.KubeObject) { s.GetNamespace() },
	"GetAnnotations":  func(s *fn.KubeObject) { s.GetAnnotations() },
	"GetAnnotation":   func(s *fn.KubeObject) { s.GetAnnotation("flux-framework.org/enabled") },
	"GetLabels":       func(s *fn.KubeObject) { s.GetLabels() },
	"GetLabel":        func(s *fn.KubeObject) { s.GetLabel("app.kubernetes.io/name") },
	"IsLocalConfig":   func(s *fn.KubeObject) { s.IsLocalConfig() },
	"PathAnnotation":  func(s *fn.KubeObject) { s.PathAnnotation() },
	"IndexAnnotation": func(s *fn.KubeObject) { s.IndexAnnotation() },
	"SetAnnotation":   func(s *fn.KubeObject) { _ = s.SetAnnotation("a", "b") },
	"SetLabel":        func(s *fn.KubeObject) { _ = s.SetLabel("a", "b") },
	"SetNestedField":  func(s *fn.KubeObject) { _ = s.SetNestedField("x", "spec", "x") },
	"NestedString":    func(s *fn.KubeObject) { s.NestedString("spec", "x") },
	"String":          func(s *fn.KubeObject) { _ = s.String() },
	"Copy":            func(s *fn.KubeObject) { s.Copy().GetKind() },
	"tree":            func(s *fn.KubeObject) { nodeOf(s).Content[0].Kind = 0 },
	"encode":          func(s *fn.KubeObject) { _, _ = itemPiece(s) },
}

// TestShellPanics: every SDK getter and setter the function uses, and
// every use of the tree itself, panic on a shell, in any order; IsEmpty
// alone answers, false as its record's (pkg/transform's results read it
// through Meta all the same). None of them changes poison, which every
// shell shares.
func TestShellPanics(t *testing.T) {
	for name, read := range shellUses {
		rl, err := Parse([]byte(stubItem))
		if err != nil {
			t.Fatal(err)
		}
		c := NewCompactor(nil)
		shell := c.Compact(rl.Items[0])
		if shell.IsEmpty() || c.Meta(shell).IsEmpty() {
			t.Errorf("IsEmpty: the shell's %v, its record's %v; want false", shell.IsEmpty(), c.Meta(shell).IsEmpty())
		}
		if !panics(func() { read(shell) }) {
			t.Errorf("%s on a shell did not panic", name)
		}
		if m := c.Meta(shell); m.GetName() != "cfd-00000" || m.GetKind() != "JobSet" {
			t.Errorf("after %s, the record reads %s %s", name, m.GetKind(), m.GetName())
		}
		c.Release()
	}
	// Each shell above was new, on the poison the reads before it had
	// tried; one more, after all of them.
	if !panics(func() { poison.GetKind() }) {
		t.Error("poison was changed: a shell made now reads as an object")
	}
}

// panics reports whether f panics.
func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

// TestRecordReadsAsStub: on metadata of every odd shape, a record
// answers every getter as the tree stub (Stub) answers it through the
// SDK, for each key the metadata holds and one it does not.
func TestRecordReadsAsStub(t *testing.T) {
	items := []string{
		stubItem[strings.Index(stubItem, "- "):],
		"- {}\n",
		"- foo: bar\n",
		"- apiVersion: v1\n  kind: ConfigMap\n",
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: null\n",
		"- apiVersion: 1\n  kind: true\n  metadata:\n    name: 12\n    namespace: ~\n",
		"- kind: Secret\n  metadata:\n    name: s\n    labels: {a: 1, b: '2', c: null, d: [x]}\n    annotations: {config.kubernetes.io/index: 0, config.kubernetes.io/local-config: 'true'}\n",
		"- kind: Secret\n  metadata:\n    name: s\n    annotations: [a, b]\n    labels: x\n",
		"- kind: Secret\n  metadata:\n    name: s\n    annotations:\n      a: '1'\n      a: '2'\n    labels:\n      l: x\n      l: y\n",
		"- kind: Secret\n  metadata:\n    name: s\n    annotations:\n      internal.config.kubernetes.io/path: same/path/for/both/spellings.yaml\n      config.kubernetes.io/path: same/path/for/both/spellings.yaml\n      config.kubernetes.io/index: '3'\n",
	}
	keeps := map[string]StubFilter{
		"all":  nil,
		"some": func(field, key string) bool { return key != "b" && key != "l" },
	}
	for _, item := range items {
		for kname, keep := range keeps {
			rl, err := Parse([]byte(header + itemsKey + item))
			if err != nil {
				t.Fatalf("%q: %v", item, err)
			}
			stub := Stub(rl.Items[0], keep)
			c := NewCompactor(keep)
			m := c.Meta(c.Compact(rl.Items[0]))
			if got, want := metaReads(m, stub), metaReads(stub, stub); got != want {
				t.Errorf("%q, keep %s: the record reads\n%s\nthe stub\n%s", item, kname, got, want)
			}
			c.Release()
		}
	}
}

// metaReads is every getter of m, for the keys stub holds and one more.
func metaReads(m Meta, stub *fn.KubeObject) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q %q empty=%v local=%v path=%q index=%d\n", m.GetAPIVersion(), m.GetKind(), m.GetNamespace(), m.GetName(),
		m.IsEmpty(), m.IsLocalConfig(), m.PathAnnotation(), m.IndexAnnotation())
	labels, annotations := stub.GetLabels(), stub.GetAnnotations()
	fmt.Fprintf(&b, "labels %v annotations %v\n", m.GetLabels(), m.GetAnnotations())
	for _, k := range append(slices.Sorted(maps.Keys(labels)), "absent") {
		fmt.Fprintf(&b, "label %q=%q\n", k, m.GetLabel(k))
	}
	for _, k := range append(slices.Sorted(maps.Keys(annotations)), "absent") {
		fmt.Fprintf(&b, "annotation %q=%q\n", k, m.GetAnnotation(k))
	}
	return b.String()
}
