package transform

import (
	"fmt"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// File modes of the mounted ConfigMap and Secret, written in decimal as
// the API stores them, with the octal in a comment for the reader.
const (
	scriptsMode = 0o555 // the scripts are executed directly
	// The Secret must be readable by whatever uid the broker runs as; the
	// entrypoint copies it to a private 0400 file before Flux reads it.
	certMode = 0o444
)

// applyPlan edits a JobSet's YAML in place: it adds the init container,
// volumes, mounts, wrapped command and the Job and network fields the plan
// asks for. An earlier rendering was stripped before the JobSet was read
// (stripRendering), so a re-run or a changed setting never doubles
// anything. It reads nothing but the plan.
func applyPlan(root *yaml.Node, p *plan.Plan) error {
	spec := get(root, "spec")
	rjs := get(spec, "replicatedJobs")
	if spec == nil || rjs == nil || rjs.Kind != yaml.SequenceNode {
		return fmt.Errorf("spec.replicatedJobs is not a list")
	}
	for _, g := range p.Groups {
		if g.Index >= len(rjs.Content) {
			return fmt.Errorf("spec.replicatedJobs[%d] is missing", g.Index)
		}
		job := get(get(rjs.Content[g.Index], "template"), "spec")
		pod := podSpec(rjs.Content[g.Index])
		if job == nil || pod == nil {
			return fmt.Errorf("spec.replicatedJobs[%d] has no pod template", g.Index)
		}
		setJobFields(job, pod, g)
		if err := addFlux(pod, p, g); err != nil {
			return fmt.Errorf("spec.replicatedJobs[%d]: %w", g.Index, err)
		}
	}
	if p.SetDNSHostnames || p.SetPublishNotReady {
		network := ensureMap(spec, "network", "replicatedJobs")
		if p.SetDNSHostnames {
			set(network, "enableDNSHostnames", boolean(true), "")
		}
		if p.SetPublishNotReady {
			set(network, "publishNotReadyAddresses", boolean(true), "")
		}
	}
	return nil
}

func podSpec(rj *yaml.Node) *yaml.Node {
	return get(get(get(get(rj, "template"), "spec"), "template"), "spec")
}

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
	rjs := get(get(root, "spec"), "replicatedJobs")
	if rjs == nil || rjs.Kind != yaml.SequenceNode {
		return
	}
	patterns := renderingPatterns()
	for _, rj := range rjs.Content {
		pod := podSpec(rj)
		if pod == nil {
			continue
		}
		if removeMatching(pod, "initContainers", patterns.installer) == 0 && !holdsAll(pod, "volumes", patterns.imageFluxVolumes) {
			continue
		}
		removeMatching(pod, "volumes", patterns.volumes)
		containers := get(pod, "containers")
		if containers == nil || containers.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range containers.Content {
			if removeMatching(c, "volumeMounts", patterns.mounts) == 0 {
				continue
			}
			cmd := get(c, "command")
			if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 || cmd.Content[0].Value != plan.EntrypointPath {
				continue
			}
			cmd.Content = cmd.Content[1:]
			// The function writes a command it adds in block style; a
			// flow-style [] was the user's, and is kept so that the next
			// render writes it the same way again.
			if len(cmd.Content) == 0 && cmd.Style&yaml.FlowStyle == 0 {
				remove(c, "command")
			}
		}
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
	set(inst, "securityContext", str(anyNode), "")
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
	list := get(m, key)
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
		for i := 0; i+1 < len(pattern.Content); i += 2 {
			v := get(n, pattern.Content[i].Value)
			if v == nil || !matches(v, pattern.Content[i+1]) {
				return false
			}
		}
		return true
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

// removeMatching drops the items of the list at key that match one of
// patterns, and the list when it ends up empty; it returns how many it
// dropped.
func removeMatching(m *yaml.Node, key string, patterns []*yaml.Node) int {
	list := get(m, key)
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
		remove(m, key)
	}
	return removed
}

func setJobFields(job, pod *yaml.Node, g plan.Group) {
	if g.Set.CompletionMode {
		set(job, "completionMode", str(jobset.IndexedCompletion), "template")
	}
	if g.Set.Completions {
		set(job, "completions", num(g.Completions), "template")
	}
	if g.Set.Parallelism {
		set(job, "parallelism", num(g.Completions), "template")
	}
	if g.Set.BackoffLimit {
		set(job, "backoffLimit", num(0), "template")
	}
	if g.Set.RestartPolicy {
		set(pod, "restartPolicy", str(jobset.RestartPolicyNever), "containers")
	}
}

func addFlux(pod *yaml.Node, p *plan.Plan, g plan.Group) error {
	containers := get(pod, "containers")
	if containers == nil || g.Container >= len(containers.Content) {
		return fmt.Errorf("container %d is missing", g.Container)
	}
	c := containers.Content[g.Container]

	// The user's own command items stay as written (quoting, comments);
	// the entrypoint goes in front. An earlier wrapping was stripped
	// before the JobSet was read. A command the function adds goes in
	// before the mounts it adds, so that a re-render, which removes both
	// and adds them again, writes them in the same order.
	if old := get(c, "command"); old != nil && old.Kind == yaml.SequenceNode {
		old.Content = append([]*yaml.Node{str(plan.EntrypointPath)}, old.Content...)
	} else {
		set(c, "command", stringList(plan.EntrypointPath), "args")
	}

	// An image with its own Flux needs no copy of the view: no init
	// container and no software volume (whose mount would hide the
	// image's own /opt/software). The install volume stays: it holds the
	// broker's private state.
	if !p.ImageFlux {
		init := ensureSeq(pod, "initContainers")
		init.Content = append(init.Content, installer(p, g))
	}

	volumes := ensureSeq(pod, "volumes")
	volumes.Content = append(volumes.Content, fluxVolumes(p)...)
	mounts := ensureSeq(c, "volumeMounts")
	mounts.Content = append(mounts.Content, fluxMounts(p)...)
	if !g.OwnShm {
		volumes.Content = append(volumes.Content, shmVolume(p.ShmSize))
		mounts.Content = append(mounts.Content, shmMount())
	}

	return nil
}

// fluxVolumes are the volumes of a wrapped pod, but for /dev/shm.
func fluxVolumes(p *plan.Plan) []*yaml.Node {
	volumes := []*yaml.Node{mapping("name", plan.InstallVolume, "emptyDir", mapping())}
	if !p.ImageFlux {
		volumes = append(volumes, mapping("name", plan.SoftwareVolume, "emptyDir", mapping()))
	}
	return append(volumes,
		mapping("name", plan.ConfigVolume, "configMap", mapping("name", p.ConfigMapName, "defaultMode", octal(scriptsMode))),
		mapping("name", plan.CurveVolume, "secret", mapping("secretName", p.SecretName, "defaultMode", octal(certMode))),
	)
}

// fluxMounts are the wrapped container's mounts of fluxVolumes.
func fluxMounts(p *plan.Plan) []*yaml.Node {
	mounts := []*yaml.Node{mapping("name", plan.InstallVolume, "mountPath", plan.InstallDir)}
	if !p.ImageFlux {
		mounts = append(mounts, mapping("name", plan.SoftwareVolume, "mountPath", plan.SoftwareDir))
	}
	return append(mounts,
		mapping("name", plan.ConfigVolume, "mountPath", plan.ConfigDir, "readOnly", true),
		mapping("name", plan.CurveVolume, "mountPath", plan.CurveDir, "readOnly", true),
	)
}

// shmVolume is the writable /dev/shm (size "" for no limit).
func shmVolume(size string) *yaml.Node {
	shm := mapping("medium", jobset.StorageMediumMemory)
	if size != "" {
		set(shm, "sizeLimit", str(size), "")
	}
	return mapping("name", plan.ShmVolume, "emptyDir", shm)
}

func shmMount() *yaml.Node {
	return mapping("name", plan.ShmVolume, "mountPath", plan.ShmDir)
}

// installer is the init container that copies Flux out of the view image.
func installer(p *plan.Plan, g plan.Group) *yaml.Node {
	// A pod-level seccompProfile (a Localhost profile, say) applies to the
	// init container as to the user's; RuntimeDefault only fills the gap,
	// so the restricted Pod Security Standard is met either way.
	var seccomp *yaml.Node
	if !g.PodSeccomp {
		seccomp = mapping("type", jobset.SeccompRuntimeDefault)
	}
	return mapping(
		"name", plan.InitContainerName,
		"image", p.ViewImage,
		"command", stringList(plan.InitPath),
		"volumeMounts", sequence(
			mapping("name", plan.InstallVolume, "mountPath", plan.InstallDir),
			mapping("name", plan.SoftwareVolume, "mountPath", plan.SoftwareStagingDir),
			mapping("name", plan.ConfigVolume, "mountPath", plan.ConfigDir, "readOnly", true),
		),
		// It only copies files into emptyDirs: it needs no privilege and no
		// writable root, so it never makes a pod fail the "restricted" Pod
		// Security Standard (runAsNonRoot stays the pod's choice: the view
		// image's default user is root).
		"securityContext", mapping(
			"allowPrivilegeEscalation", false,
			"capabilities", mapping("drop", stringList("ALL")),
			"readOnlyRootFilesystem", true,
			"seccompProfile", seccomp,
		),
	)
}

func octal(mode int) *yaml.Node {
	n := num(mode)
	n.LineComment = fmt.Sprintf("%#o", mode)
	return n
}
