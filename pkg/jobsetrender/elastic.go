package jobsetrender

import (
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The keys of a replicatedJob's Job template that hold its metadata.
const (
	templateKey    = "template"
	metadataKey    = "metadata"
	annotationsKey = "annotations"
)

// markSizes writes an elastic group's smallest and largest size on its
// Job template (rj), where the cluster's admission policy reads them.
func markSizes(rj *yaml.Node, g plan.Group) {
	if !g.Elastic {
		return
	}
	template := yamltree.Get(rj, templateKey)
	if template == nil || template.Kind != yaml.MappingNode {
		return
	}
	meta := yamltree.EnsureMap(template, metadataKey, jobset.SpecKey)
	annotations := yamltree.EnsureMap(meta, annotationsKey, "")
	yamltree.Set(annotations, plan.MinSizeAnnotation, yamltree.String(strconv.Itoa(g.MinPods)), "")
	yamltree.Set(annotations, plan.MaxSizeAnnotation, yamltree.String(strconv.Itoa(g.PodsPerJob)), "")
}

// stripSizes removes the sizes markSizes wrote from every replicatedJob,
// and the maps it made to hold them when nothing else is left in them (a
// metadata map the user wrote empty is in flow style, {}, and stays). The
// keys are the function's own, so whoever wrote them, they go.
func stripSizes(root *yaml.Node) {
	rjs, _ := jobset.ReplicatedJobNodes(root)
	for _, rj := range rjs {
		meta := yamltree.GetPath(rj, templateKey, metadataKey)
		annotations := yamltree.Get(meta, annotationsKey)
		if annotations == nil || annotations.Kind != yaml.MappingNode {
			continue
		}
		held := len(annotations.Content)
		removeKey(annotations, plan.MinSizeAnnotation)
		removeKey(annotations, plan.MaxSizeAnnotation)
		// Only the function writes its keys, so a map they alone were in
		// is one it made, whatever style it was read back in (an empty
		// annotations map of the user's, {}, goes with them: it says
		// nothing).
		if len(annotations.Content) == 0 && held > 0 {
			removeKey(meta, annotationsKey)
			if emptyBlockMap(meta) {
				removeKey(yamltree.Get(rj, templateKey), metadataKey)
			}
		}
	}
}

// emptyBlockMap reports whether m is a map left empty by a removal.
func emptyBlockMap(m *yaml.Node) bool {
	return m != nil && m.Kind == yaml.MappingNode && len(m.Content) == 0 && m.Style&yaml.FlowStyle == 0
}
