package transform_test

// Issue 30: one code path for every size. The in-memory pair (Parse,
// resourcelist.Whole, MemorySink) and the whole parse with a SpoolSink
// (its pieces in memory, and in the spool's file) write the same bytes
// with the same outcome, on every golden list, its re-render, every kpt
// test package and example as kpt hands them over, and the lists where
// the run must hold an item whole: orphans pruned or kept for a
// reference, a shared CURVE Secret, generated objects placed before and
// after their JobSet, and objects moved to a free file.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// ctRender renders in from src into sink and writes it; it fails the
// test on an error.
func ctRender(t testing.TB, name string, src resourcelist.Source, sink resourcelist.Sink) ([]byte, bool) {
	t.Helper()
	results, ok, err := hProcessor(t).Render(src, sink)
	if err != nil {
		sink.Release()
		t.Fatalf("%s: Render: %v", name, err)
	}
	var b bytes.Buffer
	if err := sink.Write(&b, src.FunctionConfig(), results); err != nil {
		t.Fatalf("%s: Write: %v", name, err)
	}
	return b.Bytes(), ok
}

// ctWhole is the in-memory pair on its own parse of in.
func ctWhole(t testing.TB, name string, in []byte, sink resourcelist.Sink) ([]byte, bool) {
	t.Helper()
	rl, err := resourcelist.Parse(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ctRender(t, name, resourcelist.NewWhole(rl, transform.Keeps), sink)
}

// ctBoth renders in with the in-memory pair and with the whole parse
// into a SpoolSink, each on its own parse, and fails unless the outcome
// and the bytes are the same. It returns the output.
func ctBoth(t *testing.T, name string, in []byte) []byte {
	t.Helper()
	want, ok := ctWhole(t, name, in, resourcelist.NewMemorySink())
	// The pieces in memory (no spool: a read-only temporary directory)
	// and in the spool's file.
	for _, sp := range []*resourcelist.Spool{nil, testSpool(t)} {
		got, okC := ctWhole(t, name, in, resourcelist.NewSpoolSink(sp))
		if ok != okC || !bytes.Equal(got, want) {
			t.Fatalf("%s: SpoolSink (ok %v, spool %v) differs from MemorySink (ok %v): %s\n--- input\n%s", name, okC, sp != nil, ok, testenv.FirstDifference(got, want), in)
		}
	}
	return want
}

// ctList is a ResourceList of the objects of files (name -> text), each
// annotated with its file and index as kpt hands a package over, files
// in kpt's order (by name), and an optional functionConfig.
func ctList(t *testing.T, files map[string]string, config string) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	for _, n := range names {
		objs, err := resourcelist.Objects(n, []byte(files[n]))
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range objs {
			for _, kv := range [][2]string{{"internal.config.kubernetes.io/path", n}, {"internal.config.kubernetes.io/index", fmt.Sprint(i)}} {
				if err := o.SetAnnotation(kv[0], kv[1]); err != nil {
					t.Fatal(err)
				}
			}
			rl.Items = append(rl.Items, o)
		}
	}
	if config != "" {
		objs, err := resourcelist.Objects("config", []byte(config))
		if err != nil || len(objs) != 1 {
			t.Fatalf("config: %v", err)
		}
		rl.FunctionConfig = objs[0]
	}
	var b bytes.Buffer
	if err := resourcelist.Write(&b, rl); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ctDir reads the YAML files of a package directory (not the Kptfile,
// which is local config either way, nor kustomize's expected output).
func ctDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || strings.HasPrefix(d.Name(), ".") || d.Name() == "expected.yaml" {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCompactSameBytesGolden: every golden list of pkg/transform, and the
// function's own output of it rendered again.
func TestCompactSameBytesGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden*/*")
	if err != nil || len(dirs) < 25 {
		t.Fatalf("found %d golden cases (%v)", len(dirs), err)
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			res, err := os.ReadFile(filepath.Join(dir, "resources.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			config, _ := os.ReadFile(filepath.Join(dir, "_fnconfig.yaml"))
			in := ctList(t, map[string]string{"resources.yaml": string(res)}, string(config))
			out := ctBoth(t, "first render", in)
			ctBoth(t, "second render", out)
			expected, err := os.ReadFile(filepath.Join(dir, "_expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			ctBoth(t, "_expected.yaml", expected)
		})
	}
}

// TestCompactSameBytesPackages: every kpt test package and example, as
// kpt hands it over, rendered, and its output rendered again (generated
// objects then replace the input's, before or after their JobSet).
func TestCompactSameBytesPackages(t *testing.T) {
	dirs, err := filepath.Glob("../../test/kpt/testdata/cases/*")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, examples...)
	if len(dirs) < 15 {
		t.Fatalf("found %d packages", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files := ctDir(t, dir)
			if len(files) == 0 {
				t.Skip("no YAML")
			}
			out := ctBoth(t, "first render", ctList(t, files, ""))
			ctBoth(t, "second render", out)
		})
	}
}

// ctJobSet is a Flux JobSet of a package file.
func ctJobSet(name, namespace, extra string) string {
	return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: ` + name + `
  namespace: ` + namespace + `
  annotations:
    flux-framework.org/enabled: "true"` + extra + `
spec:
  replicatedJobs:
    - name: w
      template:
        spec:
          completions: 2
          template:
            spec:
              containers:
                - name: app
                  image: busybox
                  command: [run]
`
}

// TestCompactSameBytesPruneAndPaths: the lists where compacting must keep
// trees or encode again: a renamed JobSet's orphans (removed), an orphan
// another object still names (kept), a shared CURVE Secret, and two
// JobSets of one name in two namespaces in one file (moved to free
// files).
func TestCompactSameBytesPruneAndPaths(t *testing.T) {
	first := ctBoth(t, "render", ctList(t, map[string]string{"js.yaml": ctJobSet("old", "hpc", "")}, ""))
	renamed := bytes.ReplaceAll(first, []byte("name: old\n"), []byte("name: new\n"))
	if out := ctBoth(t, "renamed: orphans removed", renamed); !bytes.Contains(out, []byte("message: 'removed: jobset-flux generated this ConfigMap")) {
		t.Fatalf("the orphans were not removed, the case tests nothing:\n%s", out)
	}
	kept := bytes.Replace(renamed, []byte("items:\n"), []byte("items:\n"+ctPodItem()), 1)
	if out := ctBoth(t, "renamed, an orphan still named: kept", kept); !bytes.Contains(out, []byte("still refers to it at spec.volumes[0].configMap.name")) {
		t.Fatalf("the named orphan was not kept for its reference, the case tests nothing:\n%s", out)
	}
	shared := ctList(t, map[string]string{
		"a.yaml":      ctJobSet("a", "hpc", ""),
		"b.yaml":      ctJobSet("b", "hpc", "\n    flux-framework.org/curve-secret: a-flux-curve"),
		"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a-flux-curve\n  namespace: hpc\n",
	}, "")
	ctBoth(t, "shared curve secret", shared)
	two := ctList(t, map[string]string{"js.yaml": ctJobSet("same", "one", "") + "---\n" + ctJobSet("same", "two", "")}, "")
	out := ctBoth(t, "one name, two namespaces", two)
	if !bytes.Contains(out, []byte("configmap_two_same-flux-entrypoint.yaml")) {
		t.Fatalf("no object was moved to a free file, the case tests nothing:\n%s", out)
	}
	ctBoth(t, "one name, two namespaces, again", out)
}

// ctPodItem is a Pod item that mounts the ConfigMap generated for "old".
func ctPodItem() string {
	return `- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: hpc}
  spec:
    volumes: [{name: v, configMap: {name: old-flux-entrypoint}}]
`
}

// ctSink records the order in which items reach a Sink.
type ctSink struct {
	resourcelist.Sink
	put []*resourcelist.Meta
}

func (s *ctSink) Put(at int, rec *resourcelist.Meta, obj *fn.KubeObject) {
	s.put = append(s.put, rec)
	s.Sink.Put(at, rec, obj)
}

// TestRenderHoldsNothing: an item goes to the sink as soon as the loop
// is done with it, with a record that keeps only what Keeps allows; a
// Secret of the input, which a later JobSet may read, is asked of the
// source again rather than held.
func TestRenderHoldsNothing(t *testing.T) {
	in := ctList(t, map[string]string{
		"0-secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  k: dmFsdWU=\n",
		"a.yaml":        ctJobSet("a", "hpc", ""),
		"deploy.yaml":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations: {team: hpc}\nspec:\n  replicas: 3\n",
	}, "")
	sink := &ctSink{Sink: resourcelist.NewSpoolSink(testSpool(t))}
	out, ok := ctWhole(t, "render", in, sink)
	if !ok || !bytes.Contains(out, []byte("dmFsdWU=")) {
		t.Fatalf("render failed or lost the Secret:\n%s", out)
	}
	var kinds []string
	for _, rec := range sink.put {
		kinds = append(kinds, rec.Kind+"/"+rec.Name)
		if rec.Annotation("team") != "" {
			t.Errorf("%s %s: its record kept more than Keeps allows: %v", rec.Kind, rec.Name, rec.Annotations())
		}
	}
	if len(kinds) != 5 || kinds[0] != "Secret/s" || kinds[len(kinds)-1] != "Deployment/d" {
		t.Errorf("items reached the sink in the order %v; want the input Secret first, as the loop takes it, and the Deployment last", kinds)
	}
}
