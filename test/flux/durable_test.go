package flux

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// Durable instances (state-claim) on real brokers: the instance is
// stopped as Kubernetes stops pods (SIGTERM, then SIGKILL after the grace
// period) and a new one starts on the same claim, which stands in as a
// directory of the host.

// durableSteps is the number of jobs the durable launcher runs.
const durableSteps = 12

// durableLauncher submits only the steps that have neither succeeded nor
// are pending or running, waits for the queue to empty and lists every
// job: README's "Durable instances" pattern. Each step that runs to its
// end also says so in the file ran on the claim, which no restore can
// lose: a step run twice shows there twice.
func durableLauncher(seconds int) []string {
	return []string{"bash", "-c", fmt.Sprintf(`set -euo pipefail
echo "restored=${JOBSET_FLUX_RESTORED:-unset}"
have=$(flux jobs -n -c 0 --filter=pending,running,completed -o '{name}')
for i in $(seq 1 %d); do
  grep -qx "step-$i" <<<"${have}" || flux submit --quiet --job-name="step-$i" -- bash -c "echo out-$i; sleep %d; echo step-$i >>/mnt/flux/state/ran"
done
flux queue drain
flux jobs -a -n -c 0 -o 'job {name} {result} {exception.note}'
for i in 1 2; do echo "output of step-$i: $(flux job attach "$(flux jobs -n --name=step-$i --filter=completed -o '{id}' | head -1)")"; done
done=$(flux jobs -n -c 0 --filter=completed -o '{name}' | sort -u | wc -l)
echo "${done} steps succeeded"
test "${done}" -eq %d`, durableSteps, seconds, durableSteps)}
}

// durableJobSet renders the durable launcher, of steps of the seconds
// given, over three pods with a volumeClaimPolicies claim named
// flux-state that state-claim names.
func durableJobSet(t *testing.T, name string, seconds int) kubelet.Objects {
	t.Helper()
	doc := jobSet(t, name, map[string]string{
		"flux-framework.org/launcher":    "true",
		"flux-framework.org/state-claim": "flux-state",
	}, durableLauncher(seconds), group{name: "w", replicas: 1, completions: 3})
	doc = strings.Replace(doc, "spec:\n", `spec:
  volumeClaimPolicies:
    - templates:
        - metadata: {name: flux-state}
          spec:
            accessModes: [ReadWriteMany]
            resources: {requests: {storage: 1Gi}}
`, 1)
	return decode(t, render(t, doc))
}

// stateDir is the host directory that stands in for a JobSet's claim
// flux-state-<name>: writable by any user, as a volume with fsGroup is.
func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "claim")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// completed lists the steps rank 0 says have succeeded (nil while it
// cannot answer).
func (r *run) completed(leader string) []string {
	out, code, err := r.tryFlux(leader, "app", "jobs", "-n", "--filter=completed", "-o", "{name}")
	if err != nil || code != 0 {
		return nil
	}
	// Only job names count: a broker still starting answers with errors.
	return regexp.MustCompile(`(?m)^step-\d+$`).FindAllString(out, -1)
}

// stopAfter starts an instance on the claim, waits until at least steps
// jobs succeeded, then stops every pod as Kubernetes does (SIGTERM, then
// SIGKILL after grace) once then has passed, and returns the steps that
// had succeeded before then and rank 0's log.
func stopAfter(t *testing.T, objs kubelet.Objects, claims map[string]string, steps int, then, grace time.Duration) ([]string, string) {
	t.Helper()
	r := startWith(t, kubelet.Options{Images: images(nil), Claims: claims, Grace: grace}, objs)
	leader := objs.JobSets[0].Name + "-w-0-0"
	deadline := time.Now().Add(instanceTimeout)
	var done []string
	for len(done) < steps {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d steps succeeded within %s", steps, instanceTimeout)
		}
		time.Sleep(500 * time.Millisecond)
		done = r.completed(leader)
	}
	time.Sleep(then)
	stopped := time.Now()
	if err := r.c.Close(); err != nil {
		t.Errorf("stop: %v", err)
	}
	t.Logf("stopped after %d steps succeeded, in %s", len(done), time.Since(stopped).Round(10*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range r.c.Pods() {
				for _, c := range p.Results() {
					t.Logf("--- first instance: %s/%s exit %d\n%s", p.Hostname, c.Name, c.ExitCode, c.Log)
				}
			}
		}
	})
	return done, logs(r.c.Pod(leader), "app")
}

// checkResumed checks the resumed instance's rank 0 log and the claim's
// file ran against the durable launcher's promise
// (testsupport.CheckDurableResume), and that the outputs of the steps
// were kept.
func checkResumed(t *testing.T, log, claim string, doneBefore []string, stop testsupport.DurableStop) {
	t.Helper()
	ran, err := os.ReadFile(filepath.Join(claim, "ran"))
	if err != nil {
		t.Fatal(err)
	}
	testsupport.CheckDurableResume(log, ran, durableSteps, doneBefore, stop).Report(t)
	for i := 1; i <= 2; i++ {
		if want := fmt.Sprintf("output of step-%d: out-%d\n", i, i); !strings.Contains(log, want) {
			t.Errorf("the log lacks %q: a step's output was not kept", strings.TrimSpace(want))
		}
	}
}

// TestDurableResume: an instance with state-claim is stopped after 4 of
// its 12 steps succeeded; a new instance on the same claim restores the
// state (the dump Flux wrote on the way down), runs the rest, the lost
// ones included, never one that had succeeded, keeps the outputs, and
// Completes.
func TestDurableResume(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	objs := durableJobSet(t, "keep", 2)
	dir := stateDir(t)
	claims := map[string]string{"flux-state-keep": dir}
	doneBefore, firstLog := stopAfter(t, objs, claims, 4, 0, 20*time.Second)
	if !strings.Contains(firstLog, "restored=0\n") || !strings.Contains(firstLog, "no earlier state") {
		t.Errorf("the first instance did not start afresh:\n%s", firstLog)
	}
	if _, err := os.Readlink(filepath.Join(dir, "keep", "dump", "RESTORE")); err != nil {
		t.Errorf("no dump to restore after the stop: %v\n%s", err, firstLog)
	}
	r := startWith(t, kubelet.Options{Images: images(nil), Claims: claims}, objs)
	res := r.wait(instanceTimeout)
	log := logs(r.c.Pod("keep-w-0-0"), "app")
	if res.State != "Completed" {
		dump(t, res)
		t.Fatalf("JobSet %s (%s), want Completed", res.State, res.Reason)
	}
	if !strings.Contains(log, "(dump ") {
		t.Errorf("rank 0 did not restore a dump:\n%s", lastLines(log, 30))
	}
	checkResumed(t, log, dir, doneBefore, testsupport.StoppedCleanly)
	// The restored dump stays until the next start, which keeps only the
	// dump RESTORE names: the one the second instance wrote as it ended.
	dumps, _ := filepath.Glob(filepath.Join(dir, "keep", "dump", "*.tgz"))
	if len(dumps) != 2 {
		t.Errorf("dumps %v, want two: the restored one and the one written at the end", dumps)
	}
}

// TestDurableKilledWithoutStop: rank 0 is killed before it can stop
// cleanly (a grace period too short for anything, as when its node is
// lost): no dump is written, and the next instance resumes the store as
// rank 0 last checkpointed it, every checkpoint period. No step that had
// succeeded a period before the kill runs again; the steps of the last
// period may.
func TestDurableKilledWithoutStop(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	objs := durableJobSet(t, "kill", 6)
	dir := stateDir(t)
	claims := map[string]string{"flux-state-kill": dir}
	// 10s is the render's [kvs] checkpoint-period.
	doneBefore, _ := stopAfter(t, objs, claims, 3, 13*time.Second, 100*time.Millisecond)
	if _, err := os.Readlink(filepath.Join(dir, "kill", "dump", "RESTORE")); err == nil {
		t.Errorf("rank 0 wrote a whole dump in a grace period of 100ms: the test did not kill it")
	}
	r := startWith(t, kubelet.Options{Images: images(nil), Claims: claims}, objs)
	res := r.wait(instanceTimeout)
	if res.State != "Completed" {
		dump(t, res)
		t.Fatalf("JobSet %s (%s), want Completed", res.State, res.Reason)
	}
	log := logs(r.c.Pod("kill-w-0-0"), "app")
	if !strings.Contains(log, "reloaded Fluxion") {
		t.Errorf("rank 0 did not reload Fluxion after an unclean stop:\n%s", lastLines(log, 40))
	}
	checkResumed(t, log, dir, doneBefore, testsupport.KilledWithoutStop)
	if t.Failed() {
		t.Logf("resumed rank 0:\n%s", log)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
