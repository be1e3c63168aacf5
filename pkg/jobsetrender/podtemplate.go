package jobsetrender

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// editJobSet edits a JobSet's YAML in place: it adds the init container,
// volumes, mounts, wrapped command and the Job and network fields the plan
// asks for. An earlier rendering was stripped before the JobSet was read
// (stripRendering), so a re-run or a changed setting never doubles
// anything. It reads nothing but the plan.
func editJobSet(root *yaml.Node, p *plan.Plan) error {
	rjs, ok := jobset.ReplicatedJobNodes(root)
	if !ok {
		return fmt.Errorf("%s is not a list", jobset.ReplicatedJobsPath)
	}
	jobs := make(map[int]*yaml.Node, len(p.Groups))
	for _, g := range p.Groups {
		at := yamltree.Index(jobset.ReplicatedJobsPath, g.Index)
		if g.Index >= len(rjs) {
			return fmt.Errorf("%s is missing", at)
		}
		job := jobset.JobSpec(rjs[g.Index])
		pod := jobset.PodSpec(job)
		if job == nil || pod == nil {
			return fmt.Errorf("%s has no pod template", at)
		}
		if err := setDefaults(map[jobset.Place]*yaml.Node{jobset.InJob: job, jobset.InPod: pod}, g.Set); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if err := addFlux(pod, p, g); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		markSizes(rjs[g.Index], g)
		jobs[g.Index] = job
	}
	if p.Settings.InfraRestarts > 0 {
		setRestartPolicies(root, p, jobs)
	}
	if len(p.SetNetwork) > 0 {
		// spec.network goes above the replicatedJobs, where the JobSet
		// documentation writes it.
		spec := yamltree.Get(root, jobset.SpecKey)
		network := yamltree.EnsureMap(spec, jobset.NetworkKey, jobset.ReplicatedJobsKey)
		return setDefaults(map[jobset.Place]*yaml.Node{jobset.InNetwork: network}, p.SetNetwork)
	}
	return nil
}

// setDefaults sets each of defaults in the map of its place, before the
// key its place says: the same list that summarize reports.
func setDefaults(maps map[jobset.Place]*yaml.Node, defaults []plan.Default) error {
	for _, d := range defaults {
		m := maps[d.In]
		if m == nil {
			return fmt.Errorf("no map to set %s in", d)
		}
		yamltree.Set(m, d.Field, d.Value.Node(), d.In.Before())
	}
	return nil
}

// addFlux wraps the group's container: the entrypoint in front of its
// command, the init container that copies Flux in, and the volumes and
// mounts of Flux's files.
func addFlux(pod *yaml.Node, p *plan.Plan, g plan.Group) error {
	containers := yamltree.Get(pod, jobset.ContainersKey)
	if containers == nil || g.Container >= len(containers.Content) {
		return fmt.Errorf("container %d is missing", g.Container)
	}
	c := containers.Content[g.Container]

	// The user's own command items stay as written (quoting, comments);
	// the entrypoint goes in front. An earlier wrapping was stripped
	// before the JobSet was read. A command the function adds goes in
	// before the mounts it adds, so that a re-render, which removes both
	// and adds them again, writes them in the same order.
	if old := yamltree.Get(c, jobset.CommandKey); old != nil && old.Kind == yaml.SequenceNode {
		old.Content = append([]*yaml.Node{yamltree.String(plan.EntrypointPath)}, old.Content...)
	} else {
		yamltree.Set(c, jobset.CommandKey, yamltree.Strings(plan.EntrypointPath), jobset.ArgsKey)
	}

	// An image with its own Flux needs no copy of the view: no init
	// container and no software volume (whose mount would hide the
	// image's own /opt/software). Nor does a mounted view image. The
	// install volume stays: it holds the broker's private state.
	if p.CopiesView() {
		init := yamltree.EnsureSeq(pod, jobset.InitContainersKey)
		init.Content = append(init.Content, installer(p, g))
	}

	volumes := yamltree.EnsureSeq(pod, jobset.VolumesKey)
	volumes.Content = append(volumes.Content, fluxVolumes(p)...)
	mounts := yamltree.EnsureSeq(c, jobset.VolumeMountsKey)
	mounts.Content = append(mounts.Content, fluxMounts(p)...)
	if !g.OwnShm {
		volumes.Content = append(volumes.Content, shmVolume(p.Settings.ShmSize))
		mounts.Content = append(mounts.Content, shmMount())
	}
	if st := p.State; st != nil && g.Index == p.Groups[0].Index {
		// A claim of the JobSet's volumeClaimPolicies gets its volume
		// from the JobSet controller, and its webhook refuses a template that
		// has one.
		if st.Claim != "" {
			volumes.Content = append(volumes.Content, stateVolume(st.Claim))
		}
		mounts.Content = append(mounts.Content, mount(st.Volume, plan.StateMountDir))
	}
	if p.Owner != nil && g.Index == p.Groups[0].Index {
		volumes.Content = append(volumes.Content, ownerTokenVolume())
		mounts.Content = append(mounts.Content, readOnlyMount(plan.OwnerTokenVolume, plan.OwnerTokenDir))
		env := yamltree.EnsureSeq(c, envKey)
		env.Content = append(env.Content, ownerUIDEnv())
	}
	if g.StartupProbe {
		yamltree.Set(c, startupProbeKey, startupProbe(p.Settings.StartTimeout), "")
	}
	return nil
}

// startupProbeKey is the wrapped container's field that holds the probe
// startupProbe writes; envKey its environment.
const (
	startupProbeKey = "startupProbe"
	envKey          = "env"
)

// Probe timing: the entrypoint gives up start-timeout after the
// container started, then takes up to probeGrace seconds to say why and
// stop its broker; the probe must not fail first, or the kubelet would
// stop a broker that may exit 0. Each probe is an exec through the
// container runtime, which costs the node far more than the file test,
// and each failed one is an event written to the API server. So one exec
// waits inside the container, testing the file every half second, for up
// to probeWait seconds before it fails: Ready follows the join within
// half a second, and while an instance forms a pod costs the node one
// exec per probeWait instead of one per period. The kubelet starts the
// next probe as soon as one ends when it took longer than the period, and
// stops one at timeoutSeconds, which leaves room for a slow exec on a
// crowded node (docs/contributing/faults.md has the figures).
const (
	probePeriod  = 5
	probeWait    = 50
	probeTimeout = probeWait + 10
	probeGrace   = 120
	// probeForever is the failureThreshold without a start-timeout.
	probeForever = 1<<31 - 1
)

// startupProbe makes the wrapped container started, and so the pod Ready,
// only once the entrypoint has seen its broker join the whole instance
// (plan.JoinedPath). It runs bash, which the entrypoint needs anyway, on
// a file test: no Flux command, no network. The threshold counts periods,
// the shortest a failed probe can take, so the kubelet gives up no sooner
// than start-timeout and the grace however quickly probes fail.
func startupProbe(timeout int) *yaml.Node {
	threshold := probeForever
	if timeout > 0 {
		threshold = (timeout+probeGrace)/probePeriod + 1
	}
	return yamltree.Map(
		yamltree.KV("exec", bashExec(joinedWait(plan.JoinedPath, probeWait))),
		yamltree.KV("periodSeconds", yamltree.Int(probePeriod)),
		yamltree.KV("timeoutSeconds", yamltree.Int(probeTimeout)),
		yamltree.KV("failureThreshold", yamltree.Int(threshold)),
	)
}

// bashExec is an exec probe's action that runs script with bash.
func bashExec(script string) *yaml.Node {
	return yamltree.Map(yamltree.KV(jobset.CommandKey, yamltree.Strings("/bin/bash", "-c", script)))
}

// joinedWait is the probe's script: success as soon as the file exists,
// failure with a line for the kubelet's event after wait seconds. read -t
// on a pipe that never delivers is bash's own sleep, with no process per
// test.
func joinedWait(path string, wait int) string {
	return fmt.Sprintf(`exec {nap}<> <(:); until [[ -e %s ]]; do `+
		`((SECONDS < %d)) || { echo "the Flux broker has not joined the whole instance yet"; exit 1; }; `+
		`read -r -t 0.5 -u "$nap" _ || :; done`, path, wait)
}

// fluxVolumes are the volumes of a wrapped pod, but for /dev/shm.
func fluxVolumes(p *plan.Plan) []*yaml.Node {
	volumes := []*yaml.Node{emptyDirVolume(plan.InstallVolume)}
	switch {
	case p.CopiesView():
		volumes = append(volumes, softwareVolume(p.Settings.ViewCopyMedium))
	case p.MountsView():
		volumes = append(volumes, viewImageVolume(p.ViewImage))
	}
	return append(volumes,
		volume(plan.ConfigVolume, "configMap", yamltree.Map(
			yamltree.KV("name", yamltree.String(p.ConfigMapName)),
			yamltree.KV("defaultMode", octal(scriptsMode)),
		)),
		volume(plan.CurveVolume, "secret", yamltree.Map(
			yamltree.KV("secretName", yamltree.String(p.SecretName)),
			yamltree.KV("defaultMode", octal(certMode)),
		)),
	)
}

// emptyDirVolume is a plain emptyDir volume.
func emptyDirVolume(name string) *yaml.Node { return volume(name, "emptyDir", yamltree.Map()) }

// softwareVolume is the emptyDir the flux-installer copies the view's
// software tree into, in memory or on the node's disk (view-copy-medium).
// The broker's own state, whose content store grows with the jobs, stays
// in the install volume on the disk either way.
func softwareVolume(medium string) *yaml.Node {
	if medium != settings.ViewCopyMemory {
		return emptyDirVolume(plan.SoftwareVolume)
	}
	return volume(plan.SoftwareVolume, "emptyDir", memoryEmptyDir())
}

// memoryEmptyDir is the spec of a memory-backed (tmpfs) emptyDir.
func memoryEmptyDir() *yaml.Node {
	return yamltree.Map(yamltree.KV("medium", yamltree.String(jobset.StorageMediumMemory)))
}

// fluxMounts are the wrapped container's mounts of fluxVolumes.
func fluxMounts(p *plan.Plan) []*yaml.Node {
	mounts := []*yaml.Node{mount(plan.InstallVolume, plan.InstallDir)}
	switch {
	case p.CopiesView():
		mounts = append(mounts, mount(plan.SoftwareVolume, plan.SoftwareDir))
	case p.MountsView():
		mounts = append(mounts, viewImageMounts()...)
	}
	return append(mounts, readOnlyMount(plan.ConfigVolume, plan.ConfigDir), readOnlyMount(plan.CurveVolume, plan.CurveDir))
}

// shmVolume is the writable /dev/shm (size "" for no limit).
func shmVolume(size string) *yaml.Node {
	shm := memoryEmptyDir()
	if size != "" {
		yamltree.Set(shm, "sizeLimit", yamltree.String(size), "")
	}
	return volume(plan.ShmVolume, "emptyDir", shm)
}

func shmMount() *yaml.Node { return mount(plan.ShmVolume, plan.ShmDir) }

// stateVolume is the volume of an existing claim that holds rank 0's
// state (state-claim).
func stateVolume(claim string) *yaml.Node {
	return volume(plan.StateVolume, "persistentVolumeClaim", yamltree.Map(yamltree.KV("claimName", yamltree.String(claim))))
}

// installer is the init container that copies Flux out of the view image.
func installer(p *plan.Plan, g plan.Group) *yaml.Node {
	// It only copies files into emptyDirs: it needs no privilege and no
	// writable root, so it never makes a pod fail the "restricted" Pod
	// Security Standard. It runs as a user that is not root wherever the
	// wrapped container must (plan.Installer): the view image's default
	// user is root.
	security := yamltree.Map(
		yamltree.KV("allowPrivilegeEscalation", yamltree.Bool(false)),
		yamltree.KV("capabilities", yamltree.Map(yamltree.KV("drop", yamltree.Strings("ALL")))),
		yamltree.KV("readOnlyRootFilesystem", yamltree.Bool(true)),
	)
	// A pod-level seccompProfile (a Localhost profile, say) applies to the
	// init container as to the user's; RuntimeDefault only fills the gap,
	// so the restricted Pod Security Standard is met either way.
	if !g.PodSeccomp {
		yamltree.Set(security, "seccompProfile", yamltree.Map(yamltree.KV("type", yamltree.String(jobset.SeccompRuntimeDefault))), "")
	}
	if g.Installer.RunAsNonRoot {
		yamltree.Set(security, "runAsNonRoot", yamltree.Bool(true), "")
	}
	if u := g.Installer.RunAsUser; u != nil {
		yamltree.Set(security, "runAsUser", yamltree.Int(int(*u)), "")
	}
	init := yamltree.Map(
		yamltree.KV("name", yamltree.String(plan.InitContainerName)),
		yamltree.KV("image", yamltree.String(p.ViewImage)),
		yamltree.KV(jobset.CommandKey, yamltree.Strings(plan.InitPath)),
		yamltree.KV(jobset.VolumeMountsKey, yamltree.Seq(
			mount(plan.InstallVolume, plan.InstallDir),
			mount(plan.SoftwareVolume, plan.SoftwareStagingDir),
			readOnlyMount(plan.ConfigVolume, plan.ConfigDir),
		)),
		yamltree.KV("securityContext", security),
	)
	if r := installerResources(g.Installer); r != nil {
		yamltree.Set(init, "resources", r, "securityContext")
	}
	return init
}

// installerResources are the flux-installer's requests and limits, the
// wrapped container's (plan.Installer), nil for none.
func installerResources(in plan.Installer) *yaml.Node {
	quantities := func(q jobset.Quantities) *yaml.Node {
		m := yamltree.Map()
		for _, r := range []struct{ name, value string }{{"cpu", q.CPU}, {"memory", q.Memory}, {"ephemeral-storage", q.EphemeralStorage}} {
			if r.value != "" {
				yamltree.Set(m, r.name, yamltree.String(r.value), "")
			}
		}
		return m
	}
	res := yamltree.Map()
	for _, part := range []struct {
		key string
		q   jobset.Quantities
	}{{"limits", in.Limits}, {"requests", in.Requests}} {
		if m := quantities(part.q); len(m.Content) > 0 {
			yamltree.Set(res, part.key, m, "")
		}
	}
	if len(res.Content) == 0 {
		return nil
	}
	return res
}
