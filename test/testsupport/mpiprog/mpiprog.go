// Package mpiprog builds mpiprog, a small MPI program that checks, on every
// rank, that MPI sees the job Flux started (size and rank equal Flux's
// FLUX_JOB_SIZE and FLUX_TASK_RANK), that an MPI_Allreduce and a ring
// message through every rank are right, and how many hosts the ranks span.
// Rank 0 prints one summary line (see src/mpiprog.c); Summary finds and parses it.
//
// The runtime tests (test/flux) and the real-cluster tests (test/kube)
// compile it with each MPI flavour's compiler wrapper.
package mpiprog

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

//go:embed src/mpiprog.c
var source []byte

// Source is the program's C source.
func Source() []byte { return append([]byte(nil), source...) }

// Flavour is an MPI implementation the program is compiled against.
type Flavour string

// The flavours Debian ships, each with its own compiler wrapper.
const (
	MPICH   Flavour = "mpich"   // mpicc.mpich (Debian's mpich, libmpich-dev)
	OpenMPI Flavour = "openmpi" // mpicc.openmpi (Debian's openmpi-bin, libopenmpi-dev)
)

// Compiler is the flavour's compiler wrapper, as Debian names it.
func (f Flavour) Compiler() string { return "mpicc." + string(f) }

// Build compiles the program with the flavour's compiler into
// dir/mpiprog-<flavour> and returns that path. The error says which Debian
// packages provide a missing compiler.
func Build(f Flavour, dir string) (string, error) {
	cc, err := exec.LookPath(f.Compiler())
	if err != nil {
		return "", fmt.Errorf("mpiprog: %s not found: install Debian's %s (listed in .ci/apt/mpi.txt): %w", f.Compiler(), packages(f), err)
	}
	src := filepath.Join(dir, "mpiprog.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("mpiprog: %w", err)
	}
	bin := filepath.Join(dir, "mpiprog-"+string(f))
	out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-o", bin, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mpiprog: %s: %w\n%s", f.Compiler(), err, out)
	}
	return bin, nil
}

func packages(f Flavour) string {
	if f == OpenMPI {
		return "openmpi-bin and libopenmpi-dev"
	}
	return string(f) + " and lib" + string(f) + "-dev"
}

// Result is rank 0's summary line, parsed.
type Result struct {
	Line  string   // the whole line
	OK    bool     // every check on every rank passed
	Size  int      // MPI_COMM_WORLD's size as rank 0 saw it
	Flux  int      // FLUX_JOB_SIZE
	Hosts int      // distinct hostnames among the ranks
	Ranks []string // each rank's hostname, in rank order
	MPI   string   // the first words of MPI_Get_library_version
}

var summaryLine = regexp.MustCompile(`(?m)^mpiprog: (OK|FAIL) size=(\d+) flux-size=(-?\d+) hosts=(\d+) ring=\S+ allreduce=\S+ ranks=(\S+) mpi=(\S*)( failures=\d+)?$`)

// Summaries returns every summary line in out, in order: one for a real
// MPI job, one per task when every task is a singleton.
func Summaries(out string) []Result {
	var rs []Result
	for _, m := range summaryLine.FindAllStringSubmatch(out, -1) {
		size, _ := strconv.Atoi(m[2])
		flux, _ := strconv.Atoi(m[3])
		hosts, _ := strconv.Atoi(m[4])
		rs = append(rs, Result{Line: m[0], OK: m[1] == "OK", Size: size, Flux: flux, Hosts: hosts,
			Ranks: strings.Split(m[5], ","), MPI: m[6]})
	}
	return rs
}

// Finalized reports whether rank 0 printed that MPI_Finalize returned.
func Finalized(out string) bool {
	return regexp.MustCompile(`(?m)^mpiprog: finalized$`).MatchString(out)
}
