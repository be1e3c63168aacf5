package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Paths and names of view-mount: image, where the view image is an image
// volume of the pod (read-only, pulled once per node) instead of a copy.
const (
	// ViewVolume is the image volume of the view image.
	ViewVolume = "flux-view"
	// ViewsDir is where the image's Spack views are mounted: at their own
	// path, so that the links in them (absolute in Spack's views, relative
	// in others) resolve as they do in the image.
	ViewsDir = "/opt/views"
	// MountedViewDir is the view in the mounted views (/opt/view links to
	// it in a flux-view image). The entrypoint links ViewDir to it, so
	// that the view is at the same path in both modes.
	MountedViewDir = ViewsDir + "/view"
	// ViewsSubPath and SoftwareSubPath are the image volume's subPaths
	// mounted at ViewsDir and SoftwareDir: real directories of the image,
	// never a symlink (the runtime resolves a subPath inside the image,
	// but the bind mount would follow an absolute link on the node).
	ViewsSubPath    = "opt/views"
	SoftwareSubPath = "opt/software"
)

// MountsView reports whether the pods mount the view image as an image
// volume (view-mount: image) rather than copy it.
func (p *Plan) MountsView() bool { return mountsView(&p.Settings) }

// CopiesView reports whether the flux-installer init container copies the
// view into the pods (view-mount: copy with a view image).
func (p *Plan) CopiesView() bool { return !p.ImageFlux && !p.MountsView() }

func mountsView(s *settings.Settings) bool {
	return !imageFlux(s) && s.ViewMount == settings.ViewMountImage
}

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
