package flux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// The runtime tests render JobSets with the real function and run every
// pod with real Flux brokers (test/flux/internal/kubelet). What they need,
// set up once by TestMain:
var env struct {
	err       error  // why the environment is not usable
	repo      string // the repository root
	shim      string // podshim
	function  string // bin/jobset-flux
	kustomize string // bin/kustomize
	view      string // the view build: full/ and core-only/ roots
}

// Image references the tests use. The flux-view references stand for the
// view build; everything else is the host's root file system, with layers
// where an example's image has programs of its own.
const (
	viewNoble    = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
	viewJammy    = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"
	viewCoreOnly = "registry.test/flux-view-core-only:test"
	hostImage    = "registry.test/debian:12"
	fluxBin      = "/mnt/flux/install/view/bin/flux"
	fluxURI      = "FLUX_URI=local:///mnt/flux/install/run/local"
)

func TestMain(m *testing.M) {
	env.err = setup()
	os.Exit(m.Run())
}

func setup() error {
	if os.Getuid() != 0 {
		return errors.New("the runtime tests need root (network and mount namespaces)")
	}
	for _, tool := range []string{"ip", "nsenter", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found: install Debian iproute2 and util-linux", tool)
		}
	}
	repo, err := testsupport.RepoRoot()
	if err != nil {
		return err
	}
	env.repo = repo
	env.function = envOr("JOBSET_FLUX_BIN", filepath.Join(repo, "bin/jobset-flux"))
	env.kustomize = envOr("JOBSET_FLUX_KUSTOMIZE", filepath.Join(repo, "bin/kustomize"))
	for _, bin := range []string{env.function, env.kustomize} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s: %w (run make build kustomize)", bin, err)
		}
	}
	dir, err := os.MkdirTemp("", "jobset-flux-podshim-")
	if err != nil {
		return err
	}
	env.shim = filepath.Join(dir, "podshim")
	if out, err := exec.Command("go", "build", "-o", env.shim, "./cmd/podshim").CombinedOutput(); err != nil {
		return fmt.Errorf("build podshim: %w\n%s", err, out)
	}
	env.view = os.Getenv("JOBSET_FLUX_VIEW")
	if env.view == "" {
		// The build scripts reuse their caches; a cold build takes ~35
		// minutes (pmix.sh runs build.sh, then adds flux-pmix).
		cmd := exec.Command("bash", filepath.Join(repo, "hack/flux-view/pmix.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("hack/flux-view/pmix.sh: %w", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		env.view = lines[len(lines)-1]
	}
	for _, root := range []string{"full", "core-only"} {
		if _, err := os.Stat(filepath.Join(env.view, root, "opt/view")); err != nil {
			return fmt.Errorf("view build %s: %w", env.view, err)
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

// requireEnv fails the test under CI=true and skips it elsewhere when the
// runtime environment is missing.
func requireEnv(t *testing.T) {
	t.Helper()
	if env.err == nil {
		return
	}
	testsupport.SkipOrFail(t, "runtime environment: %v", env.err)
}

// viewImage is the stand-in for a view image (and for an app image with
// Flux under /opt/view): the host's root with a view build's /opt (root
// "full" or "core-only") laid over it.
func viewImage(root string) kubelet.Image {
	return kubelet.HostImage(map[string][]string{"opt": {filepath.Join(env.view, root, "opt")}})
}

// fluxOnPathImage is an app image with its own Flux, found on its PATH.
func fluxOnPathImage() kubelet.Image {
	img := viewImage("full")
	img.Env = []string{"PATH=" + kubelet.DefaultPath + ":/opt/view/bin"}
	return img
}

// images are the stand-ins every test can use; tests add their own.
func images(extra map[string]kubelet.Image) map[string]kubelet.Image {
	full := viewImage("full")
	m := map[string]kubelet.Image{
		viewNoble:    full,
		viewJammy:    full,
		viewCoreOnly: viewImage("core-only"),
		hostImage:    kubelet.HostImage(nil),
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// render runs the function in standalone mode on the given YAML documents.
func render(t *testing.T, docs string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.function, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jobset-flux: %v\n%s", err, stderr.String())
	}
	return out
}

// kustomizeBuild renders a kustomization with standalone kustomize and the
// function on PATH, as a user does.
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	return testsupport.KustomizeBuild(t, env.kustomize, env.function, dir)
}

// run is one runtime test's cluster: started from rendered YAML, closed
// (and checked for leftovers) when the test ends.
type run struct {
	t *testing.T
	c *kubelet.Cluster
}

func start(t *testing.T, rendered []byte, extra map[string]kubelet.Image) *run {
	t.Helper()
	return startObjects(t, decode(t, rendered), extra)
}

func decode(t *testing.T, rendered []byte) kubelet.Objects {
	t.Helper()
	objs, err := kubelet.Decode(rendered)
	if err != nil {
		t.Fatalf("decode the render: %v", err)
	}
	return objs
}

// startObjects starts a cluster of objs; the pods named held wait to
// start until the test releases them.
func startObjects(t *testing.T, objs kubelet.Objects, extra map[string]kubelet.Image, held ...string) *run {
	t.Helper()
	return startWith(t, kubelet.Options{Images: images(extra), Held: held}, objs)
}

// startWith starts a cluster of objs with the options given; the shim
// and the log are the test's.
func startWith(t *testing.T, opts kubelet.Options, objs kubelet.Objects) *run {
	t.Helper()
	opts.Shim, opts.Logf = env.shim, t.Logf
	c, err := kubelet.Start(opts, objs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return &run{t: t, c: c}
}

// wait waits for every JobSet to finish and returns the first's result;
// JobSets still running at the timeout fail the test.
func (r *run) wait(timeout time.Duration) kubelet.JobSetResult {
	r.t.Helper()
	res, err := r.tryWait(timeout)
	if err != nil {
		r.t.Errorf("%v", err)
	}
	return res
}

// tryWait is wait for a test that judges a timeout itself.
func (r *run) tryWait(timeout time.Duration) (kubelet.JobSetResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := r.c.Wait(ctx)
	return res[0], err
}

// logs returns a pod's container log ("" when it did not run).
func logs(p *kubelet.Pod, container string) string {
	res, _ := p.Result(container)
	return res.Log
}

// expectEnd fails the test unless the JobSet ended in state want, and
// dumps the run's logs when anything in the test has failed.
func expectEnd(t *testing.T, res kubelet.JobSetResult, want string) {
	t.Helper()
	if res.State != want {
		t.Errorf("JobSet %s, want %s", res.State, want)
	}
	if t.Failed() {
		dump(t, res)
	}
}

// dump logs every container of every pod: what a reader needs when a
// runtime test fails.
func dump(t *testing.T, res kubelet.JobSetResult) {
	t.Helper()
	t.Logf("JobSet %s: %s (%s)", res.Name, res.State, res.Reason)
	for _, p := range res.Pods {
		for _, c := range p.Results() {
			t.Logf("--- %s/%s exit %d\n%s", p.Hostname, c.Name, c.ExitCode, c.Log)
		}
	}
}

// flux runs a flux command in a running container, as kubectl exec would.
func (r *run) flux(hostname, container string, args ...string) (string, int) {
	r.t.Helper()
	out, code, err := r.tryFlux(hostname, container, args...)
	if err != nil {
		r.t.Fatalf("exec in %s/%s: %v", hostname, container, err)
	}
	return out, code
}

// tryFlux is flux for a container that may not be running yet.
func (r *run) tryFlux(hostname, container string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{"env", fluxURI, fluxBin}, args...)
	return r.c.Exec(ctx, hostname, container, argv...)
}

// known marks a check that fails today because of a defect in the
// function, naming the issue that fixes it. The check's problems are logged,
// not failed; a check that passes while marked fails, so the mark goes when
// the fix lands.
type checks struct {
	t        *testing.T
	problems []string
}

func (c *checks) errorf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// report fails the test with every problem, or, for a known failure, logs
// them and fails only if there are none.
func (c *checks) report(knownIssue string) {
	c.t.Helper()
	switch {
	case knownIssue == "":
		for _, p := range c.problems {
			c.t.Error(p)
		}
	case len(c.problems) == 0:
		c.t.Errorf("known failure (%s) passes now: remove the mark", knownIssue)
	default:
		for _, p := range c.problems {
			c.t.Logf("KNOWN FAILURE (%s): %s", knownIssue, p)
		}
	}
}
