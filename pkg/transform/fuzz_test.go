package transform_test

// Fuzz targets. `go test ./...` runs them on their seed corpus (f.Add and
// testdata/fuzz/<target>/); to fuzz, one target at a time:
//
//	go test -run='^$' -fuzz='^FuzzProcess$' -fuzztime=10m ./pkg/transform
//	go test -run='^$' -fuzz='^FuzzStructure$' -fuzztime=10m ./pkg/transform
//	go test -run='^$' -fuzz='^FuzzSettings$' -fuzztime=10m ./pkg/transform
//	go test -run='^$' -fuzz='^FuzzConfig$' -fuzztime=10m ./pkg/transform
//
// A failing input is written to testdata/fuzz/<target>/ by the fuzzer:
// commit it, it is a regression case from then on. See docs/contributing/fuzzing.md.
// TestMain (main_test.go) bounds the minimization of each new input to
// 2s unless -fuzzminimizetime is given: Go's 60s stalled FuzzProcess.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
// fzAsksBrokerConfig reports whether an input may set the broker-config
// setting (annotation, ConfigMap key or JobSetFlux field), whose TOML
// adds keys of its own to broker.toml.
func fzAsksBrokerConfig(in []byte) bool {
	return bytes.Contains(in, []byte("broker-config")) || bytes.Contains(in, []byte("brokerConfig"))
}

// Keys outside the template's are an injection unless the input asked
// for extra broker TOML (fzAsksBrokerConfig).
func fzCheckGenerated(t *testing.T, rl *fn.ResourceList, extraConfig bool) {
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
		if extraConfig {
			continue
		}
		hCheckKeys(t, "", doc, map[string][]string{
			"":                       {"bootstrap", "resource", "sched-fluxion-qmanager", "access", "kvs"},
			"kvs":                    {"checkpoint-period"},
			"bootstrap":              {"curve_cert", "default_port", "default_bind", "default_connect", "hosts"},
			"bootstrap.hosts":        {"host"},
			"resource":               {"noverify", "config"},
			"resource.config":        {"hosts", "cores", "gpus"},
			"sched-fluxion-qmanager": {"queue-policy"},
			"access":                 {"allow-root-owner", "allow-guest-user"},
		})
	}
}

// FuzzProcess feeds arbitrary bytes to the command's KRM path
// (resourcelist.Parse, Process, Sort, Encode). It must never panic; the
// output always parses back as a ResourceList with every item; items the
// function does not render mean what they meant (decoded, with aliases and
// merge keys resolved); every generated broker.toml parses; rendering the
// output again changes no item, byte for byte.
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
		// Issue 14: anchors, aliases and merge keys across and inside items,
		// duplicate keys at every level.
		rl + "items:\n- {apiVersion: v1, kind: Secret, metadata: {name: z}, data: &s {k: dg==}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: *s}\n",
		rl + "items:\n- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n  metadata: {name: a, annotations: {flux-framework.org/enabled: \"true\"}}\n  spec: {replicatedJobs: [{name: w, template: &t {spec: {template: {spec: {containers: [{name: c, image: b, command: &cmd [run]}, {name: d, image: b, command: *cmd}]}}}}}, {name: v, template: *t}]}\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: d, image: b, command: *cmd}]}}}}\n",
		rl + "items:\n- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n  metadata: {name: a, annotations: {flux-framework.org/enabled: \"true\"}}\n  spec: {replicatedJobs: [{name: w, template: {spec: {template: {spec: {<<: {hostNetwork: true}, containers: [{<<: &c {name: c, image: b}}]}}}}}]}\n",
		rl + "items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {x: a, x: b}}}\nitems: []\n",
		rl + "functionConfig: &f {apiVersion: v1, kind: ConfigMap, metadata: {name: f}, data: {port: \"9000\"}}\nitems:\n- *f\n",
	} {
		f.Add([]byte(s))
	}
	p := hProcessor(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		fzRenderTwice(t, p, in)
	})
}

// fzRenderTwice checks the invariants of FuzzProcess and FuzzStructure.
func fzRenderTwice(t *testing.T, p *transform.Processor, in []byte) {
	rl, err := resourcelist.Parse(in)
	if err != nil {
		return // the command reports it and exits 1
	}
	n := len(rl.Items)
	ok, err := p.Process(rl)
	if err != nil {
		t.Fatalf("Process failed on its own: %v", err)
	}
	out, err := resourcelist.Encode(rl)
	if err != nil {
		// kyaml cannot write some parsed documents back (e.g. odd
		// tags); the command reports it and exits 3.
		return
	}
	back, err := resourcelist.Parse(out)
	if err != nil {
		t.Fatalf("the output is not a ResourceList: %v\n%s", err, out)
	}
	if len(back.Items) != len(rl.Items) || len(rl.Items) < n {
		t.Fatalf("%d items in, %d written, %d read back", n, len(rl.Items), len(back.Items))
	}
	if want, ok := fzUntouched(in); ok {
		got, ok := fzUntouched(out)
		if !ok {
			t.Fatalf("the output does not decode, the input did:\n%s", out)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("items the function does not render changed meaning:\n--- in\n%s\n--- out\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
	if ok {
		fzCheckGenerated(t, back, fzAsksBrokerConfig(in))
	}
	fzCheckWrappedOnce(t, back)
	first := fzItems(t, back)
	back.Results = nil
	again, err := p.Process(back)
	if err != nil || ok && !again {
		t.Fatalf("rendering the output again failed: %v\n%s", err, hDump(back))
	}
	if second := fzItems(t, back); !bytes.Equal(first, second) {
		t.Fatalf("not idempotent:\n--- first\n%s\n--- second\n%s", first, second)
	}
}

// fzUntouched decodes a ResourceList's text as a consumer reads it
// (aliases and merge keys resolved) and returns, sorted, the items the
// function never changes: all but flux-enabled JobSets and objects
// labelled as made by jobset-flux. It reports false when the text does
// not decode (a duplicate key, which the function refuses).
func fzUntouched(text []byte) ([]string, bool) {
	var doc struct {
		Items []any `yaml:"items"`
	}
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, false
	}
	var out []string
	for _, it := range doc.Items {
		m, _ := it.(map[string]any)
		meta, _ := m["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if m["kind"] == "JobSet" && ann != nil && ann[settings.EnabledAnnotation] != nil || labels != nil && labels[plan.ManagedByLabel] == plan.ManagedByValue {
			continue
		}
		out = append(out, fmt.Sprint(it))
	}
	slices.Sort(out)
	return out, true
}

// fzCheckWrappedOnce checks that no pod template holds more than one
// flux-installer init container and no command starts with the
// entrypoint twice: an edit through an alias, or a re-render, doubled
// them.
func fzCheckWrappedOnce(t *testing.T, rl *fn.ResourceList) {
	t.Helper()
	for _, it := range rl.Items {
		if it.GetKind() != "JobSet" {
			continue
		}
		text := it.String()
		if strings.Contains(text, plan.EntrypointPath+", "+plan.EntrypointPath) || strings.Contains(text, "- "+plan.EntrypointPath+"\n") && strings.Count(text, "- "+plan.EntrypointPath+"\n") > strings.Count(text, "name: "+plan.InitContainerName) {
			t.Fatalf("a command is wrapped twice:\n%s", text)
		}
		var obj struct {
			Spec struct {
				ReplicatedJobs []struct {
					Template struct {
						Spec struct {
							Template struct {
								Spec struct {
									InitContainers []struct {
										Name any `yaml:"name"`
									} `yaml:"initContainers"`
								} `yaml:"spec"`
							} `yaml:"template"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"replicatedJobs"`
			} `yaml:"spec"`
		}
		if yaml.Unmarshal([]byte(text), &obj) != nil {
			continue
		}
		for i, rj := range obj.Spec.ReplicatedJobs {
			n := 0
			for _, c := range rj.Template.Spec.Template.Spec.InitContainers {
				if c.Name == plan.InitContainerName {
					n++
				}
			}
			if n > 1 {
				t.Fatalf("replicatedJob %d of %s has %d %s init containers", i, it.GetName(), n, plan.InitContainerName)
			}
		}
	}
}

// FuzzStructure builds whole ResourceLists from the fuzzer's bytes, so
// that every input is YAML that parses and reaches the function: a few
// ConfigMaps, Deployments and selected JobSets in flow style, whose
// values the bytes make anchored, aliases of any earlier anchor (in the
// same item or another, or in the functionConfig), merge keys and
// duplicate keys. The invariants are FuzzProcess's.
func FuzzStructure(f *testing.F) {
	for _, s := range []string{"", "\x00", "\x02\x01\x02\x03", "\x02\x02\x05\x01\x02\x03\x04", "\x03\x01\x02\x01\x02\x02\x03\x03\x04", "\x02\x02\x02\x02\x02\x02\x04\x04\x04\x04"} {
		f.Add([]byte(s))
	}
	p := hProcessor(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fzRenderTwice(t, p, []byte(fzBuild(data)))
	})
}

// fzGen turns bytes into choices (past the end every choice is 0) and
// writes YAML in text order, so that an alias only ever names an anchor
// whose node is already complete before it.
type fzGen struct {
	data    []byte
	anchors int
	done    []int
}

func (g *fzGen) pick(n int) int {
	if len(g.data) == 0 {
		return 0
	}
	c := int(g.data[0]) % n
	g.data = g.data[1:]
	return c
}

// node writes body, or body with an anchor, or an alias of an earlier
// complete anchor.
func (g *fzGen) node(body func() string) string {
	switch g.pick(4) {
	case 1:
		g.anchors++
		n := g.anchors
		text := fmt.Sprintf("&a%d %s", n, body())
		g.done = append(g.done, n)
		return text
	case 2:
		if len(g.done) > 0 {
			return fmt.Sprintf("*a%d", g.done[g.pick(len(g.done))])
		}
	}
	return body()
}

// mapping writes a flow map of the pairs fields writes, which may end
// with a merge key (of an earlier anchor) or with its first key again.
func (g *fzGen) mapping(fields func() string) string {
	return g.node(func() string {
		body := fields()
		switch g.pick(4) {
		case 1:
			if len(g.done) > 0 {
				body += fmt.Sprintf(", <<: *a%d", g.done[g.pick(len(g.done))])
			}
		case 2:
			if k, _, ok := strings.Cut(body, ":"); ok {
				body += ", " + k + ": dup"
			}
		}
		return "{" + body + "}"
	})
}

func (g *fzGen) scalar(v string) string { return g.node(func() string { return v }) }

func (g *fzGen) command() string { return g.node(func() string { return `[sleep, "1"]` }) }

func fzBuild(data []byte) string {
	g := &fzGen{data: data}
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n")
	if g.pick(2) == 1 {
		b.WriteString("functionConfig: " + g.mapping(func() string {
			return "apiVersion: v1, kind: ConfigMap, metadata: {name: f}, data: " + g.mapping(func() string { return `tasks-per-node: "1"` })
		}) + "\n")
	}
	b.WriteString("items:\n")
	for i := range 1 + g.pick(4) {
		var item string
		switch g.pick(3) {
		case 0:
			item = g.mapping(func() string {
				meta := g.mapping(func() string { return fmt.Sprintf("name: cm%d", i) })
				return "apiVersion: v1, kind: ConfigMap, metadata: " + meta + ", data: " + g.mapping(func() string { return "k: " + g.scalar("v") })
			})
		case 1:
			item = g.mapping(func() string {
				c := g.mapping(func() string { return "name: c, image: busybox, command: " + g.command() })
				return fmt.Sprintf("apiVersion: apps/v1, kind: Deployment, metadata: {name: d%d}, spec: {template: {spec: {containers: [%s]}}}", i, c)
			})
		default:
			item = g.mapping(func() string {
				ann := g.mapping(func() string { return `flux-framework.org/enabled: "true"` })
				var rjs []string
				for j := range 1 + g.pick(2) {
					tmpl := g.mapping(func() string {
						return "spec: " + g.mapping(func() string {
							return "completions: 2, template: " + g.mapping(func() string {
								return "spec: " + g.mapping(func() string {
									var containers []string
									for k := range 1 + g.pick(2) {
										containers = append(containers, g.mapping(func() string {
											return fmt.Sprintf("name: c%d, image: busybox, command: %s", k, g.command())
										}))
									}
									return "containers: [" + strings.Join(containers, ", ") + "]"
								})
							})
						})
					})
					rjs = append(rjs, fmt.Sprintf("{name: w%d, template: %s}", j, tmpl))
				}
				return fmt.Sprintf("apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, metadata: {name: js%d, annotations: %s}, spec: {replicatedJobs: [%s]}", i, ann, strings.Join(rjs, ", "))
			})
		}
		b.WriteString("- " + item + "\n")
	}
	return b.String()
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
		if verbatim(name) {
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
		fzCheckGenerated(t, rl, fzAsksBrokerConfig(cfg))
	})
}
