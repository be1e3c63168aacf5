package helm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// testSeed is the key seed the renders share, so the CURVE Secret of
// every render of a chart is the same. It is public: the releases live
// only in tests.
const testSeed = "jobset-flux-helm-test-seed-0123456789abcdef"

// env is the tools, found once by TestMain; a test reports problem when
// it needs them.
var env struct {
	repo, fn, kustomize, helm3, helm4 string
	problem                           error
}

func TestMain(m *testing.M) {
	env.problem = findTools()
	os.Exit(m.Run())
}

func findTools() error {
	repo, err := testsupport.RepoRoot()
	if err != nil {
		return err
	}
	env.repo = repo
	bin := filepath.Join(repo, "bin")
	env.fn = envOr("JOBSET_FLUX_BIN", filepath.Join(bin, "jobset-flux"))
	env.kustomize = envOr("KUSTOMIZE_BIN", filepath.Join(bin, "kustomize"))
	env.helm3 = envOr("HELM3_BIN", filepath.Join(bin, "helm3"))
	env.helm4 = envOr("HELM4_BIN", filepath.Join(bin, "helm4"))
	for _, p := range []*string{&env.fn, &env.kustomize, &env.helm3, &env.helm4} {
		// Absolute: the tests run tools from other directories.
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
		if err := testsupport.Executable(*p); err != nil {
			return fmt.Errorf("%w (run make build bin/kustomize bin/helm3 bin/helm4, or make test-helm)", err)
		}
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// needTools fails the test under CI=true, and skips it elsewhere, when a
// tool is missing.
func needTools(t *testing.T) {
	t.Helper()
	if env.problem != nil {
		testsupport.SkipOrFail(t, "%v", env.problem)
	}
}

// helm is one Helm major version with its own, empty home: its plugins,
// config, cache and data directories are the test's, never the user's.
type helm struct {
	t     *testing.T
	major int
	bin   string
	home  string
	// seed is the key seed in the post-renderer's environment; "" for none.
	seed string
	// kubeconfig is the cluster's, for install, upgrade and uninstall.
	kubeconfig string
}

// newHelm makes a Helm of the given major version (3 or 4) with a fresh
// home; Helm 4 gets the repository's plugin installed into it.
func newHelm(t *testing.T, major int) *helm {
	t.Helper()
	needTools(t)
	h := &helm{t: t, major: major, bin: env.helm3, home: t.TempDir(), seed: testSeed}
	if major == 4 {
		h.bin = env.helm4
		plugin := filepath.Join(env.repo, "deploy/helm/jobset-flux")
		if out, stderr, code := h.run("plugin", "install", plugin); code != 0 {
			t.Fatalf("helm plugin install %s: exit %d\n%s%s", plugin, code, out, stderr)
		}
	}
	return h
}

// environ is Helm's environment: the function first on PATH (Helm 3's
// --post-renderer and the plugin's script find it there), Helm's
// directories in the test's home, the key seed.
func (h *helm) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HELM_") || strings.HasPrefix(k, "JOBSET_FLUX_KEY_SEED") || k == "PATH" || k == "KUBECONFIG" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"PATH="+filepath.Dir(env.fn)+string(os.PathListSeparator)+os.Getenv("PATH"),
		// helm 4.3.2's plugin install writes into $HELM_DATA_HOME/plugins
		// whatever HELM_PLUGINS says, and plugin lookup reads HELM_PLUGINS:
		// the two must be the same directory.
		"HELM_PLUGINS="+filepath.Join(h.home, "data", "plugins"),
		"HELM_CONFIG_HOME="+filepath.Join(h.home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(h.home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(h.home, "data"),
	)
	if h.seed != "" {
		out = append(out, "JOBSET_FLUX_KEY_SEED="+h.seed)
	}
	if h.kubeconfig != "" {
		out = append(out, "KUBECONFIG="+h.kubeconfig)
	}
	return out
}

// run runs helm and returns its stdout, stderr and exit code.
func (h *helm) run(args ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			h.t.Fatalf("helm%d %s: %v", h.major, strings.Join(args, " "), err)
		}
		return out.String(), errb.String(), ee.ExitCode()
	}
	return out.String(), errb.String(), 0
}

// must runs helm and fails the test unless it exits 0.
func (h *helm) must(args ...string) string {
	h.t.Helper()
	out, stderr, code := h.run(args...)
	if code != 0 {
		h.t.Fatalf("helm%d %s: exit %d\n%s", h.major, strings.Join(args, " "), code, stderr)
	}
	return out
}

// postRender is the flags that run jobset-flux on a render, with the
// function's own arguments fnArgs: Helm 3 runs the binary by path with
// the arguments in order ("-" last: stdin); Helm 4 runs the plugin,
// which puts the "-" after them itself.
func (h *helm) postRender(fnArgs ...string) []string {
	if h.major == 3 {
		fnArgs = append(fnArgs, "-")
		args := []string{"--post-renderer", env.fn}
		for _, a := range fnArgs {
			args = append(args, "--post-renderer-args", a)
		}
		return args
	}
	args := []string{"--post-renderer", "jobset-flux"}
	for _, a := range fnArgs {
		args = append(args, "--post-renderer-args", a)
	}
	return args
}
