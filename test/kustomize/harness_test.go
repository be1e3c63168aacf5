package kustomize

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
	"sync"
	"testing"
	"text/template"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	toml "github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"
)

const (
	// exampleSeed is the public seed examples/*/expected.yaml is rendered
	// with (the Makefile's EXAMPLE_SEED).
	exampleSeed = "jobset-flux-example-seed-0123456789abcdef"
	seedEnv     = "JOBSET_FLUX_KEY_SEED"
	seedFileEnv = "JOBSET_FLUX_KEY_SEED_FILE"
	mainModule  = "module github.com/jobset-flux/jobset-flux"
)

// repoRoot is the directory of the main module's go.mod, found by walking
// up from the test's working directory (the package directory).
var repoRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			first, _, _ := strings.Cut(string(data), "\n")
			if strings.TrimSpace(first) == mainModule {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod declaring " + mainModule + " above the working directory")
		}
		dir = parent
	}
})

// tools are the real binaries under test.
type tools struct {
	root      string // repository root
	bin       string // <root>/bin
	kustomize string // <root>/bin/kustomize (standalone kustomize)
	fn        string // <root>/bin/jobset-flux
}

// needTools returns the binaries, or stops the test when one is missing:
// a failure under CI=true (CI must never skip), a skip elsewhere.
func needTools(t *testing.T) tools {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	tl := tools{root: root, bin: bin, kustomize: filepath.Join(bin, "kustomize"), fn: filepath.Join(bin, "jobset-flux")}
	for _, p := range []string{tl.kustomize, tl.fn} {
		info, err := os.Stat(p)
		if err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			continue
		}
		testenv.SkipOrFail(t, "%s is missing or not executable (run `make build kustomize`, or `make unit`): %v", p, err)
	}
	return tl
}

// env is the environment of a child process: this process's, with PATH
// rebuilt (the repository's bin first when withBin, otherwise removed from
// it) and the key seed set to seed, or unset when seed is "".
func (tl tools) env(withBin bool, seed string) []string {
	var out []string
	var path []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case seedEnv, seedFileEnv:
		case "PATH":
			for _, d := range filepath.SplitList(v) {
				if d != "" && filepath.Clean(d) != tl.bin {
					path = append(path, d)
				}
			}
		default:
			out = append(out, kv)
		}
	}
	if withBin {
		path = append([]string{tl.bin}, path...)
	}
	out = append(out, "PATH="+strings.Join(path, string(os.PathListSeparator)))
	if seed != "" {
		out = append(out, seedEnv+"="+seed)
	}
	return out
}

// setEnv applies tl.env to this process for the rest of the test (for
// krusty, which runs the function as a child of the test process).
func (tl tools) setEnv(t *testing.T, withBin bool, seed string) {
	t.Helper()
	for _, k := range []string{seedEnv, seedFileEnv} {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)
	}
	for _, kv := range tl.env(withBin, seed) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == seedEnv {
			t.Setenv(k, v)
		}
	}
}

// result is what a command did.
type result struct {
	stdout, stderr []byte
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit code %d; stderr:\n%s", r.code, r.stderr)
}

// run runs a command with env and reports how it ended; only a failure to
// start it fails the test. It runs in /, so that no relative path in a
// function config can resolve against the test's own directory (from
// test/kustomize, ../../bin/jobset-flux happens to be the real binary).
func run(t *testing.T, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = "/"
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return r
}

// build runs the standalone `kustomize build FLAGS... DIR`.
func (tl tools) build(t *testing.T, env []string, dir string, flags ...string) result {
	t.Helper()
	return run(t, env, tl.kustomize, append(append([]string{"build"}, flags...), dir)...)
}

// execFlags are the flags that let standalone kustomize run exec functions.
var execFlags = []string{"--enable-alpha-plugins", "--enable-exec"}

// mustBuild is build with execFlags, failing the test unless it exits 0.
func (tl tools) mustBuild(t *testing.T, env []string, dir string) []byte {
	t.Helper()
	r := tl.build(t, env, dir, execFlags...)
	if r.code != 0 {
		t.Fatalf("kustomize build %s: %v", dir, r)
	}
	return r.stdout
}

// buildInProcess is `kustomize build --enable-alpha-plugins --enable-exec`
// through krusty, configured as kustomize v5's build command configures it.
func buildInProcess(dir string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // kustomize's default: legacy order
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

// stage copies testdata/<name> into a new temporary directory and returns
// it. Files ending in .tmpl are rendered (see testdata/README.md); a link
// bin/jobset-flux to the binary under test is added at the top.
func (tl tools) stage(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	jobset, err := os.ReadFile(filepath.Join("testdata", "jobset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data := struct{ JobSet, Bin string }{string(jobset), tl.fn}
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".tmpl") {
			tmpl, err := template.New(rel).Option("missingkey=error").Parse(string(content))
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, data); err != nil {
				return err
			}
			content, out = buf.Bytes(), strings.TrimSuffix(out, ".tmpl")
		}
		return os.WriteFile(out, content, 0o644)
	})
	if err != nil {
		t.Fatalf("staging %s: %v", src, err)
	}
	if err := os.MkdirAll(filepath.Join(dst, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tl.fn, filepath.Join(dst, "bin", "jobset-flux")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// examples lists the examples/*/ directories that are kustomizations with
// an expected.yaml.
func (tl tools) examples(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(tl.root, "examples", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range dirs {
		dir := filepath.Dir(k)
		if _, err := os.Stat(filepath.Join(dir, "expected.yaml")); err == nil {
			out = append(out, dir)
		}
	}
	if len(out) == 0 {
		t.Fatal("no examples/*/ with kustomization.yaml and expected.yaml")
	}
	return out
}

// object is one document of kustomize's output.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	doc []byte
}

// output is kustomize's output, split into objects.
type output []object

func parse(t *testing.T, out []byte) output {
	t.Helper()
	nodes, err := kio.FromBytes(out)
	if err != nil {
		t.Fatalf("parsing kustomize output: %v\n%s", err, out)
	}
	var objs output
	for _, n := range nodes {
		s, err := n.String()
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := yaml.Unmarshal([]byte(s), &o); err != nil {
			t.Fatalf("parsing %s: %v", s, err)
		}
		o.doc = []byte(s)
		objs = append(objs, o)
	}
	return objs
}

// ids lists the objects as Kind/[namespace/]name, for messages.
func (objs output) ids() []string {
	var ids []string
	for _, o := range objs {
		id := o.Kind + "/" + o.Metadata.Name
		if o.Metadata.Namespace != "" {
			id = o.Kind + "/" + o.Metadata.Namespace + "/" + o.Metadata.Name
		}
		ids = append(ids, id)
	}
	return ids
}

// get decodes the one object of kind and name into v.
func (objs output) get(t *testing.T, kind, name string, v any) {
	t.Helper()
	var found []object
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Name == name {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s named %q in the output, found %d; the output has %v", kind, name, len(found), objs.ids())
	}
	if err := yaml.Unmarshal(found[0].doc, v); err != nil {
		t.Fatalf("decoding %s %s: %v", kind, name, err)
	}
}

func (objs output) has(kind, name string) bool {
	return slices.ContainsFunc(objs, func(o object) bool { return o.Kind == kind && o.Metadata.Name == name })
}

func (objs output) jobSet(t *testing.T, name string) *jobsetv1alpha2.JobSet {
	t.Helper()
	var js jobsetv1alpha2.JobSet
	objs.get(t, "JobSet", name, &js)
	return &js
}

func (objs output) configMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	objs.get(t, "ConfigMap", name, &cm)
	return &cm
}

func (objs output) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	objs.get(t, "Secret", name, &s)
	return &s
}

// brokerConfig is the part of broker.toml that names hosts.
type brokerConfig struct {
	Bootstrap struct {
		DefaultConnect string `toml:"default_connect"`
		Hosts          []struct {
			Host string `toml:"host"`
		} `toml:"hosts"`
	} `toml:"bootstrap"`
	Resource struct {
		Config []struct {
			Hosts string `toml:"hosts"`
		} `toml:"config"`
	} `toml:"resource"`
}

func parseBroker(t *testing.T, cm *corev1.ConfigMap) brokerConfig {
	t.Helper()
	text, ok := cm.Data["broker.toml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no broker.toml", cm.Name)
	}
	var bc brokerConfig
	if err := toml.Unmarshal([]byte(text), &bc); err != nil {
		t.Fatalf("broker.toml of %s: %v\n%s", cm.Name, err, text)
	}
	return bc
}

// podSpec is the pod template of the JobSet's replicatedJob i.
func podSpec(js *jobsetv1alpha2.JobSet, i int) *corev1.PodSpec {
	return &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
}

// volumeRefs returns the ConfigMap and Secret names a pod spec's volumes use.
func volumeRefs(ps *corev1.PodSpec) (configMaps, secrets []string) {
	for _, v := range ps.Volumes {
		if v.ConfigMap != nil {
			configMaps = append(configMaps, v.ConfigMap.Name)
		}
		if v.Secret != nil {
			secrets = append(secrets, v.Secret.SecretName)
		}
	}
	return configMaps, secrets
}
