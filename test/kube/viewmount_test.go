package kube

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// The view-mount modes every Flux-level test on the cluster runs in: copy
// (the flux-installer copies the view into each pod) and image (the view
// image is an image volume: containerd 2 with Kubernetes 1.35's
// ImageVolume, on by default). The same test, the same checks, twice.
const (
	copyMode  = "copy"
	imageMode = "image"
)

var viewMounts = []string{copyMode, imageMode}

// allViewMountsEnv, set to 1, runs every case in both modes
// (make test-kube-all-modes); without it a case runs in image mode too
// only if imageModeCases names it.
const allViewMountsEnv = "JOBSET_FLUX_KUBE_ALL_VIEW_MOUNTS"

// imageModeCases are the cases make test runs in image mode as well as in
// copy mode, each with where the mounted view could behave otherwise than
// the copied one. Image mode changes only how the view reaches the pod,
// not what the brokers do with it, so the rest of the matrix runs in copy
// mode: running all of it twice cost about 4 minutes of the 15-minute
// budget of a warm make test (docs/contributing/kubernetes-tests.md).
//
// Left out, each covered by a case above: examples/lammps (MPI under the
// mounted view's job shell: mpi/openmpi-pmix), core-only (a view image
// of the user's choice becomes the image volume's reference:
// pkg/transform's TestViewMountImagePods; the mount is the same),
// security/nonroot (security/restricted is uid 1001 too, and more).
var imageModeCases = map[string]string{
	"examples/interactive": "kubectl exec with the mounted view's bin on PATH, as the README says",
	"grid/two":             "several replicatedJobs and Jobs, the image volume in each pod template",
	"security/restricted":  "uid 1001 reads the image volume, under seccomp with no capabilities",
	"mpi/openmpi-pmix":     "flux-pmix's pmix.so and its rc file loaded from the read-only mounted view, the MPI from the app image",
}

// viewMountsFor is the modes case runs in: both when imageModeCases names
// it or allViewMountsEnv is 1, else copy mode alone.
func viewMountsFor(name string) []string {
	askedModes.Lock()
	askedModes.names[name] = true
	askedModes.Unlock()
	if _, ok := imageModeCases[name]; ok || os.Getenv(allViewMountsEnv) == "1" {
		return viewMounts
	}
	return []string{copyMode}
}

// askedModes records the case names viewMountsFor was asked about, so
// that TestMain can tell a name in imageModeCases that no case has (a
// typo would quietly take that case out of image mode).
var askedModes = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// unknownImageModeCases is the names of imageModeCases no case asked
// about, sorted.
func unknownImageModeCases() []string {
	askedModes.Lock()
	defer askedModes.Unlock()
	var out []string
	for name := range imageModeCases {
		if !askedModes.names[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// inEachViewMount runs run as one parallel subtest per view-mount mode of
// case name (viewMountsFor), named for the mode.
func inEachViewMount(t *testing.T, name string, run func(t *testing.T, mode string)) {
	for _, mode := range viewMountsFor(name) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			run(t, mode)
		})
	}
}

// copyOnlyExamples are the examples that have no view to mount, with why:
// they run in copy mode only (image mode refuses to render them, which
// pkg/transform's TestViewMountErrors shows).
var copyOnlyExamples = map[string]string{
	"own-flux": "the image's own Flux (view-image none)",
}

// withMode adds the view-mount annotation of mode to annotations (a new
// map; nil stays usable).
func withMode(mode string, annotations map[string]string) map[string]string {
	ann := map[string]string{"flux-framework.org/view-mount": mode}
	for k, v := range annotations {
		ann[k] = v
	}
	return ann
}

// checkViewMount checks, on the leader's pod as the API server stored
// it, that mode shaped the pod: the flux-installer and no image volume in
// copy mode; no flux-installer and the view image volume in image mode,
// whose entrypoint says it runs the mounted view (log: the app
// container's).
func checkViewMount(t *testing.T, mode string, leader object, log string) {
	t.Helper()
	installer := false
	for _, c := range leader.Spec.InitContainers {
		installer = installer || c.Name == "flux-installer"
	}
	image := ""
	for _, v := range leader.Spec.Volumes {
		if v.Name == "flux-view" && v.Image != nil {
			image = v.Image.Reference
		}
	}
	switch {
	case mode == copyMode && (!installer || image != ""):
		t.Errorf("copy mode: %s has flux-installer %v, image volume %q; want the installer and no image volume", leader.Metadata.Name, installer, image)
	case mode == imageMode && (installer || image == ""):
		t.Errorf("image mode: %s has flux-installer %v, image volume %q; want no installer and the view image volume", leader.Metadata.Name, installer, image)
	case mode == imageMode && !strings.Contains(log, "using the mounted Flux view in /mnt/flux/install/view"):
		t.Errorf("image mode: the leader's log does not say it runs the mounted view:\n%s", lastLines(log, 20))
	}
}

// exampleBase is a copy of an example whose function config also sets
// network-policy to true and, but in copy mode (the default), view-mount
// to mode: the examples run in
// tenant namespaces (tenant_test.go), whose default-deny NetworkPolicy
// lets an instance form only with the policy the render writes.
func exampleBase(t *testing.T, example, mode string) string {
	t.Helper()
	src := filepath.Join(env.repo, "examples", example)
	dst := filepath.Join(t.TempDir(), example)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, "flux.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var config map[string]any
	if err := yaml.Unmarshal(b, &config); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// A JobSetFlux takes the fields, a ConfigMap config the settings' names.
	field, set := "spec", map[string]any{"networkPolicy": true}
	if config["kind"] == "ConfigMap" {
		field, set = "data", map[string]any{"network-policy": "true"}
	}
	if mode != copyMode {
		if field == "spec" {
			set["viewMount"] = mode
		} else {
			set["view-mount"] = mode
		}
	}
	if env.ipFamily == ipv6 {
		if field == "spec" {
			set["ipFamily"] = ipv6
		} else {
			set["ip-family"] = ipv6
		}
	}
	m, _ := config[field].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	maps.Copy(m, set)
	config[field] = m
	if b, err = yaml.Marshal(config); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
