package kube

import (
	"strings"
	"testing"
	"time"
)

// TestRegularSidecarKeepsTheJobSetRunning: what the render's warning on a
// regular container beside the wrapped one says, on the cluster. A pod
// ends only when every regular container has ended, so a logger that
// runs forever keeps the pods Running after the instance's command
// succeeded, and the JobSet never ends; the same logger as a native
// sidecar (an init container with restartPolicy Always) is stopped with
// the pod, and the JobSet Completes.
func TestRegularSidecarKeepsTheJobSetRunning(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	logger := map[string]any{"name": "logger", "image": appImage, "command": []string{"sleep", "infinity"}}
	app := map[string]any{"name": "app", "image": appImage, "command": []string{"hostname"}}
	for _, c := range []struct {
		name string
		g    group
		want string // "" for not ended
	}{
		{"regular", group{name: "w", replicas: 1, completions: 2, container: app, pod: map[string]any{"containers": []any{app, logger}}}, ""},
		{"native", group{name: "w", replicas: 1, completions: 2, container: app, pod: map[string]any{"initContainers": []any{withRestartAlways(logger)}}}, jobSetCompleted},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "sidecar-"+c.name)
			const js = "logged"
			n.apply(render(t, jobSet(t, js, map[string]string{"flux-framework.org/start-timeout": "2m"}, nil, c.g)))
			if c.want != "" {
				n.expectEnd(js, c.want, instanceTimeout)
				return
			}
			// The leader's command ends within seconds of the pods
			// running; a minute after it, the JobSet must still be
			// Active.
			var ranAt time.Time
			h, ended := n.watch(instanceTimeout, func(s *snapshot) bool {
				if st, _ := s.jobSetState(js); st != "" {
					return true
				}
				leader, ok := s.pod("w", 0, 0)
				if ok && exitCode(leader, "app") == 0 && ranAt.IsZero() {
					ranAt = time.Now()
				}
				return !ranAt.IsZero() && time.Since(ranAt) > time.Minute
			})
			if st, msg := h.last.jobSetState(js); st != "" {
				t.Fatalf("JobSet %s %s (%s); want it still Active with a regular sidecar running", js, st, msg)
			}
			if !ended || ranAt.IsZero() {
				t.Fatalf("the leader's app never exited 0 within %s", instanceTimeout)
			}
			leader, _ := h.last.pod("w", 0, 0)
			t.Logf("the leader's command exited 0; %s later the JobSet is still Active, pod %s %s", time.Since(ranAt).Round(time.Second), leader.Metadata.Name, leader.Status.Phase)
		})
	}
}

// withRestartAlways is a copy of c as a native sidecar.
func withRestartAlways(c map[string]any) map[string]any {
	out := map[string]any{"restartPolicy": "Always"}
	for k, v := range c {
		out[k] = v
	}
	return out
}

// TestTerminationMessagePath: a wrapped container with a
// terminationMessagePath of its own gets the entrypoint's reason there,
// where the kubelet reads it: in a namespace that denies the brokers'
// traffic the instance never forms, and the termination message of the
// pod whose start-timeout passed first says so. Each pod counts from its
// own container's start, so either the leader or the follower may be
// that pod; the other is stopped with the Job, and says nothing.
func TestTerminationMessagePath(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	n := newNamespace(t, "termpath")
	n.apply([]byte(denyAllButDNS(clusterDNS(t).server)))
	const js = "why"
	app := map[string]any{"name": "app", "image": appImage, "command": []string{"hostname"}, "terminationMessagePath": "/tmp/why-it-ended"}
	n.apply(render(t, jobSet(t, js, map[string]string{"flux-framework.org/start-timeout": "20s"}, nil, group{name: "w", replicas: 1, completions: 2, container: app})))
	// A failed JobSet's pods may be gone by its end: the message is
	// taken from every poll that shows a pod's app terminated.
	var message, from string
	h, ended := n.watch(instanceTimeout, func(s *snapshot) bool {
		for i := range 2 {
			p, ok := s.pod("w", 0, i)
			if !ok {
				continue
			}
			for _, c := range p.Status.ContainerStatuses {
				if c.Name == "app" && c.State.Terminated != nil && c.State.Terminated.Message != "" && message == "" {
					message, from = c.State.Terminated.Message, p.Metadata.Name
				}
			}
		}
		st, _ := s.jobSetState(js)
		return st != "" && message != ""
	})
	if st, msg := h.last.jobSetState(js); !ended || st != jobSetFailed {
		t.Fatalf("JobSet %s %q (%s), want Failed with a pod's termination message seen (%q)", js, st, msg, message)
	}
	if !strings.Contains(message, "did not form within start-timeout (20s)") {
		t.Fatalf("pod %s's termination message does not name the start-timeout: %q", from, message)
	}
	t.Logf("termination message of %s from /tmp/why-it-ended: %s", from, lastLines(message, 2))
}
