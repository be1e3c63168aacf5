package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
)

// Placement by topology: Kueue's topology-aware scheduling reads a
// request per PodSet (for a JobSet, per replicatedJob) from annotations
// of the pod template, and JobSet's exclusive placement reads one from
// the JobSet's or a Job template's annotations. An instance is one Flux
// job across every replicatedJob that joins, so a request that covers
// part of it, or that nothing reads, places the instance other than the
// user meant without a word from either controller.
const (
	// RequiredTopology asks Kueue for all of a PodSet's pods in one
	// domain of the level named.
	RequiredTopology = jobset.TopologyAnnotationPrefix + "required-topology"
	// PreferredTopology asks for one domain, falling back to higher levels.
	PreferredTopology = jobset.TopologyAnnotationPrefix + "preferred-topology"
	// TopologyGroup names a group of PodSets Kueue places together.
	TopologyGroup = jobset.TopologyAnnotationPrefix + "group-name"
	// SliceRequiredTopology and SliceSize ask for each slice of a
	// PodSet (by default a Job's pods) in one domain.
	SliceRequiredTopology = jobset.TopologyAnnotationPrefix + "slice-required-topology"
	SliceSize             = jobset.TopologyAnnotationPrefix + "slice-size"
	// ExclusiveTopology is JobSet's one-Job-per-domain placement.
	ExclusiveTopology = "alpha.jobset.sigs.k8s.io/exclusive-topology"
)

// topologyRequest is one replicatedJob's Kueue topology request.
type topologyRequest struct {
	path  string // the pod template's metadata
	key   string // RequiredTopology or PreferredTopology
	level string // the node label of the level
	group string // its podset-group-name, "" when none
}

// checkTopology warns where a topology request and the instance disagree:
// a Kueue request nothing reads (the JobSet is not queued, or the request
// is on the JobSet or the Job template, not the pod template), Kueue's
// and JobSet's placements on the same pods, and a request that keeps
// only part of the instance together.
func checkTopology(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	_, queued := js.Queueing.Labels[QueueLabel]
	for _, key := range slices.Sorted(maps.Keys(js.Annotations)) {
		if strings.HasPrefix(key, jobset.TopologyAnnotationPrefix) {
			found.Warnf("metadata.annotations["+key+"]", "does nothing on the JobSet: Kueue reads topology requests per replicatedJob, from its pod template's annotations (spec.replicatedJobs[*].template.spec.template.metadata.annotations); move it there, onto every replicatedJob of the instance")
		}
	}
	exclusive := js.Annotations[ExclusiveTopology] != ""
	requests := map[int]topologyRequest{}
	for _, rj := range js.ReplicatedJobs {
		// JobSet reads exclusive-topology on the JobSet or a Job template.
		excl := exclusive || slices.ContainsFunc(rj.Templates, func(tm jobset.TemplateMeta) bool {
			return !tm.Pod && slices.Contains(tm.Annotations, ExclusiveTopology)
		})
		for _, tm := range rj.Templates {
			for _, key := range slices.Sorted(maps.Keys(tm.Topology)) {
				path := fmt.Sprintf("%s.annotations[%s]", tm.Path, key)
				switch {
				case !tm.Pod:
					found.Warnf(path, "is on the Job template, where Kueue does not read it: Kueue reads topology requests from the pod template's annotations (%s.template.spec.template.metadata.annotations); move it there", rj.Path)
				case !queued:
					found.Warnf(path, "does nothing: only Kueue's topology-aware scheduling reads it, and the JobSet is not queued (label %s in the JobSet's metadata.labels); queue the JobSet in a LocalQueue whose ClusterQueue has a flavor with a topologyName, or remove this", QueueLabel)
				case excl:
					found.Warnf(path, "and JobSet's exclusive placement (%s) both place replicatedJob %q's pods: JobSet's webhook keeps each Job on a domain of its own while Kueue pins each pod to the nodes it chose, and a pod whose two placements disagree stays Pending, so the instance never forms; keep one: with Kueue, %s with %s equal to the Job's pods keeps each Job's pods within one domain", ExclusiveTopology, rj.Name, SliceRequiredTopology, SliceSize)
				}
			}
			if !tm.Pod || !queued {
				continue
			}
			for _, key := range []string{RequiredTopology, PreferredTopology} {
				if level, ok := tm.Topology[key]; ok {
					requests[rj.Index] = topologyRequest{path: tm.Path, key: key, level: level, group: tm.Topology[TopologyGroup]}
					break
				}
			}
		}
	}
	found.Add(checkTopologySpan(groups, requests))
	return found
}

// checkTopologySpan warns when the instance spans several replicatedJobs
// and a request keeps only some of them together: Kueue places each
// PodSet on its own unless they ask for the same level in one group.
func checkTopologySpan(groups []Group, requests map[int]topologyRequest) finding.List {
	var found finding.List
	if len(groups) < 2 || len(requests) == 0 {
		return found
	}
	var first *topologyRequest
	var names []string
	together := true
	for _, g := range groups {
		names = append(names, g.Name)
		r, ok := requests[g.Index]
		if !ok {
			together = false
			continue
		}
		if first == nil {
			first = &r
			continue
		}
		if r.key != first.key || r.level != first.level || r.group == "" || r.group != first.group {
			together = false
		}
	}
	if first.group == "" {
		together = false
	}
	if together {
		return found
	}
	var asked []string
	for _, g := range groups {
		if r, ok := requests[g.Index]; ok {
			group := "no group"
			if r.group != "" {
				group = fmt.Sprintf("group %q", r.group)
			}
			asked = append(asked, fmt.Sprintf("%s (%s %s, %s)", g.Name, strings.TrimPrefix(r.key, jobset.TopologyAnnotationPrefix), r.level, group))
		} else {
			asked = append(asked, g.Name+" (none)")
		}
	}
	found.Warnf(first.path+".annotations["+first.key+"]", "keeps only part of the instance together: its brokers are in replicatedJobs %s, and Kueue places each replicatedJob's pods as a PodSet of its own, so the instance may be split across domains of %s (requests: %s); give every replicatedJob of the instance the same %s and the same %s, so that Kueue places them in one domain", strings.Join(names, ", "), first.level, strings.Join(asked, "; "), first.key, TopologyGroup)
	return found
}
