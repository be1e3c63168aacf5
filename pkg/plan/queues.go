package plan

import (
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Queues: with the queues setting every group is a Flux queue of its
// name, and its pods carry its name as a resource property, which the
// queue requires. Flux accepts any DNS-1035 label as both: flux-core
// refuses only the characters !&'"`|() and white space in a property
// (librlist, conf_policy.c) and Fluxion those and ^, none of which a
// label holds, and a label cannot read as an idset (it starts with a
// letter). What remains is how flux-core's C constraint matcher reads a
// property: as the property, or as the node's hostname (librlist's
// match.c), so a queue named like one of the instance's hostnames would
// take that pod too wherever that matcher schedules or counts (the C
// sched-simple of flux-core before 0.84, flux R, flux top).

// checkQueueNames refuses, with queues on, a group whose name is also the
// hostname of one of the instance's pods.
func checkQueueNames(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if !s.Queues {
		return found
	}
	for _, g := range groups {
		host, ok := hostNamed(js.Name, g.Name, groups)
		if !ok {
			continue
		}
		found.Errorf(js.ReplicatedJobs[g.Index].Path+".name", "replicatedJob %q is also the hostname of one of JobSet %q's pods (replicatedJob %q, Job %d, pod %d), and queues is \"true\" (%s): Flux's C constraint matcher (sched-simple before flux-core 0.84, flux R, flux top) takes a property to mean a node of that hostname as well, so queue %q would hold that pod too; rename the replicatedJob, or leave queues off", g.Name, js.Name, host.group, host.job, host.pod, s.Origin("queues"), g.Name)
	}
	return found
}

// podHost is a pod of the instance, by its group, Job and index.
type podHost struct {
	group    string
	job, pod int
}

// hostNamed finds the pod of groups whose hostname,
// <jobset>-<group>-<job>-<pod>, is name. Names that are not DNS-1035
// labels are left to checkNames and checkGroup.
func hostNamed(jobSet, name string, groups []Group) (podHost, bool) {
	if len(validation.IsDNS1035Label(jobSet)) > 0 || len(validation.IsDNS1035Label(name)) > 0 {
		return podHost{}, false
	}
	for _, g := range groups {
		rest, ok := strings.CutPrefix(name, jobSet+"-"+g.Name+"-")
		if !ok {
			continue
		}
		job, pod, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		j, jok := index(job, g.Replicas)
		p, pok := index(pod, g.Completions)
		if jok && pok {
			return podHost{group: g.Name, job: j, pod: p}, true
		}
	}
	return podHost{}, false
}

// index reads a Job or pod index as a hostname writes it (decimal, no
// leading zero) below n.
func index(s string, n int) (int, bool) {
	i, err := strconv.Atoi(s)
	return i, err == nil && strconv.Itoa(i) == s && i < n
}

// checkQueueJob refuses, with queues on, a command whose flux run spans
// several groups: a Flux job runs in one queue, whose property only one
// group's pods have, so no default queue could hold it. A launcher's or
// interactive instance's jobs are the user's, submitted to any queue.
func checkQueueJob(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if !s.Queues || s.Launcher || isInteractive(js, s, groups) {
		return found
	}
	runs := jobGroups(s, groups)
	if len(runs) < 2 {
		return found
	}
	names := make([]string, len(runs))
	for i, g := range runs {
		names[i] = strconv.Quote(g.Name)
	}
	found.Errorf(s.Origin("queues"), "queues is \"true\", but JobSet %q's command is one flux run over the pods of replicatedJobs %s, and a Flux job runs in one queue, whose pods are one replicatedJob's; set flux-framework.org/launcher: \"true\" and submit a job to each queue from the command (flux submit -q %s ...), or leave queues off", js.Name, strings.Join(names, ", "), runs[0].Name)
	return found
}

// jobGroups are the groups the command's flux run places tasks on, as
// deriveResources leaves them, from groups checkResources has marked:
// those with the job's GPUs, less any whose CPU limit cannot hold the
// tasks per node when another can.
func jobGroups(s *settings.Settings, groups []Group) []Group {
	tasks := 0
	for _, g := range groups {
		if g.RunsJob {
			tasks = tasksPerNode(s, g.GPUs)
			break
		}
	}
	someFit := anyFits(groups, tasks)
	var runs []Group
	for _, g := range groups {
		if g.RunsJob && (fits(g, tasks) || !someFit) {
			runs = append(runs, g)
		}
	}
	return runs
}

// defaultQueue is the queue a job submitted without one goes to: the
// group the command's flux run runs on (checkQueueJob refuses several),
// or rank 0's in a launcher or interactive instance, whose first job is
// likeliest to be meant for the pod it is submitted from. "" without
// queues.
func defaultQueue(p *Plan) string {
	switch {
	case !p.Settings.Queues:
		return ""
	case p.Settings.Launcher || p.Interactive:
		return p.Groups[0].Name
	}
	for _, g := range p.Groups {
		if g.RunsJob {
			return g.Name
		}
	}
	return p.Groups[0].Name
}
