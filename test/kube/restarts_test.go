package kube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// infra-restarts on the real cluster: the JobSet controller restarts the
// whole instance after an infrastructure failure, through the failure
// policies the render writes, and fails it at once after an application
// failure.

// jobSetRestarts reads a JobSet's status.restarts.
func jobSetRestarts(t *testing.T, n *namespace, name string) string {
	t.Helper()
	out, err := n.run(nil, "get", "jobset", name, "-o", "jsonpath={.status.restarts}")
	if err != nil {
		t.Fatalf("get jobset %s: %v: %s", name, err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return s
	}
	return "0"
}

// TestInfraRestartsApplicationFailure: with infra-restarts, a command
// that exits 3 fails the JobSet at once, with no restart; rank 0's exit
// code is the command's, and its termination message says, as JSON, that
// the application failed.
func TestInfraRestartsApplicationFailure(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "restarts-app")
	name := "appfail"
	groups := []group{{name: "w", replicas: 1, completions: 2}}
	n.apply(render(t, jobSet(t, name, map[string]string{"flux-framework.org/infra-restarts": "2"}, []string{"bash", "-c", "exit 3"}, groups...)))
	h := n.expectEnd(name, jobSetFailed, instanceTimeout)
	if r := jobSetRestarts(t, n, name); r != "0" {
		t.Errorf("status.restarts %s, want 0: an application failure must not restart", r)
	}
	leader, ok := h.last.pod("w", 0, 0)
	if !ok {
		t.Fatalf("no rank 0 pod:\n%s", h.summary())
	}
	if code := exitCode(leader, "app"); code != 3 {
		t.Errorf("rank 0 exit %d, want the command's 3", code)
	}
	var msg struct {
		Class           string `json:"class"`
		ExitCode        int    `json:"exitCode"`
		CommandExitCode int    `json:"commandExitCode"`
		LostRanks       string `json:"lostRanks"`
	}
	text := terminationMessage(leader, "app")
	if err := json.Unmarshal([]byte(text), &msg); err != nil {
		t.Fatalf("rank 0's termination message is not JSON: %v: %q", err, text)
	}
	if msg.Class != "application" || msg.ExitCode != 3 || msg.CommandExitCode != 3 || msg.LostRanks != "" {
		t.Errorf("termination message %+v, want an application failure with exit code 3 and no rank lost", msg)
	}
	t.Logf("rank 0's termination message: %s", text)
}

// TestInfraRestartsFollowerLost: a durable launcher with infra-restarts 1
// loses a follower's pod mid-job (kubectl delete pod): rank 0 exits 120,
// the JobSet controller restarts the instance once, the new instance
// resumes the state, reruns the lost steps and never a finished one, and
// Completes.
func TestInfraRestartsFollowerLost(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "restarts-lost")
	class := stateClass(t, n)
	in := decode(t, []byte(jobSet(t, "steps", map[string]string{
		"flux-framework.org/launcher":       "true",
		"flux-framework.org/infra-restarts": "1",
	}, nil, durableShape()...)))
	withStateClaim(t, in, class)
	n.apply(render(t, string(in.encode(t))))
	start := time.Now()
	before := waitSteps(t, n, "steps", 5)
	follower := podNow(t, n, "w", 1)
	t.Logf("+%s %d steps succeeded: deleting the follower %s", time.Since(start).Round(time.Second), len(before.doneBefore), follower)
	if out, err := n.run(nil, "delete", "pod", follower, "--wait=false"); err != nil {
		t.Fatalf("delete pod: %v: %s", err, out)
	}
	// The restart recreates every pod: retries are what this test wants.
	h := n.expectEnd("steps", jobSetCompleted, instanceTimeout)
	t.Logf("+%s Completed", time.Since(start).Round(time.Second))
	leader, ok := h.last.pod("w", 0, 0)
	if !ok {
		t.Fatalf("no rank 0 pod:\n%s", h.summary())
	}
	if code := exitCode(leader, "app"); code != 0 {
		t.Errorf("the restarted rank 0 exit %d, want 0", code)
	}
	log := n.logs(leader.Metadata.Name, "app")
	if r := jobSetRestarts(t, n, "steps"); r != "1" {
		t.Errorf("status.restarts %s, want 1", r)
	}
	checkResumed(t, n, log, before, testsupport.RankLost)
}

// terminationMessage is a container's termination message, from its
// last termination state or its current one.
func terminationMessage(p object, container string) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != container {
			continue
		}
		if cs.State.Terminated != nil {
			return cs.State.Terminated.Message
		}
	}
	return ""
}
