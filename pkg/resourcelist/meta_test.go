package resourcelist

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 19, class 8: a record must answer as the tree stub it stands
// for (treeStub read through the SDK), whatever the metadata holds.

// TestMetaReadsAsStub: on metadata of every odd shape, a record
// answers every getter as the tree stub (treeStub) answers it through the
// SDK, for each key the metadata holds and one it does not.
func TestMetaReadsAsStub(t *testing.T) {
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
	keeps := map[string]MetaFilter{
		"all":  nil,
		"some": func(field, key string) bool { return key != "b" && key != "l" },
	}
	for _, item := range items {
		for kname, keep := range keeps {
			rl, err := Parse([]byte(header + itemsKey + item))
			if err != nil {
				t.Fatalf("%q: %v", item, err)
			}
			stub := treeStub(rl.Items[0], keep)
			rec := NewMetaReader(keep).Read(rl.Items[0])
			if got, want := recordReads(rec, stub), stubReads(stub); got != want {
				t.Errorf("%q, keep %s: the record reads\n%s\nthe stub\n%s", item, kname, got, want)
			}
		}
	}
}

// recordReads is every accessor of r, for the keys stub holds and one
// more, as stubReads writes the SDK's getters.
func recordReads(r *Meta, stub *fn.KubeObject) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q %q empty=%v local=%v path=%q index=%d\n", r.APIVersion, r.Kind, r.Namespace, r.Name,
		r.Empty(), r.LocalConfig(), r.Path(), r.Index())
	fmt.Fprintf(&b, "labels %v annotations %v\n", r.Labels(), r.Annotations())
	for _, k := range append(slices.Sorted(maps.Keys(stub.GetLabels())), "absent") {
		fmt.Fprintf(&b, "label %q=%q\n", k, r.Label(k))
	}
	for _, k := range append(slices.Sorted(maps.Keys(stub.GetAnnotations())), "absent") {
		fmt.Fprintf(&b, "annotation %q=%q\n", k, r.Annotation(k))
	}
	return b.String()
}

// stubReads is every getter of a tree stub, as recordReads writes a
// record's.
func stubReads(s *fn.KubeObject) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q %q empty=%v local=%v path=%q index=%d\n", s.GetAPIVersion(), s.GetKind(), s.GetNamespace(), s.GetName(),
		s.IsEmpty(), s.IsLocalConfig(), s.PathAnnotation(), s.IndexAnnotation())
	fmt.Fprintf(&b, "labels %v annotations %v\n", s.GetLabels(), s.GetAnnotations())
	for _, k := range append(slices.Sorted(maps.Keys(s.GetLabels())), "absent") {
		fmt.Fprintf(&b, "label %q=%q\n", k, s.GetLabel(k))
	}
	for _, k := range append(slices.Sorted(maps.Keys(s.GetAnnotations())), "absent") {
		fmt.Fprintf(&b, "annotation %q=%q\n", k, s.GetAnnotation(k))
	}
	return b.String()
}
