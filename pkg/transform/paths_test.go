package transform_test

// Issue 19, class 5: every object the function writes into a kpt package
// gets a file no other object has, for every input kpt accepts.

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// pathJobSet is a selected JobSet placed in file, as kpt hands it over.
func pathJobSet(name, namespace, file string) string { return pathJobSetAt(name, namespace, file, 0) }

// pathJobSetAt is a JobSet that is document index of file.
func pathJobSetAt(name, namespace, file string, index int) string {
	meta := "  name: " + name + "\n"
	if namespace != "" {
		meta += "  namespace: " + namespace + "\n"
	}
	return "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n" + meta +
		"  annotations:\n    flux-framework.org/enabled: \"true\"\n" + placement(file, index) +
		"spec:\n  replicatedJobs:\n  - name: w\n    template:\n      spec:\n        completions: 2\n        template:\n          spec:\n            containers:\n            - {name: app, image: busybox:1.36, command: [app]}\n"
}

func placement(file string, index int) string {
	return fmt.Sprintf("    internal.config.kubernetes.io/path: %s\n    config.kubernetes.io/path: %s\n    internal.config.kubernetes.io/index: '%d'\n    config.kubernetes.io/index: '%d'\n", file, file, index, index)
}

// userFile is an object of the user's in file.
func userFile(kind, name, namespace, file string, index int) string {
	return "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: " + namespace + "\n  annotations:\n" + placement(file, index) + "data: {a: b}\n"
}

// files maps Kind/namespace/name of every item to its file.
func files(rl *fn.ResourceList) map[string]string {
	m := map[string]string{}
	for _, it := range rl.Items {
		m[it.GetKind()+"/"+it.GetNamespace()+"/"+it.GetName()] = it.GetAnnotation(kioutil.PathAnnotation)
	}
	return m
}

// kptAccepts is kpt's own check of a function's output
// (enforcePathInvariants in kpt's internal/fnruntime): no two objects of a
// package share a path and an index; a new object has no index.
func kptAccepts(rl *fn.ResourceList) error {
	seen := map[string]string{}
	for _, it := range rl.Items {
		p := it.GetAnnotation(kioutil.PathAnnotation)
		if p == "" {
			continue
		}
		at := path.Clean(p) + "#" + it.GetAnnotation(kioutil.IndexAnnotation)
		if other, dup := seen[at]; dup {
			return fmt.Errorf("%s and %s/%s are both at %s", other, it.GetKind(), it.GetName(), at)
		}
		if strings.HasPrefix(path.Clean(p), "../") {
			return fmt.Errorf("%s/%s is outside the package: %s", it.GetKind(), it.GetName(), p)
		}
		seen[at] = it.GetKind() + "/" + it.GetName()
	}
	return nil
}

// TestGeneratedPathsUnique: the files of generated objects, in the cases
// that clash and those that do not.
func TestGeneratedPathsUnique(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []string
		want map[string]string
	}{
		{"one name, two namespaces, one directory",
			[]string{pathJobSet("x", "a", "jobs/a.yaml"), pathJobSet("x", "b", "jobs/b.yaml")},
			map[string]string{"ConfigMap/a/x-flux-entrypoint": "jobs/configmap_a_x-flux-entrypoint.yaml", "Secret/a/x-flux-curve": "jobs/secret_a_x-flux-curve.yaml",
				"ConfigMap/b/x-flux-entrypoint": "jobs/configmap_b_x-flux-entrypoint.yaml", "Secret/b/x-flux-curve": "jobs/secret_b_x-flux-curve.yaml"}},
		{"one name, two namespaces, two directories: today's paths",
			[]string{pathJobSet("x", "a", "a/js.yaml"), pathJobSet("x", "b", "b/js.yaml")},
			map[string]string{"ConfigMap/a/x-flux-entrypoint": "a/configmap_x-flux-entrypoint.yaml", "ConfigMap/b/x-flux-entrypoint": "b/configmap_x-flux-entrypoint.yaml"}},
		{"one without a namespace keeps the plain name",
			[]string{pathJobSet("x", "", "js.yaml"), pathJobSetAt("x", "b", "js.yaml", 1)},
			map[string]string{"ConfigMap//x-flux-entrypoint": "configmap_x-flux-entrypoint.yaml", "ConfigMap/b/x-flux-entrypoint": "configmap_b_x-flux-entrypoint.yaml"}},
		{"the plain name is a user's file",
			[]string{pathJobSet("x", "a", "js.yaml"), userFile("ConfigMap", "notes", "a", "configmap_x-flux-entrypoint.yaml", 0)},
			map[string]string{"ConfigMap/a/x-flux-entrypoint": "configmap_a_x-flux-entrypoint.yaml", "ConfigMap/a/notes": "configmap_x-flux-entrypoint.yaml"}},
		{"the namespaced name is taken too",
			[]string{pathJobSet("x", "a", "js.yaml"), pathJobSetAt("x", "b", "js.yaml", 1), userFile("ConfigMap", "notes", "a", "configmap_a_x-flux-entrypoint.yaml", 0), userFile("ConfigMap", "more", "a", "configmap_a_x-flux-entrypoint.2.yaml", 0)},
			map[string]string{"ConfigMap/a/x-flux-entrypoint": "configmap_a_x-flux-entrypoint.3.yaml", "ConfigMap/b/x-flux-entrypoint": "configmap_b_x-flux-entrypoint.yaml"}},
		{"no namespace and the plain name taken",
			[]string{pathJobSet("x", "", "js.yaml"), userFile("Secret", "s", "", "secret_x-flux-curve.yaml", 0)},
			map[string]string{"Secret//x-flux-curve": "secret_x-flux-curve.2.yaml"}},
		{"the JobSet's own file has the plain name",
			[]string{pathJobSet("x", "a", "configmap_x-flux-entrypoint.yaml")},
			map[string]string{"ConfigMap/a/x-flux-entrypoint": "configmap_a_x-flux-entrypoint.yaml", "JobSet/a/x": "configmap_x-flux-entrypoint.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, docs := range [][]string{tc.docs, reversed(tc.docs)} {
				rl, ok, out := hRun(t, hProcessor(t), pItems("", docs...))
				if !ok {
					t.Fatalf("render failed:\n%s", hDump(rl))
				}
				if err := kptAccepts(rl); err != nil {
					t.Errorf("kpt would refuse the render: %v", err)
				}
				got := files(rl)
				for id, want := range tc.want {
					if got[id] != want {
						t.Errorf("%s is in %q, want %q (input order %v)", id, got[id], want, docs[0] == tc.docs[0])
					}
				}
				again, _ := rerender(t, hProcessor(t), out)
				if !mapsEqual(files(again), got) {
					t.Errorf("a second render moved files:\n%v\n%v", got, files(again))
				}
			}
		})
	}
}

func reversed(docs []string) []string {
	r := slices.Clone(docs)
	slices.Reverse(r)
	return r
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestNamespaceMoveKeepsFileName: a JobSet moved to another namespace in
// the same file frees its old objects' files by the same render (they are
// removed: the function wrote them and nothing names them), so the new
// objects take the plain names again rather than namespaced ones.
func TestNamespaceMoveKeepsFileName(t *testing.T) {
	rl, ok, _ := hRun(t, hProcessor(t), pItems("", pathJobSet("x", "a", "js.yaml")))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(rl))
	}
	var docs []string
	for i, it := range rl.Items {
		if it.GetKind() == "JobSet" {
			if err := it.SetNamespace("b"); err != nil {
				t.Fatal(err)
			}
		} else if err := it.SetAnnotation(kioutil.IndexAnnotation, "0"); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, rl.Items[i].String())
	}
	moved, ok, _ := hRun(t, hProcessor(t), pItems("", docs...))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(moved))
	}
	got := files(moved)
	want := map[string]string{"JobSet/b/x": "js.yaml", "ConfigMap/b/x-flux-entrypoint": "configmap_x-flux-entrypoint.yaml", "Secret/b/x-flux-curve": "secret_x-flux-curve.yaml"}
	if !mapsEqual(got, want) {
		t.Errorf("files after the move:\n%v\nwant\n%v\n%s", got, want, hDump(moved))
	}
	if err := kptAccepts(moved); err != nil {
		t.Error(err)
	}
}
