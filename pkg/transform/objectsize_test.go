package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestRenderedJobSetSize: class 7, a rendered JobSet whose JSON is over
// what etcd stores is refused, naming the JobSet, its size, the limit
// and the fix, and left as it was; one whose JSON would overflow the
// annotations through client-side apply's last-applied copy renders, with
// a warning that recommends server-side apply; a smaller one renders
// without either.
func TestRenderedJobSetSize(t *testing.T) {
	p := hProcessor(t)
	build := func(payload int) map[string]any {
		return hJobSet{name: "big", namespace: "ns", ann: map[string]string{"flux-framework.org/enabled": "true"},
			env: map[string]string{"DATA": strings.Repeat("x", payload)}}.object()
	}
	const lastApplied = "client-side `kubectl apply`"

	rl, ok, _ := hRun(t, p, hList(t, nil, build(jobsetrender.MaxStoredObject)))
	errs := w4Messages(rl, fn.Error)
	for _, want := range []string{`the rendered JobSet "big" would be `, fmt.Sprintf("more than the %d etcd accepts", jobsetrender.MaxStoredObject), "fewer replicatedJobs", "several JobSets"} {
		if ok || !strings.Contains(errs, want) {
			t.Errorf("a JobSet over etcd's limit: want an error with %q, got ok %v:\n%s", want, ok, errs)
		}
	}
	if hFind(rl, "ConfigMap", "big-flux-entrypoint") != nil || strings.Contains(hDump(rl), "flux-installer") {
		t.Errorf("the refused JobSet was rendered:\n%.2000s", hDump(rl))
	}

	rl, ok, _ = hRun(t, p, hList(t, nil, build(jobsetrender.TotalAnnotationSize)))
	warns := w4Messages(rl, fn.Warning)
	if !ok || !strings.Contains(warns, `metadata.annotations: the rendered JobSet "big" is `) || !strings.Contains(warns, lastApplied) ||
		!strings.Contains(warns, "kubectl apply --server-side") || !strings.Contains(warns, "ServerSideApply=true") {
		t.Errorf("a JobSet over the annotation limit through last-applied: want it rendered with the server-side advice, got ok %v:\n%s\n%s", ok, warns, w4Messages(rl, fn.Error))
	}

	rl, ok, _ = hRun(t, p, hList(t, nil, build(jobsetrender.TotalAnnotationSize-8<<10)))
	if warns := w4Messages(rl, fn.Warning); !ok || strings.Contains(warns, lastApplied) {
		t.Errorf("a JobSet whose last-applied copy fits: ok %v, warnings:\n%s", ok, warns)
	}
}

// TestGeneratedConfigMapLastApplied: class 7, a generated ConfigMap that
// the API server accepts but whose last-applied copy would overflow its
// annotations (broker.toml of many groups of Jobs of many pods) is
// warned about by name, with the server-side advice.
func TestGeneratedConfigMapLastApplied(t *testing.T) {
	p := hProcessor(t)
	js := jobsettest.New("many-groups").Namespace("ns").Annotation("flux-framework.org/enabled", "true")
	for g := range 50 {
		js.Jobs(jobsettest.Job(fmt.Sprintf("group-%02d", g)).Replicas(100).Completions(100).
			ContainerField("image", "busybox:1.36").ContainerField("command", []string{"true"}))
	}
	rl, ok, _ := hRun(t, p, hList(t, nil, js.Obj()))
	warns := w4Messages(rl, fn.Warning)
	if !ok || !strings.Contains(warns, `the rendered ConfigMap "many-groups-flux-entrypoint" is `) || !strings.Contains(warns, "kubectl apply --server-side") {
		t.Errorf("want the ConfigMap's last-applied warning, got ok %v:\n%s\n%s", ok, warns, w4Messages(rl, fn.Error))
	}
	if strings.Contains(warns, `the rendered JobSet "many-groups"`) {
		t.Errorf("the JobSet itself is small, but was warned about:\n%s", warns)
	}
}
