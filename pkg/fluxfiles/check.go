package fluxfiles

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// check rejects plans that would render files which fail only at run time,
// on every pod at once: plans whose shape (groups, ranks, counts) does not
// add up. The settings' values are not checked again: a value that
// reaches a file is quoted or encoded there, whatever it holds.
func check(p *plan.Plan) error {
	if p == nil {
		return errors.New("nil plan")
	}
	var c checker
	c.instance(p)
	c.job(p)
	// Each setting was checked once, by package settings; what the files
	// need besides is that the plan's settings came from there at all.
	if !p.Settings.Resolved() {
		c.bad("the settings were not resolved (settings.Defaults, then Apply)")
	}
	return errors.Join(c.errs...)
}

// checker collects every problem of a plan, so that one error lists
// them all.
type checker struct {
	errs []error
}

func (c *checker) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// instance checks the instance's shape: its name, and groups whose pods
// make up the brokers.
func (c *checker) instance(p *plan.Plan) {
	if p.Name == "" {
		c.bad("empty JobSet name")
	}
	if p.Subdomain == "" {
		c.bad("empty subdomain")
	}
	if len(p.Groups) == 0 {
		c.bad("no groups: the instance has no brokers")
	}
	pods := 0
	for i, g := range p.Groups {
		if g.Hosts == "" {
			c.bad("group %d (%q) has an empty hostlist", i, g.Name)
		}
		if g.Replicas < 1 || g.PodsPerJob < 1 {
			c.bad("group %d (%q) has %d replicas x %d completions", i, g.Name, g.Replicas, g.PodsPerJob)
		}
		pods += g.Replicas * g.PodsPerJob
	}
	if p.Brokers != pods {
		c.bad("brokers is %d but the groups have %d pods", p.Brokers, pods)
	}
	if p.Quorum < 0 || p.Quorum > p.Brokers {
		c.bad("quorum is %d, want 1 to the %d brokers (0 for all)", p.Quorum, p.Brokers)
	}
}

// job checks the job flux run starts: its tasks, and nodes that have
// what the tasks ask for.
func (c *checker) job(p *plan.Plan) {
	if p.Tasks < 1 && !p.Settings.Launcher {
		c.bad("tasks is %d, want at least 1", p.Tasks)
	}
	if p.Settings.Launcher && p.Interactive {
		c.bad("launcher and interactive are exclusive")
	}
	jobNodes := 0
	for i, g := range p.Groups {
		c.resources(p, i, g)
		if g.RunsJob {
			jobNodes += g.Replicas * g.PodsPerJob
		}
	}
	// A launcher plans no flux run, so there is no job to fit.
	if !p.Settings.Launcher && (p.JobNodes < 1 || p.JobNodes != jobNodes-p.Excluded) {
		c.bad("the job runs on %d nodes but its groups have %d pods", p.JobNodes, jobNodes)
	}
	if !p.Settings.Launcher && p.Tasks != p.JobNodes*p.TasksPerNode {
		c.bad("tasks is %d, want %d nodes x %d tasks per node", p.Tasks, p.JobNodes, p.TasksPerNode)
	}
	if p.GPUsPerTask < 0 || p.CoresPerTask < 0 {
		c.bad("negative per-task resources")
	}
}

// resources checks the cores and GPUs of group i's nodes.
func (c *checker) resources(p *plan.Plan, i int, g plan.Group) {
	if g.Cores < 1 {
		c.bad("group %d (%q) has %d cores per node, want at least 1", i, g.Name, g.Cores)
	}
	if g.GPUs < 0 {
		c.bad("group %d (%q) has %d GPUs per node", i, g.Name, g.GPUs)
	}
	// What flux run asks of each node must be there, or the job never
	// starts.
	if g.RunsJob && (g.Cores < p.TasksPerNode*max(1, p.CoresPerTask) || g.GPUs < p.TasksPerNode*p.GPUsPerTask) {
		c.bad("group %d (%q) has %d cores and %d GPUs per node, less than %d tasks of %d cores and %d GPUs",
			i, g.Name, g.Cores, g.GPUs, p.TasksPerNode, p.CoresPerTask, p.GPUsPerTask)
	}
}

// idset is the Flux idset of the first n ids: "" for none, "0" for one,
// "0-<n-1>" otherwise.
func idset(n int) string {
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "0"
	default:
		return "0-" + strconv.Itoa(n-1)
	}
}
