package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFunctionDefinitionImage: krmfunction.yaml advertises the image the
// Makefile builds and publishes. Make runs with the release variables and
// make's own flags removed from its environment, so the Makefile's defaults
// are compared, not a one-off override. Needs no engine.
func TestFunctionDefinitionImage(t *testing.T) {
	c := getConfig(t)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "VERSION", "IMAGE", "IMAGE_REPO", "COMMIT":
			continue
		}
		env = append(env, kv)
	}
	vars, err := makeVars(c.root, env)
	if err != nil {
		t.Fatal(err)
	}
	want := vars["IMAGE"]
	if !strings.HasSuffix(want, ":v"+vars["VERSION"]) {
		t.Errorf("Makefile IMAGE %q is not tagged v$(VERSION) (VERSION %q)", want, vars["VERSION"])
	}

	data, err := os.ReadFile(filepath.Join(c.root, "krmfunction.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, kv := range yamlScalars(string(data)) {
		if strings.HasSuffix(kv.path, "/runtime/container/image") {
			images = append(images, kv.value)
		}
	}
	if len(images) == 0 {
		t.Fatal("krmfunction.yaml: no spec.versions[].runtime.container.image")
	}
	for _, got := range images {
		if got != want {
			t.Errorf("krmfunction.yaml runtime.container.image = %q, the Makefile's IMAGE is %q: change one of them", got, want)
		}
	}
}

func TestYAMLScalars(t *testing.T) {
	doc := `# comment
spec:
  versions:
    - name: v1
      runtime:
        container:
          image: "a/b:v1" # trailing
        exec: {}
    - name: v2
      runtime:
        container:
          image: a/b:v2
  other:
    image: no
`
	var got []string
	for _, kv := range yamlScalars(doc) {
		got = append(got, kv.path+"="+kv.value)
	}
	want := []string{
		"/spec/versions/-/name=v1",
		"/spec/versions/-/runtime/container/image=a/b:v1",
		"/spec/versions/-/runtime/exec={}",
		"/spec/versions/-/name=v2",
		"/spec/versions/-/runtime/container/image=a/b:v2",
		"/spec/other/image=no",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type scalar struct{ path, value string }

// yamlScalars lists the `key: value` lines of a block-style YAML document
// with the path of keys above them ("-" for a sequence item). It is enough
// for krmfunction.yaml and keeps this module free of dependencies; block
// scalars' content lines are skipped.
func yamlScalars(doc string) []scalar {
	type level struct {
		indent int
		key    string
	}
	var stack []level
	var out []scalar
	blockIndent := -1 // inside a | or > block scalar deeper than this
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if blockIndent >= 0 {
			if indent > blockIndent {
				continue
			}
			blockIndent = -1
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if rest, ok := strings.CutPrefix(trimmed, "- "); ok {
			stack = append(stack, level{indent, "-"})
			indent += 2
			trimmed = rest
		}
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		if i := strings.Index(value, " #"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
		value = strings.Trim(value, `"'`)
		path := ""
		for _, l := range stack {
			path += "/" + l.key
		}
		path += "/" + key
		switch {
		case value == "":
			stack = append(stack, level{indent, key})
		case strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">"):
			blockIndent = indent
		default:
			out = append(out, scalar{path, value})
		}
	}
	return out
}
