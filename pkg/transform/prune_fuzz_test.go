package transform_test

// Fuzz targets of issue 19, classes 1 and 5:
//
//	go test -run='^$' -fuzz='^FuzzPruneEdits$' -fuzztime=30s ./pkg/transform
//	go test -run='^$' -fuzz='^FuzzGeneratedPaths$' -fuzztime=30s ./pkg/transform

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fpBookkeeping are the annotations kpt and kustomize add to every object
// they pass a function. This list is the test's own, written from what
// those tools were seen to add, not read from the code under test.
var fpBookkeeping = []string{
	"config.kubernetes.io/path", "config.kubernetes.io/index",
	"internal.config.kubernetes.io/path", "internal.config.kubernetes.io/index",
	"internal.config.kubernetes.io/id", "internal.config.kubernetes.io/seqindent",
	"internal.config.kubernetes.io/package-path", "internal.config.kubernetes.io/annotations-migration-resource-id",
	"config.k8s.io/id", "kustomize.config.k8s.io/id", "internal.kpt.dev/upstream-identifier",
}

// fpMeaning is what an object says to the API server: its decoded values,
// without the tools' bookkeeping (but with the digest: a digest changed
// by hand is a change).
func fpMeaning(t *testing.T, doc string) any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("an edit made invalid YAML: %v\n%s", err, doc)
	}
	if meta, ok := v["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			for _, k := range fpBookkeeping {
				delete(ann, k)
			}
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	return v
}

// fpKeys and fpValues are what the edits write: the fields the function
// writes, fields it never writes, the labels and annotations that matter,
// and the tools' bookkeeping.
var fpKeys = [][]string{
	{"metadata", "labels", "app.kubernetes.io/managed-by"}, {"metadata", "labels", "flux-framework.org/jobset"},
	{"metadata", "labels", "team"}, {"metadata", "annotations", plan.DigestAnnotation},
	{"metadata", "annotations", "config.kubernetes.io/path"}, {"metadata", "annotations", "internal.config.kubernetes.io/id"},
	{"metadata", "annotations", "kustomize.config.k8s.io/id"}, {"metadata", "annotations", "config.kubernetes.io/depends-on"},
	{"metadata", "annotations", "internal.kpt.dev/upstream-identifier"},
	{"metadata", "annotations", "config.kubernetes.io/local-config"}, {"metadata", "annotations", "example.com/owner"},
	{"metadata", "name"}, {"metadata", "namespace"}, {"type"}, {"immutable"}, {"kind"}, {"apiVersion"},
	{"data", "curve.cert"}, {"data", "broker.toml"}, {"data", "init.sh"}, {"data", "mine"},
	{"stringData", "curve.cert"}, {"binaryData", "x"}, {"metadata", "finalizers"},
}

var fpValues = []string{"jobset-flux", "gone", "two", "true", "false", "v1", "Secret", "ConfigMap", "Opaque", "team", "", "gone-flux-curve", "gone-flux-entrypoint", "sha256:00", "x\ny\n"}

// fpEdit applies one edit, chosen by op and arg, to the orphan's node, or
// to the output through a new item that names it (returned, else "").
func fpEdit(rn *yaml.RNode, op, arg byte) (extra string) {
	key := fpKeys[int(arg)%len(fpKeys)]
	value := fpValues[int(arg/4)%len(fpValues)]
	switch op % 7 {
	case 0: // set a string
		_ = rn.PipeE(yaml.LookupCreate(yaml.MappingNode, key[:len(key)-1]...), yaml.SetField(key[len(key)-1], yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: value})))
	case 1: // remove a field
		_ = rn.PipeE(yaml.Lookup(key[:len(key)-1]...), yaml.Clear(key[len(key)-1]))
	case 2: // set a non-string
		_ = rn.PipeE(yaml.LookupCreate(yaml.MappingNode, key[:len(key)-1]...), yaml.SetField(key[len(key)-1], yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(int(arg))})))
	case 3: // restyle: flow maps, quoted strings
		fpRestyle(rn.YNode(), arg)
	case 4: // a comment
		rn.YNode().Content[int(arg)%len(rn.YNode().Content)].HeadComment = "# note " + strconv.Itoa(int(arg))
	case 5: // reverse the keys of a map
		fpReverse(rn.YNode(), int(arg)%3)
	case 6: // name it from another object
		return "apiVersion: example.com/v1\nkind: Note\nmetadata: {name: n" + strconv.Itoa(int(arg)) + ", namespace: team}\nspec: {ref: " + strconv.Quote(rn.GetName()) + "}\n"
	}
	return ""
}

func fpRestyle(n *yaml.Node, arg byte) {
	if n.Kind == yaml.MappingNode && arg%2 == 0 {
		n.Style = yaml.FlowStyle
	}
	if n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagString && !strings.Contains(n.Value, "\n") {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		fpRestyle(c, arg/2)
	}
}

func fpReverse(n *yaml.Node, depth int) {
	if n.Kind != yaml.MappingNode {
		return
	}
	if depth > 0 {
		for i := 1; i < len(n.Content); i += 2 {
			fpReverse(n.Content[i], depth-1)
		}
		return
	}
	for i, j := 0, len(n.Content)-2; i < j; i, j = i+2, j-2 {
		n.Content[i], n.Content[j] = n.Content[j], n.Content[i]
		n.Content[i+1], n.Content[j+1] = n.Content[j+1], n.Content[i+1]
	}
}

// FuzzPruneEdits: random edits of a generated object whose JobSet is gone.
// The function removes it only when the edits changed none of its values
// (restyling, comments, key order, the tools' bookkeeping) and nothing
// names it; every other edited object comes out exactly as it went in.
func FuzzPruneEdits(f *testing.F) {
	for _, s := range []string{"", "\x00\x00", "\x00\x07", "\x03\x00\x04\x01\x05\x00", "\x01\x03", "\x06\x00", "\x02\x0e", "\x00\x14\x03\x01", "\x01\x17\x05\x01"} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	cm, secret, _ := pOrphans(f)
	p := hProcessor(f)
	f.Fuzz(func(t *testing.T, pickSecret bool, ops []byte) {
		if len(ops) > 40 {
			return
		}
		orig := cm
		if pickSecret {
			orig = secret
		}
		rn, err := yaml.Parse(orig)
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		for i := 0; i+1 < len(ops); i += 2 {
			if e := fpEdit(rn, ops[i], ops[i+1]); e != "" {
				extra = append(extra, e)
			}
		}
		edited := rn.MustString()
		docs := append([]string{edited}, extra...)
		rl, err := fn.ParseResourceList(pItems("", docs...))
		if err != nil {
			return // an edit made an item the SDK refuses (no kind, ...)
		}
		ok, err := p.Process(rl)
		if err != nil || (!ok && len(hErrors(rl)) == 0) {
			t.Fatalf("Process: %v, ok %v, with no error result:\n%s", err, ok, hDump(rl))
		}
		unchanged := reflect.DeepEqual(fpMeaning(t, edited), fpMeaning(t, orig)) && len(extra) == 0
		gone := true
		want := fpParsed(t, edited)
		for _, it := range rl.Items {
			if it.String() == want {
				gone = false
			}
		}
		if ok && unchanged && !gone {
			t.Errorf("an object the function wrote, changed in nothing but its form, was kept:\n%s\n%s", edited, hDump(rl))
		}
		if !unchanged && gone {
			t.Errorf("an object that is no longer what the function wrote (or is named by another) was removed:\n%s\nextra: %v\n%s", edited, extra, hDump(rl))
		}
	})
}

// fpParsed is doc as an item of the output is written when the function
// passes it through.
func fpParsed(t *testing.T, doc string) string {
	t.Helper()
	rl, err := fn.ParseResourceList(pItems("", doc))
	if err != nil {
		t.Fatal(err)
	}
	return rl.Items[0].String()
}

// fgPackage builds a package from the fuzzer's bytes, three per object:
// JobSets and user objects of a few names and namespaces in a few files,
// each file's documents indexed in order, as kpt reads them.
func fgPackage(data []byte) []string {
	names := []string{"x", "y", "x-flux-entrypoint"}
	namespaces := []string{"", "a", "b"}
	fileNames := []string{"js.yaml", "a.yaml", "d/js.yaml", "configmap_x-flux-entrypoint.yaml", "configmap_a_x-flux-entrypoint.yaml", "secret_x-flux-curve.yaml", "d/secret_b_x-flux-curve.yaml"}
	next, seen := map[string]int{}, map[string]bool{}
	var docs []string
	for i := 0; i+2 < len(data) && len(docs) < 8; i += 3 {
		name, ns := names[int(data[i])%len(names)], namespaces[int(data[i]/3)%len(namespaces)]
		file := fileNames[int(data[i+1])%len(fileNames)]
		kind := "JobSet"
		if data[i+2]%2 == 1 {
			kind = []string{"ConfigMap", "Secret"}[data[i+2]/2%2]
			name += "-flux-" + []string{"entrypoint", "curve"}[data[i+2]/4%2]
		}
		if seen[kind+"/"+ns+"/"+name] {
			continue // one object of each kind, namespace and name
		}
		seen[kind+"/"+ns+"/"+name] = true
		index := next[file]
		next[file]++
		if kind == "JobSet" {
			docs = append(docs, pathJobSetAt(name, ns, file, index))
		} else {
			docs = append(docs, userFile(kind, name, ns, file, index))
		}
	}
	return docs
}

// FuzzGeneratedPaths: for every package kpt accepts, the function's
// output is one kpt accepts too (no two objects at one path and index),
// the same whatever the order of the input, and a second render moves
// nothing.
func FuzzGeneratedPaths(f *testing.F) {
	for _, s := range []string{"\x01\x00\x00\x04\x01\x00", "\x01\x00\x00\x02\x00\x00\x00\x00\x00", "\x01\x03\x00\x01\x00\x01", "\x04\x02\x00\x07\x06\x00\x07\x06\x05"} {
		f.Add([]byte(s))
	}
	p := hProcessor(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		docs := fgPackage(data)
		in := pItems("", docs...)
		if rl, err := fn.ParseResourceList(in); err != nil || kptAccepts(rl) != nil {
			return // not a package kpt would hand over
		}
		rl, ok, out := hRun(t, p, in)
		if !ok {
			return // duplicate JobSets, or a generated name taken: refused
		}
		if err := kptAccepts(rl); err != nil {
			t.Fatalf("kpt would refuse the render: %v\n%s", err, in)
		}
		back, _, _ := hRun(t, p, pItems("", reversed(docs)...))
		if !mapsEqual(files(back), files(rl)) {
			t.Errorf("the files depend on the order of the input:\n%v\n%v", files(rl), files(back))
		}
		again, _ := rerender(t, p, out)
		if !mapsEqual(files(again), files(rl)) {
			t.Errorf("a second render moved files:\n%v\n%v", files(rl), files(again))
		}
	})
}
