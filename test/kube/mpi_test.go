package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport/mpiprog"
)

// The MPI tests of test/flux (mpi_test.go there) on the real cluster:
// test/testsupport/mpiprog, compiled here against the host's Debian
// MPICH and Open MPI, runs in rendered pods of the lammps-mpi image
// under Flux's PMI, and every rank checks that its MPI size and rank are
// Flux's, an allreduce and a ring message through every rank (so across
// every pod); rank 0 prints one summary line with every rank's hostname.
//
// The binaries reach the pods in a ConfigMap mounted at /srv: the host
// is Debian 12 like the image (hack/kube/images/base.sh installs from the
// same suites), so they link the image's libmpich.so.12 and libmpi.so.40;
// compiling in each pod would cost the 2-CPU cluster a compiler run per
// task and the image libopenmpi-dev.
//
// The checks are test/flux's: rank 0's OK summary, MPI size == Flux size,
// ranks on the pods in hostlist order, the entrypoint's rc path line, and
// for MPICH only the tolerance of a hang in MPI_Finalize (Debian's MPICH
// with UCX, ../shared/docs/mpi.md) that the time limit ends.
const (
	// The time-limit setting. A job runs in seconds once the brokers are
	// up, but an MPICH/UCX hang in MPI_Finalize spins one rank until the
	// limit: at 2m a hung run's pods used 111 CPU-s against 6 for a run
	// that finalized, on a 2-CPU node shared by the whole suite.
	mpiTimeLimit = "45s"
	mpiShm       = "64Mi" // above the shm-size rule for 1 task per pod
	mpiConfigMap = "mpiprog"
)

// mpiBinaries compiles mpiprog once per test binary for both flavours
// into a directory of its own; it returns the binaries' paths.
var mpiBinaries = sync.OnceValues(func() ([]string, error) {
	dir, err := os.MkdirTemp("", "jobset-flux-kube-mpiprog-")
	if err != nil {
		return nil, fmt.Errorf("mpiprog: %w", err)
	}
	var bins []string
	for _, f := range []mpiprog.Flavour{mpiprog.MPICH, mpiprog.OpenMPI} {
		sub := filepath.Join(dir, string(f)) // Build writes mpiprog.c beside the binary
		if err := os.Mkdir(sub, 0o755); err != nil {
			return nil, fmt.Errorf("mpiprog: %w", err)
		}
		bin, err := mpiprog.Build(f, sub)
		if err != nil {
			return nil, err
		}
		bins = append(bins, bin)
	}
	return bins, nil
})

// mpiCase is one MPI run on the cluster: a flavour, run-options besides
// the time limit, a shape of 1 task per pod.
type mpiCase struct {
	name    string
	flavour mpiprog.Flavour
	options string
	groups  []group
}

func (c mpiCase) pods() []string { return hostnames("mpi", c.groups...) }

// startMPI makes the case's namespace, its ConfigMap of binaries and its
// rendered JobSet (view-mount mode), applied.
func startMPI(t *testing.T, c mpiCase, mode string) *namespace {
	t.Helper()
	n := newNamespace(t, "mpi-"+mode+"-"+c.name)
	bins, err := mpiBinaries()
	if err != nil {
		t.Fatalf("build mpiprog: %v", err)
	}
	args := []string{"create", "configmap", mpiConfigMap}
	for _, b := range bins {
		args = append(args, "--from-file="+b)
	}
	if out, err := n.run(nil, args...); err != nil {
		t.Fatalf("configmap of the mpiprog binaries: %v\n%s", err, out)
	}
	ann := map[string]string{
		"flux-framework.org/time-limit":     mpiTimeLimit,
		"flux-framework.org/tasks-per-node": "1",
		"flux-framework.org/shm-size":       mpiShm,
	}
	if c.options != "" {
		ann["flux-framework.org/run-options"] = c.options
	}
	groups := make([]group, len(c.groups))
	for i, g := range c.groups {
		g.container = map[string]any{
			"name": "app", "image": mpiImage,
			"command":      []string{"/srv/mpiprog-" + string(c.flavour), fmt.Sprint(len(c.pods()))},
			"volumeMounts": []any{map[string]any{"name": mpiConfigMap, "mountPath": "/srv", "readOnly": true}},
			// Open MPI's CMA single copy needs ptrace between a pod's
			// tasks, which the pods' capabilities do not give (mpi.md).
			"env": []any{map[string]any{"name": "OMPI_MCA_btl_vader_single_copy_mechanism", "value": "none"}},
		}
		g.pod = map[string]any{"volumes": []any{map[string]any{
			"name": mpiConfigMap, "configMap": map[string]any{"name": mpiConfigMap, "defaultMode": 0o755},
		}}}
		groups[i] = g
	}
	n.apply(render(t, jobSet(t, "mpi", withMode(mode, ann), nil, groups...)))
	return n
}

// TestMPI: MPICH and Open MPI 4 across 2-3 pods and 1-2 replicatedJobs,
// with the default PMI and through flux-pmix of the cluster's full view.
func TestMPI(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, c := range []mpiCase{
		{name: "mpich-defaults", flavour: mpiprog.MPICH,
			groups: []group{{name: "w", replicas: 1, completions: 2}}},
		{name: "openmpi-defaults", flavour: mpiprog.OpenMPI,
			groups: []group{{name: "a", replicas: 1, completions: 1}, {name: "b", replicas: 1, completions: 1}}},
		{name: "openmpi-pmix", flavour: mpiprog.OpenMPI, options: "-o pmi=pmix",
			groups: []group{{name: "w", replicas: 1, completions: 2}}},
		{name: "openmpi-simple-pmix", flavour: mpiprog.OpenMPI, options: "-o pmi=simple,pmix",
			groups: []group{{name: "w", replicas: 1, completions: 3}}},
	} {
		for _, mode := range viewMountsFor("mpi/" + c.name) {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				runMPI(t, c, mode)
			})
		}
	}
}

func runMPI(t *testing.T, c mpiCase, mode string) {
	n := startMPI(t, c, mode)
	state, msg, h := n.waitEnd("mpi", instanceTimeout)
	out := mpiLeaderLog(t, n, h, c, mode)
	s, err := mpiprog.OneSummary(out)
	if err != nil {
		t.Fatalf("%v:\n%s", err, lastLines(out, 30))
	}
	t.Logf("rank 0: %s", s.Line)
	for _, err := range mpiprog.CheckSummary(s, c.pods(), len(c.pods())) {
		t.Error(err)
	}
	// The cluster's full view has flux-pmix.
	line, err := mpiprog.CheckRCPath(out, true)
	if err != nil {
		t.Error(err)
	} else {
		t.Logf("%s", line)
	}
	hang, err := mpiprog.FinalizeOutcome(c.flavour, out, state == jobSetCompleted)
	switch {
	case err != nil:
		t.Errorf("%v (JobSet %s: %s):\n%s", err, state, msg, lastLines(out, 30))
	case hang:
		t.Logf("MPI_FINALIZE HANG: MPICH/UCX hung in MPI_Finalize after an OK summary; the %s time limit ended the job (JobSet %s)", mpiTimeLimit, state)
	}
}

// mpiLeaderLog is the log of rank 0's app container, after checking the
// pod's view-mount mode and that nothing was retried.
func mpiLeaderLog(t *testing.T, n *namespace, h *history, c mpiCase, mode string) string {
	t.Helper()
	leader, ok := h.last.pod(c.groups[0].name, 0, 0)
	if !ok {
		t.Fatalf("no leader pod:\n%s", h.summary())
	}
	for _, r := range h.retries() {
		t.Errorf("retry: %s", r)
	}
	out := n.logs(leader.Metadata.Name, "app")
	checkViewMount(t, mode, leader, out)
	return out
}

// TestMPIPMIOff: the negative control. With -o pmi=off no PMI reaches
// the tasks, and the checks of TestMPI must catch it: MPICH starts every
// task as a singleton (each prints a FAIL summary, size 1); Debian's
// Open MPI 4.1 still picks its flux component, whose PMI_Init fails, so
// there is no summary at all. Either way no OK summary, and the JobSet
// fails.
func TestMPIPMIOff(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, f := range []mpiprog.Flavour{mpiprog.MPICH, mpiprog.OpenMPI} {
		t.Run(copyMode+"/"+string(f), func(t *testing.T) {
			t.Parallel()
			c := mpiCase{name: "off-" + string(f), flavour: f, options: "-o pmi=off",
				groups: []group{{name: "w", replicas: 1, completions: 2}}}
			n := startMPI(t, c, copyMode)
			h := n.expectEnd("mpi", jobSetFailed, instanceTimeout)
			out := mpiLeaderLog(t, n, h, c, copyMode)
			checkPMIOff(t, f, out, len(c.pods()))
		})
	}
}

// checkPMIOff checks the leader's log of a pmi=off run of tasks tasks.
func checkPMIOff(t *testing.T, f mpiprog.Flavour, out string, tasks int) {
	t.Helper()
	for _, s := range mpiprog.Summaries(out) {
		t.Logf("singleton: %s", s.Line)
	}
	errs := mpiprog.CheckPMIOff(f, out, tasks)
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.Logf("rank 0's log ends:\n%s", lastLines(out, 30))
	} else if f == mpiprog.OpenMPI {
		t.Logf("Open MPI: %s", firstLine(out, "PMI_Init"))
	}
}
