package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/hack/kube/registry/oci"
)

const imagesDir = "../../../images" // hack/kube/images

func TestRun(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/bin/tool", "b/etc/conf"} {
		path := filepath.Join(dir, "src", f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := `{"mtime": "2026-01-01T00:00:00Z", "gzip": true,
	  "layers": {"a": {"root": "${SRC}/a"}, "b": {"root": "${SRC}/b", "normalize": true}, "unused": {"root": "/nonexistent"}},
	  "images": [
	    {"ref": "jobset-flux.test/two:1", "layers": ["a", "b"], "config": {"Cmd": ["bash"]}},
	    {"ref": "docker.io/library/one:1", "layers": ["a"], "config": {"Entrypoint": ["/bin/tool"]}}
	  ]}`
	specPath := filepath.Join(dir, "images.json")
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SRC", filepath.Join(dir, "src"))
	out := filepath.Join(dir, "out")
	if err := run(specPath, out); err != nil {
		t.Fatal(err)
	}
	refs, err := os.ReadFile(filepath.Join(out, "refs.txt"))
	if err != nil || string(refs) != "docker.io/library/one:1\njobset-flux.test/two:1\n" {
		t.Errorf("refs.txt %q (%v), want both references sorted", refs, err)
	}
	layout := oci.Layout{Dir: filepath.Join(out, "oci")}
	idx, err := layout.ReadIndex()
	if err != nil || len(idx.Manifests) != 2 {
		t.Fatalf("index.json: %+v %v", idx, err)
	}
	one, _ := layout.ReadManifest(idx.Manifests[0])
	two, _ := layout.ReadManifest(idx.Manifests[1])
	if len(one.Layers) != 1 || len(two.Layers) != 2 || one.Layers[0].Digest != two.Layers[0].Digest {
		t.Errorf("layers %+v and %+v: want layer a once, shared", one.Layers, two.Layers)
	}
	// Same spec, same bytes: a second run into another directory agrees.
	again := filepath.Join(dir, "again")
	if err := run(specPath, again); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(out, "oci/index.json"))
	b, _ := os.ReadFile(filepath.Join(again, "oci/index.json"))
	if string(a) != string(b) {
		t.Errorf("index.json differs between two runs:\n%s\n%s", a, b)
	}
}

func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	spec := `{"mtime": "2026-01-01T00:00:00Z", "layers": {"a": {"root": "${UNSET_FOR_TEST}/a"}},
	  "images": [{"ref": "x.test/a:1", "layers": ["a", "missing"]}, {"ref": "x.test/a:1", "layers": ["a"]}]}`
	path := filepath.Join(dir, "images.json")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("UNSET_FOR_TEST")
	_, err := readSpec(path)
	for _, want := range []string{`no layer "missing"`, "listed twice", "UNSET_FOR_TEST not set"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("readSpec: %v, want an error saying %q", err, want)
		}
	}
}

// TestImagesSpec checks the project's own spec: images.txt lists exactly
// its roles and references (tests read images.txt without a build), the
// roles the tests rely on are there, every reference is full, and layer
// roots use only the variables build.sh sets.
func TestImagesSpec(t *testing.T) {
	for name, v := range map[string]string{"BASE_ROOT": "/b", "VIEW": "/v", "STANDINS": "/s", "STAGE": "/t", "MPI_LAYER": "/m"} {
		t.Setenv(name, v)
	}
	spec, err := readSpec(filepath.Join(imagesDir, "images.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fromSpec []string
	roles := map[string]bool{}
	for _, img := range spec.Images {
		fromSpec = append(fromSpec, img.Role+" "+img.Ref)
		roles[img.Role] = true
		if host, _, _ := strings.Cut(img.Ref, "/"); !strings.Contains(host, ".") {
			t.Errorf("%s: not a full reference", img.Ref)
		}
	}
	data, err := os.ReadFile(filepath.Join(imagesDir, "images.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var fromFile []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			fromFile = append(fromFile, strings.Join(strings.Fields(line), " "))
		}
	}
	sort.Strings(fromSpec)
	sort.Strings(fromFile)
	if strings.Join(fromSpec, "\n") != strings.Join(fromFile, "\n") {
		t.Errorf("images.txt:\n%s\nimages.json says:\n%s", strings.Join(fromFile, "\n"), strings.Join(fromSpec, "\n"))
	}
	for _, role := range []string{"view-full", "view-core-only", "debian", "pause"} {
		if !roles[role] {
			t.Errorf("no image with role %s", role)
		}
	}
	for name, ls := range spec.Layers {
		if rel, ok := strings.CutPrefix(ls.Root, "/s/"); ok {
			if _, err := os.Stat(filepath.Join(imagesDir, "standins", rel)); err != nil {
				t.Errorf("layer %s: %v", name, err)
			}
		}
	}
}
