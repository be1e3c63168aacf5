package transform_test

import (
	"strings"
	"testing"
)

// TestTimeLimitReachesFluxInSeconds: class 1, end to end: the
// ConfigMap's entrypoint passes time-limit "600" as -t '600s' (flux run
// would read -t 600 as ten hours), a unit as written.
func TestTimeLimitReachesFluxInSeconds(t *testing.T) {
	p := hProcessor(t)
	for raw, want := range map[string]string{"600": "-t '600s'", "90m": "-t '90m'", "1.5": "-t '1.5s'"} {
		js := hJobSet{namespace: "ns", ann: map[string]string{"flux-framework.org/time-limit": raw}}.object()
		rl, ok, _ := hRun(t, p, hList(t, nil, js))
		cm := hFind(rl, "ConfigMap", "js-flux-entrypoint")
		if !ok || cm == nil {
			t.Fatalf("time-limit %q refused:\n%s", raw, hDump(rl))
		}
		script, _, _ := cm.GetMap("data").NestedString("entrypoint.sh")
		if !strings.Contains(script, want) {
			t.Errorf("time-limit %q: the entrypoint does not pass %s", raw, want)
		}
	}
}
