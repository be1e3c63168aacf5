package plan

import (
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/hostlist"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
)

// Derive computes the plan of a JobSet from its resolved settings (see
// settings.Resolve), which Validate accepted: it only computes, and
// checks nothing. Its notes are infos about choices it made that a user
// may not expect (the groups a job leaves out, the cores it leaves idle,
// an interactive instance by default).
func Derive(js *jobset.JobSet, s settings.Settings) (*Plan, finding.List) {
	p := &Plan{
		Settings:       s,
		Namespace:      js.Namespace,
		Name:           js.Name,
		Subdomain:      subdomain(js),
		ConfigMapName:  js.Name + ConfigMapSuffix,
		SecretName:     js.Name + SecretSuffix,
		GenerateSecret: s.CurveSecret == "",
		ImageFlux:      imageFlux(&s),
		Groups:         groupsOf(js, &s),
		SetNetwork:     networkDefaults(js),
		Ordering:       orderingAnnotations(js.Annotations),
	}
	if s.CurveSecret != "" {
		p.SecretName = s.CurveSecret
	}
	if !p.ImageFlux {
		p.ViewImage = s.ViewImage
	}
	p.Brokers = placeRanks(js.Name, p.Groups)
	p.Quorum = elasticQuorum(p.Groups)
	notes := deriveResources(js, p)
	var note finding.List
	p.Interactive, note = deriveInteractive(js, p)
	notes.Add(note)
	notes.Add(applyExclude(p))
	notes.Add(shmNotes(p))
	p.DefaultQueue = defaultQueue(p)
	p.State = deriveState(js, &s, p.Groups)
	p.Owner = deriveOwner(js, &s, p)
	return p, notes
}

// networkDefaults are the spec.network fields Flux needs that the JobSet
// leaves unset: brokers find each other by pod hostname, and must resolve
// each other before they are ready.
func networkDefaults(js *jobset.JobSet) []Default {
	var set []Default
	if js.EnableDNSHostnames == nil {
		set = append(set, Default{In: jobset.InNetwork, Field: jobset.EnableDNSHostnamesField, Value: yamltree.BoolValue(true)})
	}
	if js.PublishNotReadyAddresses == nil {
		set = append(set, Default{In: jobset.InNetwork, Field: jobset.PublishNotReadyAddressesField, Value: yamltree.BoolValue(true)})
	}
	return set
}

// completions is the pods per Job: completions, else parallelism, else 1.
func completions(rj *jobset.ReplicatedJob) int {
	switch {
	case rj.Completions != nil:
		return *rj.Completions
	case rj.Parallelism != nil:
		return *rj.Parallelism
	}
	return 1
}

// ownShm reports whether the container mounts a /dev/shm of its own.
func ownShm(c *jobset.Container) bool {
	for _, m := range c.Mounts {
		if !isReserved(m.Name) && cleanPath(m.MountPath) == ShmDir {
			return true
		}
	}
	return false
}

// jobDefaults are the fields of a replicatedJob's Job and pod spec that
// Flux depends on and the user left unset, in the order they are reported.
func jobDefaults(rj *jobset.ReplicatedJob, s *settings.Settings) []Default {
	var set []Default
	job := func(field string, v yamltree.Scalar) {
		set = append(set, Default{In: jobset.InJob, Field: field, Value: v})
	}
	if rj.CompletionMode == "" {
		job(jobset.CompletionModeField, yamltree.StringValue(jobset.IndexedCompletion))
	}
	if rj.Completions == nil {
		job(jobset.CompletionsField, yamltree.IntValue(completions(rj)))
	}
	if rj.Parallelism == nil {
		job(jobset.ParallelismField, yamltree.IntValue(completions(rj)))
	}
	if rj.BackoffLimit == nil {
		job(jobset.BackoffLimitField, yamltree.IntValue(0))
	}
	if d, ok := deadlineDefault(rj, s); ok {
		set = append(set, d)
	}
	if rj.Pod.RestartPolicy == "" {
		set = append(set, Default{In: jobset.InPod, Field: jobset.RestartPolicyField, Value: yamltree.StringValue(jobset.RestartPolicyNever)})
	}
	return set
}

// placeRanks numbers the pods in rank order, group by group in the order
// groupHosts gives, writes each group's compact hostlist and returns the
// number of brokers.
func placeRanks(name string, groups []Group) int {
	rank := 0
	for i := range groups {
		g := &groups[i]
		g.FirstRank = rank
		g.Hosts = groupHosts(name+"-"+g.Name+"-", g.Replicas, g.PodsPerJob)
		rank += g.Replicas * g.PodsPerJob
	}
	return rank
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

// deriveInteractive decides whether the instance is interactive, with a
// note when that follows from a missing command rather than the setting.
func deriveInteractive(js *jobset.JobSet, p *Plan) (bool, finding.List) {
	var notes finding.List
	interactive := isInteractive(js, &p.Settings, p.Groups)
	if interactive && p.Settings.Interactive == nil {
		c := leader(js, p.Groups)
		// A warning, printed without -v: a JobSet that never ends on its
		// own holds its nodes until someone runs flux shutdown. It can be
		// right (an interactive cluster), so setting interactive silences it.
		notes.Warnf(c.Path, "container %q has no command or args, so the Flux instance is interactive: it stays up, and the JobSet runs, until someone runs `flux shutdown` in it; give the container a command to run, or set flux-framework.org/interactive: \"true\" to say this is meant", c.Name)
	}
	return interactive, notes
}

// groupsOf are the wrapped replicatedJobs, in rank order, with their shape
// and the Job and pod fields to set on the user's behalf; ranks,
// hostlists and resources are filled later.
func groupsOf(js *jobset.JobSet, s *settings.Settings) []Group {
	groups := make([]Group, len(s.Wrapped))
	for i, w := range s.Wrapped {
		rj := &js.ReplicatedJobs[w.Job]
		c := &rj.Pod.Containers[w.Container]
		n := completions(rj)
		groups[i] = Group{
			Index: rj.Index, Name: rj.Name, Container: w.Container, ContainerName: c.Name,
			Replicas: rj.Replicas, Completions: n, PodsPerJob: n, MinPods: n,
			Command: c.Command, OwnShm: ownShm(c), PodSeccomp: rj.Pod.SeccompProfile,
			Set: jobDefaults(rj, s), StartupProbe: !c.StartupProbe, Installer: installerOf(&rj.Pod, c),
		}
		if c.TerminationMessagePath != jobset.DefaultTerminationMessagePath {
			groups[i].TerminationLog = c.TerminationMessagePath
		}
		sizeGroup(&groups[i], s)
	}
	return groups
}
