package kube

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDeadlineEndsUnadmittedInstance: in a namespace enforcing Pod
// Security "restricted", a JobSet whose own container does not meet it
// gets no pod at all (the API server refuses each one the Job controller
// creates), so the start-timeout, which runs in the pods, never ends it.
// Without a deadline it is still Active, with no pod, long after a
// deadline would have ended it; with the deadline setting the Jobs fail
// with DeadlineExceeded and the JobSet Fails in bounded time.
func TestDeadlineEndsUnadmittedInstance(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	const deadline = 20 * time.Second
	for _, c := range []struct {
		name        string
		annotations map[string]string
	}{
		{"deadline", map[string]string{"flux-framework.org/deadline": "20s", "flux-framework.org/start-timeout": "1m"}},
		{"none", map[string]string{"flux-framework.org/start-timeout": "1m"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "deadline-"+c.name)
			if out, err := kubectl(context.Background(), nil, "label", "namespace", n.name, "pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			const js = "refused"
			n.apply(render(t, jobSet(t, js, c.annotations, []string{"hostname"}, group{name: "w", replicas: 1, completions: 2})))
			if c.annotations["flux-framework.org/deadline"] == "" {
				// Three times the deadline: the control that nothing
				// else ends such an instance.
				h, ended := n.watch(3*deadline, func(s *snapshot) bool {
					st, _ := s.jobSetState(js)
					return st != ""
				})
				if ended {
					st, msg := h.last.jobSetState(js)
					t.Fatalf("JobSet %s %s (%s) without a deadline; the control expects it to stay Active", js, st, msg)
				}
				if len(h.pods) != 0 {
					t.Errorf("pods were admitted: %s", h.summary())
				}
				t.Logf("still Active with no pod after %s", time.Since(h.start).Round(time.Second))
				checkRefusedByPodSecurity(t, n)
				return
			}
			state, msg, h := n.waitEnd(js, 3*deadline+time.Minute)
			if state != jobSetFailed {
				t.Fatalf("JobSet %s %q (%s), want Failed", js, state, msg)
			}
			took := time.Since(h.start)
			if len(h.pods) != 0 {
				t.Errorf("pods were admitted: %s", h.summary())
			}
			reasons := jobFailureReasons(t, n)
			if !strings.Contains(reasons, "DeadlineExceeded") {
				t.Errorf("no Job failed with DeadlineExceeded: %s", reasons)
			}
			if took > deadline+time.Minute {
				t.Errorf("Failed after %s, the deadline is %s", took.Round(time.Second), deadline)
			}
			t.Logf("Failed %s after apply, deadline %s; Jobs: %s; JobSet: %s", took.Round(time.Second), deadline, reasons, msg)
			checkRefusedByPodSecurity(t, n)
		})
	}
}

// jobFailureReasons are the namespace's Jobs' Failed conditions, reason
// and message, one line each.
func jobFailureReasons(t *testing.T, n *namespace) string {
	t.Helper()
	out, err := n.run(nil, "get", "jobs", "-o", `jsonpath={range .items[*]}{.metadata.name}{": "}{range .status.conditions[?(@.type=="Failed")]}{.reason}{" "}{.message}{end}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkRefusedByPodSecurity: the Job controller's FailedCreate events
// name the Pod Security refusal, so the test shows why no pod exists.
func checkRefusedByPodSecurity(t *testing.T, n *namespace) {
	t.Helper()
	out, err := n.run(nil, "get", "events", "--field-selector", "reason=FailedCreate", "-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "violates PodSecurity") {
		t.Errorf("no FailedCreate event names Pod Security:\n%s", out)
	} else {
		t.Logf("refused: %s", lastLines(strings.SplitN(string(out), "\n", 2)[0], 1))
	}
}
