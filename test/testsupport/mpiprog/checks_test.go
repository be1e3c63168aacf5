package mpiprog

import (
	"strings"
	"testing"
)

const pmixLine = RCPathPrefix + "/opt/software/flux-pmix-0.5.0/etc/flux/shell/lua.d"

func TestCheckRCPath(t *testing.T) {
	for _, c := range []struct {
		name, out string
		pmix, ok  bool
	}{
		{"pmix", "a\n" + pmixLine + "\nb", true, true},
		{"no line, no pmix", "a\nb", false, true},
		{"no line, pmix", "a\nb", true, false},
		{"line without pmix", pmixLine, false, false},
		{"two dirs", pmixLine + ":/opt/view/etc/flux/shell/lua.d", true, false},
		{"not flux-pmix", RCPathPrefix + "/opt/software/other/etc/flux/shell/lua.d", true, false},
		{"outside software", RCPathPrefix + "/usr/flux-pmix-1/etc/flux/shell/lua.d", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			line, err := CheckRCPath(c.out, c.pmix)
			if (err == nil) != c.ok {
				t.Errorf("CheckRCPath(%q, %v) = %q, %v; want ok %v", c.out, c.pmix, line, err, c.ok)
			}
		})
	}
}

func TestOneSummary(t *testing.T) {
	line := "mpiprog: OK size=2 flux-size=2 hosts=2 ring=2/3 allreduce=3/1 ranks=a,b mpi=x"
	s, err := OneSummary("start\n" + line + "\nmpiprog: finalized\n")
	if err != nil || s.Line != line || s.Size != 2 || len(s.Ranks) != 2 {
		t.Errorf("one summary: %+v, %v", s, err)
	}
	for _, c := range []struct{ name, out, want string }{
		{"none", "MPI_Init failed\n", "0 summary lines"},
		{"singletons", line + "\n" + line + "\n", "2 summary lines"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := OneSummary(c.out); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("OneSummary(%q) = %v; want an error with %q", c.out, err, c.want)
			}
		})
	}
}

func TestCheckSummary(t *testing.T) {
	parse := func(line string) Result {
		rs := Summaries(line + "\n")
		if len(rs) != 1 {
			t.Fatalf("no summary in %q", line)
		}
		return rs[0]
	}
	good := parse("mpiprog: OK size=4 flux-size=4 hosts=2 ring=4/10 allreduce=10/3 ranks=a,a,b,b mpi=x")
	if errs := CheckSummary(good, []string{"a", "a", "b", "b"}, 2); len(errs) != 0 {
		t.Errorf("good summary: %v", errs)
	}
	for _, c := range []struct {
		name, line string
		ranks      []string
		hosts      int
		want       string
	}{
		{"order", "mpiprog: OK size=4 flux-size=4 hosts=2 ring=4/10 allreduce=10/3 ranks=a,b,a,b mpi=x", []string{"a", "a", "b", "b"}, 2, "rank 1 ran on b, want a"},
		{"fail", "mpiprog: FAIL size=4 flux-size=4 hosts=2 ring=4/10 allreduce=10/3 ranks=a,a,b,b mpi=x failures=1", []string{"a", "a", "b", "b"}, 2, "want OK"},
		{"size", "mpiprog: OK size=2 flux-size=4 hosts=2 ring=2/3 allreduce=3/1 ranks=a,b mpi=x", []string{"a", "a", "b", "b"}, 2, "want OK, size 4"},
		{"hosts", "mpiprog: OK size=2 flux-size=2 hosts=1 ring=2/3 allreduce=3/1 ranks=a,a mpi=x", []string{"a", "b"}, 2, "rank 1 ran on a, want b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := CheckSummary(parse(c.line), c.ranks, c.hosts)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), c.want) {
				t.Errorf("errors %q; want one with %q", msgs, c.want)
			}
		})
	}
}

func TestFinalizeOutcome(t *testing.T) {
	const fin = "mpiprog: finalized\n"
	for _, c := range []struct {
		name      string
		f         Flavour
		out       string
		completed bool
		hang, ok  bool
	}{
		{"finalized and completed", OpenMPI, fin, true, false, true},
		{"finalized, failed", MPICH, fin, false, false, false},
		{"MPICH hang ended by the limit", MPICH, "job 1: timeout\n", false, true, true},
		{"Open MPI hang", OpenMPI, "job 1: timeout\n", false, false, false},
		{"MPICH, no limit", MPICH, "nothing\n", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			hang, err := FinalizeOutcome(c.f, c.out, c.completed)
			if hang != c.hang || (err == nil) != c.ok {
				t.Errorf("FinalizeOutcome = %v, %v; want hang %v, ok %v", hang, err, c.hang, c.ok)
			}
		})
	}
}

func TestCheckPMIOff(t *testing.T) {
	single := "mpiprog: FAIL size=1 flux-size=2 hosts=1 ring=1/1 allreduce=1/0 ranks=a mpi=x failures=2\n"
	okLine := "mpiprog: OK size=2 flux-size=2 hosts=2 ring=2/3 allreduce=3/1 ranks=a,b mpi=x\n"
	for _, c := range []struct {
		name string
		f    Flavour
		out  string
		ok   bool
	}{
		{"MPICH singletons", MPICH, single + single, true},
		{"MPICH one singleton", MPICH, single, false},
		{"MPICH real job", MPICH, okLine, false},
		{"Open MPI PMI_Init", OpenMPI, "PMI_Init failed\n", true},
		{"Open MPI summary", OpenMPI, "PMI_Init failed\n" + single, false},
		{"Open MPI silent", OpenMPI, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if errs := CheckPMIOff(c.f, c.out, 2); (len(errs) == 0) != c.ok {
				t.Errorf("CheckPMIOff: %v; want ok %v", errs, c.ok)
			}
		})
	}
}
