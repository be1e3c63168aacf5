package hostlist_test

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/hostlist"
)

// The pods of a JobSet's replicatedJob "workers" with 2 replicas of 3
// completions, in rank order: one expression per Job, because RFC 29
// expands no grid such as lammps-workers-[0-1]-[0-2].
func Example() {
	var l hostlist.List
	for job := range 2 {
		l.AppendRange(fmt.Sprintf("lammps-workers-%d-", job), 0, 2, "")
	}
	fmt.Println(l.String())
	// Output:
	// lammps-workers-0-[0-2],lammps-workers-1-[0-2]
}

// Ranges with the same prefix and suffix share one bracket, contiguous
// ones merge, and a single host is written without brackets.
func ExampleList_AppendRange() {
	var l hostlist.List
	l.AppendRange("node", 0, 3, ".hpc")
	l.AppendRange("node", 4, 7, ".hpc")
	l.AppendRange("node", 10, 10, ".hpc")
	l.AppendRange("login", 1, 1, "")
	fmt.Println(l.String())
	// Output:
	// node[0-7,10].hpc,login1
}
