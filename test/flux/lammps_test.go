package flux

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lammpsLoop is LAMMPS's summary line of a run: "Loop time of 1.09 on 4
// procs for 100 steps with 4000 atoms".
var lammpsLoop = regexp.MustCompile(`(?m)^Loop time of [0-9.e+-]+ on ([0-9]+) procs for 100 steps with 4000 atoms$`)

// lammpsGrid is the MPI decomposition LAMMPS chose: "1 by 2 by 2 MPI
// processor grid".
var lammpsGrid = regexp.MustCompile(`(?m)^\s*([0-9]+) by ([0-9]+) by ([0-9]+) MPI processor grid$`)

// checkLAMMPSLog checks the output of examples/lammps's run: one MPI job
// of procs ranks (the processor grid and the loop over them), which ran to
// its end. A job that was procs singletons (MPI not wired to Flux's PMI)
// prints a 1 by 1 by 1 grid and "on 1 procs", procs times.
func checkLAMMPSLog(t *testing.T, out string, procs int) {
	t.Helper()
	grids := lammpsGrid.FindAllStringSubmatch(out, -1)
	loops := lammpsLoop.FindAllStringSubmatch(out, -1)
	ok := len(grids) == 1 && len(loops) == 1
	if ok {
		x, _ := strconv.Atoi(grids[0][1])
		y, _ := strconv.Atoi(grids[0][2])
		z, _ := strconv.Atoi(grids[0][3])
		n, _ := strconv.Atoi(loops[0][1])
		ok = x*y*z == procs && n == procs
	}
	wall := regexp.MustCompile(`(?m)^Total wall time: .*$`).FindString(out)
	for _, m := range append(grids, loops...) {
		t.Logf("lammps: %s", strings.TrimSpace(m[0]))
	}
	t.Logf("lammps: %s", wall)
	if !ok || wall == "" {
		t.Errorf("want one %d-rank LAMMPS run to its end (an MPI processor grid of %d, \"Loop time of ... on %d procs for 100 steps with 4000 atoms\", \"Total wall time\"); the leader's output:\n%s", procs, procs, procs, out)
	}
}
