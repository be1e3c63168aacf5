package resourcelist

import (
	"strings"
	"testing"
)

// TestObjectsUnwrapsLists: class 7, a List document of a plain YAML
// stream is read as its items, in its place, whether it is alone (kyaml
// does that) or next to other documents (it did not, and a Flux JobSet
// inside was refused); one level, as kyaml; a List whose items are not
// maps stays one object.
func TestObjectsUnwrapsLists(t *testing.T) {
	cm := func(name string) string { return "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + name + "}}" }
	list := func(items ...string) string {
		return "apiVersion: v1\nkind: List\nmetadata: {}\nitems: [" + strings.Join(items, ", ") + "]\n"
	}
	nested := list(cm("a"), "{apiVersion: v1, kind: List, items: ["+cm("inner")+"]}")
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"alone", list(cm("a"), cm("b")), []string{"ConfigMap/a", "ConfigMap/b"}},
		{"between documents", cm("first") + "\n---\n" + list(cm("a"), cm("b")) + "---\n" + cm("last") + "\n", []string{"ConfigMap/first", "ConfigMap/a", "ConfigMap/b", "ConfigMap/last"}},
		{"two Lists", list(cm("a")) + "---\n" + list(cm("b")), []string{"ConfigMap/a", "ConfigMap/b"}},
		{"empty beside a document", list() + "---\n" + cm("x") + "\n", []string{"ConfigMap/x"}},
		{"nested, alone", nested, []string{"ConfigMap/a", "List/"}},
		{"nested, beside a document", nested + "---\n" + cm("x") + "\n", []string{"ConfigMap/a", "List/", "ConfigMap/x"}},
		{"items not maps", list("1", "2") + "---\n" + cm("x") + "\n", []string{"List/", "ConfigMap/x"}},
		{"no items", "apiVersion: v1\nkind: List\nmetadata: {name: l}\n---\n" + cm("x") + "\n", []string{"List/l", "ConfigMap/x"}},
	} {
		items, err := Objects("in", []byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, it := range items {
			got = append(got, it.GetKind()+"/"+it.GetName())
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: read %q, want %q", c.name, got, c.want)
		}
	}
}
