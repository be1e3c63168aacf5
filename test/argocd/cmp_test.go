// Package argocd tests the jobset-flux Argo CD config management plugin
// (deploy/argocd) against the real argocd-cmp-server: the test starts the
// server with the shipped plugin.yaml, streams app directories to it the way
// argocd-repo-server does, and checks what comes back.
//
// Needs, in the repository's bin/: argocd-cmp-server (built from this module),
// kustomize and jobset-flux. `make test-argocd` builds all three. Outside CI a
// missing binary skips the tests; with CI=true it fails them.
package argocd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	grpc_retry "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/protobuf/types/known/emptypb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	"github.com/argoproj/argo-cd/v3/util/cmp"
)

// exampleSeed is the key seed the examples' expected.yaml files were made with.
const exampleSeed = "jobset-flux-example-seed-0123456789abcdef"

// requiredExamples must exist; any other examples/<name>/ holding a
// kustomization.yaml and an expected.yaml is tested too.
var requiredExamples = []string{"lammps", "gpu", "interactive", "multi-job"}

// rpcTimeout bounds one GenerateManifest or MatchRepository call. The
// repo-server sets a deadline the same way.
const rpcTimeout = 2 * time.Minute

type layout struct {
	root       string // repository root
	bin        string // root/bin, or the sidecar image's usr/local/bin: kustomize, jobset-flux
	pluginDir  string // root/deploy/argocd: plugin.yaml, jobset-flux-cmp, repo-server-patch.yaml
	configDir  string // the plugin.yaml served: pluginDir's, or the sidecar image's
	scriptDir  string // where jobset-flux-cmp is: pluginDir, or the image's usr/local/bin
	examples   string // root/examples
	testdata   string // this package's testdata
	cmpServer  string
	kustomize  string
	jobsetFlux string
}

func repoLayout(t *testing.T) layout {
	t.Helper()
	root, err := testsupport.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	pluginDir := filepath.Join(root, "deploy", "argocd")
	l := layout{
		root:       root,
		bin:        bin,
		pluginDir:  pluginDir,
		configDir:  pluginDir,
		scriptDir:  pluginDir,
		examples:   filepath.Join(root, "examples"),
		testdata:   testdata,
		cmpServer:  filepath.Join(bin, "argocd-cmp-server"),
		kustomize:  filepath.Join(bin, "kustomize"),
		jobsetFlux: filepath.Join(bin, "jobset-flux"),
	}
	// SIDECAR_ROOT: files copied out of the sidecar image (make
	// test-argocd-image). The image's kustomize, jobset-flux, script and
	// plugin.yaml are then the ones under test; argocd-cmp-server is not in
	// the image (Argo CD's init container provides it) and stays bin/'s.
	if sr := os.Getenv("SIDECAR_ROOT"); sr != "" {
		l.bin = filepath.Join(sr, "usr", "local", "bin")
		l.scriptDir = l.bin
		l.configDir = filepath.Join(sr, "home", "argocd", "cmp-server", "config")
		l.kustomize = filepath.Join(l.bin, "kustomize")
		l.jobsetFlux = filepath.Join(l.bin, "jobset-flux")
	}
	var missing []string
	for _, p := range []string{l.cmpServer, l.kustomize, l.jobsetFlux, filepath.Join(l.scriptDir, "jobset-flux-cmp")} {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("missing executables %v: run `make test-argocd` in %s (it builds all three)", missing, root)
		testsupport.SkipOrFail(t, "%s", msg)
	}
	return l
}

// cmpServer is one running argocd-cmp-server.
type cmpServer struct {
	sock    string
	logPath string
	client  apiclient.ConfigManagementPluginServiceClient
}

// startCMPServer runs bin/argocd-cmp-server with deploy/argocd/plugin.yaml on
// a unix socket in a fresh temporary directory, with a clean environment:
// PATH is the repository's bin/ and deploy/argocd/ then the system's, and
// extraEnv is added (e.g. the key seed). It is killed (SIGKILL: it ignores
// SIGTERM) when the test ends.
func startCMPServer(t *testing.T, l layout, extraEnv ...string) *cmpServer {
	t.Helper()
	// os.MkdirTemp rather than t.TempDir: a unix socket path must stay under
	// 108 bytes and t.TempDir embeds the test name.
	dir, err := os.MkdirTemp("", "cmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, d := range []string{"plugins", "work", "home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + strings.Join([]string{l.bin, l.scriptDir, "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator)),
		"HOME=" + filepath.Join(dir, "home"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		// Where the server puts its socket (the repo-server looks there too).
		"ARGOCD_PLUGINSOCKFILEPATH=" + filepath.Join(dir, "plugins"),
		// Where it unpacks the streamed repositories.
		"ARGOCD_CMP_WORKDIR=" + filepath.Join(dir, "work"),
	}
	env = append(env, extraEnv...)

	s := &cmpServer{
		// plugin.yaml has metadata.name jobset-flux and no spec.version.
		sock:    filepath.Join(dir, "plugins", "jobset-flux.sock"),
		logPath: filepath.Join(dir, "server.log"),
	}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(l.cmpServer,
		"--config-dir-path", l.configDir, // the directory holding plugin.yaml
		"--loglevel", "info", "--logformat", "text")
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", l.cmpServer, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // SIGKILL to this PID only
		<-exited
		if t.Failed() {
			t.Logf("argocd-cmp-server log (%s):\n%s", s.logPath, tail(s.logPath, 60))
		}
	})

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("argocd-cmp-server exited early (%v); log:\n%s", err, tail(s.logPath, 60))
		default:
		}
		// The socket file exists from bind(), before the server listens:
		// ready is when a connection is accepted, not when the file is there.
		if conn, err := net.DialTimeout("unix", s.sock, time.Second); err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("argocd-cmp-server did not accept a connection on %s within 60s; log:\n%s", s.sock, tail(s.logPath, 60))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The same client the repo-server uses to reach a plugin sidecar.
	closer, client, err := apiclient.NewConfigManagementPluginClientSet(s.sock).NewConfigManagementPluginClient()
	if err != nil {
		t.Fatalf("connect to %s: %v", s.sock, err)
	}
	t.Cleanup(func() { _ = closer.Close() })
	s.client = client
	return s
}

// appEnv is the environment the repo-server sends with every request.
func appEnv(appName, sourcePath string, extra ...string) []string {
	env := []string{
		"ARGOCD_APP_NAME=" + appName,
		"ARGOCD_APP_NAMESPACE=hpc",
		"ARGOCD_APP_PROJECT_NAME=default",
		"ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567",
		"ARGOCD_APP_REVISION_SHORT=0123456",
		"ARGOCD_APP_REVISION_SHORT_8=01234567",
		"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/hpc/jobs.git",
		"ARGOCD_APP_SOURCE_PATH=" + sourcePath,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=HEAD",
		"KUBE_VERSION=1.34.0",
		"KUBE_API_VERSIONS=v1,jobset.x-k8s.io/v1alpha2",
	}
	return append(env, extra...)
}

// generate asks the server for the manifests of the app at appPath, streaming
// the tree under rootPath (the repo-server streams the whole checkout).
func (s *cmpServer) generate(t *testing.T, rootPath, appPath string, env []string) (*apiclient.ManifestResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	stream, err := s.client.GenerateManifest(ctx, grpc_retry.Disable())
	if err != nil {
		t.Fatalf("GenerateManifest: %v", err)
	}
	if err := cmp.SendRepoStream(stream.Context(), appPath, rootPath, stream, env, nil); err != nil {
		t.Fatalf("stream %s to the cmp-server: %v", appPath, err)
	}
	return stream.CloseAndRecv()
}

// match asks the server whether its discovery claims the app at appPath.
func (s *cmpServer) match(t *testing.T, rootPath, appPath string, env []string) *apiclient.RepositoryResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	stream, err := s.client.MatchRepository(ctx, grpc_retry.Disable())
	if err != nil {
		t.Fatalf("MatchRepository: %v", err)
	}
	if err := cmp.SendRepoStream(stream.Context(), appPath, rootPath, stream, env, nil); err != nil {
		t.Fatalf("stream %s to the cmp-server: %v", appPath, err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatalf("MatchRepository %s: %v", appPath, err)
	}
	return resp
}

// exampleApps lists the example apps: the required ones (missing ones fail
// the test) and any other directory with kustomization.yaml and expected.yaml.
func exampleApps(t *testing.T, l layout) []string {
	t.Helper()
	names := slices.Clone(requiredExamples)
	entries, err := os.ReadDir(l.examples)
	if err != nil {
		t.Fatalf("examples: %v", err)
	}
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(names, e.Name()) {
			continue
		}
		dir := filepath.Join(l.examples, e.Name())
		if exists(filepath.Join(dir, "kustomization.yaml")) && exists(filepath.Join(dir, "expected.yaml")) {
			names = append(names, e.Name())
		}
	}
	for _, n := range requiredExamples {
		for _, f := range []string{"kustomization.yaml", "expected.yaml"} {
			if !exists(filepath.Join(l.examples, n, f)) {
				t.Errorf("example app %s has no %s", n, f)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return names
}

// TestPluginConfiguration checks what the repo-server asks first.
func TestPluginConfiguration(t *testing.T) {
	l := repoLayout(t)
	s := startCMPServer(t, l, "JOBSET_FLUX_KEY_SEED="+exampleSeed)
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	resp, err := s.client.CheckPluginConfiguration(ctx, &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsDiscoveryConfigured {
		t.Error("IsDiscoveryConfigured = false, want true")
	}
	if resp.ProvideGitCreds {
		t.Error("ProvideGitCreds = true: the plugin never needs the repository's credentials")
	}
}

// TestGenerateExamples renders every example app through the cmp-server:
// (a) exactly the JobSet, its ConfigMap and its Secret, and the app's other
// resources (examples/lammps's input ConfigMap), equal to expected.yaml;
// (b) a second render is byte-identical.
func TestGenerateExamples(t *testing.T) {
	l := repoLayout(t)
	s := startCMPServer(t, l, "JOBSET_FLUX_KEY_SEED="+exampleSeed)
	for _, name := range exampleApps(t, l) {
		t.Run(name, func(t *testing.T) {
			app := filepath.Join(l.examples, name)
			env := appEnv(name, "examples/"+name)
			first, err := s.generate(t, l.examples, app, env)
			if err != nil {
				t.Fatalf("GenerateManifest: %v", err)
			}
			got := parseManifests(t, first.Manifests)

			jobsetName := inputJobSetName(t, app)
			wantIDs := append(otherInputs(t, app),
				"ConfigMap/"+jobsetName+"-flux-entrypoint",
				"JobSet/"+jobsetName,
				"Secret/"+jobsetName+"-flux-curve",
			)
			slices.Sort(wantIDs)
			var gotIDs []string
			for _, o := range got {
				gotIDs = append(gotIDs, o.GetKind()+"/"+o.GetName())
			}
			slices.Sort(gotIDs)
			if !slices.Equal(gotIDs, wantIDs) {
				t.Errorf("objects = %v, want %v", gotIDs, wantIDs)
			}
			for _, o := range got {
				switch o.GetKind() {
				case "JobSet":
					if o.GetAPIVersion() != "jobset.x-k8s.io/v1alpha2" {
						t.Errorf("JobSet apiVersion = %q", o.GetAPIVersion())
					}
					// Every rendered pod's container runs the entrypoint;
					// an image with its own Flux has no flux-installer.
					if !hasContainer(o, "containers", func(c map[string]any) bool {
						cmd, _ := c["command"].([]any)
						return len(cmd) > 0 && cmd[0] == "/mnt/flux/config/entrypoint.sh"
					}) {
						t.Error("no container of the JobSet runs the Flux entrypoint")
					}
				case "Secret":
					if _, ok, _ := unstructured.NestedString(o.Object, "data", "curve.cert"); !ok {
						t.Error("Secret has no data.curve.cert")
					}
				}
			}

			expected, err := os.ReadFile(filepath.Join(app, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want := parseManifests(t, []string{string(expected)})
			compareObjects(t, got, want)

			second, err := s.generate(t, l.examples, app, env)
			if err != nil {
				t.Fatalf("second GenerateManifest: %v", err)
			}
			if !slices.Equal(first.Manifests, second.Manifests) {
				t.Errorf("two renders with the same seed differ:\nfirst:\n%s\nsecond:\n%s",
					strings.Join(first.Manifests, "\n---\n"), strings.Join(second.Manifests, "\n---\n"))
			}
		})
	}
}

// TestGenerateBrokenApp: (c) the function's error reaches Argo CD as a gRPC
// error carrying its stderr, never as an empty manifest list.
func TestGenerateBrokenApp(t *testing.T) {
	l := repoLayout(t)
	s := startCMPServer(t, l, "JOBSET_FLUX_KEY_SEED="+exampleSeed)
	app := filepath.Join(l.testdata, "broken")

	// What the function says when kustomize runs it directly.
	cmd := exec.Command(l.kustomize, "build", "--enable-alpha-plugins", "--enable-exec", app)
	cmd.Env = []string{"PATH=" + l.bin + ":/usr/bin:/bin", "JOBSET_FLUX_KEY_SEED=" + exampleSeed}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("kustomize build of testdata/broken succeeded; the fixture must make jobset-flux fail")
	}
	var fnLines []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		line = strings.TrimSpace(line)
		// kustomize's own summary line differs in the plugin run only by
		// where it sits; the function's lines are what matter.
		if line != "" && !strings.HasPrefix(line, "Error:") {
			fnLines = append(fnLines, line)
		}
	}
	if len(fnLines) == 0 {
		t.Fatalf("jobset-flux printed nothing on stderr for testdata/broken; stderr:\n%s", stderr.String())
	}

	resp, err := s.generate(t, l.testdata, app, appEnv("broken", "test/argocd/testdata/broken"))
	if err == nil {
		t.Fatalf("GenerateManifest succeeded with %d manifests, want an error", len(resp.GetManifests()))
	}
	if resp != nil {
		t.Errorf("got a response (%d manifests) alongside the error", len(resp.GetManifests()))
	}
	t.Logf("the error Argo CD shows: %v", err)
	stderrPart := commandOutput(err.Error())
	if !strings.Contains(stderrPart, "tasks-per-node") {
		t.Errorf("error does not mention tasks-per-node:\n%s", err)
	}
	for _, line := range fnLines {
		if !strings.Contains(stderrPart, line) {
			t.Errorf("error lacks the function's stderr line %q:\n%s", line, err)
		}
	}
}

// TestGenerateEmptyIsError: an app that renders to nothing is an error, not
// an empty list that auto-prune would turn into a deletion.
func TestGenerateEmptyIsError(t *testing.T) {
	l := repoLayout(t)
	s := startCMPServer(t, l, "JOBSET_FLUX_KEY_SEED="+exampleSeed)
	app := filepath.Join(l.testdata, "empty")
	resp, err := s.generate(t, l.testdata, app, appEnv("empty", "test/argocd/testdata/empty"))
	if err == nil {
		t.Fatalf("GenerateManifest succeeded with manifests %q, want an error", resp.GetManifests())
	}
	if out := commandOutput(err.Error()); !strings.Contains(out, "produced no manifests") {
		t.Errorf("error does not say the output was empty:\n%s", err)
	}
}

// TestGenerateWithoutSeedIsError: a sidecar without a key seed refuses to
// render instead of producing a new random key on every refresh.
func TestGenerateWithoutSeedIsError(t *testing.T) {
	l := repoLayout(t)
	s := startCMPServer(t, l) // no JOBSET_FLUX_KEY_SEED
	app := filepath.Join(l.examples, "lammps")
	resp, err := s.generate(t, l.examples, app, appEnv("lammps", "examples/lammps"))
	if err == nil {
		t.Fatalf("GenerateManifest without a seed succeeded with %d manifests, want an error", len(resp.GetManifests()))
	}
	if out := commandOutput(err.Error()); !strings.Contains(out, "JOBSET_FLUX_KEY_SEED") {
		t.Errorf("error does not name JOBSET_FLUX_KEY_SEED:\n%s", err)
	}
}

// TestDiscovery: (d) MatchRepository claims jobset-flux apps only.
func TestDiscovery(t *testing.T) {
	l := repoLayout(t)
	s := startCMPServer(t, l, "JOBSET_FLUX_KEY_SEED="+exampleSeed)
	type matchCase struct {
		name      string
		root, app string
		extraEnv  []string
		want      bool
	}
	cases := []matchCase{
		{name: "broken jobset-flux app", root: l.testdata, app: filepath.Join(l.testdata, "broken"), want: true},
		{name: "plain kustomize app", root: l.testdata, app: filepath.Join(l.testdata, "plain"), want: false},
		{name: "plain kustomize app opted in", root: l.testdata, app: filepath.Join(l.testdata, "plain"),
			extraEnv: []string{"ARGOCD_ENV_JOBSET_FLUX=true"}, want: true},
		{name: "directory without a kustomization", root: l.examples, app: l.examples, want: false},
	}
	for _, name := range exampleApps(t, l) {
		cases = append(cases, matchCase{name: "example " + name, root: l.examples, app: filepath.Join(l.examples, name), want: true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rel, err := filepath.Rel(l.root, c.app)
			if err != nil {
				t.Fatal(err)
			}
			resp := s.match(t, c.root, c.app, appEnv(filepath.Base(c.app), rel, c.extraEnv...))
			if !resp.IsDiscoveryEnabled {
				t.Error("IsDiscoveryEnabled = false")
			}
			if resp.IsSupported != c.want {
				t.Errorf("IsSupported = %v, want %v", resp.IsSupported, c.want)
			}
		})
	}
}

// TestPluginScriptShellcheck lints the script the plugin runs.
func TestPluginScriptShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		testsupport.SkipOrFail(t, "shellcheck not found (.ci/install-system-deps installs it)")
	}
	out, err := exec.Command(sc, "--shell=sh", filepath.Join("..", "..", "deploy", "argocd", "jobset-flux-cmp")).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// parseManifests splits manifests the way the repo-server does.
func parseManifests(t *testing.T, manifests []string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		parsed, err := kube.SplitYAML([]byte(m))
		if err != nil {
			t.Fatalf("parse manifest: %v\n%s", err, m)
		}
		objs = append(objs, parsed...)
	}
	return objs
}

// compareObjects checks that got and want hold the same objects, field by field.
func compareObjects(t *testing.T, got, want []*unstructured.Unstructured) {
	t.Helper()
	index := func(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
		m := map[string]*unstructured.Unstructured{}
		for _, o := range objs {
			id := fmt.Sprintf("%s/%s/%s/%s", o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			if _, dup := m[id]; dup {
				t.Errorf("object %s appears twice", id)
			}
			m[id] = o
		}
		return m
	}
	g, w := index(got), index(want)
	for id, wo := range w {
		gobj, ok := g[id]
		if !ok {
			t.Errorf("missing %s (in expected.yaml)", id)
			continue
		}
		if !reflect.DeepEqual(gobj.Object, wo.Object) {
			t.Errorf("%s differs from expected.yaml: %s", id, firstDifference(t, gobj.Object, wo.Object))
		}
	}
	for id := range g {
		if _, ok := w[id]; !ok {
			t.Errorf("unexpected %s (not in expected.yaml)", id)
		}
	}
}

// firstDifference names the first differing line of the two objects' YAML.
func firstDifference(t *testing.T, got, want map[string]any) string {
	gy, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wy, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if d := testsupport.FirstDifference(string(gy), string(wy)); d != "no difference" {
		return "sorted YAML, " + d
	}
	return "(no line differs; types differ)"
}

// inputJobSetName reads the JobSet's name from the app's jobset.yaml.
func inputJobSetName(t *testing.T, app string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(app, "jobset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range parseManifests(t, []string{string(data)}) {
		if o.GetKind() == "JobSet" {
			return o.GetName()
		}
	}
	t.Fatalf("%s/jobset.yaml holds no JobSet", app)
	return ""
}

// otherInputs are Kind/name of the objects of an example's kustomization
// resources other than its JobSet: they pass through the render as they are.
func otherInputs(t *testing.T, app string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(app, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", app, err)
	}
	var ids []string
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(app, r))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range parseManifests(t, []string{string(data)}) {
			if o.GetKind() != "JobSet" {
				ids = append(ids, o.GetKind()+"/"+o.GetName())
			}
		}
	}
	return ids
}

// hasContainer reports whether a pod template of the JobSet has, in field
// (containers or initContainers), a container that match accepts.
func hasContainer(jobset *unstructured.Unstructured, field string, match func(map[string]any) bool) bool {
	rjobs, _, _ := unstructured.NestedSlice(jobset.Object, "spec", "replicatedJobs")
	for _, rj := range rjobs {
		rjm, ok := rj.(map[string]any)
		if !ok {
			continue
		}
		cs, _, _ := unstructured.NestedSlice(rjm, "template", "spec", "template", "spec", field)
		for _, c := range cs {
			if cm, ok := c.(map[string]any); ok && match(cm) {
				return true
			}
		}
	}
	return false
}

// commandOutput returns the part of a cmp-server error after the quoted
// command line ("`cmd args` failed exit status N: <stderr>"), so a check
// for some text cannot be satisfied by the command line itself.
func commandOutput(msg string) string {
	if i := strings.LastIndex(msg, "` failed "); i >= 0 {
		return msg[i:]
	}
	return msg
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
