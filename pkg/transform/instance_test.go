package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestSubdomainShared: class 3, a subdomain another JobSet of the
// input uses, or an input Service is named, is refused (the controller
// reuses that Service); distinct subdomains, or another namespace, pass.
func TestSubdomainShared(t *testing.T) {
	p := hProcessor(t)
	enabled := map[string]string{"flux-framework.org/enabled": "true"}
	service := func(name, ns string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"clusterIP": "None", "selector": map[string]any{"app": "other"}}}
	}
	ownService := func(name, ns string) map[string]any {
		svc := service(name, ns)
		svc["spec"].(map[string]any)["selector"] = map[string]any{"jobset.sigs.k8s.io/jobset-name": name}
		return svc
	}
	for name, tc := range map[string]struct {
		items []map[string]any
		field string // "" when accepted
	}{
		"JobSet named as the other's subdomain": {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled, subdomain: "b"}.object(), hJobSet{name: "b", namespace: "ns", ann: enabled}.object()}, "spec.network.subdomain"},
		"two explicit subdomains alike":         {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled, subdomain: "s"}.object(), hJobSet{name: "b", namespace: "ns", subdomain: "s"}.object()}, "spec.network.subdomain"},
		"a Service of the JobSet's name":        {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled}.object(), service("a", "ns")}, "metadata.name"},
		"a Service of its subdomain":            {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled, subdomain: "net"}.object(), service("net", "ns")}, "spec.network.subdomain"},
		"the controller's own Service for it":   {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled}.object(), ownService("a", "ns")}, ""},
		"the Service in another namespace":      {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled}.object(), service("a", "other")}, ""},
		"distinct subdomains":                   {[]map[string]any{hJobSet{name: "a", namespace: "ns", ann: enabled}.object(), hJobSet{name: "b", namespace: "ns", ann: enabled}.object()}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			rl, ok, _ := hRun(t, p, hList(t, nil, tc.items...))
			errs := w4Messages(rl, fn.Error)
			if tc.field == "" {
				if !ok {
					t.Fatalf("refused:\n%s", errs)
				}
				return
			}
			if ok || !strings.Contains(errs, tc.field+": the pods' subdomain") || !strings.Contains(errs, "spec.network.subdomain") {
				t.Fatalf("want an error at %s naming the fix, got:\n%s", tc.field, errs)
			}
		})
	}
}

// TestConfigMapSizeLimit: class 6, an accepted shape whose generated
// ConfigMap exceeds the API server's 1 MiB is refused with its size and
// the fix; the same instance in fewer, larger Jobs renders.
func TestConfigMapSizeLimit(t *testing.T) {
	p := hProcessor(t)
	build := func(replicas, completions int) map[string]any {
		// Names as long as a 57-character hostname allows.
		js := jobsettest.New("a-jobset-of-long-name-24").Namespace("ns").Annotation("flux-framework.org/enabled", "true")
		for g := range 100 {
			js.Jobs(jobsettest.Job(fmt.Sprintf("replicated-group-nr-%04d", g)).Replicas(replicas).Completions(completions).
				ContainerField("image", "busybox:1.36").ContainerField("command", []string{"true"}))
		}
		return js.Obj()
	}
	rl, ok, _ := hRun(t, p, hList(t, nil, build(100, 100)))
	if cm := hFind(rl, "ConfigMap", "a-jobset-of-long-name-24-flux-entrypoint"); cm != nil {
		data := cm.GetMap("data")
		size := 0
		for _, k := range []string{"broker.toml", "entrypoint.sh", "init.sh"} {
			v, _, _ := data.NestedString(k)
			size += len(k) + len(v)
		}
		t.Logf("ConfigMap data: %d bytes", size)
	}
	errs := w4Messages(rl, fn.Error)
	if ok || !strings.Contains(errs, "more than the 1048576 the API server accepts") || !strings.Contains(errs, "fewer, larger Jobs") {
		t.Fatalf("100 groups of 100 Jobs x 100 pods: want the size refused, got ok %v:\n%s", ok, errs)
	}
	if _, ok, _ := hRun(t, p, hList(t, nil, build(1, 100))); !ok {
		t.Fatalf("100 groups of 1 Job x 100 pods refused")
	}
}
