package plan_test

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readJobSet reads a JobSet the builder wrote.
func readJobSet(js *jobsettest.JobSet) *jobset.JobSet {
	rn, err := yaml.Parse(js.YAML())
	if err != nil {
		panic(err)
	}
	read, found := jobset.Read(rn)
	if found.HasErrors() {
		panic(found)
	}
	return read
}

// The plan numbers the brokers group by group: rank 0 is pod 0 of Job 0
// of the first replicatedJob. Each group's hosts are one RFC 29 hostlist
// in rank order, and the leader's command runs as one flux run over the
// nodes whose resources fit it.
func ExampleDerive() {
	js := readJobSet(jobsettest.New("sim").Jobs(
		jobsettest.Job("leader").ContainerField("resources", map[string]any{"limits": map[string]any{"cpu": 2}}),
		jobsettest.Job("workers").Replicas(2).Completions(2).
			ContainerField("resources", map[string]any{"limits": map[string]any{"cpu": 8}}),
	))
	s, found := settings.Resolve(settings.Defaults(), js)
	found.Add(plan.Validate(js, s))
	if found.HasErrors() {
		panic(found)
	}
	p, notes := plan.Derive(js, s)
	for _, g := range p.Groups {
		fmt.Printf("%s: ranks %d-%d on %s, %d cores each\n", g.Name, g.FirstRank, g.FirstRank+g.Replicas*g.PodsPerJob-1, g.Hosts, g.Cores)
	}
	fmt.Printf("%d brokers; flux run -N %d -n %d -c %d\n", p.Brokers, p.JobNodes, p.Tasks, p.CoresPerTask)
	for _, n := range notes {
		fmt.Println("note:", n.Message)
	}
	// Output:
	// leader: ranks 0-0 on sim-leader-0-0, 2 cores each
	// workers: ranks 1-4 on sim-workers-0-[0-1],sim-workers-1-[0-1], 8 cores each
	// 5 brokers; flux run -N 5 -n 5 -c 2
	// note: flux run -c 2 is what replicatedJob "leader"'s 2 cores give each of 1 tasks, so the job uses 2 of the 8 cores of "workers"'s pods
}

// Validate only reports: here a Job that would retry a failed broker.
func ExampleValidate() {
	js := readJobSet(jobsettest.New("sim").Jobs(jobsettest.Job("workers").Completions(4).JobField("backoffLimit", 1)))
	s, _ := settings.Resolve(settings.Defaults(), js)
	for _, f := range plan.Validate(js, s) {
		fmt.Println("error:", f.Severity == finding.Error, f.Path, "current", f.Current, "proposed", f.Proposed)
	}
	// Output:
	// error: true spec.replicatedJobs[0].template.spec.backoffLimit current 1 proposed 0
}
