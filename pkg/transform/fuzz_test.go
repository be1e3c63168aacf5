package transform_test

// Fuzz targets. `go test ./...` runs them on their seed corpus (f.Add and
// testdata/fuzz/<target>/); to fuzz, one target at a time:
//
//	go test -run='^$' -fuzz='^FuzzProcess$' -fuzztime=10m ./pkg/transform
//	go test -run='^$' -fuzz='^FuzzSettings$' -fuzztime=10m ./pkg/transform
//	go test -run='^$' -fuzz='^FuzzConfig$' -fuzztime=10m ./pkg/transform
//
// A failing input is written to testdata/fuzz/<target>/ by the fuzzer:
// commit it, it is a regression case from then on. See docs/fuzzing.md.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// fzExamples returns the examples' JobSets and configs wrapped into
// ResourceLists, the way kustomize sends them.
func fzExamples(f *testing.F) [][]byte {
	f.Helper()
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		f.Fatal(err)
	}
	var lists [][]byte
	for _, dir := range dirs {
		js, err := os.ReadFile(filepath.Join(dir, "jobset.yaml"))
		if err != nil {
			continue
		}
		var b strings.Builder
		b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
		b.WriteString(fzIndent(string(js), "- ", "  "))
		if cfg, err := os.ReadFile(filepath.Join(dir, "flux.yaml")); err == nil {
			b.WriteString("functionConfig:\n")
			b.WriteString(fzIndent(string(cfg), "  ", "  "))
		}
		lists = append(lists, []byte(b.String()))
	}
	if len(lists) == 0 {
		f.Fatal("no examples found")
	}
	return lists
}

func fzIndent(doc, first, rest string) string {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		if i == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(rest)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// fzItems writes a ResourceList's items only (results differ between a
// first render, which sets fields, and a second, which does not).
func fzItems(t *testing.T, rl *fn.ResourceList) []byte {
	t.Helper()
	items := &fn.ResourceList{Items: rl.Items, FunctionConfig: rl.FunctionConfig}
	out, err := items.ToYAML()
	if err != nil {
		t.Fatalf("writing the items: %v", err)
	}
	return out
}

// fzCheckGenerated checks every generated ConfigMap: broker.toml parses and
// has only the keys the templates write.
func fzCheckGenerated(t *testing.T, rl *fn.ResourceList) {
	t.Helper()
	for _, it := range rl.Items {
		if it.GetKind() != "ConfigMap" || it.GetLabel(plan.ManagedByLabel) != plan.ManagedByValue {
			continue
		}
		broker, _, _ := it.NestedString("data", plan.BrokerConfig)
		if broker == "" {
			continue // an input ConfigMap kept as it was
		}
		var doc map[string]any
		if err := toml.Unmarshal([]byte(broker), &doc); err != nil {
			t.Fatalf("broker.toml of %s does not parse: %v", it.GetName(), err)
		}
		hCheckKeys(t, "", doc, map[string][]string{
			"":                       {"bootstrap", "resource", "sched-fluxion-qmanager", "access"},
			"bootstrap":              {"curve_cert", "default_port", "default_bind", "default_connect", "hosts"},
			"bootstrap.hosts":        {"host"},
			"resource":               {"noverify", "config"},
			"resource.config":        {"hosts", "cores", "gpus"},
			"sched-fluxion-qmanager": {"queue-policy"},
			"access":                 {"allow-root-owner", "allow-guest-user"},
		})
	}
}

// FuzzProcess feeds arbitrary bytes to the command's KRM path (parse the
// ResourceList, Process, write it). It must never panic; the output is
// always a ResourceList that parses back; a successful render is
// idempotent: rendering its output again gives the same items, byte for
// byte.
func FuzzProcess(f *testing.F) {
	for _, l := range fzExamples(f) {
		f.Add(l)
	}
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	for _, s := range []string{
		rl + "items: []\n",
		rl + "items:\n- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n  metadata: {name: a, annotations: {flux-framework.org/enabled: \"true\"}}\n  spec: {replicatedJobs: []}\n",
		rl + "items:\n- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n  metadata: {name: a, annotations: {flux-framework.org/enabled: \"true\"}}\n  spec: {replicatedJobs: [{name: 'w,x', template: {spec: {template: {spec: {containers: [{name: c}]}}}}}]}\n",
		rl + "items:\n- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n  metadata: {name: a, annotations: {flux-framework.org/enabled: \"true\"}}\n  spec: {replicatedJobs: [{name: w, replicas: 1000, template: {spec: {completions: 1000, template: {spec: {containers: [{name: c, command: [x]}]}}}}}]}\n",
		rl + "items:\n- &a {apiVersion: v1, kind: ConfigMap, metadata: {name: a-flux-entrypoint}}\n- *a\n",
		rl + "functionConfig: {apiVersion: v1, kind: ConfigMap, data: {port: [1]}}\n",
	} {
		f.Add([]byte(s))
	}
	p := hProcessor(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		rl, err := fn.ParseResourceList(in)
		if err != nil {
			return // the command reports it and exits 1
		}
		ok, err := p.Process(rl)
		if err != nil {
			t.Fatalf("Process failed on its own: %v", err)
		}
		out, err := rl.ToYAML()
		if err != nil {
			// kyaml cannot write some parsed documents back (e.g. odd
			// tags); the command reports it and exits 3.
			return
		}
		back, err := fn.ParseResourceList(out)
		if err != nil {
			t.Fatalf("the output is not a ResourceList: %v\n%s", err, out)
		}
		if len(back.Items) != len(rl.Items) {
			t.Fatalf("%d items written, %d read back", len(rl.Items), len(back.Items))
		}
		if !ok {
			return
		}
		fzCheckGenerated(t, back)
		first := fzItems(t, back)
		back.Results = nil
		ok, err = p.Process(back)
		if err != nil || !ok {
			t.Fatalf("rendering the output again failed: %v\n%s", err, hDump(back))
		}
		if second := fzItems(t, back); !bytes.Equal(first, second) {
			t.Fatalf("not idempotent:\n--- first\n%s\n--- second\n%s", first, second)
		}
	})
}

// FuzzSettings checks every setting's validator on arbitrary strings: it
// never panics, its message never carries a raw control character nor an
// unbounded copy of the value, and what it accepts holds nothing a shell,
// TOML or a bootstrap URI would interpret.
func FuzzSettings(f *testing.F) {
	names := settings.Names()
	for i, name := range names {
		f.Add(uint8(i), hValid[name])
		for _, v := range hPayloads() {
			if len(v) < 100 {
				f.Add(uint8(i), v)
				f.Add(uint8(i), hValid[name]+v)
			}
		}
	}
	f.Add(uint8(255), "kary:1")
	f.Fuzz(func(t *testing.T, n uint8, value string) {
		name := names[int(n)%len(names)]
		err := settings.Check(name, value)
		if err != nil {
			msg := err.Error()
			if strings.ContainsFunc(msg, unicode.IsControl) {
				t.Fatalf("%s: the error holds a control character: %q", name, msg)
			}
			if len(msg) > 1024 {
				t.Fatalf("%s: a %d-byte error", name, len(msg))
			}
			return
		}
		if settings.Verbatim(name) {
			return // shipped as a file of its own: TestSetupIsAFileOfItsOwn
		}
		if r, bad := hUnsafe(value); bad {
			t.Fatalf("%s accepts %q, which holds %q", name, value, r)
		}
		if strings.ContainsAny(value, "\n\r") {
			t.Fatalf("%s accepts a line break", name)
		}
	})
}

// FuzzConfig puts arbitrary YAML in the function config (a ConfigMap, a
// JobSetFlux, or anything else) next to a valid JobSet: no panic; a config
// with an error leaves every item exactly as it was; an accepted config
// renders a valid broker.toml.
func FuzzConfig(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata: {connect-timeout: 2s}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata: {port: {a: b}, tasks-per-nod: \"2\"}\n",
		"apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: f}\nspec: {runOptions: [-o, cpu-affinity=per-task], queuePolicy: easy}\n",
		"apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: f}\nspec: {runOptions: [\"-o x\"], replicatedJobs: [\"w,v\"]}\n",
		"apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: f}\nspec: {tasksPerNode: 4.5, taskPerNode: 1}\n",
		"apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nspec: []\n",
		// A date where a string belongs made the schema validator panic.
		"apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: f}\nspec: {container: 2001-12-14, port: 8050.0}\nstatus: {}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: f}\n",
		"kind: ConfigMap\ndata: [a]\n",
	} {
		f.Add([]byte(s))
	}
	p := hProcessor(f)
	good := hList(f, nil, hJobSet{}.object())
	f.Fuzz(func(t *testing.T, cfg []byte) {
		config, err := fn.ParseKubeObject(cfg)
		if err != nil {
			return
		}
		rl, err := fn.ParseResourceList(good)
		if err != nil {
			t.Fatal(err)
		}
		before := rl.Items[0].String()
		rl.FunctionConfig = config
		ok, err := p.Process(rl)
		if err != nil {
			t.Fatalf("Process failed on its own: %v", err)
		}
		for _, r := range rl.Results {
			if strings.ContainsFunc(r.Message, unicode.IsControl) {
				t.Fatalf("a message holds a control character: %q", r.Message)
			}
		}
		if !ok {
			if len(rl.Items) != 1 || rl.Items[0].String() != before {
				t.Fatalf("a refused config changed the items")
			}
			return
		}
		fzCheckGenerated(t, rl)
	})
}
