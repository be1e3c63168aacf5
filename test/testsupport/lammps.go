package testsupport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// LAMMPS's own lines about a run: the MPI decomposition it chose ("1 by 2
// by 2 MPI processor grid"), the loop's summary ("Loop time of 1.09 on 4
// procs for 100 steps with 4000 atoms": examples/lammps's input; the
// cluster's TestShmSize runs a smaller one) and the last line of a run
// that reached its end ("Total wall time: 0:00:01").
var (
	lammpsGrid = regexp.MustCompile(`(?m)^\s*([0-9]+) by ([0-9]+) by ([0-9]+) MPI processor grid$`)
	lammpsLoop = regexp.MustCompile(`(?m)^Loop time of [0-9.e+-]+ on ([0-9]+) procs for ([0-9]+) steps with ([0-9]+) atoms$`)
	lammpsWall = regexp.MustCompile(`(?m)^Total wall time: [0-9:]+$`)
)

// ExampleSteps and ExampleAtoms are examples/lammps's input: 100 steps of
// an fcc lattice of 4000 atoms.
const (
	ExampleSteps = 100
	ExampleAtoms = 4000
)

// LAMMPSRun checks that out, the output of a LAMMPS job, is one LAMMPS run
// of procs MPI ranks over the given steps and atoms that reached its end,
// and returns its key lines. A job of procs singletons (MPI not wired to Flux's PMI) prints
// procs runs of a 1 by 1 by 1 grid "on 1 procs" instead.
func LAMMPSRun(out string, procs, steps, atoms int) ([]string, error) {
	grids := lammpsGrid.FindAllStringSubmatch(out, -1)
	loops := lammpsLoop.FindAllStringSubmatch(out, -1)
	walls := lammpsWall.FindAllString(out, -1)
	var lines []string
	for _, m := range append(grids, loops...) {
		lines = append(lines, strings.TrimSpace(m[0]))
	}
	lines = append(lines, walls...)
	if len(grids) != 1 || len(loops) != 1 || len(walls) != 1 {
		return lines, fmt.Errorf("want one LAMMPS run to its end, got %d processor grids, %d loops, %d total wall times", len(grids), len(loops), len(walls))
	}
	size := 1
	for _, d := range grids[0][1:] {
		n, _ := strconv.Atoi(d)
		size *= n
	}
	if n, _ := strconv.Atoi(loops[0][1]); n != procs || size != procs {
		return lines, fmt.Errorf("want a run on %d MPI ranks, got a grid of %d and a loop on %d procs", procs, size, n)
	}
	if loops[0][2] != strconv.Itoa(steps) || loops[0][3] != strconv.Itoa(atoms) {
		return lines, fmt.Errorf("want %d steps with %d atoms, got %s steps with %s atoms: another input", steps, atoms, loops[0][2], loops[0][3])
	}
	return lines, nil
}
