package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// Durable instances (state-claim): rank 0 keeps Flux's state on a claim
// the JobSet creates from its volumeClaimPolicies template, so that the
// instance that follows a preemption or a suspend resumes the jobs of the
// one before. The claim binds to a hostPath PersistentVolume each test
// makes, of a storage class of its own: the test cluster has no
// provisioner.

// durableSteps is the number of jobs the durable launcher runs.
const durableSteps = 20

// durableLauncher is the launcher of the durable tests, the pattern
// README's "Durable instances" shows: it submits only the steps that have
// neither succeeded nor are pending or running, so that a restored
// instance runs the ones lost or never started and never one that
// succeeded, then waits for the queue to empty and lists every job. A
// step that runs to its end also says so in the file ran on the claim,
// which no restore can lose: a step run twice shows there twice.
var durableLauncher = []string{"bash", "-c", fmt.Sprintf(`set -euo pipefail
echo "restored=${JOBSET_FLUX_RESTORED:-unset}"
have=$(flux jobs -n -c 0 --filter=pending,running,completed -o '{name}')
for i in $(seq 1 %d); do
  grep -qx "step-$i" <<<"${have}" || flux submit --quiet --job-name="step-$i" -- bash -c "sleep 3; echo step-$i >>/mnt/flux/state/ran"
done
flux queue drain
flux jobs -a -n -c 0 -o 'job {name} {result} {exception.note}'
done=$(flux jobs -n -c 0 --filter=completed -o '{name}' | sort -u | wc -l)
echo "${done} steps succeeded"
test "${done}" -eq %d`, durableSteps, durableSteps)}

// stateClass makes a hostPath PersistentVolume of a storage class named
// after the namespace, for the one claim of a test's JobSet, and returns
// the class; the volume and its directory go when the test ends.
func stateClass(t *testing.T, n *namespace) string {
	t.Helper()
	class := n.name + "-state"
	dir := stateHostDir(n)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// The broker's user creates its statedir there, whatever its uid:
	// hostPath supports no fsGroup.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := n.run(nil, "delete", "persistentvolume", class, "--ignore-not-found", "--wait=false"); err != nil {
			t.Errorf("delete persistentvolume %s: %v", class, err)
		}
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	})
	n.apply([]byte(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s}
spec:
  storageClassName: %[1]s
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: %[2]s, type: Directory}
`, class, dir)))
	return class
}

// stateHostDir is the host directory of the namespace's state volume.
func stateHostDir(n *namespace) string { return filepath.Join("/var/tmp/jobset-flux-state", n.name) }

// withStateClaim adds to a JobSet (before rendering) a volumeClaimPolicies
// template named flux-state of the class, deleted with the JobSet, and
// the state-claim annotation that names it.
func withStateClaim(t *testing.T, in docs, class string) {
	t.Helper()
	set(t, in[0], "flux-state", "metadata", "annotations", "flux-framework.org/state-claim")
	set(t, in[0], []any{map[string]any{
		"templates": []any{map[string]any{
			"metadata": map[string]any{"name": "flux-state"},
			"spec": map[string]any{
				"storageClassName": class,
				"accessModes":      []any{"ReadWriteOnce"},
				"resources":        map[string]any{"requests": map[string]any{"storage": "1Gi"}},
			},
		}},
		"retentionPolicy": map[string]any{"whenDeleted": "Delete"},
	}}, "spec", "volumeClaimPolicies")
}

// completedSteps asks rank 0's broker which steps have succeeded, nil
// while it cannot answer.
func completedSteps(n *namespace, pod string) []string {
	out, err := n.run(nil, "exec", pod, "-c", "app", "--", "bash", "-c",
		"export PATH=$PATH:/mnt/flux/install/view/bin FLUX_URI=local:///mnt/flux/install/run/local; flux jobs -n -c 0 --filter=completed -o '{name}'")
	if err != nil {
		return nil
	}
	return regexp.MustCompile(`(?m)^step-\d+$`).FindAllString(string(out), -1)
}

// durableRun is what a durable test saw: the steps that had succeeded
// when the instance was stopped, and the pods of rank 0 it ran.
type durableRun struct {
	doneBefore []string
	leaderUID  string
}

// waitSteps waits until rank 0 of the JobSet has run at least want
// steps, and returns which, with rank 0's pod's uid.
func waitSteps(t *testing.T, n *namespace, jobSet string, want int) durableRun {
	t.Helper()
	deadline := time.Now().Add(instanceTimeout)
	for time.Now().Before(deadline) {
		s, err := n.snapshot()
		if err == nil {
			if leader, ok := s.pod("w", 0, 0); ok && leader.Metadata.Labels[labelJobSet] == jobSet && isReady(leader) {
				if done := completedSteps(n, leader.Metadata.Name); len(done) >= want {
					return durableRun{doneBefore: done, leaderUID: leader.Metadata.UID}
				}
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("JobSet %s: fewer than %d steps succeeded within %s", jobSet, want, instanceTimeout)
	return durableRun{}
}

// checkResumed checks the last rank 0's log and the claim's file ran
// against the durable launcher's promise (testsupport.CheckDurableResume),
// and that rank 0 said it resumed a state.
func checkResumed(t *testing.T, n *namespace, log string, before durableRun, stop testsupport.DurableStop) {
	t.Helper()
	ran, err := os.ReadFile(filepath.Join(stateHostDir(n), "ran"))
	if err != nil {
		t.Fatal(err)
	}
	testsupport.CheckDurableResume(log, ran, durableSteps, before.doneBefore, stop).Report(t)
	if !strings.Contains(log, "state-claim: resuming an earlier instance's state") {
		t.Errorf("rank 0 did not say it resumed a state")
	}
	if t.Failed() {
		t.Logf("rank 0's log ends:\n%s", lastLines(log, 40))
	}
}

// durableShape is two pods of one core each: two steps run at a time.
func durableShape() []group {
	return []group{{name: "w", replicas: 1, completions: 2, container: app("400m", "64Mi", durableLauncher...)}}
}

// TestDurableSuspendResume: a launcher instance with state-claim is
// suspended after 5 of its 20 steps succeeded (kubectl patch
// spec.suspend), which deletes its pods; resumed, its new instance
// restores the state, runs the 15 others, never one of the 5 again, and
// Completes.
func TestDurableSuspendResume(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "durable-suspend")
	class := stateClass(t, n)
	in := decode(t, []byte(jobSet(t, "steps", map[string]string{"flux-framework.org/launcher": "true"}, nil, durableShape()...)))
	withStateClaim(t, in, class)
	n.apply(render(t, string(in.encode(t))))
	start := time.Now()
	before := waitSteps(t, n, "steps", 5)
	t.Logf("+%s %d steps succeeded: suspending", time.Since(start).Round(time.Second), len(before.doneBefore))
	if out, err := n.run(nil, "patch", "jobset", "steps", "--type=merge", "-p", `{"spec":{"suspend":true}}`); err != nil {
		t.Fatalf("suspend: %v: %s", err, out)
	}
	waitNoPods(t, n, "steps", time.Minute)
	t.Logf("+%s suspended, every pod gone: resuming", time.Since(start).Round(time.Second))
	if out, err := n.run(nil, "patch", "jobset", "steps", "--type=merge", "-p", `{"spec":{"suspend":false}}`); err != nil {
		t.Fatalf("resume: %v: %s", err, out)
	}
	log := leaderLog(t, n, "", "steps", jobSetCompleted, "w", "app")
	t.Logf("+%s Completed", time.Since(start).Round(time.Second))
	checkResumed(t, n, log, before, testsupport.StoppedCleanly)
}

// TestDurablePreemption: Kueue preempts a launcher instance with
// state-claim after 5 of its 20 steps succeeded, for a JobSet of higher
// priority; once that one is done and the first is admitted again, its
// new instance restores the state, runs the 15 others and never one of
// the 5 again, and Completes. The test logs the timeline.
func TestDurablePreemption(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "durable-preempt")
	q := newKueueQueue(t, n, "1", "1Gi")
	class := stateClass(t, n)
	k := newKueueWatch(n)
	low := decode(t, []byte(jobSet(t, "low", map[string]string{"flux-framework.org/launcher": "true"}, nil, durableShape()...)))
	set(t, low[0], map[string]any{queueLabel: q.local, priorityLabel: q.priorityLow}, "metadata", "labels")
	withStateClaim(t, low, class)
	n.apply(render(t, string(low.encode(t))))
	before := waitSteps(t, n, "low", 5)
	t.Logf("+%s low: %d steps succeeded: queueing high", time.Since(k.start).Round(time.Second), len(before.doneBefore))
	n.apply(q.queued(t, "high", q.priorityHigh, []group{{name: "h", replicas: 1, completions: 2, container: app("400m", "64Mi", "sleep", "5")}}...))
	var preempted, gone bool
	k.until("low preempted and its pods gone, high admitted", 3*time.Minute, []string{"low", "high"}, func(s *snapshot, w map[string]*workload) bool {
		if !preempted && w["low"] != nil && w["low"].is("Evicted", "Preempted") {
			preempted = true
			t.Logf("+%s low preempted (%d pods left)", time.Since(k.start).Round(time.Second), len(podsOf(s, "low")))
		}
		if preempted && !gone && len(podsOf(s, "low")) == 0 {
			gone = true
			t.Logf("+%s low's pods gone", time.Since(k.start).Round(time.Second))
		}
		return preempted && gone && w["high"] != nil && w["high"].is("Admitted", "")
	})
	t.Logf("+%s high admitted", time.Since(k.start).Round(time.Second))
	k.until("high Completed, low admitted again", instanceTimeout, []string{"low", "high"}, func(s *snapshot, w map[string]*workload) bool {
		high, _ := s.jobSetState("high")
		return high == jobSetCompleted && w["low"] != nil && w["low"].is("Admitted", "")
	})
	t.Logf("+%s high Completed, low admitted again", time.Since(k.start).Round(time.Second))
	log := leaderLog(t, n, "", "low", jobSetCompleted, "w", "app")
	t.Logf("+%s low Completed", time.Since(k.start).Round(time.Second))
	checkResumed(t, n, log, before, testsupport.StoppedCleanly)
}

// waitNoPods waits until the JobSet has no pods left.
func waitNoPods(t *testing.T, n *namespace, jobSet string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s, err := n.snapshot(); err == nil && len(podsOf(s, jobSet)) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("JobSet %s still has pods %s after it was suspended", jobSet, timeout)
}
