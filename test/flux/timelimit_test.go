package flux

import (
	"strings"
	"testing"
	"time"
)

// TestTimeLimit: with time-limit, a job whose tasks never end (an MPI rank
// hung in MPI_Finalize, here a sleep on every task of both pods) is ended
// by Flux when the limit passes: the leader exits non-zero with Flux's
// timeout exception in its log, every pod ends and the JobSet fails, long
// before the sleep would have. The same JobSet without the limit would
// run for the sleep's ten minutes.
func TestTimeLimit(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "w", replicas: 1, completions: 2}}
	ann := map[string]string{"flux-framework.org/time-limit": "5s", "flux-framework.org/tasks-per-node": "2"}
	begin := time.Now()
	r := start(t, render(t, jobSet(t, "hang", ann, []string{"sleep", "600"}, groups...)), nil)
	res := r.wait(instanceTimeout)
	took := time.Since(begin)
	out := logs(r.c.Pod("hang-w-0-0"), "app")
	got, _ := r.c.Pod("hang-w-0-0").Result("app")
	t.Logf("JobSet %s after %s; leader exit %d", res.State, took.Round(time.Second), got.ExitCode)
	if got.ExitCode == 0 {
		t.Errorf("leader exit 0, want non-zero: the job was killed")
	}
	// flux run reports the job's exception: type=timeout.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "type=timeout") {
			t.Logf("leader: %s", line)
		}
	}
	if !strings.Contains(out, "type=timeout") {
		t.Errorf("the leader's log lacks Flux's timeout exception (type=timeout)")
	}
	for _, p := range res.Pods {
		if p.Phase() == "Running" {
			t.Errorf("%s still running after the JobSet ended", p.Hostname)
		}
	}
	if took > 3*time.Minute {
		t.Errorf("the JobSet took %s to end; the 5s limit should end it in well under a minute after the brokers are up", took.Round(time.Second))
	}
	expectEnd(t, res, "Failed")
}
