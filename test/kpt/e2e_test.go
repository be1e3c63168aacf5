package kpt

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"github.com/kptdev/kpt/pkg/test/runner"
)

// updateEnv is the runner's switch for rewriting diff.patch and
// results.yaml; here the rewritten files are copied back into testdata.
const updateEnv = "KPT_E2E_UPDATE_EXPECTED"

// TestE2E runs kpt's e2e runner over staged copies of:
//   - every example package, once with testdata/examples/<name>/render/.expected
//     (kpt fn render) and once with .../eval/.expected (kpt fn eval);
//   - every package in testdata/cases.
//
// The runner copies each case into a git repository, runs kpt, compares the
// exit code, stderr, `git diff` (.expected/diff.patch) and the results file
// (.expected/results.yaml, when present), then runs kpt again on the result
// and checks the diff is still the same: the idempotency gate. Every case
// must hold a results.yaml (the runner compares one only when it exists),
// and checkSecondRunSame then runs it twice more to check what the runner
// does not: the second run's results, and a second run after a first one
// that fails on purpose.
func TestE2E(t *testing.T) {
	needTools(t)
	update := strings.EqualFold(os.Getenv(updateEnv), "true")
	if update && testsupport.CI() {
		// With it the runner rewrites the expectations instead of
		// comparing them, so every case would pass.
		t.Fatalf("%s=true under CI=true: CI compares the expectations, `make kpt-expected` rewrites them", updateEnv)
	}
	staged := t.TempDir()
	source := map[string]string{} // staged case -> its testdata directory

	for _, pkg := range examples(t) {
		name := filepath.Base(pkg)
		for _, mode := range []string{runner.CommandFnRender, runner.CommandFnEval} {
			src := filepath.Join("testdata", "examples", name, mode)
			if _, err := os.Stat(filepath.Join(src, ".expected", "config.yaml")); err != nil {
				t.Errorf("example %s has no kpt e2e case: add %s/.expected/config.yaml (see another example's)", name, src)
				continue
			}
			dst := filepath.Join(staged, "examples", mode, name)
			copyPackage(t, pkg, dst)
			testsupport.CopyTree(t, src, dst, nil)
			source[dst] = src
		}
	}
	caseDirs, err := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range caseDirs {
		dst := filepath.Join(staged, "cases", filepath.Base(src))
		testsupport.CopyTree(t, src, dst, nil)
		source[dst] = src
	}
	for dst, src := range source {
		checkCaseFiles(t, src)
		ignoreExpected(t, dst)
	}
	resolveExecPaths(t, staged)

	cases, err := runner.ScanTestCases(staged)
	if err != nil {
		t.Fatal(err)
	}
	if len(*cases) != len(source) {
		var found []string
		for _, c := range *cases {
			found = append(found, c.Path)
		}
		t.Fatalf("the runner found %d cases, %d were staged: %v", len(*cases), len(source), found)
	}
	for _, c := range *cases {
		rel, _ := filepath.Rel(staged, c.Path)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			r, err := runner.NewRunner(t, c, c.Config.TestType)
			if err != nil {
				t.Fatal(err)
			}
			if r.Skip() {
				t.Fatal("skip: true is not allowed here: every case must run")
			}
			if u := unsupported(c); len(u) > 0 {
				t.Fatalf("the case uses %v, which checkSecondRunSame would not repeat: extend caseArgs first", u)
			}
			if err := r.Run(); err != nil {
				t.Fatalf("%v\n(after an intended change, rewrite the expectations with `make kpt-expected` and read the diff)", err)
			}
			if update {
				// The runner returns after the first run when it
				// rewrites the expectations.
				copyBack(t, c.Path, source[c.Path])
				return
			}
			checkSecondRunSame(t, c)
		})
	}
}

// ignoreExpected makes sure the case's .krmignore lists .expected: kpt
// reads every YAML file of a package, hidden directories included, and
// would fail on .expected/config.yaml, which is not a KRM resource.
func ignoreExpected(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, ".krmignore")
	data, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == ".expected" {
			return
		}
	}
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	if err := os.WriteFile(p, append(data, ".expected\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

var execPathLine = regexp.MustCompile(`(?m)^execPath:\s*(\S+)\s*$`)

// execLine is the function's name in a results file, as committed.
var execLine = regexp.MustCompile(`(?m)^(\s*- exec: )jobset-flux$`)

// resolveExecPaths rewrites `execPath: NAME` (a bare name) in every staged
// .expected/config.yaml, and `exec: NAME` in its results.yaml, to NAME's
// absolute path on PATH (copyBack turns it back, so the committed results
// hold no path of one machine). The runner would
// resolve a relative execPath against the .expected directory, where no
// binary is; a name on PATH is what users type.
func resolveExecPaths(t *testing.T, dir string) {
	t.Helper()
	configs, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", ".expected", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join(dir, "cases", "*", ".expected", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range append(configs, more...) {
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := execPathLine.FindSubmatch(data)
		if m == nil || strings.Contains(string(m[1]), "/") {
			continue
		}
		if string(m[1]) != filepath.Base(setup.fn) {
			t.Fatalf("%s: execPath %s is not the function under test (%s)", cfg, m[1], filepath.Base(setup.fn))
		}
		data = execPathLine.ReplaceAll(data, []byte("execPath: "+setup.fn))
		if err := os.WriteFile(cfg, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// kpt names the function in the results by the path it ran.
		res := filepath.Join(filepath.Dir(cfg), resultsFile)
		data, err = os.ReadFile(res)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(res, execLine.ReplaceAll(data, []byte("${1}"+setup.fn)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// copyBack copies the runner's rewritten expectations from a staged case
// into its testdata directory.
func copyBack(t *testing.T, staged, src string) {
	t.Helper()
	for _, f := range []string{"diff.patch", "results.yaml"} {
		data, err := os.ReadFile(filepath.Join(staged, ".expected", f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte("- exec: "+setup.fn+"\n"), []byte("- exec: "+filepath.Base(setup.fn)+"\n"))
		if err := os.WriteFile(filepath.Join(src, ".expected", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("rewrote %s/.expected", src)
}
