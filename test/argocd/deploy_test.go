package argocd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestRepoServerPatch applies repo-server-patch.yaml with kustomize to the
// real argocd-repo-server Deployment of the pinned argo-cd release (from the
// module cache) and checks the sidecar it adds.
func TestRepoServerPatch(t *testing.T) {
	l := repoLayout(t)
	dir := t.TempDir()
	patch, err := os.ReadFile(filepath.Join(l.pluginDir, "repo-server-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	argoDir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		t.Fatalf("locate the argo-cd module: %v\n%s", err, stderrOf(err))
	}
	deployment, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(argoDir)),
		"manifests", "base", "repo-server", "argocd-repo-server-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"repo-server.yaml":       string(deployment),
		"repo-server-patch.yaml": string(patch),
		"kustomization.yaml": "resources: [repo-server.yaml]\n" +
			"patches:\n  - path: repo-server-patch.yaml\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(l.kustomize, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build with the patch: %v\n%s", err, stderrOf(err))
	}
	objs := parseManifests(t, []string{string(out)})
	if len(objs) != 1 {
		t.Fatalf("got %d objects, want the Deployment", len(objs))
	}
	podSpec, _, _ := unstructured.NestedMap(objs[0].Object, "spec", "template", "spec")
	containers := namedMaps(podSpec["containers"])
	if _, ok := containers["argocd-repo-server"]; !ok {
		t.Error("the patch replaced the repo-server container instead of adding one")
	}
	sidecar, ok := containers["jobset-flux"]
	if !ok {
		t.Fatalf("no jobset-flux container after the patch; containers: %v", keys(containers))
	}

	command, _, _ := unstructured.NestedStringSlice(sidecar, "command")
	if !slices.Equal(command, []string{"/var/run/argocd/argocd-cmp-server"}) {
		t.Errorf("sidecar command = %v", command)
	}
	// The binary the sidecar runs is the one Argo CD's init container copies.
	copied := false
	for _, ic := range namedMaps(podSpec["initContainers"]) {
		args, _, _ := unstructured.NestedStringSlice(ic, "command")
		if len(command) == 1 && slices.Contains(args, command[0]) {
			copied = true
		}
	}
	if !copied {
		t.Errorf("no init container of the repo-server puts %v in place", command)
	}
	if uid, _, _ := unstructured.NestedInt64(sidecar, "securityContext", "runAsUser"); uid != 999 {
		t.Errorf("sidecar runAsUser = %d, want 999", uid)
	}

	env := namedMaps(sidecar["env"])
	seed, ok := env["JOBSET_FLUX_KEY_SEED"]
	if !ok {
		t.Fatal("sidecar has no JOBSET_FLUX_KEY_SEED")
	}
	if _, literal := seed["value"]; literal {
		t.Error("JOBSET_FLUX_KEY_SEED has a literal value; it must come from a Secret")
	}
	ref, _, _ := unstructured.NestedStringMap(seed, "valueFrom", "secretKeyRef")
	if ref["name"] == "" || ref["key"] == "" {
		t.Errorf("JOBSET_FLUX_KEY_SEED is not a secretKeyRef with name and key: %v", seed)
	}

	volumes := namedMaps(podSpec["volumes"])
	mounts := map[string]string{}
	for name, m := range namedMaps(sidecar["volumeMounts"]) {
		mounts[m["mountPath"].(string)] = name
		if _, ok := volumes[name]; !ok {
			t.Errorf("sidecar mounts volume %q, which the pod does not declare", name)
		}
	}
	for path, volume := range map[string]string{
		"/var/run/argocd":                 "var-files",
		"/home/argocd/cmp-server/plugins": "plugins",
	} {
		if mounts[path] != volume {
			t.Errorf("sidecar mounts %q at %s, want %q", mounts[path], path, volume)
		}
	}
	if mounts["/tmp"] == "" {
		t.Error("sidecar has no writable /tmp (its root filesystem is read-only)")
	}
	if mounts["/home/argocd/cmp-server/config"] != "" {
		t.Error("sidecar mounts over /home/argocd/cmp-server/config, hiding the image's plugin.yaml")
	}
}

// TestApplicationExample checks examples/argocd/application.yaml against the
// plugin and the repository.
func TestApplicationExample(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	app := readYAML(t, filepath.Join(root, "examples", "argocd", "application.yaml"))
	plugin := readYAML(t, filepath.Join(root, "deploy", "argocd", "plugin.yaml"))

	if app.GetAPIVersion() != "argoproj.io/v1alpha1" || app.GetKind() != "Application" {
		t.Errorf("application.yaml is %s %s, want argoproj.io/v1alpha1 Application", app.GetAPIVersion(), app.GetKind())
	}
	if plugin.GetAPIVersion() != "argoproj.io/v1alpha1" || plugin.GetKind() != "ConfigManagementPlugin" {
		t.Errorf("plugin.yaml is %s %s", plugin.GetAPIVersion(), plugin.GetKind())
	}
	want := plugin.GetName()
	if v, _, _ := unstructured.NestedString(plugin.Object, "spec", "version"); v != "" {
		want += "-" + v
	}
	if name, _, _ := unstructured.NestedString(app.Object, "spec", "source", "plugin", "name"); name != want {
		t.Errorf("spec.source.plugin.name = %q, want %q (plugin.yaml)", name, want)
	}
	path, _, _ := unstructured.NestedString(app.Object, "spec", "source", "path")
	if path == "" || !exists(filepath.Join(root, path, "kustomization.yaml")) {
		t.Errorf("spec.source.path %q is not a kustomization in this repository", path)
	}
	for _, f := range [][]string{{"spec", "source", "repoURL"}, {"spec", "destination", "namespace"}} {
		if v, _, _ := unstructured.NestedString(app.Object, f...); v == "" {
			t.Errorf("%s is empty", strings.Join(f, "."))
		}
	}
}

// TestSidecarSpec checks the parts of the sidecar image's spec
// (hack/image/sidecar.json, built by hack/image/build.sh sidecar) the
// plugin depends on; TestSidecarImage checks the image built from it.
func TestSidecarSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hack", "image", "sidecar.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Images []struct {
			Config struct {
				User       string
				Entrypoint []string
				WorkingDir string
				Env        []string
			}
		}
	}
	if err := json.Unmarshal(data, &spec); err != nil || len(spec.Images) != 1 {
		t.Fatalf("sidecar.json: %v, %d images; want one", err, len(spec.Images))
	}
	cfg := spec.Images[0].Config
	// 999 is the repo-server's argocd user, which owns the shared socket
	// directory; argocd-cmp-server is the one the init container copies.
	if cfg.User != "999:999" || strings.Join(cfg.Entrypoint, " ") != "/var/run/argocd/argocd-cmp-server" ||
		cfg.WorkingDir != "/home/argocd" || !slices.Contains(cfg.Env, "HOME=/home/argocd") {
		t.Errorf("sidecar.json config %+v: want user 999:999, entrypoint /var/run/argocd/argocd-cmp-server, home and working directory /home/argocd", cfg)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "image", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deploy/argocd/plugin.yaml\" \"$s/app/home/argocd/cmp-server/config/plugin.yaml\"",
		"deploy/argocd/jobset-flux-cmp\" \"$s/app/usr/local/bin/jobset-flux-cmp\""} {
		if !strings.Contains(string(script), want) {
			t.Errorf("hack/image/build.sh lacks %q", want)
		}
	}
}

func readYAML(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// namedMaps indexes a list of objects with a name field (containers, env,
// volumes) by name.
func namedMaps(list any) map[string]map[string]any {
	out := map[string]map[string]any{}
	items, _ := list.([]any)
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				out[name] = m
			}
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
