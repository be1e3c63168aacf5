package transform_test

// Issue 19, class 8: ProcessCompact and WriteCompacted (what the command
// runs) write exactly the bytes of Process and Write (what it ran
// before), on every golden list, its re-render, every kpt test package
// and example as kpt hands them over, and the lists where compacting must
// keep a tree: orphans pruned or kept for a reference, a shared CURVE
// Secret, generated objects placed before and after their JobSet, and
// objects moved to a free file.

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
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// ctBoth renders in with Process + Write and with ProcessCompact +
// WriteCompacted, each on its own parse, and fails unless the outcome and
// the bytes are the same. It returns the output.
func ctBoth(t *testing.T, name string, in []byte) []byte {
	t.Helper()
	p := hProcessor(t)
	rl, err := resourcelist.Parse(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ok, err := p.Process(rl)
	if err != nil {
		t.Fatalf("%s: Process: %v", name, err)
	}
	resourcelist.Sort(rl.Items)
	var want bytes.Buffer
	if err := resourcelist.Write(&want, rl); err != nil {
		t.Fatalf("%s: Write: %v", name, err)
	}
	// The pieces in memory (no spool: a read-only temporary directory)
	// and in the spool's file.
	for _, sp := range []*resourcelist.Spool{nil, testSpool(t)} {
		rl, err = resourcelist.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		okC, c, err := p.ProcessCompact(rl, sp)
		if err != nil {
			t.Fatalf("%s: ProcessCompact: %v", name, err)
		}
		c.Sort(rl.Items)
		var got bytes.Buffer
		if err := resourcelist.WriteCompacted(&got, rl, c); err != nil {
			t.Fatalf("%s: WriteCompacted: %v", name, err)
		}
		if ok != okC || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%s: compacted (ok %v, spool %v) differs from Process + Write (ok %v): %s\n--- input\n%s", name, okC, sp != nil, ok, testenv.FirstDifference(got.Bytes(), want.Bytes()), in)
		}
	}
	return want.Bytes()
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

// TestCompactLeavesStubs: after ProcessCompact, an item the function is
// done with is a stub (its metadata only: the tree is gone), and the
// items something reads later stay whole: a Secret of the input.
func TestCompactLeavesStubs(t *testing.T) {
	in := ctList(t, map[string]string{
		"a.yaml":      ctJobSet("a", "hpc", ""),
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations: {team: hpc}\nspec:\n  replicas: 3\n",
		"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  k: dmFsdWU=\n",
	}, "")
	rl, err := resourcelist.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	ok, c, err := hProcessor(t).ProcessCompact(rl, testSpool(t))
	if err != nil || !ok {
		t.Fatalf("ProcessCompact: %v, %v", ok, err)
	}
	defer c.Release()
	kinds := map[string]bool{}
	for _, it := range rl.Items {
		m := c.Meta(it)
		kinds[m.GetKind()] = true
		switch {
		case m.GetKind() == "Secret" && m.GetName() == "s":
			if c.Has(it) || !strings.Contains(it.String(), "dmFsdWU=") {
				t.Errorf("the input Secret was compacted")
			}
		case !c.Has(it):
			t.Errorf("%s %s is not a stub:\n%s", m.GetKind(), m.GetName(), it.String())
		case m.GetAnnotation("team") != "":
			// A stub keeps only what stubKeeps allows (the Flux
			// annotation and the placement ones).
			t.Errorf("%s %s kept more than its metadata: %v", m.GetKind(), m.GetName(), m.GetAnnotations())
		}
	}
	for _, k := range []string{"Deployment", "JobSet", "ConfigMap", "Secret"} {
		if !kinds[k] {
			t.Errorf("no %s in the output: %v", k, kinds)
		}
	}
}
