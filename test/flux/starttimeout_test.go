package flux

import (
	"strings"
	"testing"
	"time"
)

// TestStartTimeout: on real brokers, an instance one rank of which never
// starts its broker (its pod sits in an init container, as a pod that is
// never scheduled never runs one) gives up after start-timeout: when the
// missing rank is a follower, rank 0 exits 124 naming it; when it is
// rank 0, the follower exits 124 saying it never reached its parent. The
// JobSet fails in bounded time either way.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	stuck := map[string]any{"initContainers": []any{map[string]any{"name": "stuck", "image": hostImage, "command": []string{"sleep", "600"}}}}
	for _, c := range []struct {
		name         string
		groups       []group
		teller, says string
	}{
		{"follower missing", []group{{name: "l", replicas: 1, completions: 1}, {name: "w", replicas: 1, completions: 1, pod: stuck}}, "st-l-0-0",
			"rank 0 is in state quorum; the ranks that never joined:\n  rank 1 (st-w-0-0): st-w-0-0.st "},
		{"leader missing", []group{{name: "l", replicas: 1, completions: 1, pod: stuck}, {name: "w", replicas: 1, completions: 1}}, "st-w-0-0",
			"this broker (rank 1, st-w-0-0) never reached its parent: st-l-0-0.st"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ann := map[string]string{"flux-framework.org/start-timeout": "15s"}
			begin := time.Now()
			r := start(t, render(t, jobSet(t, "st", ann, []string{"true"}, c.groups...)), nil)
			res := r.wait(2 * time.Minute)
			took := time.Since(begin)
			t.Logf("JobSet %s after %v", res.State, took.Round(time.Second))
			out, ok := r.c.Pod(c.teller).Result("app")
			if !ok || out.ExitCode != 124 {
				t.Errorf("%s's broker container ended %+v, want exit code 124", c.teller, out)
			}
			if !strings.Contains(out.Log, "did not form within start-timeout (15s)") || !strings.Contains(out.Log, c.says) {
				t.Errorf("%s's log does not say %q:\n%s", c.teller, c.says, out.Log)
			}
			if took < 15*time.Second || took > 90*time.Second {
				t.Errorf("ended after %v, want between the 15 s deadline and 90 s", took)
			}
			expectEnd(t, res, "Failed")
		})
	}
}
