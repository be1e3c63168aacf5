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
)

const (
	// exampleSeed is the public seed examples/*/expected.yaml is rendered
	// with (the Makefile's EXAMPLE_SEED). TestMain exports it, so every kpt
	// the tests start passes it to the function.
	exampleSeed = "jobset-flux-example-seed-0123456789abcdef"
	seedEnv     = "JOBSET_FLUX_KEY_SEED"
	seedFileEnv = "JOBSET_FLUX_KEY_SEED_FILE"
	mainModule  = "module github.com/jobset-flux/jobset-flux"
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
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			first, _, _ := strings.Cut(string(data), "\n")
			if strings.TrimSpace(first) == mainModule {
				break
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return errors.New("no go.mod declaring " + mainModule + " above the working directory")
		}
		dir = parent
	}
	setup.root, setup.bin = dir, filepath.Join(dir, "bin")
	setup.fn = filepath.Join(setup.bin, "jobset-flux")
	if info, err := os.Stat(setup.fn); err != nil || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is missing or not executable (run `make build`, or `make test-kpt`): %v", setup.fn, err)
	}
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		return fmt.Errorf("kpt is not on PATH (the project's machines have /usr/bin/kpt 1.0.0-beta.56): %w", err)
	}
	setup.kpt = kpt
	return nil
}

// needTools stops the test when a binary is missing: a failure under
// CI=true (CI must never skip), a skip elsewhere.
func needTools(t *testing.T) {
	t.Helper()
	if setup.problem == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(setup.problem)
	}
	t.Skip(setup.problem)
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
	copyTree(t, src, dst, func(rel string) bool { return !slices.Contains(notInPackage, rel) })
}

// copyTree copies src into dst, keeping the files keep accepts (by path
// relative to src).
func copyTree(t *testing.T, src, dst string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if keep != nil && !keep(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s to %s: %v", src, dst, err)
	}
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
