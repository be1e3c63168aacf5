package flux

import (
	"strings"
	"testing"
	"time"
)

// hungBound is how long an instance may take to end after a rank froze:
// Flux declares the rank torpid after tbon.torpid_max, then rank 0 cuts
// it off and the job ends within seconds.
func hungBound(torpidMax time.Duration) time.Duration { return torpidMax + 30*time.Second }

// waitRunning waits until the leader's broker lists a running job.
func (r *run) waitRunning(t *testing.T, leader string) {
	t.Helper()
	deadline := time.Now().Add(instanceTimeout)
	for time.Now().Before(deadline) {
		if out, code, err := r.tryFlux(leader, "app", "jobs", "-n", "--filter=running", "-o", "{id}"); err == nil && code == 0 && strings.TrimSpace(out) != "" {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("no job ran on %s within %s", leader, instanceTimeout)
}

// TestHungRankRunMode: a follower whose processes all stop mid-job (a
// hung node: nothing of it runs, while its kernel keeps its TCP
// connections up) would hold its instance for ever. With Flux's default
// tbon.torpid_max (30s) rank 0 sees it torpid, raises an exception naming
// it on the job and cuts it off: the job fails, the leader exits non-zero
// and the JobSet fails, within the bound, long before the job's ten
// minutes.
func TestHungRankRunMode(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	w := group{name: "w", replicas: 1, completions: 3}
	r := start(t, render(t, jobSet(t, "hung", nil, []string{"sleep", "600"}, w)), nil)
	leader := "hung-w-0-0"
	r.waitRunning(t, leader)
	frozen := time.Now()
	if err := r.c.Freeze("hung-w-0-2"); err != nil {
		t.Fatal(err)
	}
	res := r.wait(instanceTimeout)
	took := time.Since(frozen)
	out := logs(r.c.Pod(leader), "app")
	got, _ := r.c.Pod(leader).Result("app")
	t.Logf("JobSet %s %s after the freeze; leader exit %d", res.State, took.Round(time.Second), got.ExitCode)
	if got.ExitCode == 0 {
		t.Errorf("leader exit 0, want the failed job's")
	}
	for _, want := range []string{"rank 2 (hung-w-0-2) hung: its broker sent nothing for tbon.torpid_max", "type=hang"} {
		if !strings.Contains(out, want) {
			t.Errorf("the leader's log lacks %q", want)
		}
	}
	if bound := hungBound(30 * time.Second); took > bound {
		t.Errorf("the JobSet took %s after the freeze to end, more than %s", took.Round(time.Second), bound)
	}
	expectEnd(t, res, "Failed")
}

// hungLauncher waits until rank 2 is cut off (lost in the overlay), then
// runs a job on the two nodes left and exits 0.
const hungLauncher = `set -u
flux kvs put test.formed=1
until flux overlay status --no-pretty --color=never | grep -q '^2 .*: lost'; do sleep 0.5; done
echo "cut off: $(flux overlay status --no-pretty --color=never | grep '^2 ')"
echo "after: $(flux run -N2 hostname | sort | tr '\n' ' ')"
`

// TestHungRankLauncher: in an instance whose launcher keeps going, a
// follower that hangs while idle is cut off once torpid (here after the
// 10s the user set in broker-config), and the launcher runs its next job
// on the nodes left. The launcher succeeds, but the hung pod can never
// end, so its Job never completes: rank 0 exits 122 naming the rank and
// the JobSet fails instead of running for ever.
func TestHungRankLauncher(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	ann := map[string]string{
		"flux-framework.org/launcher":      "true",
		"flux-framework.org/broker-config": "[tbon]\ntorpid_max = \"10s\"\n",
	}
	w := group{name: "w", replicas: 1, completions: 3}
	r := start(t, render(t, jobSet(t, "hungl", ann, []string{"bash", "-c", hungLauncher}, w)), nil)
	leader := "hungl-w-0-0"
	deadline := time.Now().Add(instanceTimeout)
	for {
		if _, code, err := r.tryFlux(leader, "app", "kvs", "get", "test.formed"); err == nil && code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the launcher never started")
		}
		time.Sleep(500 * time.Millisecond)
	}
	frozen := time.Now()
	if err := r.c.Freeze("hungl-w-0-2"); err != nil {
		t.Fatal(err)
	}
	res := r.wait(instanceTimeout)
	took := time.Since(frozen)
	out := logs(r.c.Pod(leader), "app")
	got, _ := r.c.Pod(leader).Result("app")
	t.Logf("JobSet %s %s after the freeze; leader exit %d", res.State, took.Round(time.Second), got.ExitCode)
	if got.ExitCode != 122 {
		t.Errorf("leader exit %d, want 122: the launcher succeeded, a rank was cut off", got.ExitCode)
	}
	for _, want := range []string{
		"cut off: 2 hungl-w-0-2: lost",
		"after: hungl-w-0-0 hungl-w-0-1",
		"the command succeeded, but rank 0 cut off hung ranks, whose pods cannot end by themselves: 2 (hungl-w-0-2)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the leader's log lacks %q", want)
		}
	}
	if bound := hungBound(10 * time.Second); took > bound {
		t.Errorf("the JobSet took %s after the freeze to end, more than %s", took.Round(time.Second), bound)
	}
	expectEnd(t, res, "Failed")
}

// TestHungLeader: when rank 0 itself hangs mid-job, nobody is left to cut
// it off, and its followers' TCP connections to it stay up. They hear no
// heartbeat.pulse for tbon.torpid_max and two heartbeat periods, stop
// their brokers and exit 122 naming rank 0, and the JobSet fails.
func TestHungLeader(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	w := group{name: "w", replicas: 1, completions: 3}
	r := start(t, render(t, jobSet(t, "hungr0", nil, []string{"sleep", "600"}, w)), nil)
	leader := "hungr0-w-0-0"
	r.waitRunning(t, leader)
	frozen := time.Now()
	if err := r.c.Freeze(leader); err != nil {
		t.Fatal(err)
	}
	res := r.wait(instanceTimeout)
	took := time.Since(frozen)
	t.Logf("JobSet %s %s after the freeze", res.State, took.Round(time.Second))
	// The first follower to give up fails the JobSet, whose end may stop
	// the other before it gives up too.
	named := 0
	for _, h := range []string{"hungr0-w-0-1", "hungr0-w-0-2"} {
		got, _ := r.c.Pod(h).Result("app")
		out := logs(r.c.Pod(h), "app")
		t.Logf("%s: exit %d", h, got.ExitCode)
		if got.ExitCode == 0 {
			t.Errorf("%s exit 0, want non-zero:\n%s", h, out)
		}
		if got.ExitCode == 122 && strings.Contains(out, "rank 0 (hungr0-w-0-0) hung, or this broker is cut off from it: no heartbeat for 34s") {
			named++
		}
	}
	if named == 0 {
		t.Errorf("no follower exited 122 naming rank 0")
	}
	if bound := hungBound(34 * time.Second); took > bound {
		t.Errorf("the JobSet took %s after the freeze to end, more than %s", took.Round(time.Second), bound)
	}
	expectEnd(t, res, "Failed")
}
