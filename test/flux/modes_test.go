package flux

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
)

// TestLauncher: with launcher mode the command is the instance's initial
// program, run once on rank 0, and the script's exit code is the
// leader's: a failing driver fails the JobSet. (A driver that submits
// jobs and drains the queue runs on the real cluster: test/kube's
// TestLauncher.)
func TestLauncher(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "driver", replicas: 1, completions: 1}, {name: "w", replicas: 1, completions: 2}}
	ann := map[string]string{"flux-framework.org/launcher": "true"}
	script := `flux run hostname && exit 7`
	r := start(t, render(t, jobSet(t, "drvfail", ann, []string{"bash", "-c", script}, groups...)), nil)
	res := r.wait(instanceTimeout)
	if got, _ := r.c.Pod("drvfail-driver-0-0").Result("app"); got.ExitCode != 7 {
		t.Errorf("leader exit %d, want the script's 7", got.ExitCode)
	}
	expectEnd(t, res, "Failed")
}

// TestBrokerEscapeHatches: an extra broker attribute, the log level and an
// extra broker TOML key (merged into a table the function writes, and a
// table of its own) are what the running brokers report.
func TestBrokerEscapeHatches(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "w", replicas: 1, completions: 2}}
	ann := map[string]string{
		"flux-framework.org/launcher":          "true",
		"flux-framework.org/broker-attributes": "broker.quorum=2 broker.critical-ranks=0",
		"flux-framework.org/log-level":         "5",
		"flux-framework.org/broker-config":     "[resource]\nexclude = \"1\"\n[job-manager]\nmax-jobs = 7\n",
	}
	script := `for a in broker.quorum broker.critical-ranks log-stderr-level; do echo "attr $a=$(flux getattr $a)"; done
echo "config resource.exclude=$(flux config get resource.exclude)"
echo "config job-manager.max-jobs=$(flux config get job-manager.max-jobs)"
echo "config resource.noverify=$(flux config get resource.noverify)"`
	r := start(t, render(t, jobSet(t, "hatch", ann, []string{"bash", "-c", script}, groups...)), nil)
	res := r.wait(instanceTimeout)
	out := logs(r.c.Pod("hatch-w-0-0"), "app")
	for _, want := range []string{
		"attr broker.quorum=2\n", "attr broker.critical-ranks=0\n", "attr log-stderr-level=5\n",
		"config resource.exclude=1\n", "config job-manager.max-jobs=7\n", "config resource.noverify=true\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the leader's output lacks %q", want)
		}
	}
	expectEnd(t, res, "Completed")
}

// TestSetup: the setup script is sourced on every pod before Flux starts,
// and what it exports reaches the job on every node; a shift in it does
// not eat the container's command.
func TestSetup(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "w", replicas: 1, completions: 2}}
	ann := map[string]string{"flux-framework.org/setup": "shift\nexport SETUP_VAR=\"from setup on $(hostname)\"\n"}
	r := start(t, render(t, jobSet(t, "setup", ann, []string{"bash", "-c", `echo "job on $(hostname) sees: $SETUP_VAR"`}, groups...)), nil)
	res := r.wait(instanceTimeout)
	out := logs(r.c.Pod("setup-w-0-0"), "app")
	// The job's environment is the submitting broker's (rank 0's).
	for _, h := range hostnames("setup", groups...) {
		if want := "job on " + h + " sees: from setup on setup-w-0-0\n"; !strings.Contains(out, want) {
			t.Errorf("the leader's output lacks %q", want)
		}
	}
	expectEnd(t, res, "Completed")
}

// TestImageFlux: an app image with Flux installed under its own prefix
// (a stand-in: the host's root with the view build's /opt laid over it,
// so flux is /opt/view/bin/flux) boots with flux-path and no view: no
// flux-installer init container, no view volumes. (view-image none with
// flux on the image's PATH runs on the real cluster: test/kube's
// TestImageFlux.)
func TestImageFlux(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	const appImage = "example.com/hpc-with-flux:1.0"
	ctr := map[string]any{"name": "app", "image": appImage, "command": []string{"bash", "-c", `echo "task $FLUX_TASK_RANK on $(hostname)"; [ "$FLUX_TASK_RANK" != 0 ] || flux module list | grep -c sched-fluxion-qmanager | sed 's/^/fluxion /'`}}
	groups := []group{{name: "w", replicas: 1, completions: 2, container: ctr}}
	rendered := render(t, jobSet(t, "own", map[string]string{"flux-framework.org/flux-path": "/opt/view"}, nil, groups...))
	if strings.Contains(string(rendered), "flux-installer\n") || strings.Contains(string(rendered), "flux-software") || strings.Contains(string(rendered), "init.sh:") {
		t.Fatalf("the render still has the view's init container, volume or script:\n%s", rendered)
	}
	r := start(t, rendered, map[string]kubelet.Image{appImage: viewImage("full")})
	res := r.wait(instanceTimeout)
	out := logs(r.c.Pod("own-w-0-0"), "app")
	for _, want := range []string{"task 0 on own-w-0-0\n", "task 1 on own-w-0-1\n", "fluxion 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the leader's output lacks %q", want)
		}
	}
	expectEnd(t, res, "Completed")
}
