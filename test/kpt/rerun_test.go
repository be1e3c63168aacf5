package kpt

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"github.com/kptdev/kpt/pkg/test/runner"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// resultsFile is the name kpt gives the file it writes into --results-dir.
const resultsFile = "results.yaml"

// checkSecondRunSame runs the staged case c twice more with the real kpt,
// the second run on the first run's output. The second run must change no
// file, end with the same exit codes and report the same findings: every
// warning and error of the first run exactly, the function's stderr
// unchanged, and no info result on a resource the first run said nothing
// about. Info results may lose what the first run did (the "set ..."
// clauses, "removed: ..." of an orphan): the function reports its changes,
// and a second run has none. kpt's runner runs a case twice as well, but
// compares only the first run's results and stops after a first run that
// fails on purpose; this closes both gaps.
func checkSecondRunSame(t *testing.T, c runner.TestCase) {
	t.Helper()
	pkg := filepath.Join(t.TempDir(), filepath.Base(c.Path))
	testsupport.CopyTree(t, c.Path, pkg, nil)
	var files [2]map[string][]byte
	var lists [2]resultList
	for i := range 2 {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("results-%d", i+1))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		out := kpt(t, "", caseEnv(c), caseArgs(t, c, pkg, dir)...)
		if out.code != c.Config.ExitCode {
			t.Fatalf("run %d: want exit code %d: %v", i+1, c.Config.ExitCode, out)
		}
		lists[i] = readResults(t, filepath.Join(dir, resultsFile))
		files[i] = snapshot(t, pkg)
	}
	if diff := changes(files[0], files[1]); len(diff) > 0 {
		t.Errorf("the second run changed the first run's output: %v", diff)
	}
	first, second := findings(t, lists[0]), findings(t, lists[1])
	if !slices.Equal(first.fixed, second.fixed) {
		t.Errorf("the second run's exit codes, stderr, warnings or errors differ from the first's:\n--- run 1\n%s\n--- run 2\n%s",
			strings.Join(first.fixed, "\n"), strings.Join(second.fixed, "\n"))
	}
	for ref := range second.informed {
		if !first.informed[ref] {
			t.Errorf("the second run reports info on %s, which the first run did not mention", ref)
		}
	}
}

// resultList is the part of kpt's results file (a FunctionResultList)
// the second-run check compares.
type resultList struct {
	ExitCode int `yaml:"exitCode"`
	Items    []struct {
		Exec     string           `yaml:"exec"`
		ExitCode int              `yaml:"exitCode"`
		Stderr   string           `yaml:"stderr"`
		Results  []map[string]any `yaml:"results"`
	} `yaml:"items"`
}

func readResults(t *testing.T, path string) resultList {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("kpt wrote no results: %v", err)
	}
	var l resultList
	if err := yaml.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return l
}

// runFindings is what a run must report again when run on its own output:
// fixed (exit codes, stderr, every non-info result, in order), and the
// resources it gave info results on.
type runFindings struct {
	fixed    []string
	informed map[string]bool
}

func findings(t *testing.T, l resultList) runFindings {
	t.Helper()
	f := runFindings{fixed: []string{fmt.Sprintf("exitCode %d", l.ExitCode)}, informed: map[string]bool{}}
	for _, it := range l.Items {
		f.fixed = append(f.fixed, fmt.Sprintf("%s exitCode %d stderr %q", it.Exec, it.ExitCode, it.Stderr))
		for _, r := range it.Results {
			if r["severity"] == "info" {
				f.informed[fmt.Sprint(r["resourceRef"])] = true
				continue
			}
			data, err := yaml.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			f.fixed = append(f.fixed, string(data))
		}
	}
	return f
}

// caseArgs is the kpt command line the runner builds for c (only the
// options the cases here use; stageCase refuses the others), on pkg and
// writing its results into resultsDir.
func caseArgs(t *testing.T, c runner.TestCase, pkg, resultsDir string) []string {
	t.Helper()
	cfg := c.Config
	switch cfg.TestType {
	case runner.CommandFnRender:
		args := []string{"fn", "render", pkg, "--results-dir", resultsDir}
		if cfg.AllowExec {
			args = append(args, "--allow-exec")
		}
		return args
	case runner.CommandFnEval:
		args := []string{"fn", "eval", pkg, "--results-dir", resultsDir, "--exec", cfg.EvalConfig.ExecPath}
		if cfg.EvalConfig.FnConfig != "" {
			// The runner resolves fnConfig against the case's .expected.
			args = append(args, "--fn-config", filepath.Join(pkg, ".expected", cfg.EvalConfig.FnConfig))
		}
		if len(cfg.EvalConfig.Args) > 0 {
			args = append(args, "--")
			for _, k := range slices.Sorted(maps.Keys(cfg.EvalConfig.Args)) {
				args = append(args, k+"="+cfg.EvalConfig.Args[k])
			}
		}
		return args
	}
	t.Fatalf("%s: testType %q is neither %s nor %s", c.Path, cfg.TestType, runner.CommandFnRender, runner.CommandFnEval)
	return nil
}

// caseEnv is this process's environment plus the case's env.
func caseEnv(c runner.TestCase) []string {
	env := os.Environ()
	for _, k := range slices.Sorted(maps.Keys(c.Config.Env)) {
		env = append(env, k+"="+c.Config.Env[k])
	}
	return env
}

// unsupported lists the options of c that caseArgs does not repeat: a case
// using one would have its second run checked under another command line.
func unsupported(c runner.TestCase) []string {
	var out []string
	cfg := c.Config
	for _, f := range []string{"setup.sh", "teardown.sh", "exec.sh"} {
		if _, err := os.Stat(filepath.Join(c.Path, ".expected", f)); err == nil {
			out = append(out, ".expected/"+f)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Path, "out")); err == nil {
		out = append(out, "out/ (out of place)")
	}
	if cfg.ImagePullPolicy != "" || cfg.AllowWasm || cfg.DisableOutputTruncate {
		out = append(out, "imagePullPolicy, allowWasm or disableOutputTruncate")
	}
	if e := cfg.EvalConfig; e != nil && (e.Image != "" || e.Network || e.IncludeMetaResources) {
		out = append(out, "image, network or includeMetaResources")
	}
	return out
}

// checkCaseFiles fails unless the case in testdata directory src holds
// every expectation file: results.yaml too, which the runner compares only
// when it exists, so a case without it would never check what the
// function reports.
func checkCaseFiles(t *testing.T, src string) {
	t.Helper()
	for _, f := range []string{"config.yaml", resultsFile} {
		if _, err := os.Stat(filepath.Join(src, ".expected", f)); err != nil {
			t.Errorf("%s has no .expected/%s (for results.yaml: create it empty, run `make kpt-expected`, then read it)", src, f)
		}
	}
}
