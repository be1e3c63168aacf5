package image

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// catalogURLPrefix is where metadata.yaml's URLs point: the repository's
// main branch.
const catalogURLPrefix = "https://github.com/jobset-flux/jobset-flux"

// TestCatalogMetadata: metadata.yaml, the catalog's entry, has every
// field the kpt functions catalog keeps; its image is the Makefile's
// (`make print-image`); its example packages are exactly the kpt
// packages under examples/, each with a kpt e2e case (test/kpt runs them
// twice). Needs no engine.
func TestCatalogMetadata(t *testing.T) {
	c := getConfig(t)
	data, err := os.ReadFile(filepath.Join(c.root, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fields := catalogFields(string(data))
	for _, key := range []string{"image", "description", "tags", "sourceURL", "examplePackageURLs", "emails", "license"} {
		if len(fields[key]) == 0 {
			t.Errorf("metadata.yaml has no %s", key)
		}
	}
	vars, err := makeVars(c.root, makeEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fields["image"], ","); got != vars["IMAGE"] {
		t.Errorf("metadata.yaml image %q, make print-image %q: change one of them", got, vars["IMAGE"])
	}
	if got := strings.Join(fields["license"], ","); got != "Apache-2.0" {
		t.Errorf("metadata.yaml license %q, want the SPDX id of LICENSE, Apache-2.0", got)
	}
	if got := strings.Join(fields["sourceURL"], ","); got != catalogURLPrefix {
		t.Errorf("metadata.yaml sourceURL %q, want %q", got, catalogURLPrefix)
	}
	var listed []string
	for _, u := range fields["examplePackageURLs"] {
		rel, ok := strings.CutPrefix(u, catalogURLPrefix+"/tree/main/")
		if !ok || !strings.HasPrefix(rel, "examples/") {
			t.Errorf("example %q is not a directory of examples/ on %s/tree/main", u, catalogURLPrefix)
			continue
		}
		listed = append(listed, filepath.Base(rel))
		if _, err := os.Stat(filepath.Join(c.root, rel, "Kptfile")); err != nil {
			t.Errorf("example %s is not a kpt package: %v", u, err)
		}
		for _, mode := range []string{"render", "eval"} {
			cfg := filepath.Join(c.root, "test/kpt/testdata/examples", filepath.Base(rel), mode, ".expected", "config.yaml")
			if _, err := os.Stat(cfg); err != nil {
				t.Errorf("example %s has no kpt e2e case: %v", u, err)
			}
		}
	}
	kptfiles, err := filepath.Glob(filepath.Join(c.root, "examples", "*", "Kptfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kptfiles {
		if name := filepath.Base(filepath.Dir(k)); !slices.Contains(listed, name) {
			t.Errorf("the kpt package examples/%s is not among metadata.yaml's examplePackageURLs", name)
		}
	}
}

// catalogFields reads the catalog's flat format: top-level `key: value`
// lines and `key:` followed by `  - item` lines, each key to its values.
func catalogFields(doc string) map[string][]string {
	fields := map[string][]string{}
	key := ""
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case strings.HasPrefix(trimmed, "- "):
			fields[key] = append(fields[key], strings.TrimSpace(strings.TrimPrefix(trimmed, "- ")))
		default:
			k, v, _ := strings.Cut(trimmed, ":")
			key = k
			if v = strings.TrimSpace(v); v != "" {
				fields[key] = append(fields[key], v)
			}
		}
	}
	return fields
}

func TestCatalogFields(t *testing.T) {
	got := catalogFields("# c\nimage: a/b:v1\ntags:\n  - x\n  - y\nurl: https://h/p\n")
	want := map[string][]string{"image": {"a/b:v1"}, "tags": {"x", "y"}, "url": {"https://h/p"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
}

// makeEnv is this process's environment without the release variables
// and make's own, so that make prints the Makefile's defaults.
func makeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "VERSION", "IMAGE", "IMAGE_REPO", "COMMIT":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// TestKptFnDoc: what kpt fn doc --image runs shows the function's --help:
// the image run with --help and an empty ResourceList on stdin
// (commands/fn/doc of kpt v1.0.0-beta.61), printing the forms of the
// command, every flag, the settings and the example. kpt itself is not
// run: that version also passes docker run a --stdin flag docker has
// never had ("unknown flag: --stdin", exit 125), so kpt fn doc fails with
// docker whatever the image; the run below is its command without it.
func TestKptFnDoc(t *testing.T) {
	c := needImage(t)
	empty := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
	out, err := output(t.Context(), "", nil, empty, "docker", "run", "--rm", "-i", c.image, "--help")
	if err != nil {
		t.Fatalf("docker run --rm -i %s --help: %v\n%s", c.image, err, out)
	}
	for _, want := range []string{"Usage:", "jobset-flux [flags] -", "-key-seed-file", "Settings:", "view-image (viewImage, string", "shm-size (shmSize, string", "Example:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the image's --help lacks %q:\n%s", want, out)
		}
	}
}
