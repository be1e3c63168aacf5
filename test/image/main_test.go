// Package image tests the jobset-flux container image for real: it inspects
// and runs the image with docker, and runs it as a KRM function through
// `kpt fn eval --image`, `kpt fn render` (Kptfile `image:`) and
// `kustomize build --enable-alpha-plugins` (`container:` function spec),
// comparing every output with the exec binary's on every example. It also
// builds the top-level Dockerfile offline (hack/image/dockerfile.sh) and
// checks that image against this one (TestDockerfile).
//
// `make image-test` builds the image (hack/image/build.sh, no engine), loads
// it into a docker engine and runs this package with the environment below.
// By hand: start an engine, `make image`, `docker load -i _out/image/image.tar`,
// then `cd test/image && go test ./...` (defaults come from `make print-image-vars`).
//
//	IMAGE            image under test (default: the Makefile's IMAGE)
//	IMAGE_VERSION    version the image must report (default: the Makefile's VERSION)
//	IMAGE_COMMIT     commit the image must report (default: the Makefile's COMMIT)
//	IMAGE_OUT        the build's output (OCI layout in oci/; default: the Makefile's)
//	JOBSET_FLUX_BIN  the exec binary to compare with (default ../../bin/jobset-flux)
//	KUSTOMIZE_BIN    (default ../../bin/kustomize)
//	KPT_BIN          (default kpt on PATH)
//	EXAMPLE_SEED     key seed for reproducible output
//	REPO_ROOT        (default ../..)
//
// With CI=true a missing engine, image or tool fails the tests; otherwise
// the tests that need it are skipped.
package image

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// seedEnv is the variable the function reads its key seed from.
const seedEnv = "JOBSET_FLUX_KEY_SEED"

// defaultSeed is the public seed the examples' expected output is made with.
const defaultSeed = "jobset-flux-example-seed-0123456789abcdef"

// commandTimeout bounds one docker, kpt or kustomize run.
const commandTimeout = 3 * time.Minute

type config struct {
	root      string
	image     string
	version   string
	commit    string
	out       string // the build's output directory
	bin       string // jobset-flux exec binary
	kustomize string
	kpt       string
	seed      string
}

var (
	cfgOnce sync.Once
	cfg     config
	cfgErr  error
)

func getConfig(t *testing.T) config {
	t.Helper()
	cfgOnce.Do(func() { cfg, cfgErr = loadConfig() })
	if cfgErr != nil {
		t.Fatalf("test configuration: %v", cfgErr)
	}
	return cfg
}

func loadConfig() (config, error) {
	root := os.Getenv("REPO_ROOT")
	var err error
	if root == "" {
		root, err = testsupport.RepoRoot()
	} else {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return config{}, err
	}
	c := config{
		root:      root,
		image:     os.Getenv("IMAGE"),
		version:   os.Getenv("IMAGE_VERSION"),
		commit:    os.Getenv("IMAGE_COMMIT"),
		out:       os.Getenv("IMAGE_OUT"),
		bin:       envOr("JOBSET_FLUX_BIN", filepath.Join(root, "bin", "jobset-flux")),
		kustomize: envOr("KUSTOMIZE_BIN", filepath.Join(root, "bin", "kustomize")),
		kpt:       envOr("KPT_BIN", "kpt"),
		seed:      envOr("EXAMPLE_SEED", defaultSeed),
	}
	if c.image == "" || c.version == "" || c.commit == "" || c.out == "" {
		vars, err := makeVars(root, os.Environ())
		if err != nil {
			return config{}, err
		}
		c.image = cmpOr(c.image, vars["IMAGE"])
		c.version = cmpOr(c.version, vars["VERSION"])
		c.commit = cmpOr(c.commit, vars["COMMIT"])
		c.out = cmpOr(c.out, vars["IMAGE_OUT"])
	}
	return c, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// makeVars runs `make print-image-vars` in the repository root with env.
func makeVars(root string, env []string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "--no-print-directory", "-C", root, "print-image-vars")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("make print-image-vars: %v\n%s", err, stderr.String())
	}
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("make print-image-vars: unexpected line %q", line)
		}
		vars[k] = v
	}
	for _, k := range []string{"IMAGE", "VERSION", "COMMIT", "IMAGE_OUT"} {
		if vars[k] == "" {
			return nil, fmt.Errorf("make print-image-vars: no %s in %q", k, out)
		}
	}
	return vars, nil
}

// unavailable fails the test in CI and skips it elsewhere.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	testsupport.SkipOrFail(t, format, args...)
}

var (
	dockerOnce sync.Once
	dockerErr  error
)

// needImage makes sure an engine answers and holds the image under test.
func needImage(t *testing.T) config {
	t.Helper()
	c := getConfig(t)
	dockerOnce.Do(func() {
		if _, err := exec.LookPath("docker"); err != nil {
			dockerErr = fmt.Errorf("no docker CLI on PATH")
			return
		}
		if _, err := output(context.Background(), "", nil, nil, "docker", "version", "--format", "{{.Server.Version}}"); err != nil {
			dockerErr = fmt.Errorf("no container engine answers (DOCKER_HOST=%q): %v", os.Getenv("DOCKER_HOST"), err)
			return
		}
		if _, err := output(context.Background(), "", nil, nil, "docker", "image", "inspect", "--format", "{{.Id}}", c.image); err != nil {
			dockerErr = fmt.Errorf("image %s is not in the engine (make image builds it): %v", c.image, err)
		}
	})
	if dockerErr != nil {
		unavailable(t, "%v", dockerErr)
	}
	return c
}

// needTool makes sure an executable (a path, or a name on PATH) exists.
func needTool(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		unavailable(t, "%s is missing (make build and make %s/bin/kustomize install the repository's tools): %v", path, getConfig(t).root, err)
	}
}

// output runs a command and returns its stdout; the error includes stderr.
func output(ctx context.Context, dir string, env []string, stdin []byte, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// run is output that fails the test on error.
func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := output(t.Context(), dir, env, nil, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withEnv returns the process environment with the given variables set
// (NAME=value) and the exec binary's directory first on PATH.
func (c config) withEnv(vars ...string) []string {
	env := []string{}
	set := map[string]bool{}
	for _, v := range vars {
		k, _, _ := strings.Cut(v, "=")
		set[k] = true
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case set[k]:
		case k == "PATH":
			env = append(env, "PATH="+filepath.Dir(c.bin)+string(os.PathListSeparator)+v)
		default:
			env = append(env, kv)
		}
	}
	return append(env, vars...)
}

// example is one examples/<name>/ directory.
type example struct {
	name, dir string
}

// examples lists the examples holding all of the given files.
func examples(t *testing.T, files ...string) []example {
	t.Helper()
	c := getConfig(t)
	entries, err := os.ReadDir(filepath.Join(c.root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var list []example
next:
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(c.root, "examples", e.Name())
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				continue next
			}
		}
		list = append(list, example{e.Name(), dir})
	}
	if len(list) == 0 {
		t.Fatalf("no example in %s/examples holds %v", c.root, files)
	}
	return list
}

// copyPackage copies an example's files (not expected.yaml, which holds
// rendered objects a package reader would take as input) into a new
// directory named name under a temporary directory.
func copyPackage(t *testing.T, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case rel == "expected.yaml" || !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// readTree maps every regular file below dir (relative, slash-separated)
// to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameTrees reports every file that differs between two package trees,
// ignoring the names in skip.
func sameTrees(t *testing.T, wantLabel string, want map[string]string, gotLabel string, got map[string]string, skip ...string) {
	t.Helper()
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if contains(skip, n) {
			continue
		}
		w, inWant := want[n]
		g, inGot := got[n]
		switch {
		case !inWant:
			t.Errorf("%s: only %s wrote it", n, gotLabel)
		case !inGot:
			t.Errorf("%s: only %s wrote it", n, wantLabel)
		case w != g:
			t.Errorf("%s differs (%s vs %s): %s", n, wantLabel, gotLabel, testsupport.FirstDifference(g, w))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
