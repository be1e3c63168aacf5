package resourcelist

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// shapes are ResourceLists that exercise what the emitter does with
// context: comments in every position, anchors and aliases across items,
// flow style, JSON, long lines it folds, block scalars, unicode, and lists
// without items, functionConfig or results.
var shapes = map[string]string{
	"comments": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# head of the first item
- apiVersion: v1 # line comment
  kind: ConfigMap
  metadata:
    name: a
    # foot of metadata
  data:
    # head of k
    k: v # line of k
    # foot of data
# foot of the first item

# head of the second item
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b} # flow with a comment
  data:
    list:
    - x # one
    # between
    - y
    # after the list
# foot of the last item
functionConfig:
  # head in the config
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cfg
  data: {a: "1"} # trailing
`,
	"anchors": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
    labels: &shared
      team: hpc
  data: &data {x: "1"}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
    labels: *shared
  data: *data
- &whole
  apiVersion: v1
  kind: Service
  metadata:
    name: c
    annotations:
      <<: *shared
`,
	"json": `{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j","annotations":{"a":"b"}},"data":{"n":"1","list":"[1, 2]"}},{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"k":"dmFsdWU="}}],"functionConfig":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fc"}}}`,
	"long lines and scalars": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: scalars
  data:
    long: ` + strings.Repeat("word ", 40) + `
    quoted: "` + strings.Repeat("x y ", 30) + `"
    single: 'it''s ` + strings.Repeat("z ", 50) + `'
    literal: |
      #!/bin/bash
      echo "hello"   
        indented
    keep: |+
      trailing

    strip: >-
      folded
      text
    indicator: |2
        two more
    unicode: "grüße — 日本語 \u00e9 \U0001F600"
    escapes: "tab\there\u0007bell"
    empty: ""
    nulls: ~
    bool: "yes"
    number: 0x1f
    date: 2001-12-14
    multi: "a
      b"
  binaryData: {}
  list: []
`,
	"nested sequences": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d, namespace: ns}
  spec:
    template:
      spec:
        containers:
        - name: c
          command: [sh, -c, "echo 1"]
          args:
          - - nested
            - seq
          - {k: v}
          env:
          - {name: A, value: "1"}
`,
	"no items": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: only-config
`,
	"empty": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
`,
	"results": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: r
results:
- message: an error
  severity: error
  resourceRef: {apiVersion: v1, kind: ConfigMap, name: r}
  field: {path: data.x, currentValue: "1", proposedValue: "2"}
  file: {path: a.yaml, index: 1}
- message: "info: with: colons"
  severity: info
`,
	"unsorted with tags": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Service
  metadata: {name: z}
- !!map
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: y}
  data:
    s: !!str 1
    custom: !thing value
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: x, namespace: b}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: x, namespace: a}
`,
}

// TestEncodeMatchesToYAML: for every shape, every golden ResourceList of
// pkg/transform and every rendered example, Encode writes exactly the
// bytes of the SDK's ToYAML.
func TestEncodeMatchesToYAML(t *testing.T) {
	inputs := map[string][]byte{}
	for name, s := range shapes {
		inputs[name] = []byte(s)
	}
	files, err := filepath.Glob("../transform/testdata/golden*/*/_expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 25 {
		t.Fatalf("found %d golden files, want the pkg/transform golden ResourceLists", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			got, want := encodeBoth(t, in)
			if !bytes.Equal(got, want) {
				t.Fatalf("Encode differs from ToYAML at byte %d\n%s", firstDiff(got, want), diffContext(got, want))
			}
		})
	}
}

// encodeBoth parses in twice and returns Encode's and ToYAML's bytes.
func encodeBoth(t *testing.T, in []byte) (got, want []byte) {
	t.Helper()
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	sortItems(rl.Items)
	got, err = encode(rl, false)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	ref, err := fn.ParseResourceList(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err = ref.ToYAML()
	if err != nil {
		t.Fatalf("ToYAML: %v", err)
	}
	return got, want
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func diffContext(got, want []byte) string {
	i := firstDiff(got, want)
	lo := max(0, i-200)
	return fmt.Sprintf("Encode:\n%s\nToYAML:\n%s", got[lo:min(len(got), i+200)], want[lo:min(len(want), i+200)])
}

// TestSort: ToYAML's order (apiVersion, kind, namespace, name), and items
// that tie keep their input order, so the output does not depend on how
// the sort treats equal keys.
func TestSort(t *testing.T) {
	var items fn.KubeObjects
	for _, spec := range []string{
		"v1 Service b s1", "apps/v1 Deployment a d", "v1 ConfigMap b c1", "v1 ConfigMap a c1",
		"v1 ConfigMap b c1", "v1 ConfigMap  c0", "apps/v1 Deployment a d",
	} {
		f := strings.Split(spec, " ")
		o := fn.NewEmptyKubeObject()
		mustSet(t, o.SetAPIVersion(f[0]))
		mustSet(t, o.SetKind(f[1]))
		mustSet(t, o.SetNamespace(f[2]))
		mustSet(t, o.SetName(f[3]))
		mustSet(t, o.SetAnnotation("input", fmt.Sprint(len(items))))
		items = append(items, o)
	}
	sortItems(items)
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%s/%s/%s/%s#%s", it.GetAPIVersion(), it.GetKind(), it.GetNamespace(), it.GetName(), it.GetAnnotation("input")))
	}
	want := []string{
		"apps/v1/Deployment/a/d#1", "apps/v1/Deployment/a/d#6",
		"v1/ConfigMap//c0#5", "v1/ConfigMap/a/c1#3", "v1/ConfigMap/b/c1#2", "v1/ConfigMap/b/c1#4",
		"v1/Service/b/s1#0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
}

func mustSet(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEncodeError: a node the emitter refuses (an alias without a name)
// fails the whole encoding with the item named at its place in the
// sorted output ("broken" sorts before the list's ConfigMap "r"), and
// nothing is returned.
func TestEncodeError(t *testing.T) {
	rl := unwritableList(t)
	out, err := Encode(rl)
	if err == nil {
		t.Fatalf("Encode accepted an alias without a name:\n%s", out)
	}
	if out != nil || !strings.Contains(err.Error(), "items[0] (ConfigMap broken)") {
		t.Errorf("got output %q and error %q; want no output and an error naming items[0] (ConfigMap broken)", out, err)
	}
}

// unwritableList is the "results" shape with a second item, ConfigMap
// broken, holding an alias without a name: no writer can encode it.
func unwritableList(t *testing.T) *fn.ResourceList {
	t.Helper()
	rl, err := fn.ParseResourceList([]byte(shapes["results"]))
	if err != nil {
		t.Fatal(err)
	}
	bad := fn.NewEmptyKubeObject()
	mustSet(t, bad.SetAPIVersion("v1"))
	mustSet(t, bad.SetKind("ConfigMap"))
	mustSet(t, bad.SetName("broken"))
	rn := bad.CopyToResourceNode()
	rn.YNode().Content = append(rn.YNode().Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "data"}, &yaml.Node{Kind: yaml.AliasNode, Value: ""})
	rl.Items = append(rl.Items, fn.MoveToKubeObject(rn))
	return rl
}

// FuzzEncode: whatever the SDK parses as a ResourceList, Encode writes
// the bytes ToYAML writes, as long as no two items tie in the sort (the
// SDK's sort is not stable, so their order is ToYAML's choice).
func FuzzEncode(f *testing.F) {
	for _, s := range shapes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rl, err := fn.ParseResourceList(in)
		if err != nil {
			return
		}
		keys := map[string]bool{}
		for _, it := range rl.Items {
			k := it.GetAPIVersion() + " " + it.GetKind() + " " + it.GetNamespace() + " " + it.GetName()
			if keys[k] {
				return
			}
			keys[k] = true
		}
		ref, err := fn.ParseResourceList(in)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := ref.ToYAML()
		sortItems(rl.Items)
		got, err := encode(rl, false)
		if wantErr != nil || !readable(want) {
			// Where the SDK fails or writes what no reader reads back (a
			// block scalar whose first line starts with a tab), Encode
			// writes what it means (TestEncodeUnwritableStrings).
			if err == nil && !readable(got) {
				t.Fatalf("Encode wrote unreadable YAML:\n%s", got)
			}
			return
		}
		if err != nil {
			t.Fatalf("Encode error %v, ToYAML none", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Encode differs from ToYAML at byte %d\n%s", firstDiff(got, want), diffContext(got, want))
		}
	})
}

// readable reports whether text parses as YAML.
func readable(text []byte) bool {
	var doc yaml.Node
	return yaml.Unmarshal(text, &doc) == nil
}

// benchList is a ResourceList of n small Deployments.
func benchList(b *testing.B, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	buf.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		fmt.Fprintf(&buf, `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: app-%d
    annotations: {config.kubernetes.io/path: "apps/%d.yaml"}
  spec:
    replicas: 2
    template:
      spec:
        containers:
        - name: app
          image: registry.example/app:%d
          args: [--port, "8080", --verbose]
          env:
          - {name: MODE, value: "on"}
`, i, i, i)
	}
	return buf.Bytes()
}

// BenchmarkEncode and BenchmarkToYAML write the same 5,000-item list:
// Encode item by item, the SDK as one document.
func BenchmarkEncode(b *testing.B) {
	in := benchList(b, 5000)
	for b.Loop() {
		rl, err := fn.ParseResourceList(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Encode(rl); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToYAML(b *testing.B) {
	in := benchList(b, 5000)
	for b.Loop() {
		rl, err := fn.ParseResourceList(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rl.ToYAML(); err != nil {
			b.Fatal(err)
		}
	}
}
