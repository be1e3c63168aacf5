package plan

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/hostlist"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits that keep generated names and the instance size within what
// Kubernetes and the JobSet webhook accept.
const (
	// MaxHostname: pod names are <hostname>-<5 random chars> and must fit 63.
	MaxHostname = 57
	// MaxBrokers bounds the instance size (memory and time stay linear in
	// the number of replicated Jobs, never in the number of pods).
	MaxBrokers = 1_000_000
)

// Build resolves the settings of one JobSet over base (the defaults with
// the function config applied): the JobSet's annotations, then the
// wrapped containers' environment, each value parsed once (settings.Apply
// keeps the annotations' precedence over the environment). It validates
// the JobSet against what Flux and the JobSet controller need, and
// computes the plan. The plan is nil when there are errors; every problem
// found is reported, not only the first.
func Build(js *jobset.JobSet, base settings.Settings) (*Plan, finding.List) {
	var found finding.List
	s := base
	annotations, f := settings.AnnotationLayer(js.Annotations)
	found.Add(f)
	found.Add(s.Apply(annotations))

	// Which replicatedJobs and containers are wrapped is known before the
	// environment is read, since the environment lives on those containers.
	groups, f := chooseGroups(js, &s)
	found.Add(f)
	if len(groups) == 0 && !found.HasErrors() {
		// Never reached through jobset.Read, which reports the cause; the
		// plan needs a rank 0 all the same.
		found.Errorf("spec.replicatedJobs", "no replicatedJob joins the Flux instance; add one with a container")
	}
	env, f := envLayer(js, groups)
	found.Add(f)
	found.Add(s.Apply(env))
	if found.HasErrors() {
		return nil, found
	}

	p := &Plan{
		Settings:       s,
		Namespace:      js.Namespace,
		Name:           js.Name,
		Subdomain:      js.Subdomain,
		ConfigMapName:  js.Name + ConfigMapSuffix,
		SecretName:     js.Name + SecretSuffix,
		GenerateSecret: s.CurveSecret == "",
		ViewImage:      s.ViewImage,
		Groups:         groups,
	}
	if s.CurveSecret != "" {
		p.SecretName = s.CurveSecret
	}
	found.Add(imageFlux(p, &s))
	found.Add(checkNames(js, p))
	found.Add(checkNetwork(js, p))
	mounted := p.MountedPaths()
	for i := range p.Groups {
		found.Add(checkGroup(js, &js.ReplicatedJobs[p.Groups[i].Index], &p.Groups[i], mounted))
	}
	found.Add(placeRanks(js, p))
	found.Add(launcherConflicts(&s))
	if found.HasErrors() {
		return nil, found
	}
	found.Add(resources(js, p, &s))
	found.Add(interactive(js, p, &s))
	found.Add(unusedCommands(js, p))
	if found.HasErrors() {
		return nil, found
	}
	return p, found
}

// chooseGroups picks the replicatedJobs that join the instance, in rank
// order, and the container to wrap in each.
func chooseGroups(js *jobset.JobSet, s *settings.Settings) ([]Group, finding.List) {
	var found finding.List
	var chosen []*jobset.ReplicatedJob
	if s.ReplicatedJobs == nil {
		for i := range js.ReplicatedJobs {
			chosen = append(chosen, &js.ReplicatedJobs[i])
		}
	} else {
		var names []string
		for i := range js.ReplicatedJobs {
			names = append(names, js.ReplicatedJobs[i].Name)
		}
		for _, want := range s.ReplicatedJobs {
			i := slices.Index(names, want)
			if i < 0 {
				found.Errorf(s.Origin("replicated-jobs"), "replicated-jobs names %q, but the JobSet's replicatedJobs are %s; list only those", want, quoteList(names))
				continue
			}
			chosen = append(chosen, &js.ReplicatedJobs[i])
		}
	}
	var groups []Group
	for _, rj := range chosen {
		g := Group{Index: rj.Index, Name: rj.Name, Container: -1}
		var names []string
		for _, c := range rj.Pod.Containers {
			names = append(names, c.Name)
			if g.Container < 0 && (s.Container == "" || c.Name == s.Container) {
				g.Container = c.Index
			}
		}
		if g.Container < 0 {
			if len(rj.Pod.Containers) > 0 {
				found.Errorf(rj.Pod.Path+".containers", "container %q is not in replicatedJob %q, whose containers are %s; set flux-framework.org/container to one of them", s.Container, rj.Name, quoteList(names))
			}
			continue
		}
		groups = append(groups, g)
	}
	return groups, found
}

// envLayer reads the reference plugin's environment variables from the
// wrapped containers; they must agree across replicatedJobs.
func envLayer(js *jobset.JobSet, groups []Group) (settings.Layer, finding.List) {
	var found finding.List
	layer := settings.Layer{Kind: settings.FromEnv, Values: map[string]settings.Raw{}}
	for _, g := range groups {
		c := js.ReplicatedJobs[g.Index].Pod.Containers[g.Container]
		for _, e := range c.Env {
			name, ok := settings.EnvNames[e.Name]
			if !ok {
				continue
			}
			if e.FromRef {
				found.Errorf(e.Path, "%s must be a literal value: jobset-flux reads it at render time, so valueFrom cannot be resolved", e.Name)
				continue
			}
			if prev, seen := layer.Values[name]; seen && prev.Value != e.Value {
				found.Errorf(e.Path, "%s is %q here but %q at %s; the whole instance needs one value", e.Name, e.Value, prev.Value, prev.Path)
				continue
			}
			layer.Values[name] = settings.Raw{Value: e.Value, Path: e.Path}
		}
	}
	return layer, found
}

func checkNames(js *jobset.JobSet, p *Plan) finding.List {
	var found finding.List
	if errs := validation.IsDNS1035Label(js.Name); len(errs) > 0 {
		found.Errorf("metadata.name", "a Flux JobSet's name must be a DNS-1035 label (it starts its pods' hostnames): %s", errs[0])
	}
	if js.Namespace != "" {
		if errs := validation.IsDNS1123Label(js.Namespace); len(errs) > 0 {
			found.Errorf("metadata.namespace", "must be a namespace name (a DNS-1123 label): %s", errs[0])
		}
	}
	if p.Subdomain == "" {
		p.Subdomain = js.Name
		return found
	}
	errs := append(validation.IsDNS1123Subdomain(p.Subdomain), validation.IsDNS1035Label(p.Subdomain)...)
	if len(errs) > 0 {
		found.Errorf("spec.network.subdomain", "must be a DNS-1035 label of at most 63 characters starting with a letter: %s", errs[0])
	}
	return found
}

func checkNetwork(js *jobset.JobSet, p *Plan) finding.List {
	var found finding.List
	switch {
	case js.EnableDNSHostnames == nil:
		// Brokers find each other by pod hostname.
		p.SetNetwork = append(p.SetNetwork, Default{In: jobset.InNetwork, Field: jobset.EnableDNSHostnamesField, Value: yamltree.BoolValue(true)})
	case !*js.EnableDNSHostnames:
		found.Errorf("spec.network.enableDNSHostnames", "is false, but Flux brokers connect to each other by hostname; remove it or set it to true")
	}
	switch {
	case js.PublishNotReadyAddresses == nil:
		// Brokers must resolve each other before they are ready.
		p.SetNetwork = append(p.SetNetwork, Default{In: jobset.InNetwork, Field: jobset.PublishNotReadyAddressesField, Value: yamltree.BoolValue(true)})
	case !*js.PublishNotReadyAddresses:
		found.Warnf("spec.network.publishNotReadyAddresses", "is false: a pod's hostname resolves only once it is ready, so a readiness probe that waits for Flux would deadlock the instance; set it to true unless you know why not")
	}
	return found
}

// jobDefault is a field of a group's Job spec to set.
func jobDefault(field string, v yamltree.Scalar) Default {
	return Default{In: jobset.InJob, Field: field, Value: v}
}

// MountedPaths are the paths the render mounts into the wrapped container,
// which the user's mounts must stay clear of: an image with its own Flux
// gets no software tree, and keeps its own /opt/software (a Spack
// installation) visible.
func (p *Plan) MountedPaths() []string {
	if p.ImageFlux {
		return []string{InstallDir, ConfigDir, CurveDir}
	}
	return []string{InstallDir, SoftwareDir, ConfigDir, CurveDir}
}

// checkGroup checks one replicatedJob of the instance against what Flux
// needs and the names and paths (mounted) the render adds.
func checkGroup(js *jobset.JobSet, rj *jobset.ReplicatedJob, g *Group, mounted []string) finding.List {
	var found finding.List
	if errs := validation.IsDNS1035Label(rj.Name); len(errs) > 0 {
		found.Errorf(rj.Path+".name", "a replicatedJob's name must be a DNS-1035 label (it is part of its pods' hostnames and of the Flux hostlist): %s", errs[0])
	}
	g.Replicas = rj.Replicas
	if rj.Replicas < 1 {
		found.Errorf(rj.Path+".replicas", "must be at least 1 for a replicatedJob in the Flux instance, got %d", rj.Replicas)
	}
	job := rj.JobPath()
	switch rj.CompletionMode {
	case "":
		g.Set = append(g.Set, jobDefault(jobset.CompletionModeField, yamltree.StringValue(jobset.IndexedCompletion)))
	case jobset.IndexedCompletion:
	default:
		found.Errorf(job+".completionMode", "must be Indexed (or unset): Flux needs each pod's stable hostname, which only Indexed Jobs have; got %q", rj.CompletionMode)
	}
	g.Completions = 1
	switch {
	case rj.Completions != nil:
		g.Completions = *rj.Completions
	case rj.Parallelism != nil:
		g.Completions = *rj.Parallelism
	}
	if rj.Completions == nil {
		g.Set = append(g.Set, jobDefault(jobset.CompletionsField, yamltree.IntValue(g.Completions)))
	}
	if rj.Parallelism == nil {
		g.Set = append(g.Set, jobDefault(jobset.ParallelismField, yamltree.IntValue(g.Completions)))
	}
	if g.Completions < 1 {
		found.Errorf(job+".completions", "must be at least 1, got %d", g.Completions)
	}
	if rj.Completions != nil && rj.Parallelism != nil && *rj.Parallelism != *rj.Completions {
		found = append(found, finding.Finding{Severity: finding.Error, Path: job + ".parallelism",
			Current: strconv.Itoa(*rj.Parallelism), Proposed: strconv.Itoa(*rj.Completions),
			Message: fmt.Sprintf("must equal completions (%d): every broker of a Flux instance must run at once, got %d", *rj.Completions, *rj.Parallelism)})
	}
	if rj.BackoffLimit == nil {
		g.Set = append(g.Set, jobDefault(jobset.BackoffLimitField, yamltree.IntValue(0)))
	}
	if rj.BackoffLimit != nil && *rj.BackoffLimit < 0 {
		found.Errorf(job+".backoffLimit", "must not be negative, got %d", *rj.BackoffLimit)
	}
	pod := &rj.Pod
	switch pod.RestartPolicy {
	case "":
		g.Set = append(g.Set, Default{In: jobset.InPod, Field: jobset.RestartPolicyField, Value: yamltree.StringValue(jobset.RestartPolicyNever)})
	case jobset.RestartPolicyNever:
	case jobset.RestartPolicyOnFailure:
		found.Warnf(pod.Path+".restartPolicy", "is OnFailure: if the leader's command fails, only the leader restarts while the other brokers have exited, and the new leader waits forever for them; Never lets the Job fail and the JobSet failurePolicy decide")
	default:
		found.Errorf(pod.Path+".restartPolicy", "must be Never or OnFailure for a Job, got %q", pod.RestartPolicy)
	}
	if pod.HostNetwork {
		found.Errorf(pod.Path+".hostNetwork", "must be false: with the node's network the pod's hostname is the node's, which is not in the Flux hosts list")
	}
	if pod.SetHostnameAsFQDN {
		found.Errorf(pod.Path+".setHostnameAsFQDN", "must be false: Flux brokers find their rank by their short hostname")
	}
	// The function's own earlier rendering was removed before the JobSet
	// was read (by its whole shape, not by name): what is left with one of
	// its names is the user's, and would collide with what it adds.
	if i := slices.Index(pod.InitContainers, InitContainerName); i >= 0 {
		found.Errorf(fmt.Sprintf("%s.initContainers[%d].name", pod.Path, i), "init container name %q is reserved by jobset-flux; rename yours", InitContainerName)
	}
	for i := range pod.Containers {
		// Init and app containers share one namespace of names.
		if pod.Containers[i].Name == InitContainerName {
			found.Errorf(pod.Containers[i].Path+".name", "container name %q is reserved by jobset-flux (its init container); rename yours", InitContainerName)
		}
	}
	for i, v := range pod.Volumes {
		if slices.Contains(ReservedVolumes, v) {
			found.Errorf(fmt.Sprintf("%s.volumes[%d].name", pod.Path, i), "volume name %q is reserved by jobset-flux; rename yours", v)
		}
	}
	c := &pod.Containers[g.Container]
	for i, m := range c.Mounts {
		path := fmt.Sprintf("%s.volumeMounts[%d]", c.Path, i)
		switch {
		case slices.Contains(ReservedVolumes, m.Name):
			found.Errorf(path+".name", "volume name %q is reserved by jobset-flux; rename yours", m.Name)
		case cleanPath(m.MountPath) == ShmDir:
			g.OwnShm = true
		case slices.ContainsFunc(mounted, func(r string) bool { return overlaps(m.MountPath, r) }):
			found.Errorf(path+".mountPath", "%q overlaps a path jobset-flux mounts (%s); mount it elsewhere", m.MountPath, strings.Join(mounted, ", "))
		}
	}
	if len(c.Command) > 0 && c.Command[0] == EntrypointPath {
		found.Errorf(c.Path+".command[0]", "is the jobset-flux entrypoint, but the pod holds no rendering by jobset-flux (its flux-installer init container, volumes and mounts as the function writes them); remove it from the command, the function adds it")
	}
	g.Command = c.Command
	g.PodSeccomp = pod.SeccompProfile
	return found
}

// overlaps reports whether one path is the other or inside it, as the
// kubelet resolves them (/mnt//flux/config and /opt/x/../software are
// the paths the function mounts).
func overlaps(a, b string) bool {
	a, b = strings.TrimRight(cleanPath(a), "/")+"/", strings.TrimRight(cleanPath(b), "/")+"/"
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// cleanPath is a mount path with repeated slashes, "." and ".." resolved.
func cleanPath(p string) string { return path.Clean("/" + p) }

// placeRanks numbers the pods in rank order (group by group, in the order
// groupHosts gives), writes each group's compact hostlist and checks
// hostnames.
func placeRanks(js *jobset.JobSet, p *Plan) finding.List {
	var found finding.List
	rank := 0
	for i := range p.Groups {
		g := &p.Groups[i]
		g.FirstRank = rank
		if len(validation.IsDNS1035Label(js.Name)) > 0 || len(validation.IsDNS1035Label(g.Name)) > 0 {
			continue // reported by checkNames or checkGroup; such a name may not go into a hostlist
		}
		if g.Replicas < 1 || g.Completions < 1 {
			continue // already an error; there is nothing to place
		}
		longest := fmt.Sprintf("%s-%s-%d-%d", js.Name, g.Name, g.Replicas-1, g.Completions-1)
		if len(longest) > MaxHostname {
			found.Errorf("metadata.name", "pod hostname %q is %d characters, more than the %d that leave room for the pod name's random suffix; shorten the JobSet name %q or the replicatedJob name %q", longest, len(longest), MaxHostname, js.Name, g.Name)
			continue
		}
		if rank+g.Replicas*g.Completions > MaxBrokers || g.Replicas*g.Completions > MaxBrokers {
			found.Errorf(js.ReplicatedJobs[g.Index].Path, "the Flux instance would have more than %d brokers; split it into several JobSets", MaxBrokers)
			return found
		}
		g.Hosts = groupHosts(js.Name+"-"+g.Name+"-", g.Replicas, g.Completions)
		rank += g.Replicas * g.Completions
	}
	p.Brokers = rank
	return found
}

// groupHosts is the hostlist of a group's pods <prefix><job>-<pod>, in
// their rank order. An RFC 29 expression has one bracket, so a grid of
// replicas x completions takes one expression per row: the brackets range
// over the longer side, which keeps the list at min(replicas, completions)
// expressions (Jobs of one pod, or one Job of many, need one). Ranks may be
// in any order all brokers agree on; rank 0 is <prefix>0-0 either way.
func groupHosts(prefix string, replicas, completions int) string {
	var hosts hostlist.List
	if replicas <= completions {
		for j := 0; j < replicas; j++ {
			hosts.AppendRange(prefix+strconv.Itoa(j)+"-", 0, completions-1, "")
		}
	} else {
		for p := 0; p < completions; p++ {
			hosts.AppendRange(prefix, 0, replicas-1, "-"+strconv.Itoa(p))
		}
	}
	return hosts.String()
}

// resources derives each group's cores and GPUs per node, the groups
// the leader's command runs on, and the flux run shares per task.
//
// The broker's config describes each group as it is (its own cores and
// GPUs), and the command is one flux run whose -n tasks, -c cores and -g
// GPUs per task (-g is per task) must fit every node it runs on. So it
// runs on every group when they all have the same GPUs, and otherwise
// only on the groups that have GPUs, which must have the same number: a
// GPU job on a GPU-less launcher could never be scheduled, and a
// launcher's pods are not where a GPU job belongs. Of those, a group
// whose CPU limit cannot hold the tasks per node is left out too, when
// another can. -c is what the group with the fewest cores per task can
// give.
func resources(js *jobset.JobSet, p *Plan, s *settings.Settings) finding.List {
	var found finding.List
	container := func(g *Group) *jobset.Container {
		return &js.ReplicatedJobs[g.Index].Pod.Containers[g.Container]
	}
	for i := range p.Groups {
		g, c := &p.Groups[i], container(&p.Groups[i])
		if s.GPUsPerNode != nil {
			g.GPUs = *s.GPUsPerNode
			continue
		}
		if c.GPUs > settings.MaxGPUsPerNode {
			found.Errorf(c.GPUPath, "asks for %d GPUs per pod, more than the %d a Flux node may have (the bound of gpus-per-node); lower it, or set flux-framework.org/gpus-per-node", c.GPUs, settings.MaxGPUsPerNode)
			continue
		}
		g.GPUs = c.GPUs
		for _, path := range c.Accelerators {
			found.Warnf(path, "is not counted as GPUs (jobset-flux counts %s), so Flux sees no such devices on replicatedJob %q's nodes and flux run asks for none; if they are GPUs, set flux-framework.org/gpus-per-node", strings.Join(jobset.GPUResources, ", "), g.Name)
		}
	}
	if found.HasErrors() {
		return found
	}
	if s.Launcher {
		return assignCores(p, s, container)
	}

	// The groups that run the job.
	gpus := p.Groups[0].GPUs
	uniform := !slices.ContainsFunc(p.Groups, func(g Group) bool { return g.GPUs != gpus })
	var first *Group
	for i := range p.Groups {
		g := &p.Groups[i]
		g.RunsJob = uniform || g.GPUs > 0
		if !g.RunsJob {
			continue
		}
		if first == nil {
			first, gpus = g, g.GPUs
			continue
		}
		if g.GPUs != gpus {
			found.Errorf(gpuField(container(g)), "replicatedJob %q has %d GPUs per pod but %q has %d (%s): the command is one flux run, whose tasks per node and GPUs per task must fit every node it runs on; give them the same GPU limit, or set flux-framework.org/gpus-per-node (every node then counts that many)", g.Name, g.GPUs, first.Name, first.GPUs, gpuField(container(first)))
		}
	}
	if found.HasErrors() {
		return found
	}

	p.TasksPerNode = s.TasksPerNode
	if p.TasksPerNode == 0 {
		p.TasksPerNode = max(1, gpus)
	}
	if gpus%p.TasksPerNode != 0 {
		found.Errorf(originOr(s, "gpus-per-node", originOr(s, "tasks-per-node", gpuField(container(first)))), "%d GPUs per node must be a multiple of tasks-per-node (%d): flux run's -g counts GPUs per task", gpus, p.TasksPerNode)
	}
	found.Add(assignCores(p, s, container))
	if s.CoresPerNode != 0 && s.CoresPerNode%p.TasksPerNode != 0 {
		found.Errorf(originOr(s, "cores-per-node", "metadata.annotations"), "cores-per-node (%d) must be a multiple of tasks-per-node (%d), so every task gets the same cores", s.CoresPerNode, p.TasksPerNode)
	}
	if found.HasErrors() {
		return found
	}

	// A CPU limit is a ceiling: a group whose limit gives fewer cores
	// than its tasks per node cannot hold them (Flux gives every task a
	// core of its own). When another group can, the job leaves that one
	// out, as it leaves a GPU-less launcher out of a GPU job; when none
	// can, no flux run fits.
	fits := func(g Group) bool { return !g.RunsJob || g.Cores >= p.TasksPerNode }
	anyFits := slices.ContainsFunc(p.Groups, func(g Group) bool { return g.RunsJob && fits(g) })
	why := map[string]string{}
	for i := range p.Groups {
		g, c := &p.Groups[i], container(&p.Groups[i])
		switch {
		case fits(*g):
		case anyFits:
			g.RunsJob = false
			why[g.Name] = fmt.Sprintf("its CPU limit is below tasks-per-node: %d cores, %d tasks", g.Cores, p.TasksPerNode)
		default:
			found.Errorf(c.CPUPath, "gives replicatedJob %q %d whole cores per pod, fewer than its %d tasks per node, and Flux gives every task a core of its own; raise the CPU limit, lower flux-framework.org/tasks-per-node, or set flux-framework.org/cores-per-node to %d to share the cores on purpose", g.Name, g.Cores, p.TasksPerNode, p.TasksPerNode)
		}
	}
	if found.HasErrors() {
		return found
	}

	var runs, idle []string
	var fewest *Group
	for i := range p.Groups {
		g := &p.Groups[i]
		if !g.RunsJob {
			reason, ok := why[g.Name]
			if !ok {
				reason = "no GPUs"
			}
			idle = append(idle, fmt.Sprintf("%q (%s)", g.Name, reason))
			continue
		}
		runs = append(runs, strconv.Quote(g.Name))
		p.JobNodes += g.Replicas * g.Completions
		if perTask := g.Cores / p.TasksPerNode; fewest == nil || perTask < p.CoresPerTask {
			p.CoresPerTask, fewest = perTask, g
		}
	}
	p.Tasks = p.JobNodes * p.TasksPerNode
	p.GPUsPerTask = gpus / p.TasksPerNode
	if len(idle) > 0 {
		found.Infof("", "flux run places the command's %d tasks on the %d pods of %s, not on %s", p.Tasks, p.JobNodes, strings.Join(runs, ", "), strings.Join(idle, ", "))
	}
	for _, g := range p.Groups {
		if g.RunsJob && g.Cores/p.TasksPerNode > p.CoresPerTask {
			found.Infof("", "flux run -c %d is what replicatedJob %q's %d cores give each of %d tasks, so the job uses %d of the %d cores of %q's pods", p.CoresPerTask, fewest.Name, fewest.Cores, p.TasksPerNode, p.CoresPerTask*p.TasksPerNode, g.Cores, g.Name)
		}
	}
	return found
}

// assignCores gives every group its cores per pod: cores-per-node, else
// the wrapped container's CPUs, else one per task. In launcher mode no
// flux run fixes the tasks per node: the broker's config describes each
// pod as it is, for whatever jobs the program submits, and a pod without a
// CPU figure counts one core per GPU (at least one), as the default
// tasks-per-node would.
func assignCores(p *Plan, s *settings.Settings, container func(*Group) *jobset.Container) finding.List {
	var found finding.List
	for i := range p.Groups {
		g, c := &p.Groups[i], container(&p.Groups[i])
		perPod := p.TasksPerNode
		if s.Launcher {
			perPod = max(1, g.GPUs)
		}
		switch {
		case s.CoresPerNode != 0:
			g.Cores = s.CoresPerNode
		case c.CPUs > settings.MaxCoresPerNode:
			found.Errorf(c.CPUPath, "gives %d cores per pod, more than the %d a Flux node may have (the bound of cores-per-node); lower it, or set flux-framework.org/cores-per-node", c.CPUs, settings.MaxCoresPerNode)
		case c.CPUs > 0 && g.RunsJob && c.CPUs < p.TasksPerNode && !c.CPULimit:
			// A request is a floor: the pod may use more CPU than it asked
			// for, so the tasks' own cores are what it really has.
			g.Cores = p.TasksPerNode
		case c.CPUs > 0:
			g.Cores = c.CPUs
		default:
			g.Cores = perPod
		}
	}
	return found
}

// gpuField is where a container's GPU count comes from, for messages.
func gpuField(c *jobset.Container) string {
	if c.GPUPath != "" {
		return c.GPUPath
	}
	return c.Path + ".resources"
}

// imageFlux decides where Flux comes from: the view image (copied by the
// init container), or the app image itself (view-image none, or a
// flux-path, which implies it). A view image named together with a
// flux-path is a contradiction, not a precedence question.
func imageFlux(p *Plan, s *settings.Settings) finding.List {
	var found finding.List
	p.ImageFlux = s.ViewImage == settings.NoView || s.FluxPath != ""
	if s.FluxPath != "" && s.ViewImage != settings.NoView && s.Origin("view-image") != "" {
		found.Errorf(s.Origin("flux-path"), "flux-path says the image carries Flux, but view-image is %q (%s); set view-image to \"none\" or remove it, or remove flux-path", s.ViewImage, s.Origin("view-image"))
	}
	if p.ImageFlux {
		p.ViewImage = ""
	}
	return found
}

// launcherConflicts rejects, before anything is derived, the settings that
// shape the flux run a launcher never makes: silently ignoring them would
// leave the user believing their tasks or options apply.
func launcherConflicts(s *settings.Settings) finding.List {
	var found finding.List
	if !s.Launcher {
		return found
	}
	for _, name := range []string{"tasks-per-node", "run-options"} {
		if o := s.Origin(name); o != "" {
			found.Errorf(o, "%s shapes the flux run of the command, but launcher is true (%s): the command is the instance's initial program, which runs once on rank 0 and submits its own jobs; remove %s, or set launcher to false", name, s.Origin("launcher"), name)
		}
	}
	if s.Interactive != nil && *s.Interactive {
		found.Errorf(s.Origin("interactive"), "interactive and launcher are both true (%s): an interactive instance runs no initial program, a launcher's is the command; set one of them to false", s.Origin("launcher"))
	}
	return found
}

// interactive decides whether the instance runs a command: rank 0's
// container (pod 0 of the first group) is the one whose command Flux runs.
func interactive(js *jobset.JobSet, p *Plan, s *settings.Settings) finding.List {
	var found finding.List
	g := p.Groups[0]
	c := js.ReplicatedJobs[g.Index].Pod.Containers[g.Container]
	hasCommand := len(g.Command) > 0 || len(c.Args) > 0
	if s.Launcher {
		if !hasCommand {
			found.Errorf(c.Path+".command", "launcher is true (%s) but the container has no command or args to run as the instance's initial program; give it a command (a script that submits jobs), or remove launcher", s.Origin("launcher"))
		}
		if len(g.Command) == 0 && len(c.Args) > 0 {
			found.Warnf(c.Path+".args", "the container has args but no command: the Flux entrypoint replaces the image's ENTRYPOINT, so args run as the command; set command explicitly if the image's ENTRYPOINT matters")
		}
		return found
	}
	switch {
	case s.Interactive == nil:
		p.Interactive = !hasCommand
		if p.Interactive {
			found.Infof(c.Path, "container %q has no command or args, so the Flux instance is interactive: it stays up until `flux shutdown`", c.Name)
		}
	case *s.Interactive:
		p.Interactive = true
		if hasCommand {
			found.Warnf(c.Path+".command", "interactive is true, so the container's command and args are not run")
		}
	default:
		if !hasCommand {
			found.Errorf(c.Path+".command", "interactive is false but the container has no command or args to run; give it a command or set flux-framework.org/interactive: \"true\"")
		}
	}
	if len(g.Command) == 0 && len(c.Args) > 0 && !p.Interactive {
		found.Warnf(c.Path+".args", "the container has args but no command: the Flux entrypoint replaces the image's ENTRYPOINT, so args run as the command; set command explicitly if the image's ENTRYPOINT matters")
	}
	return found
}

// unusedCommands warns about every wrapped container whose own command and
// args will never run: Flux runs only rank 0's (pod 0 of the first
// group's Job 0); every other broker ignores its own. A container that
// repeats the leader's command exactly, or writes none, loses nothing.
func unusedCommands(js *jobset.JobSet, p *Plan) finding.List {
	var found finding.List
	lg := p.Groups[0]
	leader := js.ReplicatedJobs[lg.Index].Pod.Containers[lg.Container]
	for _, g := range p.Groups[1:] {
		c := js.ReplicatedJobs[g.Index].Pod.Containers[g.Container]
		if len(g.Command) == 0 && len(c.Args) == 0 || slices.Equal(g.Command, lg.Command) && slices.Equal(c.Args, leader.Args) {
			continue
		}
		field := c.Path + ".command"
		if len(g.Command) == 0 {
			field = c.Path + ".args"
		}
		runs := fmt.Sprintf("Flux runs only rank 0's command (container %q of replicatedJob %q)", leader.Name, lg.Name)
		if p.Launcher {
			runs = fmt.Sprintf("launcher is true, so only rank 0's command runs, once (container %q of replicatedJob %q)", leader.Name, lg.Name)
		}
		if p.Interactive {
			runs = "the instance is interactive, so no container's command runs"
		}
		found.Warnf(field, "replicatedJob %q's container %q will never run its own command: %s and the other brokers only serve; remove it, or make it the same as the leader's", g.Name, c.Name, runs)
	}
	return found
}

func originOr(s *settings.Settings, name, fallback string) string {
	if o := s.Origin(name); o != "" {
		return o
	}
	return fallback
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
