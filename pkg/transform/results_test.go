package transform_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// twoJobs is a JobSet with two replicatedJobs and none of the fields the
// render sets: no spec.network, no completions, parallelism,
// completionMode, backoffLimit or restartPolicy.
const twoJobs = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: two
    namespace: team
    annotations:
      flux-framework.org/enabled: "true"
  spec:
    replicatedJobs:
    - name: leader
      template:
        spec:
          template:
            spec:
              containers:
              - name: app
                image: example.com/app:1
                command: [run]
    - name: workers
      replicas: 3
      template:
        spec:
          template:
            spec:
              containers:
              - name: app
                image: example.com/app:1
                command: [run]
`

// resultsOn returns the results of the given severity about the JobSet name.
func resultsOn(rl *fn.ResourceList, name string, sev fn.Severity) []*fn.Result {
	var out []*fn.Result
	for _, r := range rl.Results {
		if r.Severity == sev && r.ResourceRef != nil && r.ResourceRef.Kind == "JobSet" && r.ResourceRef.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// rerender runs the function on its own output, as a second kpt render
// would: the items, without the first run's results.
func rerender(t *testing.T, p *transform.Processor, out []byte) (*fn.ResourceList, bool) {
	t.Helper()
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	rl.Results = nil
	in, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	again, ok, _ := hRun(t, p, in)
	return again, ok
}

// Every field set on the user's behalf is named in one info result, and
// re-rendering the function's own output says nothing more.
func TestOneInfoPerJobSet(t *testing.T) {
	p := hProcessor(t)
	rl, ok, out := hRun(t, p, []byte(twoJobs))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(rl))
	}
	if len(rl.Results) != 1 {
		t.Fatalf("got %d results, want exactly one info:\n%s", len(rl.Results), hDump(rl))
	}
	infos := resultsOn(rl, "two", fn.Info)
	if len(infos) != 1 {
		t.Fatalf("got %d info results on the JobSet, want 1:\n%s", len(infos), hDump(rl))
	}
	info := infos[0]
	if info.Field != nil {
		t.Errorf("the merged info has a field %+v; it is about the whole JobSet", info.Field)
	}
	for _, want := range []string{
		"rendered for Flux (4 brokers)",
		"set spec.network.enableDNSHostnames=true, spec.network.publishNotReadyAddresses=true",
		`replicatedJob "leader": set completionMode=Indexed, completions=1, parallelism=1, backoffLimit=0, restartPolicy=Never`,
		`replicatedJob "workers": set completionMode=Indexed, completions=1, parallelism=1, backoffLimit=0, restartPolicy=Never`,
	} {
		if !strings.Contains(info.Message, want) {
			t.Errorf("the info does not say %q:\n%s", want, info.Message)
		}
	}
	if strings.Index(info.Message, `"leader"`) > strings.Index(info.Message, `"workers"`) {
		t.Errorf("replicatedJobs are not in rank order: %s", info.Message)
	}

	// The function's own output: every field is set now.
	again, ok := rerender(t, p, out)
	if !ok {
		t.Fatalf("re-render failed:\n%s", hDump(again))
	}
	if len(again.Results) != 0 {
		t.Errorf("re-rendering the output gave results, want none:\n%s", hDump(again))
	}
}

// The merged info keeps the notes (interactive instance, existing Secret),
// which a re-render still gives, without any field said to be set.
func TestInfoKeepsNotes(t *testing.T) {
	in := strings.Replace(twoJobs, "      flux-framework.org/enabled: \"true\"\n",
		"      flux-framework.org/enabled: \"true\"\n      flux-framework.org/curve-secret: mine\n", 1)
	// No command anywhere: the instance is interactive, and no worker's
	// own command is dropped (which would be a warning).
	in = strings.ReplaceAll(in, "                command: [run]\n", "")
	p := hProcessor(t)
	rl, ok, out := hRun(t, p, []byte(in))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(rl))
	}
	// The derived interactive instance is a warning of its own, printed
	// without -v: a JobSet that never ends on its own holds its nodes.
	infos := resultsOn(rl, "two", fn.Info)
	if len(infos) != 1 || len(rl.Results) != 2 || !strings.Contains(hDump(rl), `warning`) {
		t.Fatalf("want one info and one warning:\n%s", hDump(rl))
	}
	for _, want := range []string{`uses the existing Secret "mine"`, "completionMode=Indexed"} {
		if !strings.Contains(infos[0].Message, want) {
			t.Errorf("the info does not say %q:\n%s", want, infos[0].Message)
		}
	}
	again, ok := rerender(t, p, out)
	if !ok {
		t.Fatalf("re-render failed:\n%s", hDump(again))
	}
	infos = resultsOn(again, "two", fn.Info)
	if len(infos) != 1 || len(again.Results) != 2 {
		t.Fatalf("re-render: want one info (the notes) and the warning:\n%s", hDump(again))
	}
	if m := infos[0].Message; strings.Contains(m, "set ") || !strings.Contains(m, `"mine"`) {
		t.Errorf("re-render: the info should hold the notes and no set field:\n%s", m)
	}
}

// Errors and warnings are not merged: each keeps its own result with its
// field path, and a JobSet with errors gets no info (nothing was set).
func TestErrorsAndWarningsNotMerged(t *testing.T) {
	bad := strings.NewReplacer(
		"    name: two\n", "    name: bad\n",
		"  spec:\n    replicatedJobs:\n", "  spec:\n    network:\n      enableDNSHostnames: false\n    replicatedJobs:\n",
		"    - name: workers\n      replicas: 3\n      template:\n        spec:\n", "    - name: workers\n      replicas: 3\n      template:\n        spec:\n          completionMode: NonIndexed\n          completions: 0\n",
	).Replace(twoJobs)
	warned := strings.NewReplacer(
		"    name: two\n", "    name: warned\n",
		"  spec:\n    replicatedJobs:\n", "  spec:\n    network:\n      publishNotReadyAddresses: false\n    replicatedJobs:\n",
	).Replace(twoJobs)
	items := func(rl string) string { return rl[strings.Index(rl, "items:\n")+len("items:\n"):] }
	in := twoJobs + items(bad) + items(warned)
	rl, ok, _ := hRun(t, hProcessor(t), []byte(in))
	if ok {
		t.Fatalf("render succeeded despite errors:\n%s", hDump(rl))
	}
	errs := resultsOn(rl, "bad", fn.Error)
	if len(errs) < 3 {
		t.Fatalf("want an error result for each of the three bad fields:\n%s", hDump(rl))
	}
	paths := map[string]bool{}
	for _, r := range errs {
		if r.Field == nil || r.Field.Path == "" {
			t.Errorf("error without a field path: %s", r.Message)
			continue
		}
		paths[r.Field.Path] = true
	}
	for _, want := range []string{"spec.network.enableDNSHostnames", "spec.replicatedJobs[1].template.spec.completionMode", "spec.replicatedJobs[1].template.spec.completions"} {
		if !paths[want] {
			t.Errorf("no error result at %s:\n%s", want, hDump(rl))
		}
	}
	if infos := resultsOn(rl, "bad", fn.Info); len(infos) != 0 {
		t.Errorf("a JobSet left unchanged has infos:\n%s", hDump(rl))
	}

	warnings := resultsOn(rl, "warned", fn.Warning)
	if len(warnings) != 1 || warnings[0].Field == nil || warnings[0].Field.Path != "spec.network.publishNotReadyAddresses" {
		t.Errorf("want one warning at spec.network.publishNotReadyAddresses:\n%s", hDump(rl))
	}
	infos := resultsOn(rl, "warned", fn.Info)
	if len(infos) != 1 || strings.Contains(infos[0].Message, "publishNotReadyAddresses") {
		t.Errorf("want one info on the warned JobSet, not claiming publishNotReadyAddresses was set:\n%s", hDump(rl))
	}
	if len(resultsOn(rl, "two", fn.Info)) != 1 || len(resultsOn(rl, "two", fn.Error))+len(resultsOn(rl, "two", fn.Warning)) != 0 {
		t.Errorf("the good JobSet should have one info and nothing else:\n%s", hDump(rl))
	}
}

// A seeded key is derived from namespace/name: a JobSet without a namespace
// gets a warning at metadata.namespace (one key for every namespace it is
// applied to); one with a namespace does not. A render of the first
// render's output, which keeps the generated Secret, warns the same (the
// kpt e2e second run showed the warning gone).
func TestNamespacelessSeededKeyWarns(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		warn     bool
	}{
		{"with a namespace", twoJobs, false},
		{"without", strings.Replace(twoJobs, "    namespace: team\n", "", 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := hProcessor(t)
			rl, ok, out := hRun(t, p, []byte(tc.in))
			if !ok {
				t.Fatalf("render failed:\n%s", hDump(rl))
			}
			again, ok := rerender(t, p, out)
			if !ok {
				t.Fatalf("second render failed:\n%s", hDump(again))
			}
			for run, l := range []*fn.ResourceList{rl, again} {
				warnings := resultsOn(l, "two", fn.Warning)
				got := len(warnings) == 1 && warnings[0].Field != nil && warnings[0].Field.Path == "metadata.namespace" &&
					strings.Contains(warnings[0].Message, "every namespace this render is applied to shares it")
				if got != tc.warn || (!tc.warn && len(warnings) != 0) {
					t.Errorf("render %d: warnings %v, want the namespace warning: %v", run+1, hDump(l), tc.warn)
				}
			}
		})
	}
}
