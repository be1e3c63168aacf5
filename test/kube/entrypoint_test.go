package kube

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 31 class 4 on the real cluster: the entrypoint inside the user's
// pod.

// TestSetupExitZero: a setup script that ends with exit 0 no longer ends
// the pod: the command runs (and here fails with 3), so the JobSet Fails
// instead of Completing with nothing run.
func TestSetupExitZero(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "setup-exit0")
	ann := map[string]string{"flux-framework.org/setup": "export GREETING=hello\nexit 0\n"}
	cmd := []string{"bash", "-c", `echo "the command ran: $GREETING"; exit 3`}
	n.apply(render(t, jobSet(t, "exit0", ann, cmd, group{name: "w", replicas: 1, completions: 2})))
	h := n.expectEnd("exit0", jobSetFailed, instanceTimeout)
	if log := n.logs(podOf(t, h.last, "w", 0), "app"); strings.Count(log, "the command ran: hello") != 2 {
		t.Errorf("the leader's log lacks both tasks' output:\n%s", log)
	}
}

// TestEntrypointPathWithoutBin: a container whose PATH lacks /bin and
// /usr/bin starts its broker; the job sees the image's PATH first, the
// standard directories after it.
func TestEntrypointPathWithoutBin(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "path-nobin")
	ctr := map[string]any{"name": "app", "image": appImage, "env": []any{map[string]any{"name": "PATH", "value": "/opt/app/bin"}},
		"command": []string{"/bin/bash", "-c", `echo "job PATH=$PATH"`}}
	n.apply(render(t, jobSet(t, "nobin", nil, nil, group{name: "w", replicas: 1, completions: 2, container: ctr})))
	h := n.expectEnd("nobin", jobSetCompleted, instanceTimeout)
	if log := n.logs(podOf(t, h.last, "w", 0), "app"); strings.Count(log, "job PATH=/opt/app/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") != 2 {
		t.Errorf("the job did not see the image's PATH on both nodes:\n%s", log)
	}
}

// TestInstallerGuaranteed: a pod whose containers are Guaranteed stays
// Guaranteed with the flux-installer (qosClass in the pod's status) and
// Completes.
func TestInstallerGuaranteed(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "qos")
	res := map[string]any{"limits": map[string]any{"cpu": "200m", "memory": "256Mi"}}
	ctr := map[string]any{"name": "app", "image": appImage, "resources": res, "command": []string{"true"}}
	n.apply(render(t, jobSet(t, "qos", nil, nil, group{name: "w", replicas: 1, completions: 2, container: ctr})))
	var qos []string
	n.watch(instanceTimeout, func(s *snapshot) bool {
		out, err := n.run(nil, "get", "pods", "-o", "json")
		if err != nil {
			return false
		}
		var list struct {
			Items []struct {
				Status struct {
					QOSClass string `json:"qosClass"`
				} `json:"status"`
			} `json:"items"`
		}
		if json.Unmarshal(out, &list) != nil || len(list.Items) != 2 {
			return false
		}
		qos = nil
		for _, p := range list.Items {
			qos = append(qos, p.Status.QOSClass)
		}
		return true
	})
	if len(qos) != 2 || qos[0] != "Guaranteed" || qos[1] != "Guaranteed" {
		t.Errorf("the pods' QoS classes are %v, want Guaranteed", qos)
	}
	n.expectEnd("qos", jobSetCompleted, instanceTimeout)
}
