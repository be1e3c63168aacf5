package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestExamples renders every example with standalone kustomize as its
// README says, applies the render with kubectl and checks the outcome
// examples/README.md promises, the leader's output included.
//
// Each example runs in a fresh tenant namespace of its own (Pod Security
// restricted, a quota, a LimitRange, default-deny NetworkPolicy:
// tenant_test.go), which the examples' containers meet, with
// network-policy set in its function config (exampleBase); its JobSet is
// new to the cluster (no DNS records or EndpointSlices of an earlier run). The namespace is set by a kustomize overlay over the
// example's own kustomization, after the function ran: the README says
// such an overlay is safe, and this shows it on the cluster.
func TestExamples(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	entries, err := os.ReadDir(filepath.Join(env.repo, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, e := range examples {
		covered[e.dir] = true
		for _, mode := range viewMountsFor("examples/" + e.dir) {
			if _, copyOnly := copyOnlyExamples[e.dir]; copyOnly && mode != copyMode {
				continue
			}
			t.Run(mode+"/"+e.dir, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				n := newTenantNamespace(t, "ex-"+mode+"-"+e.dir)
				n.apply(kustomizeBuild(t, overlay(t, exampleBase(t, e.dir, mode), n.name)))
				e.check(t, n, mode)
				t.Logf("%s (%s): %s from apply to the end", e.dir, mode, time.Since(start).Round(time.Second))
			})
		}
	}
	for _, entry := range entries {
		if _, err := os.Stat(filepath.Join(env.repo, "examples", entry.Name(), "kustomization.yaml")); err == nil && !covered[entry.Name()] {
			t.Errorf("examples/%s is not run by TestExamples: add it", entry.Name())
		}
	}
}

// overlay writes a kustomization that puts the example in directory
// example into namespace ns and returns its directory.
func overlay(t *testing.T, example, ns string) string {
	dir := t.TempDir()
	// kustomize takes a base outside the kustomization's root only by a
	// relative path.
	base, err := filepath.Rel(dir, example)
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s\n", ns, base)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// example is one examples/ directory and what its README promises, in
// either view-mount mode.
type example struct {
	dir   string
	check func(t *testing.T, n *namespace, mode string)
}

var examples = []example{
	{"lammps", func(t *testing.T, n *namespace, mode string) {
		// Debian's lmp (Open MPI 4.1) runs the input as one MPI job of 4
		// ranks over the 2 pods, to its end; exit 0.
		out := leaderLog(t, n, mode, "lammps", jobSetCompleted, "node", "lammps")
		lines, err := testsupport.LAMMPSRun(out, 4, testsupport.ExampleSteps, testsupport.ExampleAtoms)
		for _, l := range lines {
			t.Logf("lammps: %s", l)
		}
		if err != nil {
			t.Errorf("%v; the leader's output:\n%s", err, out)
		}
	}},
	{"gpu", func(t *testing.T, n *namespace, mode string) {
		// Two pods with two GPUs each, two tasks per pod seeing both
		// GPUs and the words with a space intact.
		out := leaderLog(t, n, mode, "gpu", jobSetCompleted, "trainer", "train")
		want := `["--epochs", "10", "--data", "/data/set with spaces"]`
		for _, host := range []string{"gpu-trainer-0-0", "gpu-trainer-1-0"} {
			if c := strings.Count(out, host+" 0,1 "+want+"\n"); c != 2 {
				t.Errorf("%d of 2 tasks on %s saw GPUs 0,1 and the example's arguments:\n%s", c, host, out)
			}
		}
	}},
	{"interactive", checkInteractive},
	{"own-flux", func(t *testing.T, n *namespace, mode string) {
		// No flux-installer; three tasks, one per pod, each seeing the
		// setup script's exports.
		// The image's own Flux: neither mode's shape (checked above).
		out := leaderLog(t, n, "", "solver", jobSetCompleted, "node", "solver")
		for i := range 3 {
			want := fmt.Sprintf("rank %d on solver-node-0-%d: OMP_NUM_THREADS=2 SOLVER_CASE=/data/case 1\n", i, i)
			if !strings.Contains(out, want) {
				t.Errorf("the leader's log lacks %q:\n%s", want, out)
			}
		}
		s, err := n.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.pods() {
			if len(p.Spec.InitContainers) > 0 {
				t.Errorf("%s has init containers: the image's own Flux needs no view", p.Metadata.Name)
			}
		}
	}},
	{"broker-tuning", func(t *testing.T, n *namespace, mode string) {
		// The leader's pod is withheld from scheduling: 3 schedulable
		// nodes, the job on the three workers; each worker's broker logs
		// its own info messages in its own pod.
		out := leaderLog(t, n, mode, "tuned", jobSetCompleted, "leader", "app")
		// The brokers' own info lines (log-level 6) go to the same log
		// from another process, so they may fall between the command's.
		own := testsupport.WithoutBrokerLines(testsupport.WithoutEntrypointLines(out))
		if want := "schedulable nodes: 3\ntuned-workers-0-0\ntuned-workers-0-1\ntuned-workers-0-2\n"; !strings.Contains(own, want) {
			t.Errorf("the leader's log lacks %q:\n%s", want, out)
		}
		s, err := n.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := s.pod("workers", 0, 0); !ok {
			t.Errorf("the first worker's pod is gone")
		} else if log := n.logs(w.Metadata.Name, "app"); !strings.Contains(log, "broker.info[1]: quorum-full") {
			t.Errorf("the first worker (rank 1) did not log its broker's info messages:\n%s", log)
		}
	}},
	{"durable", func(t *testing.T, n *namespace, mode string) {
		// The claim of the JobSet's template, of the default storage
		// class, which this cluster lacks: a hostPath volume bound to it
		// in advance stands in. A new instance runs the 20 steps once
		// each; TestDurable* stop and resume one.
		exampleStateVolume(t, n, "flux-state-steps")
		out := leaderLog(t, n, mode, "steps", jobSetCompleted, "driver", "app")
		for _, want := range []string{"restored: 0\n", "20 of 20 steps succeeded\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("the driver's log lacks %q:\n%s", strings.TrimSpace(want), out)
			}
		}
	}},
	{"multi-job", func(t *testing.T, n *namespace, mode string) {
		// The driver submits 16 jobs once, drains the queue, lists them
		// all COMPLETED; every pod ends (the native sidecar stops).
		out := leaderLog(t, n, mode, "ensemble", jobSetCompleted, "driver", "app")
		if c, all := strings.Count(out, "hostname COMPLETED\n"), strings.Count(out, "hostname "); c != 16 || all != 16 {
			t.Errorf("the driver lists %d jobs, %d COMPLETED; want 16, all COMPLETED:\n%s", all, c, out)
		}
	}},
}

// leaderLog waits for the JobSet to end as want and returns the log of
// container in pod 0 of job 0 of replicatedJob rj (rank 0), after checking
// it exited 0 when want is Completed.
func leaderLog(t *testing.T, n *namespace, mode, jobSet, want, rj, container string) string {
	t.Helper()
	h := n.expectEnd(jobSet, want, instanceTimeout)
	leader, ok := h.last.pod(rj, 0, 0)
	if !ok {
		t.Fatalf("no pod 0 of %s-%s-0:\n%s", jobSet, rj, h.summary())
	}
	if code := exitCode(leader, container); want == jobSetCompleted && code != 0 {
		t.Errorf("leader %s exit %d, want 0", leader.Metadata.Name, code)
	}
	for _, r := range h.retries() {
		t.Errorf("retry: %s", r)
	}
	log := n.logs(leader.Metadata.Name, container)
	if mode != "" {
		checkViewMount(t, mode, leader, log)
	}
	return log
}

// checkInteractive drives examples/interactive as its README says: select
// rank 0's pod by its labels, kubectl exec into it, wait until flux
// resource list -s up shows every node, run a job on all four, flux
// shutdown; the JobSet then completes with every pod's exit 0.
//
// Each step logs how long it took: the one CI failure of this test (under
// load 16) came with no sign of which step was slow.
func checkInteractive(t *testing.T, n *namespace, mode string) {
	step := time.Now()
	took := func(what string) {
		t.Logf("interactive (%s): %s took %s", mode, what, time.Since(step).Round(100*time.Millisecond))
		step = time.Now()
	}
	pod := waitPodName(t, n, "jobset.sigs.k8s.io/jobset-name=flux-cluster,jobset.sigs.k8s.io/replicatedjob-name=broker,jobset.sigs.k8s.io/job-index=0,batch.kubernetes.io/job-completion-index=0")
	took("selecting rank 0's pod by its labels")
	readmeEnv := "export PATH=$PATH:/mnt/flux/install/view/bin FLUX_URI=local:///mnt/flux/install/run/local; "
	exec := func(script string) (string, error) {
		out, err := n.run(nil, "exec", pod, "-c", "flux", "--", "bash", "-c", readmeEnv+script)
		return string(out), err
	}
	var up string
	for deadline := time.Now().Add(instanceTimeout); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		out, err := exec(`flux resource list -s up -no "{nnodes} {ncores}"`)
		if up = strings.TrimSpace(out); err == nil && up == "4 32" {
			break
		}
	}
	if up != "4 32" {
		t.Fatalf("flux resource list -s up: %q, want 4 nodes and 32 cores up", up)
	}
	took("waiting for 4 nodes up")
	if out, err := exec("flux run -N4 id -u"); err != nil || countLines(out, "1000") != 4 {
		diag, _ := exec("flux jobs -a; flux resource list; flux dmesg | tail -n 40")
		t.Errorf("flux run -N4 id -u: %v\n%s\nthe instance then:\n%s", err, out, diag)
	}
	took("flux run -N4 id -u")
	// flux shutdown returns once rank 0 has run rc3; the broker then exits,
	// and with it the container's pid 1, which takes every exec'd process
	// of the pod's pid namespace with it. So the exec may be cut (kubectl:
	// exit code 137) in the moment between the two. That is the instance
	// ending, not a failure: what counts is that every pod then ends with
	// 0 and the JobSet Completes, checked below.
	if out, err := exec("flux shutdown --quiet"); err != nil {
		if strings.Contains(err.Error(), "exit code 137") {
			t.Logf("flux shutdown: the exec ended with the container (%v)", err)
		} else {
			t.Errorf("flux shutdown: %v\n%s", err, out)
		}
	}
	took("flux shutdown")
	h := n.expectEnd("flux-cluster", jobSetCompleted, instanceTimeout)
	for _, r := range h.retries() {
		t.Errorf("retry: %s", r)
	}
	for _, p := range h.last.pods() {
		if code := exitCode(p, "flux"); code != 0 {
			t.Errorf("%s: flux exit %d, want 0 after flux shutdown", p.Metadata.Name, code)
		}
	}
	if leader, ok := h.last.pod("broker", 0, 0); ok {
		checkViewMount(t, mode, leader, n.logs(leader.Metadata.Name, "flux"))
	} else {
		t.Errorf("no leader pod left to check the %s mode's shape on", mode)
	}
}

// waitPodName polls kubectl get pods -o name with the selector until one
// pod answers (the README's command) and returns it (pod/<name>).
func waitPodName(t *testing.T, n *namespace, selector string) string {
	t.Helper()
	for deadline := time.Now().Add(instanceTimeout); time.Now().Before(deadline); time.Sleep(time.Second) {
		out, err := n.run(nil, "get", "pods", "-o", "name", "-l", selector)
		if name := strings.TrimSpace(string(out)); err == nil && name != "" && !strings.Contains(name, "\n") {
			return name
		}
	}
	t.Fatalf("no single pod matches %s", selector)
	return ""
}

// exampleStateVolume makes a hostPath PersistentVolume bound in advance
// to the claim of the namespace named, of no storage class; it goes when
// the test ends.
func exampleStateVolume(t *testing.T, n *namespace, claim string) {
	t.Helper()
	dir := stateHostDir(n)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	name := n.name + "-" + claim
	t.Cleanup(func() {
		if _, err := n.run(nil, "delete", "persistentvolume", name, "--ignore-not-found", "--wait=false"); err != nil {
			t.Errorf("delete persistentvolume %s: %v", name, err)
		}
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	})
	n.apply([]byte(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %s}
spec:
  storageClassName: ""
  claimRef: {namespace: %s, name: %s}
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: %s, type: Directory}
`, name, n.name, claim, dir)))
}
