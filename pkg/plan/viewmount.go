package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// MountsView reports whether the pods mount the view image as an image
// volume (view-mount: image) rather than copy it.
func (p *Plan) MountsView() bool { return mountsView(&p.Settings) }

// CopiesView reports whether the flux-installer init container copies the
// view into the pods (view-mount: copy with a view image).
func (p *Plan) CopiesView() bool { return !p.ImageFlux && !p.MountsView() }

// checkViewMount refuses view-mount: image where there is no flux-view
// image to mount: the image's own Flux (view-image none or flux-path), or
// a Flux image named as the view image. The error sits where view-mount
// was set, or where the view image was when that is what must change.
func checkViewMount(s *settings.Settings) finding.List {
	var found finding.List
	if s.ViewMount != settings.ViewMountImage {
		return found
	}
	at := s.Origin("view-mount")
	if imageFlux(s) {
		why := "view-image is none (" + s.Origin("view-image") + ")"
		if s.FluxPath != "" {
			why = "flux-path is set (" + s.Origin("flux-path") + "), which implies view-image none"
		}
		found.Errorf(at, "view-mount is image, but %s: the image's own Flux needs no view, so there is no view image to mount; set view-mount to copy (or remove it), or set view-image to a flux-view image such as %s", why, settings.Defaults().ViewImage)
		return found
	}
	if err := settings.CheckMountableView(s.ViewImage); err != nil {
		found.Errorf(s.Origin("view-image"), "view-mount is image (%s), but %v; set view-image to a flux-view image such as %s (and run the Flux image as the container's own image with view-image none), or set view-mount to copy", at, err, settings.Defaults().ViewImage)
	}
	return found
}
