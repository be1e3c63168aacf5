package kube

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults (issue 32, items 1, 2 and 4): each starts a small instance, waits
// until every pod is Ready (which now means its broker joined the whole
// instance), injects one fault and measures the time from the fault to
// the JobSet's end. Each logs one "fault:" line: docs/contributing/faults.md's table.

// faultShape is the instance every fault test runs: three brokers, one
// task each, running long enough to be hit mid-job.
var faultShape = []group{{name: "w", replicas: 1, completions: 3}}

// faultBound is how long a JobSet may take to end after its fault: the
// brokers notice a lost peer within seconds (tbon.connect_timeout 5s),
// the Job and JobSet controllers react within seconds more.
const faultBound = 90 * time.Second

// faultJobSet renders the fault tests' JobSet: its job sleeps for
// seconds on every broker.
func faultJobSet(t *testing.T, name string, seconds int, annotations map[string]string, groups ...group) []byte {
	t.Helper()
	cmd := []string{"bash", "-c", fmt.Sprintf(`echo "task $FLUX_TASK_RANK on $(hostname) starts"; sleep %d; echo "task $FLUX_TASK_RANK done"`, seconds)}
	return render(t, jobSet(t, name, annotations, cmd, groups...))
}

// allReady reports whether want pods exist and every one is Ready.
func allReady(s *snapshot, want int) bool {
	pods := s.pods()
	if len(pods) != want {
		return false
	}
	for _, p := range pods {
		if !isReady(p) {
			return false
		}
	}
	return true
}

func isReady(p object) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == conditionTrue
		}
	}
	return false
}

// faultRun is one fault test's measurement.
type faultRun struct {
	n        *namespace
	name     string
	h        *history
	faultAt  time.Time
	endAfter time.Duration
	state    string
	message  string
}

// runFault applies the JobSet, waits until its pods are all Ready,
// calls fault once, and waits until the JobSet ends (bounded by
// faultBound after the fault).
func runFault(t *testing.T, n *namespace, name string, pods int, fault func(s *snapshot)) *faultRun {
	t.Helper()
	return runFaultWithin(t, n, name, pods, faultBound, fault)
}

// runFaultWithin is runFault with its own bound after the fault.
func runFaultWithin(t *testing.T, n *namespace, name string, pods int, bound time.Duration, fault func(s *snapshot)) *faultRun {
	t.Helper()
	r := &faultRun{n: n, name: name}
	h, ok := n.watch(instanceTimeout, func(s *snapshot) bool {
		if st, msg := s.jobSetState(name); st != "" {
			r.state, r.message = st, msg
			return true
		}
		if r.faultAt.IsZero() && allReady(s, pods) {
			r.faultAt = time.Now()
			fault(s)
		}
		return !r.faultAt.IsZero() && time.Since(r.faultAt) > bound
	})
	r.h = h
	if !ok || r.faultAt.IsZero() {
		t.Fatalf("the instance never had %d Ready pods within %s:\n%s", pods, instanceTimeout, h.summary())
	}
	r.endAfter = time.Since(r.faultAt)
	if r.state == "" {
		t.Fatalf("JobSet %s had not ended %s after the fault:\n%s", name, bound, h.summary())
	}
	return r
}

// record logs the fault table's row and checks the condition reached.
func (r *faultRun) record(t *testing.T, fault, want string) {
	t.Helper()
	t.Logf("fault: %s | %s after %.0f s | %s", fault, r.state, r.endAfter.Seconds(), r.message)
	if r.state != want {
		t.Errorf("JobSet %s after %q, want %s (%s)", r.state, fault, want, r.message)
	}
}

// podOf names the pod of completion index i of Job 0 of group rj.
func podOf(t *testing.T, s *snapshot, rj string, i int) string {
	t.Helper()
	p, ok := s.pod(rj, 0, i)
	if !ok {
		t.Fatalf("no pod %s/0/%d", rj, i)
	}
	return p.Metadata.Name
}

// podNow is the name of pod i of replicatedJob rj's first Job as the
// namespace has it now.
func podNow(t *testing.T, n *namespace, rj string, i int) string {
	t.Helper()
	s, err := n.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return podOf(t, s, rj, i)
}

// TestFaultPodDeleted: a follower, or the leader, deleted mid-job fails
// the JobSet at once, with no pod retried.
func TestFaultPodDeleted(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, c := range []struct {
		name  string
		index int
	}{{"follower", 1}, {"leader", 0}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "fault-delete-"+c.name)
			n.apply(faultJobSet(t, "del", 60, nil, faultShape...))
			r := runFault(t, n, "del", 3, func(s *snapshot) {
				if out, err := n.run(nil, "delete", "pod", podOf(t, s, "w", c.index), "--wait=false"); err != nil {
					t.Errorf("delete: %v\n%s", err, out)
				}
			})
			r.record(t, "the "+c.name+" pod deleted", jobSetFailed)
			checkNoRetries(t, n, r.h, faultShape)
		})
	}
}

// TestFaultBrokerKilled: a follower's broker killed inside its running
// pod (kubectl exec) ends its container non-zero, and the JobSet fails.
func TestFaultBrokerKilled(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "fault-kill")
	n.apply(faultJobSet(t, "kill", 60, nil, faultShape...))
	r := runFault(t, n, "kill", 3, func(s *snapshot) {
		kill := `for p in /proc/[0-9]*; do c=$(cat "$p/comm" 2>/dev/null) || continue; [[ $c == flux-broker* ]] && kill -KILL "${p#/proc/}" && echo "killed ${p#/proc/}"; done; :`
		// The container ends with its broker, and kubectl exec's session
		// with it (exit 137): the kill is shown by its output, not exit.
		if out, err := n.run(nil, "exec", podOf(t, s, "w", 2), "-c", "app", "--", "/bin/bash", "-c", kill); !strings.Contains(string(out), "killed") {
			t.Errorf("kill the broker: %v\n%s", err, out)
		}
	})
	r.record(t, "a follower's broker killed (kubectl exec kill -KILL)", jobSetFailed)
	checkNoRetries(t, n, r.h, faultShape)
}

// TestFaultEvicted: a pod evicted through the Eviction API fails the
// JobSet, with no pod retried.
func TestFaultEvicted(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "fault-evict")
	n.apply(faultJobSet(t, "evict", 60, nil, faultShape...))
	r := runFault(t, n, "evict", 3, func(s *snapshot) {
		pod := podOf(t, s, "w", 1)
		eviction, _ := json.Marshal(map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": pod, "namespace": n.name}})
		if out, err := n.run(eviction, "create", "--raw", "/api/v1/namespaces/"+n.name+"/pods/"+pod+"/eviction", "-f", "-"); err != nil {
			t.Errorf("evict: %v\n%s", err, out)
		}
	})
	r.record(t, "a follower evicted (Eviction API)", jobSetFailed)
	checkNoRetries(t, n, r.h, faultShape)
}

// TestFaultSuspendResume: suspending the JobSet mid-job deletes its pods;
// resuming starts a new instance from scratch, which Completes.
func TestFaultSuspendResume(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "fault-suspend")
	n.apply(faultJobSet(t, "sus", 20, nil, faultShape...))
	patch := func(suspend bool) {
		if out, err := n.run(nil, "patch", "jobsets.jobset.x-k8s.io", "sus", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)); err != nil {
			t.Fatalf("suspend %t: %v\n%s", suspend, err, out)
		}
	}
	var resumedAt time.Time
	// The suspend's pod deletions, then a new instance's start and job.
	r := runFaultWithin(t, n, "sus", 3, 4*faultBound, func(s *snapshot) {
		patch(true)
		gone, _ := n.watch(faultBound, func(s *snapshot) bool { return len(s.pods()) == 0 })
		if pods := gone.last.pods(); len(pods) != 0 {
			t.Errorf("%d pods still there %s after the suspend", len(pods), faultBound)
		}
		resumedAt = time.Now()
		patch(false)
	})
	r.endAfter = time.Since(resumedAt)
	r.record(t, "suspended, pods gone, resumed (time from the resume)", jobSetCompleted)
	// The resumed instance ran the whole job again: its leader's log.
	if r.state == jobSetCompleted {
		// The log may trail the condition by a moment.
		leader := podOf(t, r.h.last, "w", 0)
		log := n.logs(leader, "app")
		for i := 0; i < 10 && strings.Count(log, " done\n") != 3; i++ {
			time.Sleep(time.Second)
			log = n.logs(leader, "app")
		}
		if strings.Count(log, " done\n") != 3 {
			t.Errorf("the resumed leader %s's log lacks the three tasks' ends:\n%s", leader, log)
		}
	}
}

// TestStartTimeoutUnschedulable: a pod that can never be scheduled (it
// asks for more CPUs than the node has) makes the instance give up after
// start-timeout: when it is a follower, rank 0 exits 124 naming it; when
// it is the leader, the followers give up. The JobSet Fails within the
// deadline and a bound, with no pod retried.
func TestStartTimeoutUnschedulable(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	const timeout = 30 * time.Second
	huge := map[string]any{"name": "app", "image": appImage, "command": []string{"true"}, "resources": map[string]any{"requests": map[string]any{"cpu": "64"}}}
	for _, c := range []struct {
		name   string
		groups []group
		// the pod whose log names what is missing, and what it says
		teller, says string
	}{
		{"follower", []group{{name: "l", replicas: 1, completions: 1}, {name: "w", replicas: 1, completions: 1, container: huge}}, "l", "rank 1 (never-w-0-0): never-w-0-0.never does not resolve: its pod was never scheduled"},
		{"leader", []group{{name: "l", replicas: 1, completions: 1, container: huge}, {name: "w", replicas: 1, completions: 1}}, "w", "never reached its parent: never-l-0-0.never does not resolve"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "fault-never-"+c.name)
			n.apply(faultJobSet(t, "never", 5, map[string]string{"flux-framework.org/start-timeout": "30s"}, c.groups...))
			start := time.Now()
			// start-timeout counts from the container's start, which
			// comes after scheduling and the installer's copy: on a
			// crowded node those, and the give-up path itself, took up
			// to 90 s more (CI, with test/kube's cases in parallel).
			state, msg, h := n.waitEnd("never", timeout+faultBound+time.Minute)
			took := time.Since(start)
			t.Logf("fault: the %s pod unschedulable (cpu: 64, more than the node has), start-timeout 30s | %s after %.0f s from apply | %s", c.name, state, took.Seconds(), msg)
			if state != jobSetFailed {
				t.Fatalf("JobSet %q (%s), want Failed", state, msg)
			}
			if took < timeout {
				t.Errorf("Failed after %v, before the start-timeout", took)
			}
			checkNoRetries(t, n, h, c.groups)
			teller := podOf(t, h.last, c.teller, 0)
			log := n.logs(teller, "app")
			if !strings.Contains(log, "did not form within start-timeout (30s)") || !strings.Contains(log, c.says) {
				t.Errorf("%s's log does not say %q:\n%s", teller, c.says, log)
			}
			if p, _ := h.last.pod(c.teller, 0, 0); len(p.Status.ContainerStatuses) == 1 {
				if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 124 {
					t.Errorf("%s ended %+v, want exit code 124", teller, term)
				}
			}
		})
	}
}

// TestReadyMeansJoined: a pod is Ready only once its broker has joined
// the whole instance, not when its container started: the leader's
// container starts while its follower is still in a 20 s init container,
// and kubectl wait --for=condition=Ready passes only after the leader's
// log says the instance formed.
// probeWait is how long one exec of the rendered startup probe waits for
// the join before it fails (pkg/jobsetrender's probeWait).
const probeWait = 50 * time.Second

func TestReadyMeansJoined(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "ready-joined")
	slow := map[string]any{"initContainers": []any{map[string]any{"name": "slow", "image": appImage, "command": []string{"sleep", "20"}}}}
	groups := []group{{name: "l", replicas: 1, completions: 1}, {name: "w", replicas: 1, completions: 1, pod: slow}}
	n.apply(faultJobSet(t, "ready", 20, nil, groups...))
	var leader string
	n.watch(instanceTimeout, func(s *snapshot) bool {
		p, ok := s.pod("l", 0, 0)
		if ok && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil {
			leader = p.Metadata.Name
			return true
		}
		return false
	})
	if leader == "" {
		t.Fatal("the leader's container never ran")
	}
	running := time.Now()
	if out, err := n.run(nil, "wait", "--for=condition=Ready", "pod/"+leader, "--timeout=90s"); err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	ready := time.Now()
	log := n.logs(leader, "app")
	t.Logf("the leader's container ran at %s, was Ready %.0f s later", running.Format(time.TimeOnly), ready.Sub(running).Seconds())
	if !strings.Contains(log, "joined the instance") {
		t.Errorf("the leader was Ready before its log said the instance formed:\n%s", log)
	}
	// The follower's init container holds its broker back: the leader
	// can be Ready only once the follower's app container has started.
	// (Measured from the follower, not from the leader's start: on a
	// loaded node the leader's own init container may take as long.)
	joined, readyAt := joinedAndReady(t, n, leader)
	if started := followerStarted(t, n); readyAt.Before(started.Truncate(time.Second)) {
		t.Errorf("the leader was Ready at %s, before its follower's broker started at %s", readyAt.Format(time.TimeOnly), started.Format(time.TimeOnly))
	}
	// One probe exec waits for the join, so Ready follows it closely and
	// no probe failed (each failure is an Unhealthy event) unless the
	// instance took longer than one exec's wait to form, as it may on a
	// crowded node: then one failure for each wait that passed.
	t.Logf("the leader's log said joined at %s, Ready at %s", joined.Format(time.TimeOnly), readyAt.Format(time.TimeOnly))
	if lag := readyAt.Sub(joined); lag < -time.Second || lag > 3*time.Second {
		t.Errorf("Ready came %v after the log said the instance formed, want within 3 s (the condition's time has whole seconds)", lag)
	}
	if c, most := n.eventCount("Pod", "Unhealthy"), int(ready.Sub(running)/probeWait); c > most {
		t.Errorf("%d startup probe failures while the instance formed in %v; want at most %d: one probe waits %v for the join", c, ready.Sub(running), most, probeWait)
	}
	n.expectEnd("ready", jobSetCompleted, instanceTimeout)
}

// TestFaultKubeletRestart restarts the node's kubelet mid-job: the pods
// keep running and the job Completes, with no pod retried. It touches
// the one shared node, so it runs alone (not parallel: go test runs it
// before every parallel test) and only when no other namespace has a
// running pod; under CI that is so, elsewhere it waits a while.
func TestFaultKubeletRestart(t *testing.T) {
	requireCluster(t)
	state := envOr("KUBE_STATE_DIR", "/var/lib/jobset-flux-kube")
	pidFile := filepath.Join(state, "run/kubelet.pid")
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the kubelet's PID file: %v (the test restarts hack/kube/cluster.sh's kubelet)", err)
	}
	waitNodeQuiet(t)
	n := newNamespace(t, "fault-kubelet")
	n.apply(faultJobSet(t, "kubelet", 45, nil, faultShape...))
	var ids []string
	r := runFault(t, n, "kubelet", 3, func(s *snapshot) {
		for _, p := range s.pods() {
			ids = append(ids, p.Status.ContainerStatuses[0].ContainerID)
		}
		restartKubelet(t, state, pidFile)
	})
	r.record(t, "the kubelet restarted mid-job", jobSetCompleted)
	checkNoRetries(t, n, r.h, faultShape)
	for _, p := range r.h.last.pods() {
		if id := p.Status.ContainerStatuses[0].ContainerID; !containsString(ids, id) {
			t.Errorf("pod %s's container %s is not the one that ran before the restart", p.Metadata.Name, id)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// waitNodeQuiet waits (up to 3 minutes) until no namespace but
// kube-system has a running or pending pod: a kubelet restart must not
// hit another test's pods.
func waitNodeQuiet(t *testing.T) {
	t.Helper()
	var busy []string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
		out, err := kubectl(t.Context(), nil, "get", "pods", "-A", "--no-headers", "-o", "custom-columns=NS:.metadata.namespace,PHASE:.status.phase")
		if err != nil {
			t.Fatal(err)
		}
		busy = nil
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] != "kube-system" && (f[1] == "Running" || f[1] == "Pending") {
				busy = append(busy, f[0])
			}
		}
		if len(busy) == 0 {
			return
		}
	}
	t.Fatalf("other namespaces still have running pods (%s): the kubelet restart would hit them; run this test alone", strings.Join(busy, ", "))
}

// restartKubelet stops cluster.sh's kubelet and starts it again with the
// same command line, as cluster.sh's daemon does (its own session, its
// log appended), and records the new PID where cluster.sh looks for it.
func restartKubelet(t *testing.T, state, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), state) {
		t.Fatalf("PID %d is not cluster.sh's kubelet (%v): %q", pid, err, cmdline)
	}
	argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	// cluster.sh starts it through nsenter into its mount namespace,
	// which execs the kubelet: its command line is the kubelet's own.
	if filepath.Base(argv[0]) != "nsenter" {
		ns, err := os.ReadFile(filepath.Join(state, "run/mntns.pid"))
		if err != nil {
			t.Fatal(err)
		}
		argv = append([]string{"nsenter", "-t", strings.TrimSpace(string(ns)), "-m", "--"}, argv...)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	logFile, err := os.OpenFile(filepath.Join(state, "log/kubelet.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("restart the kubelet (%q): %v", argv, err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Release()
	t.Logf("kubelet %d stopped, %d started", pid, cmd.Process.Pid)
}

// followerStarted is when the app container of TestReadyMeansJoined's
// follower (replicatedJob w) started.
func followerStarted(t *testing.T, n *namespace) time.Time {
	t.Helper()
	out, err := n.run(nil, "get", "pods", "-l", "jobset.sigs.k8s.io/replicatedjob-name=w", "-o",
		`jsonpath={.items[0].status.containerStatuses[0].state.*.startedAt}`)
	if err != nil {
		t.Fatalf("the follower's pod: %v\n%s", err, out)
	}
	started, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the follower's start %q: %v", out, err)
	}
	return started
}

// joinedAndReady returns when a pod's app log said its broker joined the
// instance (kubectl logs --timestamps) and when the pod became Ready.
func joinedAndReady(t *testing.T, n *namespace, pod string) (joined, ready time.Time) {
	t.Helper()
	out, err := n.run(nil, "logs", pod, "-c", "app", "--timestamps")
	if err != nil {
		t.Fatalf("logs: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if stamp, text, ok := strings.Cut(line, " "); ok && strings.Contains(text, "joined the instance") {
			if joined, err = time.Parse(time.RFC3339Nano, stamp); err != nil {
				t.Fatalf("log time %q: %v", stamp, err)
			}
			break
		}
	}
	if joined.IsZero() {
		t.Fatalf("no \"joined the instance\" line in %s's log:\n%s", pod, out)
	}
	out, err = n.run(nil, "get", "pod", pod, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].lastTransitionTime}`)
	if err != nil {
		t.Fatalf("pod %s: %v\n%s", pod, err, out)
	}
	if ready, err = time.Parse(time.RFC3339, strings.TrimSpace(string(out))); err != nil {
		t.Fatalf("Ready's time %q: %v", out, err)
	}
	return joined, ready
}
