package kube

import (
	"strings"
	"testing"
)

// TestLauncher: launcher mode on the real cluster: the driver script runs
// once on rank 0 inside the instance, submits jobs the scheduler spreads
// over the pods and drains the queue; every pod ends and the JobSet
// completes.
func TestLauncher(t *testing.T) {
	t.Parallel()
	inEachViewMount(t, "launcher", runLauncher)
}

func runLauncher(t *testing.T, mode string) {
	n := newNamespace(t, "launcher-"+mode)
	groups := []group{{name: "driver", replicas: 1, completions: 1}, {name: "w", replicas: 1, completions: 2}}
	script := `flux submit --quiet --cc 1-6 hostname && flux queue drain && echo "jobs $(flux jobs -a -no '{name}' | wc -l)" && flux jobs -a -no '{result}' | sort | uniq -c | sed 's/^ */result /'`
	n.apply(render(t, jobSet(t, "drv", withMode(mode, map[string]string{"flux-framework.org/launcher": "true"}), []string{"bash", "-c", script}, groups...)))
	h := n.expectEnd("drv", jobSetCompleted, instanceTimeout)
	leader, _ := h.last.pod("driver", 0, 0)
	out := n.logs(leader.Metadata.Name, "app")
	checkViewMount(t, mode, leader, out)
	if !strings.Contains(out, "jobs 6\n") || !strings.Contains(out, "result 6 COMPLETED\n") {
		t.Errorf("want 6 jobs, all COMPLETED, once in the instance:\n%s", out)
	}
	checkNoRetries(t, n, h, groups)
}

// TestGPUs: GPUs declared in the container's limits (the node advertises
// nvidia.com/gpu, so the scheduler places the pods) are the instance's:
// flux resource list counts them and the job's tasks get them.
func TestGPUs(t *testing.T) {
	t.Parallel()
	inEachViewMount(t, "gpus", runGPUs)
}

func runGPUs(t *testing.T, mode string) {
	n := newNamespace(t, "gpus-"+mode)
	ctr := map[string]any{
		"name": "app", "image": appImage,
		"command":   []string{"bash", "-c", `echo "gpu $CUDA_VISIBLE_DEVICES on $(hostname)"; [ "$FLUX_TASK_RANK" != 0 ] || flux resource list -no "ngpus {ngpus}"`},
		"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 1}},
	}
	groups := []group{{name: "g", replicas: 2, completions: 1, container: ctr}}
	n.apply(render(t, jobSet(t, "gpus", withMode(mode, nil), nil, groups...)))
	h := n.expectEnd("gpus", jobSetCompleted, instanceTimeout)
	leader, _ := h.last.pod("g", 0, 0)
	out := n.logs(leader.Metadata.Name, "app")
	checkViewMount(t, mode, leader, out)
	for _, host := range hostnames("gpus", groups...) {
		if !strings.Contains(out, "gpu 0 on "+host+"\n") {
			t.Errorf("the task on %s did not get GPU 0:\n%s", host, out)
		}
	}
	if !strings.Contains(out, "ngpus 2\n") {
		t.Errorf("the instance does not have 2 GPUs:\n%s", out)
	}
}

// TestImageFlux: view-image none with an image that has Flux on its PATH
// (flux-sched): no flux-installer, no view volumes; Fluxion schedules.
func TestImageFlux(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "ownflux")
	ctr := map[string]any{"name": "app", "image": fluxSched, "command": []string{"bash", "-c",
		`echo "task $FLUX_TASK_RANK on $(hostname)"; [ "$FLUX_TASK_RANK" != 0 ] || flux module list | grep -c sched-fluxion-qmanager | sed 's/^/fluxion /'`}}
	groups := []group{{name: "w", replicas: 1, completions: 2, container: ctr}}
	rendered := render(t, jobSet(t, "own", map[string]string{"flux-framework.org/view-image": "none"}, nil, groups...))
	if strings.Contains(string(rendered), "flux-installer") {
		t.Fatalf("view-image none still renders the flux-installer:\n%s", rendered)
	}
	n.apply(rendered)
	h := n.expectEnd("own", jobSetCompleted, instanceTimeout)
	leader, _ := h.last.pod("w", 0, 0)
	out := n.logs(leader.Metadata.Name, "app")
	for _, want := range []string{"task 0 on own-w-0-0\n", "task 1 on own-w-0-1\n", "fluxion 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the leader's log lacks %q:\n%s", want, out)
		}
	}
}

// TestCoreOnlyView: a view without Fluxion runs sched-simple, and the
// entrypoint says so in one line and warns that the queue policy asked
// for needs Fluxion.
func TestCoreOnlyView(t *testing.T) {
	t.Parallel()
	inEachViewMount(t, "core-only", runCoreOnlyView)
}

func runCoreOnlyView(t *testing.T, mode string) {
	n := newNamespace(t, "coreonly-"+mode)
	cmd := []string{"bash", "-c", `[ "$FLUX_TASK_RANK" != 0 ] || flux module list | awk 'NR > 1 && /^sched/ {print "module", $1}'; echo "task $FLUX_TASK_RANK on $(hostname)"`}
	groups := []group{{name: "w", replicas: 1, completions: 2}}
	n.apply(render(t, jobSet(t, "core", withMode(mode, map[string]string{"flux-framework.org/view-image": coreOnlyView, "flux-framework.org/queue-policy": "easy"}), cmd, groups...)))
	h := n.expectEnd("core", jobSetCompleted, instanceTimeout)
	leader, _ := h.last.pod("w", 0, 0)
	out := n.logs(leader.Metadata.Name, "app")
	checkViewMount(t, mode, leader, out)
	for _, want := range []string{"module sched-simple\n", "task 1 on core-w-0-1\n",
		"jobset-flux: scheduler: sched-simple (the Flux view has no Fluxion)\n",
		"jobset-flux: warning: queue-policy easy needs Fluxion, which the Flux view lacks"} {
		if !strings.Contains(out, want) {
			t.Errorf("the leader's log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "module sched-fluxion") {
		t.Errorf("Fluxion loaded from a view without it:\n%s", out)
	}
}
