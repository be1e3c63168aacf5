package flux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestExamples renders every example with standalone kustomize, as its
// README says, and runs it on real brokers. The examples' images are
// registry images this machine cannot pull; each stands in as the host's
// root file system plus the example's own programs, written here (see
// examples/README.md for what stands in for what).
func TestExamples(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	entries, err := os.ReadDir(filepath.Join(env.repo, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, e := range examples {
		tested[e.dir] = true
		t.Run(e.dir, func(t *testing.T) {
			rendered := kustomizeBuild(t, filepath.Join(env.repo, "examples", e.dir))
			opts := kubelet.Options{Images: images(e.images(t))}
			if len(e.claims) > 0 {
				opts.Claims = map[string]string{}
				for _, c := range e.claims {
					opts.Claims[c] = stateDir(t)
				}
			}
			r := startWith(t, opts, decode(t, rendered))
			e.check(t, r)
		})
	}
	for _, entry := range entries {
		if _, err := os.Stat(filepath.Join(env.repo, "examples", entry.Name(), "kustomization.yaml")); err == nil && !tested[entry.Name()] {
			t.Errorf("examples/%s is not run by TestExamples: add it", entry.Name())
		}
	}
}

// example is one examples/ directory: its stand-in images and what its
// README promises.
type example struct {
	dir    string
	images func(t *testing.T) map[string]kubelet.Image
	// claims are the PersistentVolumeClaims the example's pods mount, by
	// name: each gets an empty directory of its own.
	claims []string
	check  func(t *testing.T, r *run)
}

var examples = []example{
	{
		dir: "lammps",
		// lammps-mpi (Debian 12 with its lammps, openmpi-bin and mpich
		// packages): the host's root, which has them (.ci/apt/lammps.txt).
		images: func(t *testing.T) map[string]kubelet.Image {
			if _, err := exec.LookPath("lmp"); err != nil {
				testsupport.SkipOrFail(t, "no lmp on this machine: install Debian's lammps (.ci/apt/lammps.txt)")
			}
			return map[string]kubelet.Image{"jobset-flux.test/lammps-mpi:bookworm": kubelet.HostImage(nil)}
		},
		// README: LAMMPS runs the input as one MPI job of 4 ranks over the
		// 2 pods, to the end; exit 0.
		check: func(t *testing.T, r *run) {
			res := r.wait(instanceTimeout)
			out := logs(r.c.Pod("lammps-node-0-0"), "lammps")
			lines, err := testsupport.LAMMPSRun(out, 4, testsupport.ExampleSteps, testsupport.ExampleAtoms)
			for _, l := range lines {
				t.Logf("lammps: %s", l)
			}
			if err != nil {
				t.Errorf("%v; the leader's output:\n%s", err, out)
			}
			expectEnd(t, res, "Completed")
		},
	},
	{
		dir: "gpu",
		// The NGC PyTorch image: the host's python3 runs a train.py that
		// prints its arguments and GPUs.
		images: func(t *testing.T) map[string]kubelet.Image {
			root := t.TempDir()
			write(t, filepath.Join(root, "workspace/train.py"), 0o644, `import json, os, socket, sys
print("train", os.environ["FLUX_TASK_RANK"], socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES"), json.dumps(sys.argv[1:]))
`)
			return map[string]kubelet.Image{"nvcr.io/nvidia/pytorch:24.08-py3": layered(root, "workspace")}
		},
		// README: two pods with two GPUs each, two tasks per pod, exit 0.
		check: func(t *testing.T, r *run) {
			res := r.wait(instanceTimeout)
			out := logs(r.c.Pod("gpu-trainer-0-0"), "train")
			want := `["--epochs", "10", "--data", "/data/set with spaces"]`
			for _, host := range []string{"gpu-trainer-0-0", "gpu-trainer-1-0"} {
				if n := strings.Count(out, host+" 0,1 "+want+"\n"); n != 2 {
					t.Errorf("%d of 2 tasks on %s saw GPUs 0,1 and the example's arguments", n, host)
				}
			}
			expectEnd(t, res, "Completed")
		},
	},
	{
		dir: "interactive",
		images: func(t *testing.T) map[string]kubelet.Image {
			return map[string]kubelet.Image{"ubuntu:24.04": kubelet.HostImage(nil)}
		},
		// README: four pods stay up until flux shutdown; runs as uid 1000.
		check: func(t *testing.T, r *run) {
			leader := "flux-cluster-broker-0-0"
			if out := waitResources(t, r, leader, "flux", "4 32"); out != "4 32" {
				t.Errorf("flux resource list: %q, want 4 nodes and 32 cores", out)
			}
			if out, code := r.flux(leader, "flux", "run", "-N4", "id", "-u"); code != 0 || strings.Count(out, "1000\n") != 4 {
				t.Errorf("flux run -N4 id -u: exit %d\n%s", code, out)
			}
			r.flux(leader, "flux", "shutdown", "--quiet")
			res := r.wait(instanceTimeout)
			if res.State != "Completed" {
				dump(t, res)
				t.Errorf("JobSet %s after flux shutdown, want Completed", res.State)
			}
		},
	},
	{
		dir: "own-flux",
		// flux-sched:noble: the machine's root with the Flux build's /opt
		// laid over it and /opt/view/bin on the image's PATH.
		images: func(t *testing.T) map[string]kubelet.Image {
			return map[string]kubelet.Image{"ghcr.io/flux-framework/flux-sched:noble": fluxOnPathImage()}
		},
		// README: no flux-installer; three tasks, one per pod, each seeing
		// the setup script's exports; exit 0.
		check: func(t *testing.T, r *run) {
			res := r.wait(instanceTimeout)
			c := checks{t: t}
			for _, p := range res.Pods {
				if _, ran := p.Result("flux-installer"); ran {
					c.errorf("%s ran the flux-installer: the image's own Flux needs no view", p.Hostname)
				}
			}
			out := logs(r.c.Pod("solver-node-0-0"), "solver")
			for i := range 3 {
				want := fmt.Sprintf("rank %d on solver-node-0-%d: OMP_NUM_THREADS=2 SOLVER_CASE=/data/case 1\n", i, i)
				if !strings.Contains(out, want) {
					c.errorf("the leader's output lacks %q:\n%s", want, out)
				}
			}
			if got, _ := r.c.Pod("solver-node-0-0").Result("solver"); got.ExitCode != 0 || res.State != "Completed" {
				c.errorf("leader exit %d, JobSet %s; want 0 and Completed", got.ExitCode, res.State)
			}
			if t.Failed() {
				dump(t, res)
			}
			c.report("")
		},
	},
	{
		dir: "broker-tuning",
		images: func(t *testing.T) map[string]kubelet.Image {
			return map[string]kubelet.Image{"ubuntu:24.04": kubelet.HostImage(nil)}
		},
		// README: rank 0 is withheld from scheduling, so the launcher sees
		// 3 schedulable nodes and its job runs on the three workers only;
		// each worker's broker logs at info level in its own pod; exit 0.
		check: func(t *testing.T, r *run) {
			res := r.wait(instanceTimeout)
			c := checks{t: t}
			out := logs(r.c.Pod("tuned-leader-0-0"), "app")
			want := "schedulable nodes: 3\ntuned-workers-0-0\ntuned-workers-0-1\ntuned-workers-0-2\n"
			if !strings.Contains(testsupport.WithoutEntrypointLines(out), want) {
				c.errorf("the leader's output lacks %q:\n%s", want, out)
			}
			// log-stderr-mode=local with log-level 6: a worker's own
			// broker logs its info messages to its own stderr.
			// (Rank 1 is the first worker: the leader's pod is rank 0.)
			if w := logs(r.c.Pod("tuned-workers-0-0"), "app"); !strings.Contains(w, "broker.info[1]: quorum-full") {
				c.errorf("the first worker (rank 1) did not log its broker's info messages itself:\n%s", w)
			}
			if got, _ := r.c.Pod("tuned-leader-0-0").Result("app"); got.ExitCode != 0 || res.State != "Completed" {
				c.errorf("leader exit %d, JobSet %s; want 0 and Completed", got.ExitCode, res.State)
			}
			if t.Failed() {
				dump(t, res)
			}
			c.report("")
		},
	},
	{
		dir: "durable",
		images: func(t *testing.T) map[string]kubelet.Image {
			return map[string]kubelet.Image{"ghcr.io/flux-framework/flux-sched:noble": kubelet.HostImage(nil)}
		},
		claims: []string{"flux-state-steps"},
		// README: a new instance (JOBSET_FLUX_RESTORED=0) runs all 20
		// steps once each and Completes; TestDurableResume stops and
		// resumes one.
		check: func(t *testing.T, r *run) {
			res, err := r.tryWait(2 * time.Minute)
			c := checks{t: t}
			if err != nil {
				c.errorf("%v", err)
			}
			if res.State != "Completed" {
				c.errorf("JobSet %s (%s), want Completed", res.State, res.Reason)
			}
			out := logs(r.c.Pod("steps-driver-0-0"), "app")
			for _, want := range []string{"restored: 0\n", "20 of 20 steps succeeded\n"} {
				if !strings.Contains(out, want) {
					c.errorf("the driver's log lacks %q", strings.TrimSpace(want))
				}
			}
			if len(c.problems) > 0 {
				dump(t, res)
			}
			c.report("")
		},
	},
	{
		dir: "multi-job",
		images: func(t *testing.T) map[string]kubelet.Image {
			return map[string]kubelet.Image{
				"ghcr.io/flux-framework/flux-sched:noble": kubelet.HostImage(nil),
				"busybox:1.36": kubelet.HostImage(nil),
			}
		},
		// README: the driver (launcher mode) submits 16 jobs, drains the
		// queue and ends with 0; every pod ends (the workers' logger is a
		// native sidecar); the JobSet completes.
		check: func(t *testing.T, r *run) {
			res, err := r.tryWait(90 * time.Second)
			c := checks{t: t}
			if err != nil {
				c.errorf("%v", err)
			}
			if res.State != "Completed" {
				c.errorf("JobSet %s (%s), want Completed", res.State, res.Reason)
			}
			driver := r.c.Pod("ensemble-driver-0-0")
			if got, _ := driver.Result("app"); got.ExitCode != 0 {
				c.errorf("driver exit %d, want 0", got.ExitCode)
			}
			// Once on rank 0: 16 jobs in the instance, not 16 per broker.
			out := logs(driver, "app")
			if n, all := strings.Count(out, "hostname COMPLETED\n"), strings.Count(out, "hostname "); n != 16 || all != 16 {
				c.errorf("the driver lists %d jobs, %d of them COMPLETED; want 16, all COMPLETED", all, n)
			}
			if len(c.problems) > 0 {
				dump(t, res)
			}
			c.report("")
		},
	},
}

// waitResources polls flux resource list until the resources that are up
// are want ("<nodes> <cores>") or the instance timeout passes, and returns
// the last answer. Only up resources count: until every broker has joined,
// Fluxion rejects a job asking for more nodes than are up as unsatisfiable,
// while a plain flux resource list already counts the down ones.
func waitResources(t *testing.T, r *run, pod, container, want string) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(instanceTimeout); time.Now().Before(deadline); time.Sleep(time.Second) {
		if r.c.Pod(pod).Phase() == "Failed" {
			break
		}
		o, code, err := r.tryFlux(pod, container, "resource", "list", "-s", "up", "-no", "{nnodes} {ncores}")
		out = strings.TrimSpace(o)
		if err == nil && code == 0 && out == want {
			break
		}
	}
	return out
}

// layered is the host image with the named top-level directories of root
// laid over the host's.
func layered(root string, dirs ...string) kubelet.Image {
	layers := map[string][]string{}
	for _, d := range dirs {
		layers[d] = []string{filepath.Join(root, d)}
	}
	return kubelet.HostImage(layers)
}

func write(t *testing.T, path string, mode os.FileMode, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
