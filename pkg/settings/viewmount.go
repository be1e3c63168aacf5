package settings

import (
	"fmt"
	"strings"
)

// The view-mount values.
const (
	// ViewMountCopy: the flux-installer init container copies the view
	// into emptyDirs of every pod (works on any cluster).
	ViewMountCopy = "copy"
	// ViewMountImage: the view image is mounted read-only as an image
	// volume (Kubernetes image volumes, KEP-4639): pulled once per node,
	// shared by every pod on it, nothing copied.
	ViewMountImage = "image"
)

// The view-copy-medium values.
const (
	// ViewCopyMemory: the copy of the view's software tree is held in a
	// memory-backed emptyDir. Writing it costs the node a tenth of the
	// CPU a disk-backed copy does (block allocation, journal, writeback),
	// which every pod of an instance pays at once; its pages count toward
	// the pod's memory.
	ViewCopyMemory = "memory"
	// ViewCopyDisk: the copy goes to an emptyDir on the node's disk.
	ViewCopyDisk = "disk"
)

// fluxImageRepos are the last path components of images that carry Flux
// installed as a system package (under /usr), not a flux-view layout
// (/opt/view linking into a Spack tree at /opt/software): the Flux
// Framework project's own images, which users reach for as "the Flux
// image". A copy of one fails in the flux-installer at run time; mounted
// as a volume it fails every pod before it starts, so view-mount: image
// refuses it at render time.
var fluxImageRepos = []string{"flux-core", "flux-sched"}

// CheckMountableView reports why the view-image ref cannot be mounted as
// a flux-view layout, or nil when it may be: none (there is no view
// image), or a known Flux image rather than a view. A name the function
// does not know (a site's own view build) is accepted: the entrypoint
// checks the mounted layout when the pod starts.
func CheckMountableView(ref string) error {
	if ref == NoView {
		return fmt.Errorf("view-image is %q: the image's own Flux needs no view, so there is none to mount", NoView)
	}
	if repo := repositoryName(ref); isFluxImage(repo) {
		return fmt.Errorf("view-image %q is a Flux image, not a flux-view image: it installs Flux under /usr and has no /opt/views and /opt/software tree to mount", ref)
	}
	return nil
}

// isFluxImage reports whether the repository's last component names one
// of fluxImageRepos (flux-view images are named flux-view-<os>).
func isFluxImage(repo string) bool {
	last := repo[strings.LastIndexByte(repo, '/')+1:]
	for _, r := range fluxImageRepos {
		if last == r {
			return true
		}
	}
	return false
}

// repositoryName is an image reference without its digest and tag (a
// registry's port, before the first slash, is not a tag).
func repositoryName(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref
}
