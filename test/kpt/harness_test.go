package kpt

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

const (
	// exampleSeed is the public seed examples/*/expected.yaml is rendered
	// with (the Makefile's EXAMPLE_SEED). TestMain exports it, so every kpt
	// the tests start passes it to the function.
	exampleSeed = "jobset-flux-example-seed-0123456789abcdef"
	seedEnv     = "JOBSET_FLUX_KEY_SEED"
	seedFileEnv = "JOBSET_FLUX_KEY_SEED_FILE"
)

// setup is what TestMain found; tests report its problem when they start.
var setup struct {
	root, bin, fn, kpt string
	problem            error
}

func TestMain(m *testing.M) {
	setup.problem = findTools()
	if setup.problem == nil {
		// The runner starts kpt with this process's environment, and kpt
		// passes it on to exec functions.
		os.Setenv("PATH", setup.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		os.Unsetenv(seedFileEnv)
		os.Setenv(seedEnv, exampleSeed)
	}
	os.Exit(m.Run())
}

func findTools() error {
	root, err := testsupport.RepoRoot()
	if err != nil {
		return err
	}
	setup.root, setup.bin = root, filepath.Join(root, "bin")
	setup.fn = filepath.Join(setup.bin, "jobset-flux")
	if err := testsupport.Executable(setup.fn); err != nil {
		return fmt.Errorf("%s is missing or not executable (run `make build`, or `make test-kpt`): %v", setup.fn, err)
	}
	// The pinned kpt (test/kpt/cmd/kpt, built by `make bin/kpt`), never
	// one that happens to be on PATH: TestMain puts bin/ first on PATH,
	// where kpt's e2e runner looks it up.
	setup.kpt = filepath.Join(setup.bin, "kpt")
	if err := testsupport.Executable(setup.kpt); err != nil {
		return fmt.Errorf("%s is missing or not executable (run `make bin/kpt`, or `make test-kpt`): %v", setup.kpt, err)
	}
	return nil
}

// needTools stops the test when a binary is missing: a failure under
// CI=true (CI must never skip), a skip elsewhere.
func needTools(t *testing.T) {
	t.Helper()
	if setup.problem != nil {
		testsupport.SkipOrFail(t, "%v", setup.problem)
	}
}

// examples lists the example packages: examples/*/ with a Kptfile.
func examples(t *testing.T) []string {
	t.Helper()
	kptfiles, err := filepath.Glob(filepath.Join(setup.root, "examples", "*", "Kptfile"))
	if err != nil {
		t.Fatal(err)
	}
	if len(kptfiles) == 0 {
		t.Fatal("no examples/*/Kptfile")
	}
	var dirs []string
	for _, k := range kptfiles {
		dirs = append(dirs, filepath.Dir(k))
	}
	return dirs
}

// notInPackage are files of an example directory that are not part of its
// kpt package: expected.yaml is kustomize's rendered output, which the
// examples' .krmignore hides from kpt. Copies leave it out, so that only
// TestExamplePackagesAsShipped depends on that .krmignore.
var notInPackage = []string{"expected.yaml"}

// copyPackage copies the example package src (without notInPackage) into
// dst, which must not exist.
func copyPackage(t *testing.T, src, dst string) {
	t.Helper()
	testsupport.CopyTree(t, src, dst, func(rel string) bool { return !slices.Contains(notInPackage, rel) })
}

// snapshot reads every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// changes lists the files that differ between two snapshots.
func changes(before, after map[string][]byte) []string {
	var out []string
	for name, data := range after {
		if old, ok := before[name]; !ok {
			out = append(out, "added "+name)
		} else if !bytes.Equal(old, data) {
			out = append(out, "changed "+name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			out = append(out, "removed "+name)
		}
	}
	slices.Sort(out)
	return out
}

// result is how a kpt command ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// kpt runs the kpt binary with args in dir (the environment TestMain set
// up, plus extraEnv); only a failure to start it fails the test.
func kpt(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(setup.kpt, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("kpt %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// seeded is this process's environment (seed set by TestMain).
func seeded() []string { return os.Environ() }

// unseeded is this process's environment without any key seed, so the
// function would make a random key for every Secret it generates.
func unseeded() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, seedEnv+"=") || strings.HasPrefix(kv, seedFileEnv+"=")
	})
}

// mustKpt is kpt that must exit 0.
func mustKpt(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	r := kpt(t, dir, env, args...)
	if r.code != 0 {
		t.Fatalf("kpt %s: %v", strings.Join(args, " "), r)
	}
	return r
}
