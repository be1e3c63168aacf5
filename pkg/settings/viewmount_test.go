package settings_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// TestCheckMountableView: view-mount image needs an image with the
// flux-view layout: none and the Flux project's own images (Flux under
// /usr) are refused with the reason, any registry, tag or digest; views
// and names the function does not know (a site's own view) pass.
func TestCheckMountableView(t *testing.T) {
	for _, ref := range []string{
		settings.Defaults().ViewImage,
		"ghcr.io/converged-computing/flux-view-rocky:tag-9",
		"registry.example:5000/hpc/flux-view-ubuntu:tag-noble",
		"my-site/views/flux-sched-view:1",
		"flux-sched-extra:1",
		"localhost:5000/flux-core-view",
	} {
		if err := settings.CheckMountableView(ref); err != nil {
			t.Errorf("%s: %v, want it accepted", ref, err)
		}
	}
	for ref, want := range map[string]string{
		settings.NoView: "there is none to mount",
		"ghcr.io/flux-framework/flux-sched:noble": "is a Flux image, not a flux-view image",
		"fluxrm/flux-core":                        "is a Flux image",
		"localhost:5000/flux-sched":               "is a Flux image",
		"docker.io/fluxrm/flux-sched:jammy@sha256:" + strings.Repeat("a", 64): "is a Flux image",
	} {
		err := settings.CheckMountableView(ref)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", ref, err, want)
		}
	}
}

// TestViewMountDefault: copy stays the default until clusters commonly
// have image volumes.
func TestViewMountDefault(t *testing.T) {
	if got := settings.Defaults().ViewMount; got != settings.ViewMountCopy {
		t.Errorf("default view-mount %q, want %q", got, settings.ViewMountCopy)
	}
}
