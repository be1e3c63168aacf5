package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Resources: each group's cores and GPUs per node, the groups the
// leader's command runs on, and the flux run shares per task.
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
// give. checkResources refuses what cannot fit; deriveResources computes
// the rest, from the same helpers.

// gpusPerPod is gpus-per-node, else the container's GPUs.
func gpusPerPod(s *settings.Settings, c *jobset.Container) int {
	if s.GPUsPerNode != nil {
		return *s.GPUsPerNode
	}
	return c.GPUs
}

// markRunners sets RunsJob on the groups the command runs on, by their
// GPUs alone, and returns the GPUs of each of them (those of the first).
func markRunners(groups []Group) int {
	gpus := groups[0].GPUs
	uniform := !slices.ContainsFunc(groups, func(g Group) bool { return g.GPUs != gpus })
	first := true
	for i := range groups {
		g := &groups[i]
		g.RunsJob = uniform || g.GPUs > 0
		if g.RunsJob && first {
			first, gpus = false, g.GPUs
		}
	}
	return gpus
}

// tasksPerNode is tasks-per-node, else one task per GPU (at least one).
func tasksPerNode(s *settings.Settings, gpus int) int {
	if s.TasksPerNode != 0 {
		return s.TasksPerNode
	}
	return max(1, gpus)
}

// coresPerPod is a group's cores per pod: cores-per-node, else the
// wrapped container's CPUs, else one per task. In launcher mode no flux
// run fixes the tasks per node: the broker's config describes each pod as
// it is, for whatever jobs the program submits, and a pod without a CPU
// figure counts one core per GPU (at least one), as the default
// tasks-per-node would. It is 0 for more CPUs than a Flux node may have
// (checkCores refuses them).
func coresPerPod(s *settings.Settings, c *jobset.Container, g *Group, tasks int) int {
	switch {
	case s.CoresPerNode != 0:
		return s.CoresPerNode
	case c.CPUs > settings.MaxCoresPerNode:
		return 0
	case c.CPUs > 0 && g.RunsJob && c.CPUs < tasks && !c.CPULimit:
		// A request is a floor: the pod may use more CPU than it asked
		// for, so the tasks' own cores are what it really has.
		return tasks
	case c.CPUs > 0:
		return c.CPUs
	case s.Launcher:
		return max(1, g.GPUs)
	}
	return tasks
}

// assignCores gives every group its GPUs and, for tasks per node, its cores.
func assignCores(js *jobset.JobSet, s *settings.Settings, groups []Group, tasks int) {
	for i := range groups {
		g := &groups[i]
		g.Cores = coresPerPod(s, container(js, g), g, tasks)
	}
}

// fits reports whether a group that runs the job can hold its tasks: a
// CPU limit is a ceiling, and Flux gives every task a core of its own.
func fits(g Group, tasks int) bool { return !g.RunsJob || g.Cores >= tasks }

// anyFits reports whether some group that runs the job can hold its tasks.
func anyFits(groups []Group, tasks int) bool {
	return slices.ContainsFunc(groups, func(g Group) bool { return g.RunsJob && fits(g, tasks) })
}

// deriveResources fills in the groups' GPUs, cores and RunsJob and the
// plan's flux run shares, and notes what the job leaves out.
func deriveResources(js *jobset.JobSet, p *Plan) finding.List {
	s := &p.Settings
	for i := range p.Groups {
		p.Groups[i].GPUs = gpusPerPod(s, container(js, &p.Groups[i]))
	}
	if s.Launcher {
		assignCores(js, s, p.Groups, 0)
		return nil
	}
	gpus := markRunners(p.Groups)
	p.TasksPerNode = tasksPerNode(s, gpus)
	assignCores(js, s, p.Groups, p.TasksPerNode)
	// A group whose CPU limit gives fewer cores than its tasks per node
	// is left out when another can hold them, as a GPU-less launcher is
	// left out of a GPU job.
	why := map[string]string{}
	if anyFits(p.Groups, p.TasksPerNode) {
		for i := range p.Groups {
			if g := &p.Groups[i]; !fits(*g, p.TasksPerNode) {
				g.RunsJob = false
				why[g.Name] = fmt.Sprintf("its CPU limit is below tasks-per-node: %d cores, %d tasks", g.Cores, p.TasksPerNode)
			}
		}
	}
	fewest := shares(p, gpus)
	return resourceNotes(p, fewest, why)
}

// shares sets the job's nodes and tasks and each task's cores and GPUs,
// and returns the group with the fewest cores per task.
func shares(p *Plan, gpus int) *Group {
	var fewest *Group
	for i := range p.Groups {
		g := &p.Groups[i]
		if !g.RunsJob {
			continue
		}
		p.JobNodes += g.Replicas * g.PodsPerJob
		if perTask := g.Cores / p.TasksPerNode; fewest == nil || perTask < p.CoresPerTask {
			p.CoresPerTask, fewest = perTask, g
		}
	}
	p.Tasks = p.JobNodes * p.TasksPerNode
	p.GPUsPerTask = gpus / p.TasksPerNode
	return fewest
}

// resourceNotes says which groups the job leaves out (why: the reason
// for those left out by their CPU limit; the others have no GPUs) and
// which groups' cores it leaves partly idle.
func resourceNotes(p *Plan, fewest *Group, why map[string]string) finding.List {
	var notes finding.List
	var runs, idle []string
	for _, g := range p.Groups {
		if g.RunsJob {
			runs = append(runs, strconv.Quote(g.Name))
			continue
		}
		reason, ok := why[g.Name]
		if !ok {
			reason = "no GPUs"
		}
		idle = append(idle, fmt.Sprintf("%q (%s)", g.Name, reason))
	}
	if len(idle) > 0 {
		notes.Infof("", "flux run places the command's %d tasks on the %d pods of %s, not on %s", p.Tasks, p.JobNodes, strings.Join(runs, ", "), strings.Join(idle, ", "))
	}
	for _, g := range p.Groups {
		if g.RunsJob && g.Cores/p.TasksPerNode > p.CoresPerTask {
			notes.Infof("", "flux run -c %d is what replicatedJob %q's %d cores give each of %d tasks, so the job uses %d of the %d cores of %q's pods", p.CoresPerTask, fewest.Name, fewest.Cores, p.TasksPerNode, p.CoresPerTask*p.TasksPerNode, g.Cores, g.Name)
		}
	}
	return notes
}

// checkResources refuses resources no flux run or broker config can
// describe, in the order they are derived: the GPUs, then which groups
// run the job, then tasks and cores, then whether the tasks fit.
func checkResources(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	found := checkGPUs(js, s, groups)
	if found.HasErrors() {
		return found
	}
	for i := range groups {
		groups[i].GPUs = gpusPerPod(s, container(js, &groups[i]))
	}
	if s.Launcher {
		found.Add(checkCores(js, s, groups))
		return found
	}
	gpus := markRunners(groups)
	found.Add(checkSameGPUs(js, groups))
	if found.HasErrors() {
		return found
	}
	tasks := tasksPerNode(s, gpus)
	if gpus%tasks != 0 {
		found.Errorf(originOr(s, "gpus-per-node", originOr(s, "tasks-per-node", gpuField(leaderOf(js, groups)))), "%d GPUs per node must be a multiple of tasks-per-node (%d): flux run's -g counts GPUs per task", gpus, tasks)
	}
	found.Add(checkCores(js, s, groups))
	if s.CoresPerNode != 0 && s.CoresPerNode%tasks != 0 {
		found.Errorf(originOr(s, "cores-per-node", "metadata.annotations"), "cores-per-node (%d) must be a multiple of tasks-per-node (%d), so every task gets the same cores", s.CoresPerNode, tasks)
	}
	if found.HasErrors() {
		return found
	}
	assignCores(js, s, groups, tasks)
	found.Add(checkFit(js, groups, tasks))
	return found
}

// leaderOf is the container of the first group that runs the job.
func leaderOf(js *jobset.JobSet, groups []Group) *jobset.Container {
	for i := range groups {
		if groups[i].RunsJob {
			return container(js, &groups[i])
		}
	}
	return leader(js, groups)
}

// checkGPUs refuses more GPUs per pod than a Flux node may have, and
// warns about accelerators that are not counted as GPUs.
func checkGPUs(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.GPUsPerNode != nil {
		return found
	}
	for i := range groups {
		g, c := &groups[i], container(js, &groups[i])
		if c.GPUs > settings.MaxGPUsPerNode {
			found.Errorf(c.GPUPath, "asks for %d GPUs per pod, more than the %d a Flux node may have (the bound of gpus-per-node); lower it, or set flux-framework.org/gpus-per-node", c.GPUs, settings.MaxGPUsPerNode)
			continue
		}
		for _, path := range c.Accelerators {
			found.Warnf(path, "is not counted as GPUs (jobset-flux counts %s), so Flux sees no such devices on replicatedJob %q's nodes and flux run asks for none; if they are GPUs, set flux-framework.org/gpus-per-node", strings.Join(jobset.GPUResources, ", "), g.Name)
		}
	}
	return found
}

// checkSameGPUs refuses groups that run the job with different GPUs.
func checkSameGPUs(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	var first *Group
	for i := range groups {
		g := &groups[i]
		switch {
		case !g.RunsJob:
		case first == nil:
			first = g
		case g.GPUs != first.GPUs:
			found.Errorf(gpuField(container(js, g)), "replicatedJob %q has %d GPUs per pod but %q has %d (%s): the command is one flux run, whose tasks per node and GPUs per task must fit every node it runs on; give them the same GPU limit, or set flux-framework.org/gpus-per-node (every node then counts that many)", g.Name, g.GPUs, first.Name, first.GPUs, gpuField(container(js, first)))
		}
	}
	return found
}

// checkCores refuses more CPUs per pod than a Flux node may have.
func checkCores(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.CoresPerNode != 0 {
		return found
	}
	for i := range groups {
		if c := container(js, &groups[i]); c.CPUs > settings.MaxCoresPerNode {
			found.Errorf(c.CPUPath, "gives %d cores per pod, more than the %d a Flux node may have (the bound of cores-per-node); lower it, or set flux-framework.org/cores-per-node", c.CPUs, settings.MaxCoresPerNode)
		}
	}
	return found
}

// checkFit refuses a job that no group can hold: when one can, the others
// are left out of it (deriveResources).
func checkFit(js *jobset.JobSet, groups []Group, tasks int) finding.List {
	var found finding.List
	if anyFits(groups, tasks) {
		return found
	}
	for i := range groups {
		if g := groups[i]; !fits(g, tasks) {
			found.Errorf(container(js, &g).CPUPath, "gives replicatedJob %q %d whole cores per pod, fewer than its %d tasks per node, and Flux gives every task a core of its own; raise the CPU limit, lower flux-framework.org/tasks-per-node, or set flux-framework.org/cores-per-node to %d to share the cores on purpose", g.Name, g.Cores, tasks, tasks)
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

// originOr is where the named setting was read, else fallback.
func originOr(s *settings.Settings, name, fallback string) string {
	if o := s.Origin(name); o != "" {
		return o
	}
	return fallback
}
