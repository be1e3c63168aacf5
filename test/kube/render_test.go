package kube

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestRenderRefuses is the render-time half of the semantics the cluster
// tests show breaking an instance (TestRetryJoinsDeadInstance,
// TestMaxRestarts, TestDependsOn, TestDNSPolicy): the same field in the
// input must give an error (exit code not 0) or a warning, on a line that
// names the field, so a user learns it before applying. Needs only the
// function, not the cluster.
func TestRenderRefuses(t *testing.T) {
	if err := testsupport.Executable(env.function); err != nil {
		testsupport.SkipOrFail(t, "jobset-flux: %v", err)
	}
	for _, tc := range refusals() {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := renderRaw(t, renderInput(t, tc.mutate))
			if line := findingOn(stderr, tc.fields); line == "" {
				t.Errorf("rendered (exit %d) with no error or warning naming %s; stderr:\n%s", code, strings.Join(tc.fields, " or "), stderr)
			} else {
				t.Logf("exit %d: %s", code, line)
			}
		})
	}
	// What the cluster runs must still render: dnsPolicy None with the
	// cluster's search path (TestDNSPolicy/None-search).
	for _, tc := range []struct {
		name   string
		mutate func(t *testing.T, js map[string]any)
	}{
		{"accepts-dnsPolicy-None-search", func(t *testing.T, js map[string]any) {
			set(t, js, "None", podPath(0, "dnsPolicy")...)
			set(t, js, map[string]any{"nameservers": []any{"10.0.0.10"}, "searches": []any{"default.svc.cluster.local"}}, podPath(0, "dnsConfig")...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := renderRaw(t, renderInput(t, tc.mutate))
			if code != 0 {
				t.Errorf("exit %d, want a render; stderr:\n%s", code, stderr)
			} else if stderr != "" {
				t.Logf("rendered with: %s", stderr)
			}
		})
	}
	// The control: without those fields the same input renders clean, so
	// a finding above is the field's, not the input's.
	t.Run("control", func(t *testing.T) {
		_, stderr, code := renderRaw(t, renderInput(t, func(*testing.T, map[string]any) {}))
		if code != 0 || strings.TrimSpace(stderr) != "" {
			t.Errorf("the plain input: exit %d, stderr:\n%s", code, stderr)
		}
	})
}

// refusal is an input field the function must refuse or warn about, and
// the names any one of which its finding must carry.
type refusal struct {
	name   string
	mutate func(t *testing.T, js map[string]any)
	fields []string
}

// refusals are the fields the cluster tests show breaking an instance.
func refusals() []refusal {
	return []refusal{
		{"backoffLimit", func(t *testing.T, js map[string]any) { set(t, js, 2, jobPath(0, "backoffLimit")...) }, []string{"backoffLimit"}},
		{"backoffLimitPerIndex", func(t *testing.T, js map[string]any) { set(t, js, 1, jobPath(0, "backoffLimitPerIndex")...) }, []string{"backoffLimitPerIndex"}},
		{"podFailurePolicy", func(t *testing.T, js map[string]any) {
			set(t, js, map[string]any{"rules": []any{map[string]any{
				"action": "Ignore", "onExitCodes": map[string]any{"operator": "In", "values": []any{3}},
			}}}, jobPath(0, "podFailurePolicy")...)
		}, []string{"podFailurePolicy"}},
		{"maxRestarts", func(t *testing.T, js map[string]any) {
			set(t, js, map[string]any{"maxRestarts": 1}, "spec", "failurePolicy")
		}, []string{"maxRestarts"}},
		{"dependsOn", func(t *testing.T, js map[string]any) {
			set(t, js, []any{map[string]any{"name": "a", "status": "Complete"}}, "spec", "replicatedJobs", 1, "dependsOn")
		}, []string{"dependsOn"}},
		{"dependsOn-Ready", func(t *testing.T, js map[string]any) {
			set(t, js, []any{map[string]any{"name": "a", "status": "Ready"}}, "spec", "replicatedJobs", 1, "dependsOn")
		}, []string{"dependsOn"}},
		{"dnsPolicy-Default", func(t *testing.T, js map[string]any) { set(t, js, "Default", podPath(0, "dnsPolicy")...) }, []string{"dnsPolicy"}},
		{"dnsPolicy-None-no-search", func(t *testing.T, js map[string]any) {
			set(t, js, "None", podPath(0, "dnsPolicy")...)
			set(t, js, map[string]any{"nameservers": []any{"10.0.0.10"}}, podPath(0, "dnsConfig")...)
		}, []string{"dnsConfig", "dnsPolicy"}},
	}
}

// renderInput is a two-replicatedJob JobSet (a namespace, so no key
// warning) changed by mutate, as YAML.
func renderInput(t *testing.T, mutate func(*testing.T, map[string]any)) string {
	t.Helper()
	groups := []group{{name: "a", replicas: 1, completions: 1}, {name: "b", replicas: 1, completions: 2}}
	d := decode(t, []byte(jobSet(t, "refuse", nil, []string{"hostname"}, groups...)))
	js := d[0]
	set(t, js, "default", "metadata", "namespace")
	mutate(t, js)
	return string(d.encode(t))
}

// findingOn returns the first [error] or [warning] line of stderr that
// names one of the fields.
func findingOn(stderr string, fields []string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "[error]") && !strings.HasPrefix(l, "[warning]") {
			continue
		}
		for _, f := range fields {
			if strings.Contains(l, f) {
				return l
			}
		}
	}
	return ""
}
