package flux

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
	"github.com/jobset-flux/jobset-flux/test/testsupport/mpiprog"
)

// The MPI tests run test/testsupport/mpiprog, compiled here against
// Debian's MPICH and Open MPI, across rendered pods: every rank checks
// that its MPI size and rank are Flux's, an allreduce and a ring message
// through every rank (so across every pod), and rank 0 prints a summary
// line with every rank's hostname.
//
// Every job is bounded with the time-limit setting (mpiJobLimit), which
// reaches flux run -t; run-options may not set it.
// A case passes on rank 0's OK summary, which is printed before
// MPI_Finalize, and a JobSet that completes. Debian's MPICH with UCX can
// hang in MPI_Finalize (about 1 run in 3, ../shared/docs/mpi.md): for
// MPICH only, a job whose summary is OK but whose rank 0 never printed
// "finalized" and that the time limit ended is logged as "MPI_FINALIZE
// HANG" and passes; any other flavour hanging there fails.
const (
	mpiImage    = "registry.test/mpi:test"
	mpiJobLimit = "20s"
	mpiShm      = "1Gi"
)

// mpiBuild compiles mpiprog once per test binary for both flavours into a
// directory that stands for the app image's /srv.
var mpiBuild = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "jobset-flux-mpiprog-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	for _, f := range []mpiprog.Flavour{mpiprog.MPICH, mpiprog.OpenMPI} {
		if _, err := mpiprog.Build(f, dir); err != nil {
			return "", err
		}
	}
	return dir, nil
})

// mpiCase is one MPI run: a flavour, extra run-options, a shape.
type mpiCase struct {
	name    string
	flavour mpiprog.Flavour
	options string // run-options besides the time limit
	view    string // view-image; "" for the default (full, with flux-pmix)
	tasks   int    // tasks per pod
	groups  []group
}

func (c mpiCase) pods() []string { return hostnames("mpi", c.groups...) }

// startMPI renders and starts one case.
func startMPI(t *testing.T, c mpiCase) *run {
	t.Helper()
	requireEnv(t)
	dir, err := mpiBuild()
	if err != nil {
		t.Fatalf("build mpiprog: %v", err)
	}
	requirePMIxView(t)
	pods := c.pods()
	ann := map[string]string{
		"flux-framework.org/time-limit":     mpiJobLimit,
		"flux-framework.org/tasks-per-node": fmt.Sprint(c.tasks),
		"flux-framework.org/shm-size":       mpiShm,
	}
	if opts := strings.TrimSpace(c.options); opts != "" {
		ann["flux-framework.org/run-options"] = opts
	}
	if c.view != "" {
		ann["flux-framework.org/view-image"] = c.view
	}
	groups := make([]group, len(c.groups))
	for i, g := range c.groups {
		g.container = map[string]any{
			"name": "app", "image": mpiImage,
			"command": []string{"/srv/mpiprog-" + string(c.flavour), fmt.Sprint(len(pods))},
			// The pods drop every capability: Open MPI's CMA single copy
			// needs ptrace between a pod's tasks (mpi.md).
			"env": []any{map[string]any{"name": "OMPI_MCA_btl_vader_single_copy_mechanism", "value": "none"}},
		}
		groups[i] = g
	}
	rendered := render(t, jobSet(t, "mpi", ann, nil, groups...))
	r := start(t, rendered, map[string]kubelet.Image{mpiImage: kubelet.HostImage(map[string][]string{"srv": {dir}})})
	return r
}

// requirePMIxView fails the test when the view build lacks flux-pmix.
func requirePMIxView(t *testing.T) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(env.view, "full/opt/view/etc/flux/shell/lua.d/pmix.lua")); err != nil {
		t.Fatalf("the view build %s has no flux-pmix (%v): build it with hack/flux-view/pmix.sh", env.view, err)
	}
}

// TestMPI: MPICH and Open MPI across 2-3 pods and 1-2 replicatedJobs,
// with the default PMI and through flux-pmix, in the shapes the real
// cluster does not run: 2 tasks per pod, MPICH through flux-pmix, a view
// without flux-pmix. test/kube's TestMPI runs 1 task per pod of MPICH
// and Open MPI defaults, Open MPI with pmi=pmix and pmi=simple,pmix, and
// its TestMPIPMIOff the pmi=off negative control.
func TestMPI(t *testing.T) {
	t.Parallel()
	for _, c := range []mpiCase{
		{name: "mpich-defaults", flavour: mpiprog.MPICH, tasks: 2,
			groups: []group{{name: "w", replicas: 1, completions: 2}}},
		{name: "openmpi-pmix", flavour: mpiprog.OpenMPI, options: "-o pmi=pmix", tasks: 2,
			groups: []group{{name: "a", replicas: 1, completions: 1}, {name: "b", replicas: 1, completions: 1}}},
		{name: "mpich-simple-pmix", flavour: mpiprog.MPICH, options: "--setopt=pmi=simple,pmix", tasks: 1,
			groups: []group{{name: "a", replicas: 1, completions: 2}, {name: "b", replicas: 1, completions: 1}}},
		// A view without flux-pmix runs the defaults as before.
		{name: "openmpi-core-only-view", flavour: mpiprog.OpenMPI, view: viewCoreOnly, tasks: 2,
			groups: []group{{name: "w", replicas: 1, completions: 2}}},
	} {
		t.Run(c.name, func(t *testing.T) { runMPI(t, c) })
	}
}

func runMPI(t *testing.T, c mpiCase) {
	r := startMPI(t, c)
	res := r.wait(instanceTimeout)
	leader := r.c.Pod(c.pods()[0])
	out := logs(leader, "app")
	s, err := mpiprog.OneSummary(out)
	if err != nil {
		dump(t, res)
		t.Fatal(err)
	}
	t.Logf("rank 0: %s", s.Line)
	var rankHosts []string
	for _, p := range c.pods() {
		for range c.tasks {
			rankHosts = append(rankHosts, p)
		}
	}
	for _, err := range mpiprog.CheckSummary(s, rankHosts, len(c.pods())) {
		t.Error(err)
	}
	if _, err := mpiprog.CheckRCPath(out, c.view == ""); err != nil {
		t.Error(err)
	}
	hang, err := mpiprog.FinalizeOutcome(c.flavour, out, res.State == "Completed")
	switch {
	case err != nil:
		t.Errorf("%v (JobSet %s)", err, res.State)
	case hang:
		t.Logf("MPI_FINALIZE HANG: MPICH/UCX hung in MPI_Finalize after an OK summary; the %s time limit ended the job (JobSet %s)", mpiJobLimit, res.State)
	}
	if t.Failed() {
		dump(t, res)
	}
}
