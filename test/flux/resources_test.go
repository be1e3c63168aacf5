package flux

import (
	"strings"
	"testing"
)

// TestResourcesPerGroup: a GPU-less launcher and GPU workers each describe
// their own cores and GPUs (from the containers' limits), and the leader's
// -g job runs on the workers only.
func TestResourcesPerGroup(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	command := []string{"bash", "-c", `echo "task on $(hostname) gpus ${CUDA_VISIBLE_DEVICES-none}"; [ "$FLUX_TASK_RANK" != 0 ] || ` +
		fluxBin + ` resource list -no "{nnodes} {ncores} {ngpus}" | sed "s/^/resources /"`}
	container := func(cpu string, gpus int) map[string]any {
		limits := map[string]any{"cpu": cpu}
		if gpus > 0 {
			limits["nvidia.com/gpu"] = gpus
		}
		return map[string]any{"name": "app", "image": hostImage, "command": command, "resources": map[string]any{"limits": limits}}
	}
	groups := []group{
		{name: "launcher", replicas: 1, completions: 1, container: container("1", 0)},
		{name: "workers", replicas: 2, completions: 1, container: container("2500m", 2)},
	}
	r := start(t, render(t, jobSet(t, "het", nil, nil, groups...)), nil)
	res := r.wait(instanceTimeout)
	out := logs(r.c.Pod("het-launcher-0-0"), "app")
	if strings.Contains(out, "task on het-launcher-0-0") {
		t.Errorf("a task ran on the GPU-less launcher")
	}
	for _, w := range []string{"het-workers-0-0", "het-workers-1-0"} {
		if n := strings.Count(out, "task on "+w+" gpus 0,1\n"); n != 2 {
			t.Errorf("%d of 2 tasks ran on %s with its 2 GPUs", n, w)
		}
	}
	// 1 core for the launcher, 2 (2500m, whole cores) per worker.
	if !strings.Contains(out, "resources 3 5 4\n") {
		t.Errorf("the instance does not have 3 nodes, 5 cores and 4 GPUs")
	}
	expectEnd(t, res, "Completed")
}
