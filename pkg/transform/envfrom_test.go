package transform_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestEnvFromInputObjects: issue 41 class 6, an envFrom of a wrapped
// container that takes a setting's variable from a ConfigMap or Secret
// of the input is refused as valueFrom is, naming the key and the
// object; the same object without such a key, in another namespace, on a
// container the render does not wrap, or shadowed by a literal env
// variable of the name (which wins over envFrom), passes.
func TestEnvFromInputObjects(t *testing.T) {
	const at = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].envFrom[0]"
	object := func(kind, namespace, field string, keys ...string) map[string]any {
		data := map[string]any{}
		for _, k := range keys {
			data[k] = "eth1"
		}
		return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": "site", "namespace": namespace}, field: data}
	}
	envFrom := func(ref, prefix string) []any {
		src := map[string]any{ref: map[string]any{"name": "site"}}
		if prefix != "" {
			src["prefix"] = prefix
		}
		return []any{src}
	}
	jobSet := func(rj *jobsettest.ReplicatedJob) map[string]any {
		return jobsettest.New("js").Namespace("ns").Jobs(rj).Obj()
	}
	wrapped := func(ref, prefix string) *jobsettest.ReplicatedJob {
		return jobsettest.Job("w").ContainerField("envFrom", envFrom(ref, prefix))
	}
	for name, tc := range map[string]struct {
		items []map[string]any
		says  string // "" when accepted
	}{
		"a ConfigMap's key": {[]map[string]any{jobSet(wrapped("configMapRef", "")), object("ConfigMap", "ns", "data", "FLUX_NETWORK_DEVICE", "OTHER")},
			`takes FLUX_NETWORK_DEVICE from the key "FLUX_NETWORK_DEVICE" of the ConfigMap "site" in the input: FLUX_NETWORK_DEVICE must be a literal value: jobset-flux reads it at render time, so envFrom cannot be resolved`},
		"a Secret's key with a prefix": {[]map[string]any{jobSet(wrapped("secretRef", "FLUX")), object("Secret", "ns", "stringData", "_QUEUE_POLICY")},
			`takes FLUX_QUEUE_POLICY from the key "_QUEUE_POLICY" of the Secret "site" in the input (prefix "FLUX")`},
		"other keys":                         {[]map[string]any{jobSet(wrapped("configMapRef", "")), object("ConfigMap", "ns", "data", "FLUX_APP_MODE", "OTHER")}, ""},
		"another namespace":                  {[]map[string]any{jobSet(wrapped("configMapRef", "")), object("ConfigMap", "elsewhere", "data", "FLUX_NETWORK_DEVICE")}, ""},
		"a container not wrapped":            {[]map[string]any{jobSet(jobsettest.Job("w").Sidecar(map[string]any{"name": "side", "image": "side", "envFrom": envFrom("configMapRef", "")})), object("ConfigMap", "ns", "data", "FLUX_NETWORK_DEVICE")}, ""},
		"shadowed by a literal env variable": {[]map[string]any{jobSet(wrapped("configMapRef", "").ContainerField("env", []any{map[string]any{"name": "FLUX_NETWORK_DEVICE", "value": "eth0"}})), object("ConfigMap", "ns", "data", "FLUX_NETWORK_DEVICE")}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			rl, ok, _ := hRun(t, hProcessor(t), hList(t, nil, tc.items...))
			errs := w4Messages(rl, fn.Error)
			if tc.says == "" {
				if !ok {
					t.Fatalf("refused:\n%s", errs)
				}
				return
			}
			if ok || !strings.Contains(errs, at+": "+tc.says) {
				t.Fatalf("want an error at %s saying %q, got:\n%s", at, tc.says, errs)
			}
		})
	}
}
