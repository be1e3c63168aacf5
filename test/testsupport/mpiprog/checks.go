package mpiprog

import (
	"fmt"
	"strings"
)

// The checks both runtime suites (test/flux on real brokers, test/kube on
// the real cluster) make of a run's rank-0 log. Each returns what is wrong
// as error messages, so every suite reports them in its own way.

// RCPathPrefix starts the entrypoint's log line naming the job shell's rc
// directories (printed only when the view has flux-pmix).
const RCPathPrefix = "jobset-flux: job shell rc files: "

// CheckRCPath checks the rc-path line of out: with flux-pmix in the view
// the entrypoint names flux-pmix's own etc/flux/shell/lua.d, and only it;
// without, it prints no such line. It returns the line ("" if none).
func CheckRCPath(out string, pmix bool) (string, error) {
	var dirs string
	found := false
	for _, l := range strings.Split(out, "\n") {
		if d, ok := strings.CutPrefix(l, RCPathPrefix); ok {
			dirs, found = d, true
		}
	}
	line := ""
	if found {
		line = RCPathPrefix + dirs
	}
	switch {
	case !pmix && found:
		return line, fmt.Errorf("a view without flux-pmix got %q", line)
	case pmix && (!strings.HasPrefix(dirs, "/opt/software/") || !strings.HasSuffix(dirs, "/etc/flux/shell/lua.d") ||
		!strings.Contains(dirs, "/flux-pmix-") || strings.Contains(dirs, ":")):
		return line, fmt.Errorf("entrypoint rc path line %q; want flux-pmix's own etc/flux/shell/lua.d only", line)
	}
	return line, nil
}

// OneSummary returns rank 0's summary line of out: a real MPI job prints
// exactly one (a job whose tasks came up as singletons prints one per
// task, and a job that failed before MPI_Init none).
func OneSummary(out string) (Result, error) {
	rs := Summaries(out)
	if len(rs) != 1 {
		return Result{}, fmt.Errorf("%d summary lines from rank 0, want 1", len(rs))
	}
	return rs[0], nil
}

// CheckSummary checks rank 0's summary of a job of len(rankHosts) tasks
// over hosts pods: OK, MPI's size and Flux's both the task count, and
// rank i on rankHosts[i] (Flux places ranks in hostlist order).
func CheckSummary(s Result, rankHosts []string, hosts int) []error {
	var errs []error
	tasks := len(rankHosts)
	if !s.OK || s.Size != tasks || s.Flux != tasks || s.Hosts != hosts {
		errs = append(errs, fmt.Errorf("summary %q: want OK, size %d, %d hosts", s.Line, tasks, hosts))
	}
	for i, h := range s.Ranks {
		if i >= tasks {
			break
		}
		if want := rankHosts[i]; h != want {
			errs = append(errs, fmt.Errorf("rank %d ran on %s, want %s", i, h, want))
		}
	}
	return errs
}

// FinalizeOutcome decides how a run with an OK summary ended. Rank 0 said
// "finalized" and the JobSet completed: pass. Debian's MPICH with UCX can
// hang in MPI_Finalize (../shared/docs/mpi.md); for MPICH only, a run that
// never finalized and whose time limit ended it ("timeout" in the log)
// passes as a hang, reported by hang. Anything else is an error.
func FinalizeOutcome(f Flavour, out string, completed bool) (hang bool, err error) {
	switch {
	case Finalized(out) && completed:
		return false, nil
	case !Finalized(out) && f == MPICH && strings.Contains(out, "timeout"):
		return true, nil
	}
	return false, fmt.Errorf("finalized: %v, completed: %v; want MPI_Finalize to return and the JobSet Completed", Finalized(out), completed)
}

// CheckPMIOff checks rank 0's log of a -o pmi=off run of tasks tasks, the
// negative control: no PMI reaches the tasks. MPICH starts each as a
// singleton, each printing a FAIL summary (size 1, Flux's size tasks);
// Debian's Open MPI 4.1 picks its flux component anyway, whose PMI_Init
// fails, so there is no summary and PMI_Init is in the log.
func CheckPMIOff(f Flavour, out string, tasks int) []error {
	var errs []error
	rs := Summaries(out)
	for _, s := range rs {
		if s.OK || s.Size != 1 || s.Flux != tasks {
			errs = append(errs, fmt.Errorf("summary %q: want FAIL with size 1 and flux-size %d", s.Line, tasks))
		}
	}
	switch {
	case f == MPICH && len(rs) != tasks:
		errs = append(errs, fmt.Errorf("%d summaries, want one FAIL per task (%d)", len(rs), tasks))
	case f == OpenMPI && (len(rs) != 0 || !strings.Contains(out, "PMI_Init")):
		errs = append(errs, fmt.Errorf("%d summaries; want none, and Open MPI's PMI_Init failure in the log", len(rs)))
	}
	return errs
}
