package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// elasticLauncher is TestElasticGrowAndShrink's script on rank 0: it
// reports the size the instance formed with, waits for four nodes and runs
// a job on all of them, starts a long four-node job and waits for its end
// (the test shrinks the Job under it), then waits for the two ranks to be
// gone and runs a job on the two left.
const elasticLauncher = `set -u
up() { flux resource list -s up -no '{nnodes}'; }
echo "formed: $(up) up, $(flux resource list -s down -no '{nnodes}') down"
until [ "$(up)" -ge 4 ]; do sleep 0.2; done
echo "grown: $(up) up"
echo "on: $(flux run -N4 hostname | sort | tr '\n' ' ')"
id=$(flux submit -N4 sleep 600)
flux job wait-event -t 60 "$id" start
echo "long job started: $id"
status=0
flux job attach "$id" || status=$?
echo "long job ended: exit ${status}"
flux job eventlog "$id" | grep -w exception | sed 's/^/long job event: /'
until [ "$(up)" -le 2 ]; do sleep 0.2; done
echo "shrunk: $(up) up; drained: $(flux resource list -s down -no '{ranks}')"
echo "after: $(flux run -N2 hostname | sort | tr '\n' ' ')"
`

// resizePatch is the JSON patch of an elastic update: the first
// replicatedJob's parallelism and completions, together.
func resizePatch(pods int) string {
	return fmt.Sprintf(`[{"op":"replace","path":"/spec/replicatedJobs/0/template/spec/parallelism","value":%d},{"op":"replace","path":"/spec/replicatedJobs/0/template/spec/completions","value":%d}]`, pods, pods)
}

// TestElasticGrowAndShrink: an instance of min-size 2 and max-size 4 on
// the real cluster (JobSet's ElasticJobSet gate on, deploy/elastic's
// policy applied). It forms with its two pods; a resize beyond its sizes
// is refused by the cluster; grown to four pods by kubectl patch, the new
// brokers join and a four-node job runs; shrunk back to two under a
// running four-node job, that job ends with an exception naming the ranks
// that left, and the instance goes on and Completes. Logs the timeline.
func TestElasticGrowAndShrink(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	policy := filepath.Join(env.repo, "deploy/elastic/sizes.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := kubectl(ctx, nil, "apply", "-f", policy); err != nil {
		t.Fatalf("apply %s: %v\n%s", policy, err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = kubectl(ctx, nil, "delete", "--ignore-not-found", "-f", policy)
	})
	// kube-controller-manager type-checks the policy's CEL against the
	// JobSet CRD's schema and reports what does not check.
	var checked string
	for deadline := time.Now().Add(time.Minute); checked == "" && time.Now().Before(deadline); time.Sleep(time.Second) {
		out, _ := kubectl(ctx, nil, "get", "validatingadmissionpolicy", "jobset-flux-elastic-sizes", "-o", "jsonpath={.status.typeChecking}")
		checked = strings.TrimSpace(string(out))
	}
	if checked == "" || strings.Contains(checked, "expressionWarnings") {
		t.Errorf("the policy's type check: %q, want one without expressionWarnings", checked)
	}
	n := newNamespace(t, "elastic")
	ann := map[string]string{
		"flux-framework.org/launcher": "true",
		"flux-framework.org/min-size": "2",
		"flux-framework.org/max-size": "4",
	}
	n.apply(render(t, jobSet(t, "el", ann, []string{"bash", "-c", elasticLauncher}, group{name: "w", replicas: 1, completions: 2})))
	start := time.Now()
	// leaderLog waits for a line of the leader's log that starts with
	// want (the entrypoint's own log quotes the script on one line).
	leaderLog := func(want string) (string, time.Duration) {
		t.Helper()
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want))
		for deadline := time.Now().Add(instanceTimeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			out, err := n.run(nil, "logs", "-l", "jobset.sigs.k8s.io/jobset-name=el,batch.kubernetes.io/job-completion-index=0", "-c", "app", "--tail=-1")
			if log := string(out); err == nil && line.MatchString(log) {
				return log, time.Since(start)
			}
		}
		n.dump()
		t.Fatalf("the leader's log never had a line starting %q", want)
		return "", 0
	}
	patch := func(pods int) error {
		out, err := n.run(nil, "patch", "jobsets.jobset.x-k8s.io", "el", "--type=json", "-p", resizePatch(pods))
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}

	_, formed := leaderLog("formed: 2 up, 2 down")
	t.Logf("elastic: formed with 2 of 4 ranks %.1f s after apply", formed.Seconds())
	for _, pods := range []int{5, 1} {
		err := patch(pods)
		if err == nil || !strings.Contains(err.Error(), "outside the 2 to 4 its Flux instance was rendered for") {
			t.Errorf("resize to %d pods: want refused by jobset-flux-elastic-sizes, got %v", pods, err)
		}
	}

	start = time.Now()
	if err := patch(4); err != nil {
		t.Fatalf("grow to 4: %v", err)
	}
	grownAt := map[string]time.Duration{}
	n.watch(instanceTimeout, func(s *snapshot) bool {
		for i := 2; i < 4; i++ {
			key := fmt.Sprintf("pod %d Ready", i)
			if p, ok := s.pod("w", 0, i); ok && isReady(p) && grownAt[key] == 0 {
				grownAt[key] = time.Since(start)
			}
		}
		return len(grownAt) == 2
	})
	_, grown := leaderLog("grown: 4 up")
	t.Logf("elastic: grow 2 -> 4: patch to new pods Ready (joined) %v, to rank 0 seeing 4 up %.1f s", grownAt, grown.Seconds())
	log, _ := leaderLog("long job started: ")
	if !strings.Contains(log, "on: el-w-0-0 el-w-0-1 el-w-0-2 el-w-0-3 ") {
		t.Errorf("the four-node job did not run on the four pods:\n%s", log)
	}

	start = time.Now()
	if err := patch(2); err != nil {
		t.Fatalf("shrink to 2: %v", err)
	}
	var goneAt time.Duration
	n.watch(instanceTimeout, func(s *snapshot) bool {
		_, two := s.pod("w", 0, 2)
		_, three := s.pod("w", 0, 3)
		if !two && !three {
			goneAt = time.Since(start)
			return true
		}
		return false
	})
	_, ended := leaderLog("long job ended: exit ")
	h := n.expectEnd("el", jobSetCompleted, instanceTimeout)
	t.Logf("elastic: shrink 4 -> 2: patch to the long job's end %.1f s, to pods 2 and 3 gone %.1f s; then %s", ended.Seconds(), goneAt.Seconds(), h.summary())
	log, _ = leaderLog("after: el-")
	exceptions := regexp.MustCompile(`(?m)^long job event: .*exception.*`).FindAllString(log, -1)
	t.Logf("elastic: the long job's exceptions: %q", exceptions)
	named := false
	for _, e := range exceptions {
		named = named || regexp.MustCompile(`rank [23] \(el-w-0-[23]\) left the instance`).MatchString(e)
	}
	if !named {
		t.Errorf("the long job ended without an exception naming rank 2 or 3: %q\n%s", exceptions, log)
	}
	for _, want := range []string{"shrunk: 2 up; drained: 2-3", "after: el-w-0-0 el-w-0-1 "} {
		if !strings.Contains(log, want) {
			t.Errorf("the leader's log lacks %q:\n%s", want, log)
		}
	}
}
