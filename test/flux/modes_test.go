package flux

import (
	"strings"
	"testing"
)

// TestLauncher: with launcher mode the command is the instance's initial
// program, run once on rank 0, so a driver script can submit many jobs and
// drain the queue (wrapped in flux run it ran on every broker, and its
// drain waited for its own wrapper job forever); the script's exit code is
// the leader's.
func TestLauncher(t *testing.T) {
	requireEnv(t)
	groups := []group{{name: "driver", replicas: 1, completions: 1}, {name: "w", replicas: 1, completions: 2}}
	ann := map[string]string{"flux-framework.org/launcher": "true"}
	t.Run("drains", func(t *testing.T) {
		script := `flux submit --quiet --cc 1-16 hostname && flux queue drain && echo "runs $(flux jobs -a -no '{name}' | wc -l)" && flux jobs -a -no '{result}' | sort | uniq -c | sed 's/^ */result /'`
		r := start(t, render(t, jobSet(t, "drv", ann, []string{"bash", "-c", script}, groups...)), nil)
		res := r.wait(instanceTimeout)
		out := logs(r.c.Pod("drv-driver-0-0"), "app")
		if got, _ := r.c.Pod("drv-driver-0-0").Result("app"); got.ExitCode != 0 {
			t.Errorf("leader exit %d, want 0", got.ExitCode)
		}
		// Once on rank 0: 16 jobs in the instance, not 16 per broker.
		if !strings.Contains(out, "runs 16\n") || !strings.Contains(out, "result 16 COMPLETED\n") {
			t.Errorf("want 16 jobs, all COMPLETED, in the leader's output")
		}
		if res.State != "Completed" {
			t.Errorf("JobSet %s, want Completed", res.State)
		}
		for _, p := range res.Pods {
			if got, _ := p.Result("app"); got.ExitCode != 0 || p.Phase() != "Succeeded" {
				t.Errorf("%s: %s, exit %d; every broker should end with the instance", p.Hostname, p.Phase(), got.ExitCode)
			}
		}
		if t.Failed() {
			dump(t, res)
		}
	})
	t.Run("fails", func(t *testing.T) {
		script := `flux run hostname && exit 7`
		r := start(t, render(t, jobSet(t, "drvfail", ann, []string{"bash", "-c", script}, groups...)), nil)
		res := r.wait(instanceTimeout)
		if got, _ := r.c.Pod("drvfail-driver-0-0").Result("app"); got.ExitCode != 7 {
			t.Errorf("leader exit %d, want the script's 7", got.ExitCode)
		}
		if res.State != "Failed" {
			t.Errorf("JobSet %s, want Failed", res.State)
		}
		if t.Failed() {
			dump(t, res)
		}
	})
}
