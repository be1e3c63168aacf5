package flux

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestQueues: with queues, a launcher instance of a CPU replicatedJob
// (1 pod) and a GPU one (2 pods) lists both queues, started; jobs
// submitted to each queue run only on its pods, and a job without -q on
// the default queue's, rank 0's. It routes under Fluxion (the full view)
// and under flux-core's own scheduler (the core-only view) alike: the
// queues and the properties are flux-core's, and each scheduler matches
// the property the queue requires.
func TestQueues(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	for _, c := range []struct{ name, view, scheduler string }{
		{"fluxion", "", "Fluxion"},
		{"sched-simple", viewCoreOnly, "sched-simple"},
	} {
		t.Run(c.name, func(t *testing.T) { runQueues(t, c.view, c.scheduler) })
	}
}

// queuesScript lists the queues, submits three jobs to each queue and one
// to none, waits for them all, and prints where each ran.
const queuesScript = `set -euo pipefail
flux queue list
echo "queues: $(flux queue list -no '{queue}:{scheduling}' | sort | tr '\n' ' ')"
jobs=()
for i in 1 2 3; do
    jobs+=("gpu:$(flux submit -q gpu -N1 hostname)")
    jobs+=("cpu:$(flux submit -q cpu -N1 hostname)")
done
jobs+=("none:$(flux submit -N1 hostname)")
flux queue drain
for j in "${jobs[@]}"; do
    id=${j#*:}
    echo "job asked=${j%%:*} queue=$(flux jobs -no '{queue}' "${id}") ran-on=$(flux job attach "${id}")"
done
`

var jobLine = regexp.MustCompile(`(?m)^job asked=(\S+) queue=(\S+) ran-on=(\S+)$`)

func runQueues(t *testing.T, view, scheduler string) {
	name := "q" + strings.ReplaceAll(strings.ToLower(scheduler), "-", "")
	groups := []group{{name: "cpu", replicas: 1, completions: 1}, {name: "gpu", replicas: 1, completions: 2}}
	ann := map[string]string{"flux-framework.org/launcher": "true", "flux-framework.org/queues": "true"}
	if view != "" {
		ann["flux-framework.org/view-image"] = view
	}
	r := start(t, render(t, jobSet(t, name, ann, []string{"bash", "-c", queuesScript}, groups...)), nil)
	res := r.wait(instanceTimeout)
	leader := name + "-cpu-0-0"
	out := logs(r.c.Pod(leader), "app")
	t.Logf("%s: rank 0's output:\n%s", scheduler, out)
	if !strings.Contains(out, "jobset-flux: scheduler: "+scheduler) {
		t.Errorf("the instance did not run %s", scheduler)
	}
	if !strings.Contains(out, "queues: cpu:started gpu:started \n") {
		t.Errorf("flux queue list does not show queues cpu and gpu, both started")
	}
	pods := map[string][]string{"cpu": {leader}, "gpu": {name + "-gpu-0-0", name + "-gpu-0-1"}, "none": {leader}}
	queue := map[string]string{"cpu": "cpu", "gpu": "gpu", "none": "cpu"}
	ran := map[string]int{}
	for _, m := range jobLine.FindAllStringSubmatch(out, -1) {
		asked, q, host := m[1], m[2], m[3]
		ran[asked]++
		if q != queue[asked] {
			t.Errorf("a job submitted to %s is in queue %s, want %s", asked, q, queue[asked])
		}
		if !slices.Contains(pods[asked], host) {
			t.Errorf("a job submitted to %s ran on %s, not on one of %v", asked, host, pods[asked])
		}
	}
	if want := map[string]int{"cpu": 3, "gpu": 3, "none": 1}; fmt.Sprint(ran) != fmt.Sprint(want) {
		t.Errorf("jobs reported per queue asked %v, want %v", ran, want)
	}
	expectEnd(t, res, "Completed")
}
