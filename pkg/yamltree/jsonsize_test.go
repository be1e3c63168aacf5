package yamltree

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestJSONSize holds the walk to encoding/json's own output of the same
// document (decoded the way kyaml decodes YAML to JSON): every kind of
// node, the escapes encoding/json writes, an alias, and the YAML 1.1
// words that stay strings in yaml.v3.
func TestJSONSize(t *testing.T) {
	docs := []string{
		"{}\n",
		"[]\n",
		"a: 1\nb: [true, false, null, ~, 2.5, -7, 0x1f, 0o17]\nc: {d: e}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a/b: \"<x> & y\"\ndata:\n  s: |\n    line \"one\"\n    \\two\ttab\n",
		"s: \"\\u0001\\b\\f\\r\\u2028\\u2029é\"\n",
		"a: &x {b: [1, 2, {c: d}]}\ne: *x\n",
		"words: [yes, no, on, off, y, n, \"1\", '2', \"\"]\n",
	}
	for _, c := range yaml11Seeds {
		docs = append(docs, "v: "+yamlQuoted(c)+"\n")
	}
	for _, doc := range docs {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if got := JSONSize(&n); got != len(want) {
			t.Errorf("%q: JSONSize = %d, encoding/json wrote %d bytes: %s", doc, got, len(want), want)
		}
	}
	// yaml.v3 decodes a timestamp to a time, but kubectl reads YAML with
	// sigs.k8s.io/yaml, which keeps it the string it was.
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("t: 2001-12-14\n"), &n); err != nil {
		t.Fatal(err)
	}
	if got, want := JSONSize(&n), len(`{"t":"2001-12-14"}`); got != want {
		t.Errorf("a timestamp: JSONSize = %d, want %d", got, want)
	}
}

// yamlQuoted writes v as a double-quoted YAML string.
func yamlQuoted(v string) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), `\u0026`, "&")
}
