package settings_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// TestEnvFromPrefixRefused: an envFrom of a wrapped container whose
// prefix can turn a key into a setting's variable is refused as valueFrom
// is, naming the variables; a prefix no setting's variable starts with,
// or no prefix at all (the keys are unknown), passes, and so does any
// envFrom on a container the render does not wrap.
func TestEnvFromPrefixRefused(t *testing.T) {
	const at = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].envFrom[0].prefix"
	envFrom := func(prefix string) []any {
		src := map[string]any{"configMapRef": map[string]any{"name": "site"}}
		if prefix != "" {
			src["prefix"] = prefix
		}
		return []any{src}
	}
	for _, tc := range []struct {
		name string
		js   *jobsettest.JobSet
		says []string // nil: no error
	}{
		{"FLUX_", jobsettest.New("js").Jobs(jobsettest.Job("w").ContainerField("envFrom", envFrom("FLUX_"))),
			[]string{`is "FLUX_", so a key of ConfigMap "site" can set FLUX_NETWORK_DEVICE or FLUX_QUEUE_POLICY or FLUX_VIEW_IMAGE`, "each must be a literal value: jobset-flux reads it at render time, so envFrom cannot be resolved"}},
		{"FLUX_VIEW_", jobsettest.New("js").Jobs(jobsettest.Job("w").ContainerField("envFrom", envFrom("FLUX_VIEW_"))),
			[]string{"can set FLUX_VIEW_IMAGE:"}},
		{"a prefix no setting starts with", jobsettest.New("js").Jobs(jobsettest.Job("w").ContainerField("envFrom", envFrom("FLUX_APP_"))), nil},
		{"no prefix", jobsettest.New("js").Jobs(jobsettest.Job("w").ContainerField("envFrom", envFrom(""))), nil},
		{"a container not wrapped", jobsettest.New("js").Jobs(jobsettest.Job("w").Sidecar(map[string]any{"name": "side", "image": "side", "envFrom": envFrom("FLUX_")})), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := resolveJobSet(t, settings.Defaults(), tc.js)
			if tc.says == nil {
				if found.HasErrors() {
					t.Fatalf("want no error, got %+v", found)
				}
				return
			}
			if len(found) != 1 || found[0].Severity != finding.Error || found[0].Path != at {
				t.Fatalf("want one error at %s, got %+v", at, found)
			}
			for _, s := range tc.says {
				if !strings.Contains(found[0].Message, s) {
					t.Errorf("the message does not say %q: %s", s, found[0].Message)
				}
			}
		})
	}
}
