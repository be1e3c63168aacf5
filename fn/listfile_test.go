package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
)

// Issue 19, class 6: a ResourceList read from a file is answered exactly
// as the same list on stdin (its functionConfig applied, its results
// kept, the same exit code), not unwrapped into plain objects rendered
// with the defaults.

const listHeader = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

// portConfig is a function config whose effect shows in the output.
var portConfig = functionConfig("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: \"9000\"}\n")

// earlierError is the results of an earlier function that failed.
const earlierError = `results:
- message: the earlier function found a problem
  severity: error
  resourceRef:
    apiVersion: v1
    kind: ConfigMap
    name: other
`

func listCases() map[string]string {
	return map[string]string{
		"functionConfig":           listHeader + "items:\n" + indentItem(goodJobSet) + portConfig,
		"typed functionConfig":     listHeader + "items:\n" + indentItem(goodJobSet) + functionConfig("apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {port: 9001, runOptions: [\"-o\", \"cpu-affinity=per-task\"]}\n"),
		"bad functionConfig":       listHeader + "items:\n" + indentItem(goodJobSet) + functionConfig("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: \"nine\"}\n"),
		"bad JobSet":               listHeader + "items:\n" + indentItem(goodJobSet) + indentItem(strings.Replace(badJobSet, "replicas: 2", "replicas: -1", 1)) + portConfig,
		"no functionConfig":        listHeader + "items:\n" + indentItem(goodJobSet) + indentItem(deployment),
		"earlier error result":     listHeader + "items:\n" + indentItem(goodJobSet) + portConfig + earlierError,
		"empty":                    listHeader + "items: []\n",
		"two documents":            listHeader + "items: []\n---\n" + listHeader + "items: []\n",
		"duplicate functionConfig": listHeader + "items:\n" + indentItem(goodJobSet) + portConfig + portConfig,
	}
}

func TestResourceListFileAsStdin(t *testing.T) {
	dir := t.TempDir()
	for name, in := range listCases() {
		for _, args := range [][]string{nil, {"-v"}} {
			t.Run(name+" "+strings.Join(args, " "), func(t *testing.T) {
				file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
				if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
					t.Fatal(err)
				}
				code, out, errs := runFn(t, args, in)
				fcode, fout, ferrs := runFn(t, append(args[:len(args):len(args)], file), "")
				if fcode != code || fout != out || ferrs != errs {
					t.Errorf("from the file: exit %d, %d bytes out, stderr %q\nfrom stdin:    exit %d, %d bytes out, stderr %q\nfile output:\n%s", fcode, len(fout), ferrs, code, len(out), errs, fout)
				}
				if name == "functionConfig" && !strings.Contains(fout, "9000") {
					t.Errorf("the functionConfig (port 9000) was not applied:\n%s", fout)
				}
				// The answer is a ResourceList, as from stdin (not plain YAML).
				if code != exitUsage && fout != "" && !strings.HasPrefix(fout, listHeader) {
					t.Errorf("the output is not a ResourceList:\n%s", fout)
				}
			})
		}
	}
}

// A list in a directory is that directory's one file; a list beside
// other inputs, or with --config, is refused (it carries its own config).
func TestResourceListFileAlone(t *testing.T) {
	dir := t.TempDir()
	in := listCases()["functionConfig"]
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	list := write("only/list.yaml", in)
	js := write("js.yaml", goodJobSet)
	cfg := write("cfg.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\n")

	code, out, _ := runFn(t, nil, in)
	dcode, dout, _ := runFn(t, []string{filepath.Dir(list)}, "")
	if dcode != code || dout != out {
		t.Errorf("a directory holding only the list: exit %d, output differs from stdin's (exit %d):\n%s", dcode, code, dout)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		phrase string
	}{
		{"with a JobSet file", []string{js, list}, list + " is a ResourceList"},
		{"in a directory with a JobSet", []string{dir + "/only", js}, "give it alone"},
		{"with --config", []string{"--config", cfg, list}, "a ResourceList in " + list + " carries its own functionConfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runFn(t, tc.args, "")
			if code != exitUsage || out != "" || !strings.Contains(stderr, tc.phrase) {
				t.Errorf("exit %d, %d bytes out, stderr %q; want exit %d and %q", code, len(out), stderr, exitUsage, tc.phrase)
			}
		})
	}
}

// TestCataloguesFromFileAsStdin: every hostile case, read from a file,
// gives the same exit code, stdout and stderr as on stdin (an input whose
// first document is not a ResourceList is plain YAML in a file, rendered
// as such: those are skipped).
func TestCataloguesFromFileAsStdin(t *testing.T) {
	dir := t.TempDir()
	for i, c := range append(catalogue(t), brokerCatalogue(t)...) {
		in := c.input(t)
		if !resourcelist.IsResourceList([]byte(in)) {
			continue // plain YAML in a file: rendered as such, by design
		}
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, fmt.Sprintf("case-%03d.yaml", i))
			if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runFn(t, nil, in)
			fcode, fout, ferrs := runFn(t, []string{file}, "")
			if fcode != code || fout != out || ferrs != errs {
				t.Errorf("from the file: exit %d, %d bytes, stderr %q\nfrom stdin:    exit %d, %d bytes, stderr %q", fcode, len(fout), ferrs, code, len(out), errs)
			}
		})
	}
}
