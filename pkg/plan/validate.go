package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
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

// Validate checks a JobSet and its resolved settings against what Flux
// and the JobSet controller need, and the names and paths the render
// adds. It only reports: what the plan derives is Derive's. The shape
// checks come first; the resources and commands are checked only on a
// JobSet whose shape is sound, since they are derived from it.
func Validate(js *jobset.JobSet, s settings.Settings) finding.List {
	found := checkImageFlux(&s)
	found.Add(checkViewMount(&s))
	found.Add(checkNames(js))
	found.Add(checkNetwork(js))
	groups := groupsOf(js, &s)
	mounted := mountedPaths(&s)
	for _, g := range groups {
		found.Add(checkGroup(&js.ReplicatedJobs[g.Index], g, mounted))
	}
	found.Add(checkRanks(js, groups))
	found.Add(checkLauncher(&s))
	found.Add(checkKubernetes(js, groups))
	found.Add(checkPodSpec(js, &s, groups))
	found.Add(checkKueue(js))
	found.Add(checkTopology(js, groups))
	found.Add(checkMisplaced(js, &s))
	found.Add(checkOrdering(js))
	found.Add(checkDeadline(js, &s, groups))
	found.Add(checkElastic(js, &s, groups))
	found.Add(checkQueueNames(js, &s, groups))
	found.Add(checkState(js, &s, groups))
	found.Add(checkRestarts(js, &s, groups))
	found.Add(checkOwner(js, &s))
	if found.HasErrors() {
		return found
	}
	found.Add(checkResources(js, &s, groups))
	if !found.HasErrors() {
		// The groups the job runs on are known once the resources are.
		found.Add(checkQueueJob(js, &s, groups))
	}
	found.Add(checkInteractive(js, &s, groups))
	found.Add(checkInteractiveDrops(js, &s, groups))
	found.Add(checkBrokerSize(js, &s, groups))
	found.Add(checkUnusedCommands(js, &s, groups))
	found.Add(checkPodFacts(js, &s, groups))
	return found
}

// checkImageFlux refuses a view image named together with a flux-path:
// a contradiction, not a precedence question.
func checkImageFlux(s *settings.Settings) finding.List {
	var found finding.List
	if s.FluxPath != "" && s.ViewImage != settings.NoView && s.Origin("view-image") != "" {
		found.Errorf(s.Origin("flux-path"), "flux-path says the image carries Flux, but view-image is %q (%s); set view-image to \"none\" or remove it, or remove flux-path", s.ViewImage, s.Origin("view-image"))
	}
	return found
}

func checkNames(js *jobset.JobSet) finding.List {
	var found finding.List
	if errs := validation.IsDNS1035Label(js.Name); len(errs) > 0 {
		found.Errorf("metadata.name", "a Flux JobSet's name must be a DNS-1035 label (it starts its pods' hostnames): %s", errs[0])
	}
	if js.Namespace != "" {
		if errs := validation.IsDNS1123Label(js.Namespace); len(errs) > 0 {
			found.Errorf("metadata.namespace", "must be a namespace name (a DNS-1123 label): %s", errs[0])
		}
	}
	if js.Subdomain == "" {
		return found
	}
	errs := append(validation.IsDNS1123Subdomain(js.Subdomain), validation.IsDNS1035Label(js.Subdomain)...)
	if len(errs) > 0 {
		found.Errorf("spec.network.subdomain", "must be a DNS-1035 label of at most 63 characters starting with a letter: %s", errs[0])
	}
	return found
}

// checkNetwork refuses a spec.network that keeps brokers from finding
// each other (what is unset, networkDefaults sets).
func checkNetwork(js *jobset.JobSet) finding.List {
	var found finding.List
	if js.EnableDNSHostnames != nil && !*js.EnableDNSHostnames {
		found.Errorf("spec.network.enableDNSHostnames", "is false, but Flux brokers connect to each other by hostname; remove it or set it to true")
	}
	if js.PublishNotReadyAddresses != nil && !*js.PublishNotReadyAddresses {
		found.Warnf("spec.network.publishNotReadyAddresses", "is false: a pod's hostname resolves only once it is ready, so a readiness probe that waits for Flux would deadlock the instance; set it to true unless you know why not")
	}
	return found
}

// checkGroup checks one replicatedJob of the instance: its Job against
// what Flux needs (checkJob), its pod (checkPod), and the names and paths
// (mounted) the render adds (checkReserved, checkMounts).
func checkGroup(rj *jobset.ReplicatedJob, g Group, mounted []string) finding.List {
	var found finding.List
	if errs := validation.IsDNS1035Label(rj.Name); len(errs) > 0 {
		found.Errorf(rj.Path+".name", "a replicatedJob's name must be a DNS-1035 label (it is part of its pods' hostnames and of the Flux hostlist): %s", errs[0])
	}
	if rj.Replicas < 1 {
		found.Errorf(rj.Path+".replicas", "must be at least 1 for a replicatedJob in the Flux instance, got %d", rj.Replicas)
	}
	found.Add(checkJob(rj, g))
	found.Add(checkPod(&rj.Pod))
	found.Add(checkReserved(&rj.Pod))
	found.Add(checkMounts(&rj.Pod.Containers[g.Container], mounted))
	return found
}

// checkJob checks the Job fields Flux depends on: stable hostnames, every
// broker at once, no negative retries.
func checkJob(rj *jobset.ReplicatedJob, g Group) finding.List {
	var found finding.List
	job := rj.JobPath()
	if rj.CompletionMode != "" && rj.CompletionMode != jobset.IndexedCompletion {
		found.Errorf(job+".completionMode", "must be Indexed (or unset): Flux needs each pod's stable hostname, which only Indexed Jobs have; got %q", rj.CompletionMode)
	}
	if g.Completions < 1 {
		found.Errorf(job+".completions", "must be at least 1, got %d", g.Completions)
	}
	if rj.Completions != nil && rj.Parallelism != nil && *rj.Parallelism != *rj.Completions {
		found = append(found, finding.Finding{Severity: finding.Error, Path: job + ".parallelism",
			Current: strconv.Itoa(*rj.Parallelism), Proposed: strconv.Itoa(*rj.Completions),
			Message: fmt.Sprintf("must equal completions (%d): every broker of a Flux instance must run at once, got %d", *rj.Completions, *rj.Parallelism)})
	}
	if rj.BackoffLimit != nil && *rj.BackoffLimit < 0 {
		found.Errorf(job+".backoffLimit", "must not be negative, got %d", *rj.BackoffLimit)
	}
	return found
}

// checkPod checks the pod fields Flux depends on: no restarted leader
// that could never rejoin, and the pod's own hostname.
func checkPod(pod *jobset.Pod) finding.List {
	var found finding.List
	switch pod.RestartPolicy {
	case "", jobset.RestartPolicyNever:
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
	return found
}

// checkReserved refuses the user's containers and volumes that have a
// name the function adds. The function's own earlier rendering was
// removed before the JobSet was read (by its whole shape, not by name):
// what is left with one of its names is the user's, and would collide
// with what it adds.
func checkReserved(pod *jobset.Pod) finding.List {
	var found finding.List
	if i := slices.IndexFunc(pod.InitContainers, func(c jobset.Container) bool { return c.Name == InitContainerName }); i >= 0 {
		found.Errorf(pod.InitContainers[i].Path+".name", "init container name %q is reserved by jobset-flux; rename yours", InitContainerName)
	}
	for i := range pod.Containers {
		// Init and app containers share one namespace of names.
		if pod.Containers[i].Name == InitContainerName {
			found.Errorf(pod.Containers[i].Path+".name", "container name %q is reserved by jobset-flux (its init container); rename yours", InitContainerName)
		}
	}
	for i, v := range pod.Volumes {
		if isReserved(v) {
			found.Errorf(fmt.Sprintf("%s.volumes[%d].name", pod.Path, i), "volume name %q is reserved by jobset-flux; rename yours", v)
		}
	}
	return found
}

// checkMounts refuses the wrapped container's mounts that would collide
// with the function's, and a command that already holds its entrypoint.
func checkMounts(c *jobset.Container, mounted []string) finding.List {
	var found finding.List
	for i, m := range c.Mounts {
		path := fmt.Sprintf("%s.volumeMounts[%d]", c.Path, i)
		switch {
		case isReserved(m.Name):
			found.Errorf(path+".name", "volume name %q is reserved by jobset-flux; rename yours", m.Name)
		case cleanPath(m.MountPath) == ShmDir:
			// The container's own /dev/shm wins (Group.OwnShm).
		case slices.ContainsFunc(mounted, func(r string) bool { return overlaps(m.MountPath, r) }):
			found.Errorf(path+".mountPath", "%q overlaps a path jobset-flux mounts (%s); mount it elsewhere", m.MountPath, strings.Join(mounted, ", "))
		}
	}
	if len(c.Command) > 0 && c.Command[0] == EntrypointPath {
		found.Errorf(c.Path+".command[0]", "is the jobset-flux entrypoint, but the pod holds no rendering by jobset-flux (its flux-installer init container, volumes and mounts as the function writes them); remove it from the command, the function adds it")
	}
	return found
}

// overlaps reports whether one path is the other or inside it, as the
// kubelet resolves them (/mnt//flux/config and /opt/x/../software are
// the paths the function mounts).
func overlaps(a, b string) bool {
	a, b = strings.TrimRight(cleanPath(a), "/")+"/", strings.TrimRight(cleanPath(b), "/")+"/"
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// checkRanks checks the pods' hostnames and the instance's size, group by
// group in rank order.
func checkRanks(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	rank := 0
	for _, g := range groups {
		if len(validation.IsDNS1035Label(js.Name)) > 0 || len(validation.IsDNS1035Label(g.Name)) > 0 {
			continue // reported by checkNames or checkGroup; such a name may not go into a hostlist
		}
		if g.Replicas < 1 || g.PodsPerJob < 1 {
			continue // already an error; there is nothing to place
		}
		longest := fmt.Sprintf("%s-%s-%d-%d", js.Name, g.Name, g.Replicas-1, g.PodsPerJob-1)
		if len(longest) > MaxHostname {
			found.Errorf("metadata.name", "pod hostname %q is %d characters, more than the %d that leave room for the pod name's random suffix; shorten the JobSet name %q or the replicatedJob name %q", longest, len(longest), MaxHostname, js.Name, g.Name)
			continue
		}
		if rank+g.Replicas*g.PodsPerJob > MaxBrokers || g.Replicas*g.PodsPerJob > MaxBrokers {
			found.Errorf(js.ReplicatedJobs[g.Index].Path, "the Flux instance would have more than %d brokers; split it into several JobSets", MaxBrokers)
			return found
		}
		rank += g.Replicas * g.PodsPerJob
	}
	return found
}

// checkLauncher rejects, before anything is derived, the settings that
// shape the flux run a launcher never makes: silently ignoring them would
// leave the user believing their tasks or options apply.
func checkLauncher(s *settings.Settings) finding.List {
	var found finding.List
	if !s.Launcher {
		return found
	}
	for _, name := range []string{"tasks-per-node", "run-options", "time-limit"} {
		if o := s.Origin(name); o != "" {
			found.Errorf(o, "%s shapes the flux run of the command, but launcher is true (%s): the command is the instance's initial program, which runs once on rank 0 and submits its own jobs; remove %s (where a wider layer such as the function config sets it, clear it for this JobSet with the annotation %s%s: \"\"), or set launcher to false", name, s.Origin("launcher"), name, settings.AnnotationPrefix, name)
		}
	}
	if s.Interactive != nil && *s.Interactive {
		found.Errorf(s.Origin("interactive"), "interactive and launcher are both true (%s): an interactive instance runs no initial program, a launcher's is the command; set one of them to false", s.Origin("launcher"))
	}
	return found
}

// argsWarning is the warning for args without a command.
const argsWarning = "the container has args but no command: the Flux entrypoint replaces the image's ENTRYPOINT, so args run as the command; set command explicitly if the image's ENTRYPOINT matters"

// checkInteractive checks that the instance has what it runs: rank 0's
// container (pod 0 of the first group) is the one whose command Flux
// runs, or the launcher's program.
func checkInteractive(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	g, c := groups[0], leader(js, groups)
	has := hasCommand(js, groups)
	switch {
	case s.Launcher && !has:
		found.Errorf(c.Path+".command", "launcher is true (%s) but the container has no command or args to run as the instance's initial program; give it a command (a script that submits jobs), or remove launcher", s.Origin("launcher"))
	case s.Launcher, s.Interactive == nil:
	case *s.Interactive && has:
		found.Warnf(c.Path+".command", "interactive is true, so the container's command and args are not run")
	case !*s.Interactive && !has:
		found.Errorf(c.Path+".command", "interactive is false but the container has no command or args to run; give it a command or set flux-framework.org/interactive: \"true\"")
	}
	if len(g.Command) == 0 && len(c.Args) > 0 && !isInteractive(js, s, groups) {
		found.Warnf(c.Path+".args", argsWarning)
	}
	return found
}

// checkUnusedCommands warns about every wrapped container whose own
// command and args will never run: Flux runs only rank 0's (pod 0 of the
// first group's Job 0); every other broker ignores its own. A container
// that repeats the leader's command exactly, or writes none, loses
// nothing.
func checkUnusedCommands(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	lg, lc := groups[0], leader(js, groups)
	for _, g := range groups[1:] {
		c := container(js, &g)
		if len(g.Command) == 0 && len(c.Args) == 0 || slices.Equal(g.Command, lg.Command) && slices.Equal(c.Args, lc.Args) {
			continue
		}
		field := c.Path + ".command"
		if len(g.Command) == 0 {
			field = c.Path + ".args"
		}
		runs := fmt.Sprintf("Flux runs only rank 0's command (container %q of replicatedJob %q)", lc.Name, lg.Name)
		if s.Launcher {
			runs = fmt.Sprintf("launcher is true, so only rank 0's command runs, once (container %q of replicatedJob %q)", lc.Name, lg.Name)
		}
		if isInteractive(js, s, groups) {
			runs = "the instance is interactive, so no container's command runs"
		}
		found.Warnf(field, "replicatedJob %q's container %q will never run its own command: %s and the other brokers only serve; remove it, or make it the same as the leader's", g.Name, c.Name, runs)
	}
	return found
}

// checkInteractiveDrops refuses the settings that shape the command's
// flux run in an interactive instance, which runs none: kept silently,
// they would leave the user believing their limit or options apply.
func checkInteractiveDrops(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.Launcher || !isInteractive(js, s, groups) {
		return found
	}
	why := fmt.Sprintf("interactive is true (%s)", s.Origin("interactive"))
	if s.Interactive == nil {
		why = fmt.Sprintf("the instance is interactive, since container %q has no command or args", leader(js, groups).Name)
	}
	for _, name := range []string{"run-options", "time-limit"} {
		if o := s.Origin(name); o != "" {
			found.Errorf(o, "%s shapes the flux run of the command, but %s: an interactive instance runs no command, so %s would bound or change nothing (the instance runs until flux shutdown); remove %s (where a wider layer such as the function config sets it, clear it for this JobSet with the annotation %s%s: \"\"), or give the container a command", name, why, name, name, settings.AnnotationPrefix, name)
		}
	}
	return found
}
