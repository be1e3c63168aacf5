package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chartDir is the test chart: one JobSet marked for Flux.
func chartDir() string { return filepath.Join("testdata", "chart") }

// emptyConfig is kustomize's transformer config when the post-renderer
// is given none: a JobSetFlux without settings, the defaults.
const emptyConfig = `apiVersion: fn.flux-framework.org/v1alpha1
kind: JobSetFlux
metadata:
  name: flux
  annotations:
    config.kubernetes.io/local-config: "true"
    config.kubernetes.io/function: |
      exec:
        path: jobset-flux
spec: {}
`

// helm template through the post-renderer gives the objects kustomize
// gives on the same JobSet (the chart rendered without a post-renderer)
// with the same seed: without arguments, and with a --config passed
// through --post-renderer-args (Helm 3 in order, Helm 4 through the
// plugin's script), whose setting shows in the output.
func TestTemplateMatchesKustomize(t *testing.T) {
	config, err := os.ReadFile(filepath.Join("testdata", "flux.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, major := range []int{3, 4} {
		for _, tc := range []struct {
			name   string
			fnArgs []string
			config string
			want   string // a line only this config renders
		}{
			{"defaults", nil, emptyConfig, "default_port = 8050"},
			{"--config", []string{"--config", filepath.Join("testdata", "flux.yaml")}, string(config), "default_port = 9123"},
		} {
			t.Run(fmt.Sprintf("helm%d/%s", major, tc.name), func(t *testing.T) {
				h := newHelm(t, major)
				plain := h.must("template", "hello", chartDir())
				rendered := h.must(append([]string{"template", "hello", chartDir()}, h.postRender(tc.fnArgs...)...)...)
				got := objects(t, rendered)
				for _, id := range []string{"JobSet/default/hello", "ConfigMap/default/hello-flux-entrypoint", "Secret/default/hello-flux-curve"} {
					if got[id] == nil {
						t.Errorf("helm template through jobset-flux lacks %s:\n%s", id, rendered)
					}
				}
				if !strings.Contains(rendered, tc.want) {
					t.Errorf("the render lacks %q: the config did not reach the function", tc.want)
				}
				sameObjects(t, "helm template vs kustomize", got, objects(t, kustomizeBuild(t, plain, tc.config)))
			})
		}
	}
}

// A JobSet the function refuses (port 99999) makes helm template,
// install and upgrade fail. Helm 3 puts the function's stderr, the
// error result naming the JobSet, the field and the fix, into its error.
// Helm 4.3.2 runs a plugin with its stderr in a buffer it never prints
// (internal/plugin/runtime_subprocess.go, runPostrenderer): its error
// names the plugin only. The Helm 4 case checks exactly that, so that a
// Helm that starts showing the message fails here and docs/user/helm.md's
// advice (run `helm template ... | jobset-flux -` to see why) is revised.
func TestRefusal(t *testing.T) {
	for _, major := range []int{3, 4} {
		t.Run(fmt.Sprintf("helm%d", major), func(t *testing.T) {
			h := newHelm(t, major)
			set := []string{"--set", "flux.port=99999"}
			plain := h.must(append([]string{"template", "hello", chartDir()}, set...)...)
			fnOut, fnErr, fnCode := runFunction(t, plain)
			if fnCode != 1 || fnOut != "" || !strings.Contains(fnErr, "flux-framework.org/port") || !strings.Contains(fnErr, "99999") {
				t.Fatalf("jobset-flux itself: exit %d, stdout %q, stderr %q; want exit 1 and the port's error", fnCode, fnOut, fnErr)
			}
			args := append(append([]string{"template", "hello", chartDir()}, set...), h.postRender()...)
			out, stderr, code := h.run(args...)
			if code == 0 || strings.Contains(out, "kind: JobSet") {
				t.Fatalf("helm%d template of a refused JobSet: exit %d, stdout:\n%s", major, code, out)
			}
			if major == 3 {
				for _, line := range strings.Split(strings.TrimSpace(fnErr), "\n") {
					if !strings.Contains(stderr, line) {
						t.Errorf("helm3's error lacks the function's line %q:\n%s", line, stderr)
					}
				}
				return
			}
			if !strings.Contains(stderr, `failed to invoke post-renderer plugin "jobset-flux"`) || !strings.Contains(stderr, "exited with error") {
				t.Errorf("helm4's error does not name the plugin's failure:\n%s", stderr)
			}
			if strings.Contains(stderr, "99999") {
				t.Errorf("helm4 now shows the function's message: update docs/user/helm.md (Helm 4 errors) and this test:\n%s", stderr)
			}
		})
	}
}

// The key seed is what keeps the Secret, and with it the rendered
// manifest, the same from one render to the next, so that helm upgrade
// of an unchanged chart changes nothing: with it two renders are equal
// byte for byte; without it each render makes a new key (the Secret and
// the pods' certificate checksum change).
func TestSeedKeepsRendersEqual(t *testing.T) {
	for _, major := range []int{3, 4} {
		t.Run(fmt.Sprintf("helm%d", major), func(t *testing.T) {
			h := newHelm(t, major)
			args := append([]string{"template", "hello", chartDir()}, h.postRender()...)
			if first, second := h.must(args...), h.must(args...); first != second {
				t.Errorf("two renders with the seed differ:\n--- first\n%s\n--- second\n%s", first, second)
			}
			h.seed = ""
			first, second := objects(t, h.must(args...)), objects(t, h.must(args...))
			s1, s2 := first["Secret/default/hello-flux-curve"], second["Secret/default/hello-flux-curve"]
			if s1 == nil || s2 == nil {
				t.Fatal("no Secret hello-flux-curve in the renders without a seed")
			}
			if fmt.Sprint(s1["data"]) == fmt.Sprint(s2["data"]) {
				t.Error("two renders without a seed have the same key: the seed is not what keeps it")
			}
		})
	}
}
