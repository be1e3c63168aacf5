package testsupport

import (
	"strings"
	"testing"
)

// A 4-rank run's output, as Debian's lmp printed it (lines cut).
const lammpsOut = `LAMMPS (29 Sep 2021 - Update 2)
Created orthogonal box = (0 0 0) to (16.795962 16.795962 16.795962)
  1 by 2 by 2 MPI processor grid
Created 4000 atoms
Loop time of 1.0959 on 4 procs for 100 steps with 4000 atoms
Total wall time: 0:00:01
`

func TestLAMMPSRun(t *testing.T) {
	lines, err := LAMMPSRun(lammpsOut, 4, ExampleSteps, ExampleAtoms)
	if err != nil || len(lines) != 3 || lines[0] != "1 by 2 by 2 MPI processor grid" {
		t.Errorf("a 4-rank run: %q, %v", lines, err)
	}
	singleton := strings.NewReplacer("1 by 2 by 2", "1 by 1 by 1", "on 4 procs", "on 1 procs").Replace(lammpsOut)
	for name, c := range map[string]struct {
		out, want string
	}{
		"4 singletons":  {strings.Repeat(singleton, 4), "got 4 processor grids"},
		"a 1-rank run":  {singleton, "got a grid of 1 and a loop on 1 procs"},
		"unfinished":    {strings.Split(lammpsOut, "Loop")[0], "0 loops, 0 total wall times"},
		"another input": {strings.Replace(lammpsOut, "4000 atoms\nTotal", "32000 atoms\nTotal", 1), "want 100 steps with 4000 atoms, got 100 steps with 32000 atoms"},
	} {
		if _, err := LAMMPSRun(c.out, 4, ExampleSteps, ExampleAtoms); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}
