package flux

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// elasticScript is the launcher of TestElasticInstance. It reports the
// size the instance formed with, waits for four nodes and runs a job on
// all of them, then starts a long four-node job and waits for it to end
// (the test removes two pods under it), and runs a job on the two left.
const elasticScript = `set -u
up() { flux resource list -s up -no '{nnodes}'; }
echo "formed: $(up) up, $(flux resource list -s down -no '{nnodes}') down"
flux kvs put test.formed=1
until [ "$(up)" -ge 4 ]; do sleep 0.2; done
echo "grown: $(up) up"
echo "on: $(flux run -N4 hostname | sort | tr '\n' ' ')"
id=$(flux submit -N4 sleep 300)
flux job wait-event -t 60 "$id" start
flux kvs put test.long="$id"
status=0
flux job attach "$id" || status=$?
echo "long job: exit ${status}"
flux job eventlog "$id" | grep -w exception | sed 's/^/long job event: /'
until [ "$(up)" -le 2 ]; do sleep 0.2; done
echo "shrunk: $(up) up; drained: $(flux resource list -s down -no '{ranks}')"
echo "after: $(flux run -N2 hostname | sort | tr '\n' ' ')"
`

// TestElasticInstance: an instance of min-size 2 and max-size 4 forms
// with its two pods, the other two ranks offline; once two more pods
// start (an elastic update raised completions) their brokers join and a
// four-node job runs on all four; when the two highest pods are taken out
// of their Job under a running job, that job ends with an exception
// naming their ranks, the instance goes on with two nodes and completes.
func TestElasticInstance(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	ann := map[string]string{
		"flux-framework.org/launcher": "true",
		"flux-framework.org/min-size": "2",
		"flux-framework.org/max-size": "4",
	}
	w := group{name: "w", replicas: 1, completions: 2}
	objs := decode(t, render(t, jobSet(t, "el", ann, []string{"bash", "-c", elasticScript}, w)))
	// The elastic update before the late pods start: JobSet changes the
	// Job's completions and parallelism together.
	four := int32(4)
	objs.JobSets[0].Spec.ReplicatedJobs[0].Template.Spec.Completions = &four
	objs.JobSets[0].Spec.ReplicatedJobs[0].Template.Spec.Parallelism = &four
	late := []string{"el-w-0-2", "el-w-0-3"}
	r := startObjects(t, objs, nil, late...)
	leader := "el-w-0-0"

	waitKey := func(key string) string {
		t.Helper()
		deadline := time.Now().Add(instanceTimeout)
		for time.Now().Before(deadline) {
			if out, code, err := r.tryFlux(leader, "app", "kvs", "get", key); err == nil && code == 0 {
				return strings.TrimSpace(out)
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Fatalf("the launcher never wrote %s", key)
		return ""
	}
	waitKey("test.formed")
	if out, _ := r.flux(leader, "app", "overlay", "status", "--no-pretty", "--color=never"); !strings.Contains(out, "2 el-w-0-2: offline") || !strings.Contains(out, "3 el-w-0-3: offline") {
		t.Errorf("before the late pods start, ranks 2 and 3 are not offline:\n%s", out)
	}
	grow := time.Now()
	for _, h := range late {
		if err := r.c.Release(h); err != nil {
			t.Fatal(err)
		}
	}
	id := waitKey("test.long")
	t.Logf("grown and a four-node job running %s after the late pods started", time.Since(grow).Round(time.Millisecond))
	shrink := time.Now()
	for _, h := range late {
		if err := r.c.RemovePod(h); err != nil {
			t.Fatal(err)
		}
	}
	res := r.wait(instanceTimeout)
	t.Logf("shrunk and completed %s after the pods were removed", time.Since(shrink).Round(time.Millisecond))
	log := logs(r.c.Pod(leader), "app")
	for _, want := range []string{
		"formed: 2 up, 2 down",
		"grown: 4 up",
		"on: el-w-0-0 el-w-0-1 el-w-0-2 el-w-0-3 ",
		"shrunk: 2 up; drained: 2-3",
		"after: el-w-0-0 el-w-0-1 ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the launcher's log lacks %q", want)
		}
	}
	exceptions := regexp.MustCompile(`long job event: .*`).FindAllString(log, -1)
	t.Logf("the long job's exceptions: %q", exceptions)
	if len(exceptions) == 0 || !slices.ContainsFunc(exceptions, func(e string) bool {
		return strings.Contains(e, "rank 2") || strings.Contains(e, "rank 3")
	}) {
		t.Errorf("job %s ended without an exception naming rank 2 or 3: %q", id, exceptions)
	}
	if strings.Contains(log, "long job: exit 0") {
		t.Errorf("job %s on the removed ranks ended with exit 0", id)
	}
	for _, h := range late {
		if p := r.c.Pod(h); !p.Removed() {
			t.Errorf("pod %s was not removed", h)
		}
	}
	expectEnd(t, res, "Completed")
	if t.Failed() {
		fmt.Println(log)
	}
}
