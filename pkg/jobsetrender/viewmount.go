package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// viewImageVolume is the view image as an image volume (view-mount:
// image): the kubelet has the runtime pull it once per node and mount its
// content read-only into every pod that names it. No pullPolicy is
// written: the default follows the reference's tag as a container
// image's does (Always for :latest, else IfNotPresent), which is what the
// flux-installer's image gets in copy mode.
func viewImageVolume(ref string) *yaml.Node {
	return volume(plan.ViewVolume, "image", yamltree.Map(yamltree.KV("reference", yamltree.String(ref))))
}

// viewImageMounts put the view image's Spack tree where the RUNPATHs of
// its binaries point (/opt/software) and its views at their own path
// (/opt/views), each a read-only subPath of the one image volume (image
// volumes are always read-only; the API requires readOnly or the kubelet
// sets it, so it is written). The entrypoint links the view into the
// install volume, where copy mode's view is.
func viewImageMounts() []*yaml.Node {
	return []*yaml.Node{
		subPathMount(plan.ViewVolume, plan.SoftwareDir, plan.SoftwareSubPath),
		subPathMount(plan.ViewVolume, plan.ViewsDir, plan.ViewsSubPath),
	}
}
