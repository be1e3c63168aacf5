package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 31 (hostile wave 4), the input-wide classes: each case is an
// input the function used to accept (exit 0) that must now be refused at
// the field with the fix, or rendered.

func w4Messages(rl *fn.ResourceList, sev fn.Severity) string {
	var out []string
	for _, r := range rl.Results {
		if r.Severity == sev {
			path := ""
			if r.Field != nil {
				path = r.Field.Path
			}
			out = append(out, path+": "+r.Message)
		}
	}
	return strings.Join(out, "\n")
}

// TestWave4Unselected: class 2, a misspelt selector or setting under
// flux-framework.org/ is an error even on a JobSet that is not rendered.
func TestWave4Unselected(t *testing.T) {
	p := hProcessor(t)
	for name, tc := range map[string]struct {
		ann     map[string]string
		sev     fn.Severity
		ok      bool
		field   string
		message string
	}{
		"enable":                 {map[string]string{"flux-framework.org/enable": "true"}, fn.Error, false, "metadata.annotations[flux-framework.org/enable]", `did you mean "flux-framework.org/enabled"`},
		"Enabled":                {map[string]string{"flux-framework.org/Enabled": "true"}, fn.Error, false, "metadata.annotations[flux-framework.org/Enabled]", "did you mean"},
		"disabled, misspelt":     {map[string]string{"flux-framework.org/enabled": "false", "flux-framework.org/taks-per-node": "2"}, fn.Error, false, "metadata.annotations[flux-framework.org/taks-per-node]", `tasks-per-node`},
		"setting, no selector":   {map[string]string{"flux-framework.org/tasks-per-node": "2"}, fn.Warning, true, "metadata.annotations[flux-framework.org/tasks-per-node]", "is not rendered"},
		"selected, misspelt too": {map[string]string{"flux-framework.org/enabled": "true", "flux-framework.org/taks-per-node": "2"}, fn.Error, false, "metadata.annotations[flux-framework.org/taks-per-node]", "tasks-per-node"},
	} {
		t.Run(name, func(t *testing.T) {
			obj := hJobSet{ann: tc.ann, namespace: "ns"}.object()
			if _, set := tc.ann["flux-framework.org/enabled"]; !set {
				delete(obj["metadata"].(map[string]any)["annotations"].(map[string]any), "flux-framework.org/enabled")
			}
			rl, ok, _ := hRun(t, p, hList(t, nil, obj))
			got := w4Messages(rl, tc.sev)
			if ok != tc.ok || !strings.Contains(got, tc.field+": ") || !strings.Contains(got, tc.message) {
				t.Errorf("ok %v (want %v); want a result at %s saying %q, got:\n%s", ok, tc.ok, tc.field, tc.message, hDump(rl))
			}
			if n := strings.Count(got, tc.field+": "); n != 1 {
				t.Errorf("%d results at %s, want one:\n%s", n, tc.field, got)
			}
		})
	}
}

// TestWave4SubdomainShared: class 3, a subdomain another JobSet of the
// input uses, or an input Service is named, is refused (the controller
// reuses that Service); distinct subdomains, or another namespace, pass.
func TestWave4SubdomainShared(t *testing.T) {
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

// TestWave4ConfigMapSize: class 6, an accepted shape whose generated
// ConfigMap exceeds the API server's 1 MiB is refused with its size and
// the fix; the same instance in fewer, larger Jobs renders.
func TestWave4ConfigMapSize(t *testing.T) {
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

// TestWave4ListKRM: class 6, a JobSet marked for Flux inside a v1 List
// item of a ResourceList is refused at the List's items, naming the fix,
// and the List is left as it was; a List without one passes.
func TestWave4ListKRM(t *testing.T) {
	p := hProcessor(t)
	js := hJobSet{namespace: "ns", ann: map[string]string{"flux-framework.org/enabled": "true"}}.object()
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "ns"}}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{js, cm}}
	rl, ok, _, err := hKRM(t, p, hList(t, nil, list))
	if err != nil || ok {
		t.Fatalf("a List holding a Flux JobSet passed (%v):\n%s", err, hDump(rl))
	}
	if errs := w4Messages(rl, fn.Error); !strings.Contains(errs, "items: holds the JobSet") || !strings.Contains(errs, "write the List's items as items") {
		t.Errorf("the error does not name the field and the fix:\n%s", errs)
	}
	if len(rl.Items) != 1 || rl.Items[0].GetKind() != "List" {
		t.Errorf("the refused List was changed:\n%s", hDump(rl))
	}
	// A List without a Flux JobSet stays a List.
	plain := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{cm}}
	rl, ok, _, _ = hKRM(t, p, hList(t, nil, plain))
	if !ok || len(rl.Items) != 1 || rl.Items[0].GetKind() != "List" {
		t.Errorf("a List without a Flux JobSet was changed:\n%s", hDump(rl))
	}
}

// w4Undo is a JobSet of three replicatedJobs, with comments, a
// spec.network of the user's, a field the user set to what the function
// would set (leader's backoffLimit 0: it stays) and one with neither
// completions nor parallelism.
const w4Undo = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: undo
    namespace: ns
    annotations:
      flux-framework.org/enabled: "true" # SELECTOR
      flux-framework.org/replicated-jobs: leader,workers,setup
  spec:
    # the network the user wrote
    network:
      subdomain: undo-net
    replicatedJobs:
    - name: leader
      template:
        spec:
          backoffLimit: 0 # the user's own
          template:
            spec:
              containers:
              - name: app
                image: busybox:1.36
                command: [sh, -c, "exit 0"]
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 3
          template:
            spec:
              containers:
              - name: app
                image: busybox:1.36
                command: [sh, -c, "exit 0"]
    - name: setup
      template:
        spec:
          completions: 1
          template:
            spec:
              restartPolicy: OnFailure # the user's
              containers:
              - name: app
                image: busybox:1.36
                command: [sh, -c, "exit 0"]
`

// TestWave4Undo: class 5, undoing a setting gives the JobSet's own spec
// back. Render the input; change a setting in the output; render that
// again: the items are byte for byte those of a fresh render of the
// input with the same change (for enabled: "false", the input itself,
// its ConfigMap and Secret pruned). Each change is also made a second
// time on the re-render's output, which must not move.
func TestWave4Undo(t *testing.T) {
	p := hProcessor(t)
	render := func(in string) string {
		t.Helper()
		rl, ok, out, err := hKRM(t, p, []byte(in))
		if err != nil || !ok {
			t.Fatalf("render refused (%v):\n%s", err, hDump(rl))
		}
		return string(hItemsOnly(out))
	}
	first := render(w4Undo)
	if !strings.Contains(first, "jobset-flux.flux-framework.org/defaults") {
		t.Fatalf("the render records nothing it set:\n%s", first)
	}
	for name, change := range map[string][2]string{
		"disabled":             {`flux-framework.org/enabled: "true" # SELECTOR`, `flux-framework.org/enabled: "false" # SELECTOR`},
		"setup taken out":      {"flux-framework.org/replicated-jobs: leader,workers,setup", "flux-framework.org/replicated-jobs: leader,workers"},
		"workers taken out":    {"flux-framework.org/replicated-jobs: leader,workers,setup", "flux-framework.org/replicated-jobs: leader"},
		"workers' parallelism": {"parallelism: 3", "parallelism: 4"},
	} {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(first, change[0]) {
				t.Fatalf("the render lost %q", change[0])
			}
			again := render(strings.Replace(first, change[0], change[1], 1))
			fresh := render(strings.Replace(w4Undo, change[0], change[1], 1))
			if again != fresh {
				t.Errorf("re-render of the changed output differs from a fresh render of the changed input: %s", firstDiff(again, fresh))
			}
			if name == "disabled" && strings.Contains(again, "kind: ConfigMap") {
				t.Errorf("the disabled JobSet's ConfigMap was kept:\n%s", again)
			}
			if render(again) != again {
				t.Errorf("a third render changed the output")
			}
		})
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q, want %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}

// TestWave4TimeLimitReachesFluxInSeconds: class 1, end to end: the
// ConfigMap's entrypoint passes time-limit "600" as -t '600s' (flux run
// would read -t 600 as ten hours), a unit as written.
func TestWave4TimeLimitReachesFluxInSeconds(t *testing.T) {
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
