package jobsetrender

import (
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// podSpecOf is the pod spec of a replicatedJob, nil when it has none.
func podSpecOf(rj *yaml.Node) *yaml.Node { return jobset.PodSpec(jobset.JobSpec(rj)) }

// stripRendering removes, from every pod template of a JobSet, what an
// earlier run of the function added, before the JobSet is read, and only
// that. What the function added is recognised by its whole shape, not by
// its name: a pod counts as rendered only when it holds the
// flux-installer init container exactly as installer writes it (any
// image) or, rendered for an image with its own Flux, all of that mode's
// volumes exactly as fluxVolumes writes them. Then the volumes exactly as
// addFlux writes them (any ConfigMap or Secret name, shm size) are
// removed, and the mounts and the entrypoint only from the one container
// the function wrapped (wrappedContainer): a sidecar or another container
// that mounts the function's volumes itself keeps its mounts. A user's own
// flux-config volume or flux-installer container stays, and is reported
// by the checks that follow as a name the function needs.
//
// A list that ends up empty stays in its place, as an empty list, so that
// the render puts its items back where they were; dropEmptied removes the
// ones the render did not fill again. It reports whether any pod held a
// rendering.
func stripRendering(root *yaml.Node) bool {
	rjs, ok := jobset.ReplicatedJobNodes(root)
	if !ok {
		return false
	}
	patterns := renderingPatterns()
	stripped := stripDefaults(root)
	stripRestartPolicies(root)
	stripSizes(root)
	for _, rj := range rjs {
		if pod := podSpecOf(rj); pod != nil && stripPod(pod, patterns) {
			stripped = true
		}
	}
	return stripped
}

// stripPod removes one pod template's rendering, when it holds one, and
// reports whether it did.
func stripPod(pod *yaml.Node, pt patterns) bool {
	mounts := pt.mounts
	installed := removeMatching(pod, jobset.InitContainersKey, pt.installer) > 0
	if !installed {
		// A mounted view's volumes include an image Flux's: it goes first.
		switch {
		case holdsAll(pod, jobset.VolumesKey, pt.mountedViewVolumes):
			mounts = pt.mountedViewMounts
		case holdsAll(pod, jobset.VolumesKey, pt.imageFluxVolumes):
			mounts = pt.imageFluxMounts
		default:
			return false
		}
	}
	if holdsAny(pod, jobset.VolumesKey, pt.shmVolumes) {
		mounts = append(mounts[:len(mounts):len(mounts)], pt.shmMount)
	}
	removeMatching(pod, jobset.VolumesKey, pt.volumes)
	if !installed {
		keepInstallerPlace(pod)
	}
	if c := wrappedContainer(pod, mounts); c != nil {
		removeMatching(c, jobset.VolumeMountsKey, mounts)
		removeMatching(c, jobset.VolumeMountsKey, pt.stateMounts)
		removeMatching(c, envKey, []*yaml.Node{ownerUIDEnv()})
		unwrapCommand(c)
		if probe, ok := yamltree.Lookup(c, startupProbeKey); ok && matchesAny(probe, pt.startupProbes) {
			removeKey(c, startupProbeKey)
		}
	}
	return true
}

// keepInstallerPlace puts an empty initContainers list where a render
// that copies the view would have written it, in a pod rendered without
// one (view-mount: image, or an image with its own Flux) whose volumes
// were all the function's: before the volumes, so that switching such a
// pod to copy mode writes the same bytes as rendering the user's pod
// afresh. A render that adds no installer leaves it empty, and
// dropEmptied removes it.
func keepInstallerPlace(pod *yaml.Node) {
	if _, ok := yamltree.Lookup(pod, jobset.InitContainersKey); ok {
		return
	}
	if v := yamltree.Get(pod, jobset.VolumesKey); v != nil && v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		yamltree.Set(pod, jobset.InitContainersKey, yamltree.Seq(), jobset.VolumesKey)
	}
}

// unrender removes the rendering from a JobSet that an earlier run
// rendered and that is now disabled (flux-framework.org/enabled: "false"),
// whose generated ConfigMap and Secret the pruning removes: its pods would
// otherwise mount objects that no longer exist and run the entrypoint of
// a broker that has no config. It returns the JobSet, and whether it held
// a rendering; a JobSet with aliases or with a key written twice (an
// error) is left as it is.
func unrender(item *fn.KubeObject) (*fn.KubeObject, bool) {
	if item.GetKind() != jobset.Kind || item.GetAPIVersion() != jobset.APIVersion || item.IsLocalConfig() ||
		item.GetAnnotation(settings.EnabledAnnotation) != "false" || len(finding.DuplicateKeys(yamltree.NodeOf(item))) > 0 {
		return item, false
	}
	rn := item.CopyToResourceNode()
	if yamltree.HasAlias(rn.YNode()) || !stripRendering(rn.YNode()) {
		return item, false
	}
	dropEmptied(rn.YNode())
	return fn.MoveToKubeObject(rn), true
}

// wrappedContainer returns the container the function wrapped: the first
// whose command starts with the entrypoint and that holds every mount the
// function adds to the container it wraps (mounts). The function wraps one
// container per pod; a container that only mounts some of the function's
// volumes (a sidecar reading the config) is the user's.
func wrappedContainer(pod *yaml.Node, mounts []*yaml.Node) *yaml.Node {
	containers := yamltree.Get(pod, jobset.ContainersKey)
	if containers == nil || containers.Kind != yaml.SequenceNode {
		return nil
	}
	for _, c := range containers.Content {
		cmd := yamltree.Get(c, jobset.CommandKey)
		if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 || cmd.Content[0].Value != plan.EntrypointPath {
			continue
		}
		if holdsAll(c, jobset.VolumeMountsKey, mounts) {
			return c
		}
	}
	return nil
}

// dropEmptied removes, from every pod template of a JobSet, the lists that
// stripRendering emptied and the render did not fill again (the
// replicatedJob or the container is no longer wrapped): an empty list in
// block style, which no YAML text can hold (an empty list is written [],
// in flow style), so none of them is the user's.
func dropEmptied(root *yaml.Node) {
	rjs, _ := jobset.ReplicatedJobNodes(root)
	for _, rj := range rjs {
		pod := podSpecOf(rj)
		if pod == nil {
			continue
		}
		dropEmptyBlockLists(pod, jobset.InitContainersKey, jobset.VolumesKey)
		if containers := yamltree.Get(pod, jobset.ContainersKey); containers != nil && containers.Kind == yaml.SequenceNode {
			for _, c := range containers.Content {
				dropEmptyBlockLists(c, jobset.VolumeMountsKey, jobset.CommandKey, envKey)
			}
		}
	}
}

// dropEmptyBlockLists removes each of keys from the map m whose value is
// an empty list in block style.
func dropEmptyBlockLists(m *yaml.Node, keys ...string) {
	for _, k := range keys {
		if v, ok := yamltree.Lookup(m, k); ok && v.Kind == yaml.SequenceNode && len(v.Content) == 0 && v.Style&yaml.FlowStyle == 0 {
			removeKey(m, k)
		}
	}
}

// unwrapCommand removes the entrypoint from the front of a container's
// command. A command the function added is left as an empty list, in
// block style, for the render to fill again or dropEmptied to remove.
func unwrapCommand(c *yaml.Node) {
	cmd := yamltree.Get(c, jobset.CommandKey)
	if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 || cmd.Content[0].Value != plan.EntrypointPath {
		return
	}
	addFootComments(keyNode(c, jobset.CommandKey), takeComments(cmd.Content[0]))
	cmd.Content = cmd.Content[1:]
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
// mark it as rendered; so do mountedViewVolumes, those of a pod that
// mounts the view image (view-mount: image).
type patterns struct {
	installer, volumes, mounts, imageFluxVolumes, imageFluxMounts    []*yaml.Node
	mountedViewVolumes, mountedViewMounts, shmVolumes, startupProbes []*yaml.Node
	// stateMounts are the mounts only rank 0's group has: the state
	// claim's, of any volume, and the owner token's.
	stateMounts []*yaml.Node
	shmMount    *yaml.Node
}

func renderingPatterns() patterns {
	p := &plan.Plan{ViewImage: anyString, ConfigMapName: anyString, SecretName: anyString}
	var pt patterns
	// The installer's resources are derived from the wrapped container's
	// (or absent): a rendered installer with any resources, the user's
	// edits too, is the function's, and the render derives them again.
	inst := installer(p, plan.Group{})
	yamltree.Set(inst, "securityContext", yamltree.String(anyNode), "")
	withResources := installer(p, plan.Group{Installer: plan.Installer{Limits: jobset.Quantities{CPU: "1"}}})
	yamltree.Set(withResources, "securityContext", yamltree.String(anyNode), "")
	yamltree.Set(withResources, "resources", yamltree.String(anyNode), "")
	pt.installer = []*yaml.Node{inst, withResources}
	// Any period, timeout and threshold: they follow start-timeout, and
	// renders of earlier releases probed more often, with one file test
	// per exec and no timeout.
	probe := startupProbe(1)
	for _, key := range []string{"periodSeconds", "timeoutSeconds", "failureThreshold"} {
		yamltree.Set(probe, key, yamltree.String(anyNode), "")
	}
	earlier := yamltree.Map(
		yamltree.KV("exec", bashExec("[[ -e "+plan.JoinedPath+" ]]")),
		yamltree.KV("periodSeconds", yamltree.String(anyNode)),
		yamltree.KV("failureThreshold", yamltree.String(anyNode)),
	)
	pt.startupProbes = []*yaml.Node{probe, earlier}
	pt.shmVolumes = []*yaml.Node{shmVolume(""), shmVolume(anyString)}
	// Both media of the software volume: the setting may have changed
	// since, and renders of earlier releases copied to the disk only.
	other := []*yaml.Node{softwareVolume(settings.ViewCopyMemory), softwareVolume(settings.ViewCopyDisk), viewImageVolume(anyString)}
	other = append(other, stateVolume(anyString))
	pt.volumes = append(fluxVolumes(p), append(other, pt.shmVolumes...)...)
	pt.stateMounts = []*yaml.Node{mount(anyString, plan.StateMountDir), readOnlyMount(plan.OwnerTokenVolume, plan.OwnerTokenDir)}
	pt.volumes = append(pt.volumes, ownerTokenVolume())
	pt.mounts = fluxMounts(p)
	pt.shmMount = shmMount()
	imageFlux := *p
	imageFlux.ImageFlux = true
	pt.imageFluxVolumes = fluxVolumes(&imageFlux)
	pt.imageFluxMounts = fluxMounts(&imageFlux)
	mounted := *p
	mounted.Settings.ViewMount = settings.ViewMountImage
	pt.mountedViewVolumes = fluxVolumes(&mounted)
	pt.mountedViewMounts = fluxMounts(&mounted)
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

// holdsAny reports whether the list at key has an item matching one of
// patterns.
func holdsAny(m *yaml.Node, key string, patterns []*yaml.Node) bool {
	list := yamltree.Get(m, key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return false
	}
	return slices.ContainsFunc(list.Content, func(item *yaml.Node) bool { return matchesAny(item, patterns) })
}

// matchesAny reports whether n matches one of patterns.
func matchesAny(n *yaml.Node, patterns []*yaml.Node) bool {
	return slices.ContainsFunc(patterns, func(p *yaml.Node) bool { return matches(n, p) })
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
// patterns and returns how many it dropped. The list stays, empty if it
// ends up so (see stripRendering). A user's comment that the YAML reader
// attached to a dropped item (a comment after the last item of a list,
// or at the end of the file, is attached to the deepest last node before
// it, which is often one the function added) is kept, after the list.
func removeMatching(m *yaml.Node, key string, patterns []*yaml.Node) int {
	list := yamltree.Get(m, key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return 0
	}
	kept := list.Content[:0]
	var comments []string
	for _, item := range list.Content {
		if matchesAny(item, patterns) {
			comments = append(comments, takeComments(item)...)
		} else {
			kept = append(kept, item)
		}
	}
	removed := len(list.Content) - len(kept)
	list.Content = kept
	addFootComments(keyNode(m, key), comments)
	return removed
}

// Unrender is unrender, with an info on the JobSet returned saying what
// was removed.
func Unrender(item *fn.KubeObject) (*fn.KubeObject, finding.List) {
	out, ok := unrender(item)
	var found finding.List
	if ok {
		found.Infof("metadata.annotations["+settings.EnabledAnnotation+"]", "is \"false\": removed the Flux init container, volumes, mounts and entrypoint that jobset-flux had added, and the Job, pod and spec.network fields it had set (recorded in %s)", DefaultsAnnotation)
	}
	return out, found
}
