package transform

import (
	"fmt"

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

// applyPlan edits a JobSet's YAML in place: it first removes an earlier
// rendering (so a re-run or a changed setting never doubles anything), then
// adds the init container, volumes, mounts, wrapped command and the Job and
// network fields the plan asks for. It reads nothing but the plan.
func applyPlan(root *yaml.Node, p *plan.Plan) error {
	spec := get(root, "spec")
	rjs := get(spec, "replicatedJobs")
	if spec == nil || rjs == nil || rjs.Kind != yaml.SequenceNode {
		return fmt.Errorf("spec.replicatedJobs is not a list")
	}
	if p.Rendered {
		for _, rj := range rjs.Content {
			stripRendering(podSpec(rj))
		}
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

// stripRendering removes everything an earlier run added to a pod spec.
func stripRendering(pod *yaml.Node) {
	if pod == nil {
		return
	}
	removeNamed(pod, "initContainers", []string{plan.InitContainerName})
	removeNamed(pod, "volumes", plan.ReservedVolumes)
	containers := get(pod, "containers")
	if containers == nil {
		return
	}
	for _, c := range containers.Content {
		removeNamed(c, "volumeMounts", plan.ReservedVolumes)
		cmd := get(c, "command")
		if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 || cmd.Content[0].Value != plan.EntrypointPath {
			continue
		}
		cmd.Content = cmd.Content[1:]
		if len(cmd.Content) == 0 {
			remove(c, "command")
		}
	}
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

	// An image with its own Flux needs no copy of the view: no init
	// container and no software volume (whose mount would hide the
	// image's own /opt/software). The install volume stays: it holds the
	// broker's private state.
	if !p.ImageFlux {
		init := ensureSeq(pod, "initContainers")
		init.Content = append(init.Content, installer(p, g))
	}
	volumes := ensureSeq(pod, "volumes")
	volumes.Content = append(volumes.Content, mapping("name", plan.InstallVolume, "emptyDir", mapping()))
	if !p.ImageFlux {
		volumes.Content = append(volumes.Content, mapping("name", plan.SoftwareVolume, "emptyDir", mapping()))
	}
	volumes.Content = append(volumes.Content,
		mapping("name", plan.ConfigVolume, "configMap", mapping("name", p.ConfigMapName, "defaultMode", octal(scriptsMode))),
		mapping("name", plan.CurveVolume, "secret", mapping("secretName", p.SecretName, "defaultMode", octal(certMode))),
	)
	mounts := ensureSeq(c, "volumeMounts")
	mounts.Content = append(mounts.Content, mapping("name", plan.InstallVolume, "mountPath", plan.InstallDir))
	if !p.ImageFlux {
		mounts.Content = append(mounts.Content, mapping("name", plan.SoftwareVolume, "mountPath", plan.SoftwareDir))
	}
	mounts.Content = append(mounts.Content,
		mapping("name", plan.ConfigVolume, "mountPath", plan.ConfigDir, "readOnly", true),
		mapping("name", plan.CurveVolume, "mountPath", plan.CurveDir, "readOnly", true),
	)
	if !g.OwnShm {
		shm := mapping("medium", jobset.StorageMediumMemory)
		if p.ShmSize != "" {
			set(shm, "sizeLimit", str(p.ShmSize), "")
		}
		volumes.Content = append(volumes.Content, mapping("name", plan.ShmVolume, "emptyDir", shm))
		mounts.Content = append(mounts.Content, mapping("name", plan.ShmVolume, "mountPath", plan.ShmDir))
	}

	// The user's own command items stay as written (quoting, comments);
	// the entrypoint goes in front. An earlier wrapping was stripped above.
	if old := get(c, "command"); old != nil && old.Kind == yaml.SequenceNode {
		old.Content = append([]*yaml.Node{str(plan.EntrypointPath)}, old.Content...)
	} else {
		set(c, "command", stringList(plan.EntrypointPath), "args")
	}
	return nil
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
