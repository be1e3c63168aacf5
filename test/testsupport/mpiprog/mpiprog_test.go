package mpiprog

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// Each flavour builds, and a singleton run (no launcher: size 1) with
// Flux's variables saying 2 tasks prints a FAIL summary and exits 1: the
// checks have teeth without Flux, too.
func TestBuildAndSingleton(t *testing.T) {
	for _, f := range []Flavour{MPICH, OpenMPI} {
		t.Run(string(f), func(t *testing.T) {
			if _, err := exec.LookPath(f.Compiler()); err != nil {
				testsupport.SkipOrFail(t, "%v", err)
			}
			bin, err := Build(f, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "1")
			cmd.Env = append(os.Environ(), "FLUX_JOB_SIZE=2", "FLUX_TASK_RANK=1", "OMPI_MCA_btl_vader_single_copy_mechanism=none")
			out, err := cmd.Output()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit %d (%v), want 1\n%s", code, err, out)
			}
			rs := Summaries(string(out))
			if len(rs) != 1 || rs[0].OK || rs[0].Size != 1 || rs[0].Flux != 2 || rs[0].Hosts != 1 || !strings.Contains(strings.ToLower(rs[0].MPI), strings.TrimSuffix(string(f), "mpi")) {
				t.Errorf("summaries %+v\n%s", rs, out)
			}
			if !Finalized(string(out)) {
				t.Errorf("no finalized line:\n%s", out)
			}
		})
	}
}

func TestSummaries(t *testing.T) {
	out := "x\nmpiprog: OK size=4 flux-size=4 hosts=2 ring=4/10 allreduce=10/3 ranks=a,a,b,b mpi=MPICH_Version:_4.0.2\nmpiprog: finalized\n"
	rs := Summaries(out)
	if len(rs) != 1 || !rs[0].OK || rs[0].Size != 4 || rs[0].Hosts != 2 || strings.Join(rs[0].Ranks, " ") != "a a b b" || rs[0].MPI != "MPICH_Version:_4.0.2" {
		t.Errorf("%+v", rs)
	}
	if !Finalized(out) || Finalized("mpiprog: finalizedX") {
		t.Error("Finalized")
	}
}
