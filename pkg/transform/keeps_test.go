package transform

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestKeepsIsEnough: a record answers "" for a label or annotation that
// Keeps does not keep, so Keeps must hold every one the function reads
// of a record. Every golden list (as plain files with its config, and
// its expected output rendered again) gives the same bytes and outcome
// with records that keep everything.
func TestKeepsIsEnough(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden*/*")
	if err != nil || len(dirs) < 25 {
		t.Fatalf("found %d golden cases (%v)", len(dirs), err)
	}
	p := newTestProcessor(t, Options{Seed: testSeed})
	render := func(name string, list func() *fn.ResourceList, keep resourcelist.MetaFilter) ([]byte, bool) {
		t.Helper()
		src, sink := resourcelist.NewWhole(list(), keep), resourcelist.NewSpoolSink(nil)
		results, ok, err := p.render(src, sink, keep)
		if err != nil {
			sink.Release()
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		if err := sink.Write(&b, src.FunctionConfig(), results); err != nil {
			t.Fatalf("%s: Write: %v", name, err)
		}
		return b.Bytes(), ok
	}
	for _, dir := range dirs {
		inputs := map[string]func() *fn.ResourceList{
			"resources.yaml": func() *fn.ResourceList { return keepsFiles(t, dir) },
			"_expected.yaml": func() *fn.ResourceList { return keepsParse(t, filepath.Join(dir, "_expected.yaml")) },
		}
		for name, list := range inputs {
			name = filepath.Join(dir, name)
			want, okWant := render(name, list, nil)
			got, ok := render(name, list, Keeps)
			if ok != okWant || !bytes.Equal(got, want) {
				t.Errorf("%s: with Keeps (ok %v) differs from records that keep everything (ok %v): %s", name, ok, okWant, testenv.FirstDifference(got, want))
			}
		}
	}
}

// keepsFiles is the list of a golden case's resources.yaml, with its
// _fnconfig.yaml as functionConfig when it has one.
func keepsFiles(t *testing.T, dir string) *fn.ResourceList {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "resources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	items, err := resourcelist.Objects("resources.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	rl := &fn.ResourceList{Items: items, FunctionConfig: fn.NewEmptyKubeObject()}
	if config, err := os.ReadFile(filepath.Join(dir, "_fnconfig.yaml")); err == nil {
		objs, err := resourcelist.Objects("_fnconfig.yaml", config)
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s/_fnconfig.yaml: %v", dir, err)
		}
		rl.FunctionConfig = objs[0]
	}
	return rl
}

// keepsParse parses a ResourceList file.
func keepsParse(t *testing.T, path string) *fn.ResourceList {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := resourcelist.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}
