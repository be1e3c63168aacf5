package plan

import (
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Annotations the render writes on an elastic replicatedJob's Job
// template, where they cannot change once the JobSet exists (JobSet keeps
// its templates immutable but for parallelism and completions): the
// ValidatingAdmissionPolicy in deploy/elastic reads them to refuse a
// resize the instance has no ranks for.
const (
	MinSizeAnnotation = "jobset-flux.flux-framework.org/min-size"
	MaxSizeAnnotation = "jobset-flux.flux-framework.org/max-size"
)

// sizeGroup applies min-size and max-size to one group: an elastic group
// has ranks for its largest size, and counts its smallest in the quorum.
func sizeGroup(g *Group, s *settings.Settings) {
	if n, ok := settings.SizeOf(s.MaxSize, g.Name); ok {
		g.Elastic, g.PodsPerJob = true, n
	}
	if n, ok := settings.SizeOf(s.MinSize, g.Name); ok {
		g.Elastic, g.MinPods = true, n
	}
}

// elasticQuorum is the brokers an elastic instance starts with: every group at
// its smallest size. 0 when no group is elastic.
func elasticQuorum(groups []Group) int {
	n, elastic := 0, false
	for _, g := range groups {
		n += g.Replicas * g.MinPods
		elastic = elastic || g.Elastic
	}
	if !elastic {
		return 0
	}
	return n
}

// checkElastic checks min-size and max-size against the JobSet: they name
// replicatedJobs of the instance, each elastic one's size as rendered lies
// between them, and the instance can be resized at all: its command is no
// flux run of a fixed size, Kueue does not manage it, and no quorum of the
// user's competes with the one the sizes make.
func checkElastic(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.MinSize == nil && s.MaxSize == nil {
		return found
	}
	found.Add(checkSizeNames(s, "min-size", s.MinSize, groups))
	found.Add(checkSizeNames(s, "max-size", s.MaxSize, groups))
	where := elasticOrigin(s)
	if !s.Launcher && !isInteractive(js, s, groups) {
		found.Errorf(where, "min-size and max-size resize the instance while it runs, but its command runs as one flux run over a fixed number of nodes, which growing cannot widen and shrinking kills; set flux-framework.org/launcher: \"true\" (your command then submits its own jobs, sized to the nodes up: flux resource list -s up) or make the instance interactive, or remove min-size and max-size")
	}
	if queue, ok := js.Queueing.Labels[QueueLabel]; ok {
		found.Errorf(where, "min-size and max-size resize the instance while it runs, but the JobSet is queued in Kueue's LocalQueue %q (label %s), and Kueue does not support resizing a JobSet: the first resize no longer matches its Workload, so Kueue suspends the JobSet, which deletes every pod of the instance, and queues it again; remove the label, or min-size and max-size", queue, QueueLabel)
	}
	if q, ok := quorum(s); ok {
		found.Errorf(s.Origin("broker-attributes"), "sets broker.quorum=%d, but min-size and max-size (%s) set the quorum to the instance's smallest size; remove broker.quorum", q, where)
	}
	for _, g := range groups {
		if !g.Elastic || g.Completions < 1 {
			continue
		}
		rj := &js.ReplicatedJobs[g.Index]
		_, minSet := settings.SizeOf(s.MinSize, g.Name)
		_, maxSet := settings.SizeOf(s.MaxSize, g.Name)
		switch {
		case minSet && maxSet && g.MinPods > g.PodsPerJob:
			found.Errorf(where, "gives replicatedJob %q a min-size of %d pods per Job, above its max-size of %d; make min-size at most max-size", g.Name, g.MinPods, g.PodsPerJob)
		case g.Completions > g.PodsPerJob:
			found.Errorf(rj.JobPath()+".completions", "is %d, above replicatedJob %q's max-size of %d pods per Job (%s): the instance would have no rank for the pods beyond it; raise max-size or lower completions and parallelism", g.Completions, g.Name, g.PodsPerJob, where)
		case g.Completions < g.MinPods:
			found.Errorf(rj.JobPath()+".completions", "is %d, below replicatedJob %q's min-size of %d pods per Job (%s): the instance would never reach its quorum; lower min-size or raise completions and parallelism", g.Completions, g.Name, g.MinPods, where)
		}
	}
	return found
}

// checkSizeNames refuses a size for a replicatedJob that is not in the
// instance, and a bare number where several replicatedJobs join.
func checkSizeNames(s *settings.Settings, name string, sizes []settings.GroupSize, groups []Group) finding.List {
	var found finding.List
	for _, sz := range sizes {
		switch {
		case sz.Group == "" && len(groups) > 1:
			found.Errorf(s.Origin(name), "is one number, but %d replicatedJobs join the instance (%s); give each elastic one its own: %s=%d", len(groups), groupNames(groups), groups[len(groups)-1].Name, sz.Pods)
		case sz.Group != "" && !slices.ContainsFunc(groups, func(g Group) bool { return g.Name == sz.Group }):
			found.Errorf(s.Origin(name), "names replicatedJob %q, which is not in the Flux instance (%s)", sz.Group, groupNames(groups))
		}
	}
	return found
}

// elasticOrigin is where min-size or max-size was read, for a finding
// about both.
func elasticOrigin(s *settings.Settings) string {
	if o := s.Origin("max-size"); o != "" {
		return o
	}
	return s.Origin("min-size")
}

// groupNames lists the groups' names for a message.
func groupNames(groups []Group) string {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}
