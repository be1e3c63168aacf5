package transform

import (
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// podSpecOf is the pod spec of a replicatedJob, nil when it has none.
func podSpecOf(rj *yaml.Node) *yaml.Node { return jobset.PodSpec(jobset.JobSpec(rj)) }

// stripRendering removes, from every pod template of a JobSet, what an
// earlier run of the function added, before the JobSet is read. What the
// function added is recognised by its whole shape, not by its name: a
// pod counts as rendered only when it holds the flux-installer init
// container exactly as installer writes it (any image) or, rendered for an
// image with its own Flux, all of that mode's volumes exactly as
// fluxVolumes writes them. Then only volumes and mounts exactly as addFlux
// writes them (any ConfigMap or Secret name, shm size) are removed, and
// the entrypoint only from the commands of containers that had such
// mounts. A user's own flux-config
// volume or flux-installer container stays, and is reported by the checks
// that follow as a name the function needs.
func stripRendering(root *yaml.Node) {
	rjs, ok := jobset.ReplicatedJobNodes(root)
	if !ok {
		return
	}
	patterns := renderingPatterns()
	for _, rj := range rjs {
		pod := podSpecOf(rj)
		if pod == nil {
			continue
		}
		if removeMatching(pod, jobset.InitContainersKey, patterns.installer) == 0 && !holdsAll(pod, jobset.VolumesKey, patterns.imageFluxVolumes) {
			continue
		}
		removeMatching(pod, jobset.VolumesKey, patterns.volumes)
		containers := yamltree.Get(pod, jobset.ContainersKey)
		if containers == nil || containers.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range containers.Content {
			if removeMatching(c, jobset.VolumeMountsKey, patterns.mounts) > 0 {
				unwrapCommand(c)
			}
		}
	}
}

// unwrapCommand removes the entrypoint from the front of a container's
// command, and the command when the function added it.
func unwrapCommand(c *yaml.Node) {
	cmd := yamltree.Get(c, jobset.CommandKey)
	if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 || cmd.Content[0].Value != plan.EntrypointPath {
		return
	}
	cmd.Content = cmd.Content[1:]
	// The function writes a command it adds in block style; a flow-style
	// [] was the user's, and is kept so that the next render writes it
	// the same way again.
	if len(cmd.Content) == 0 && cmd.Style&yaml.FlowStyle == 0 {
		yamltree.Remove(c, jobset.CommandKey)
	}
}

// anyString, as the value of a pattern's scalar, matches any string: the
// view image, the ConfigMap and Secret names and the shm size depend on
// settings and names that may change between renders. anyNode matches
// anything: the init container's securityContext has grown between
// versions of the function, whose renderings must still be recognised.
const (
	anyString = "\x00jobset-flux:any-string"
	anyNode   = "\x00jobset-flux:any-node"
)

// patterns are the shapes of what addFlux writes. imageFluxVolumes are
// the volumes of a pod whose image carries Flux (view-image: none), which
// has no installer to recognise it by: all of them, in their exact shape,
// mark it as rendered.
type patterns struct {
	installer, volumes, mounts, imageFluxVolumes []*yaml.Node
}

func renderingPatterns() patterns {
	p := &plan.Plan{ViewImage: anyString, ConfigMapName: anyString, SecretName: anyString}
	var pt patterns
	inst := installer(p, plan.Group{})
	yamltree.Set(inst, "securityContext", yamltree.String(anyNode), "")
	pt.installer = []*yaml.Node{inst}
	pt.volumes = append(fluxVolumes(p), shmVolume(""), shmVolume(anyString))
	pt.mounts = append(fluxMounts(p), shmMount())
	imageFlux := *p
	imageFlux.ImageFlux = true
	pt.imageFluxVolumes = fluxVolumes(&imageFlux)
	return pt
}

// holdsAll reports whether the list at key has an item matching each of
// patterns.
func holdsAll(m *yaml.Node, key string, patterns []*yaml.Node) bool {
	list := yamltree.Get(m, key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return false
	}
	for _, p := range patterns {
		if !slices.ContainsFunc(list.Content, func(item *yaml.Node) bool { return matches(item, p) }) {
			return false
		}
	}
	return true
}

// matches reports whether n has exactly the shape of pattern: the same
// kinds, tags and scalar values (anyString matching any string), map keys
// in any order, list items in order. Styles and comments do not count.
func matches(n, pattern *yaml.Node) bool {
	if pattern.Kind == yaml.ScalarNode && pattern.Value == anyNode {
		return true
	}
	if pattern.Kind == yaml.ScalarNode && pattern.Value == anyString {
		return n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagString
	}
	if n.Kind != pattern.Kind || n.ShortTag() != pattern.ShortTag() || len(n.Content) != len(pattern.Content) {
		return false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value == pattern.Value
	case yaml.MappingNode:
		return mapMatches(n, pattern)
	case yaml.SequenceNode:
		for i := range n.Content {
			if !matches(n.Content[i], pattern.Content[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// mapMatches reports whether the map n has each key of the map pattern,
// with a value that matches the pattern's.
func mapMatches(n, pattern *yaml.Node) bool {
	for i := 0; i+1 < len(pattern.Content); i += 2 {
		// A null counts as written: the pattern decides.
		v, ok := yamltree.Lookup(n, pattern.Content[i].Value)
		if !ok || !matches(v, pattern.Content[i+1]) {
			return false
		}
	}
	return true
}

// removeMatching drops the items of the list at key that match one of
// patterns, and the list when it ends up empty; it returns how many it
// dropped.
func removeMatching(m *yaml.Node, key string, patterns []*yaml.Node) int {
	list := yamltree.Get(m, key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return 0
	}
	kept := list.Content[:0]
	for _, item := range list.Content {
		if !slices.ContainsFunc(patterns, func(p *yaml.Node) bool { return matches(item, p) }) {
			kept = append(kept, item)
		}
	}
	removed := len(list.Content) - len(kept)
	list.Content = kept
	if removed > 0 && len(kept) == 0 {
		yamltree.Remove(m, key)
	}
	return removed
}
