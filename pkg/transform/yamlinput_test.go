package transform_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// Values that look like numbers or booleans to YAML but are strings stay
// strings in the output, and the rendered JobSet keeps the user's exotic
// but valid YAML (anchors, comments, flow style, hex numbers) intact.
func TestExoticYAMLKept(t *testing.T) {
	p := hProcessor(t)
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: js # the name
    annotations: {flux-framework.org/enabled: "true", flux-framework.org/port: "8050"}
  spec:
    replicatedJobs:
    - name: w
      template:
        spec:
          completions: 0x2
          template:
            spec:
              containers:
              - &app {name: app, image: "busybox:1.36", command: ["yes", "on", "0o17", "1e3", "~"]}
`
	rl, ok, out := hRun(t, p, []byte(in))
	if !ok {
		t.Fatalf("refused: %s", hDump(rl))
	}
	js := hFind(rl, "JobSet", "js")
	c := hContainer(t, js, "containers", 0)
	cmd, _, _ := c.NestedStringSlice("command")
	if want := []string{plan.EntrypointPath, "yes", "on", "0o17", "1e3", "~"}; !slices.Equal(cmd, want) {
		t.Errorf("command = %q, want %q", cmd, want)
	}
	if !bytes.Contains(out, []byte("# the name")) {
		t.Error("a comment was lost")
	}
	cm := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix)
	data, _, _ := cm.NestedStringMap("data")
	if !strings.Contains(data[plan.BrokerConfig], "'js-w-0-[0-1]'") {
		t.Errorf("completions 0x2 not read as 2:\n%s", data[plan.BrokerConfig])
	}
}

// Issue 14, point 1: an alias whose anchor is in another item (or in the
// functionConfig) is written out as a copy, so the output always parses
// (items are sorted and written one by one: an alias could come before
// its anchor) and no edit of one item shows through another.
func TestAliasesAcrossItems(t *testing.T) {
	p := hProcessor(t)
	for _, tc := range []struct {
		name, in string
		// untouched items must mean what they meant in the input
		untouched []string
		check     func(t *testing.T, got map[string]any)
	}{
		{
			name: "ConfigMap sorted before the anchor's item, no JobSet",
			in: hRLHead + `- {apiVersion: v1, kind: Secret, metadata: {name: a}, data: &shared {k: dg==}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: z}, data: *shared}
`,
			untouched: []string{"Secret/a", "ConfigMap/z"},
		},
		{
			name: "Deployment aliasing a JobSet's command",
			in: hRLHead + hJobSetItem("js", "", `    replicatedJobs:
    - name: w
      template:
        spec:
          template:
            spec:
              containers:
              - name: app
                image: busybox
                command: &cmd [sleep, "1"]
`) + `- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
  spec: {template: {spec: {containers: [{name: d, image: busybox, command: *cmd}]}}}
`,
			untouched: []string{"Deployment/d"},
			check: func(t *testing.T, got map[string]any) {
				cmd := fmt.Sprint(got["JobSet/js"].(map[string]any)["spec"])
				if !strings.Contains(cmd, plan.EntrypointPath) {
					t.Errorf("the JobSet was not wrapped: %s", cmd)
				}
			},
		},
		{
			name: "item aliasing the functionConfig",
			in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n" +
				"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: flux}, data: &cfg {port: \"8050\"}}\n" +
				"items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: *cfg}\n",
			untouched: []string{"ConfigMap/a"},
		},
		{
			name:      "item that is itself an alias",
			in:        hRLHead + "- &a {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: v}}\n- *a\n",
			untouched: []string{"ConfigMap/a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := hMeaning(t, []byte(tc.in))
			rl, ok, out, err := hKRM(t, p, []byte(tc.in))
			if err != nil || !ok {
				t.Fatalf("refused: %v %s", err, hDump(rl))
			}
			got := hMeaning(t, out)
			for _, id := range tc.untouched {
				if fmt.Sprint(got[id]) != fmt.Sprint(want[id]) {
					t.Errorf("%s changed meaning:\nwant %v\ngot  %v", id, want[id], got[id])
				}
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			_, ok, again, err := hKRM(t, p, out)
			if err != nil || !ok || !bytes.Equal(hItemsOnly(again), hItemsOnly(out)) {
				t.Errorf("a second render changed the output (err %v):\n%s\n---\n%s", err, out, again)
			}
		})
	}
}

// Issue 14, point 2: aliases inside a selected JobSet are expanded before
// it is read and edited (each use gets its own copy, edited or not as
// its place asks), and merge keys are refused with their path: never a
// render that exits 0 with the wrong result.
func TestAliasesAndMergeKeysInsideJobSet(t *testing.T) {
	p := hProcessor(t)
	rj := func(name, template string) string {
		return "    - name: " + name + "\n      template: " + template + "\n"
	}
	const tmpl = `{spec: {template: {spec: {containers: [{name: app, image: busybox, command: [sleep, "1"]}]}}}}`
	for _, tc := range []struct {
		name, annotations, spec string
		// wrapped[i]: replicatedJob i must be wrapped (once) or not at all
		wrapped []bool
		// sidecar: container 1 of replicatedJob 0 must keep this command
		sidecar []any
		// errPath: the JobSet is refused with an error at this path
		errPath string
	}{
		{name: "selected replicatedJob whose template is an alias", spec: rj("w", "&t "+tmpl) + rj("v", "*t"), wrapped: []bool{true, true}},
		{name: "unselected replicatedJob sharing an anchor", annotations: `, flux-framework.org/replicated-jobs: w`, spec: rj("w", "&t "+tmpl) + rj("v", "*t"), wrapped: []bool{true, false}},
		{name: "unselected replicatedJob holding the anchor", annotations: `, flux-framework.org/replicated-jobs: v`, spec: rj("w", "&t "+tmpl) + rj("v", "*t"), wrapped: []bool{false, true}},
		{name: "sidecar sharing the command", spec: rj("w", `{spec: {template: {spec: {containers: [{name: app, image: busybox, command: &cmd [sleep, "1"]}, {name: side, image: busybox, command: *cmd}]}}}}`), wrapped: []bool{true}, sidecar: []any{"sleep", "1"}},
		{name: "container from a merge key", spec: rj("w", `{spec: {template: {spec: {containers: [{<<: {name: app, image: busybox, command: [run]}}]}}}}`),
			errPath: "spec.replicatedJobs[0].template.spec.template.spec.containers[0].<<"},
		{name: "hostNetwork from a merge key", spec: rj("w", `{spec: {template: {spec: {<<: {hostNetwork: true}, containers: [{name: app, image: busybox}]}}}}`),
			errPath: "spec.replicatedJobs[0].template.spec.template.spec.<<"},
		{name: "merge key of an alias", spec: rj("w", `{spec: {template: {spec: &pod {containers: [{name: app, image: busybox}]}}}}`) + rj("v", `{spec: {template: {spec: {<<: *pod, hostNetwork: false}}}}`),
			errPath: "spec.replicatedJobs[1].template.spec.template.spec.<<"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := hRLHead + hJobSetItem("js", tc.annotations, "    replicatedJobs:\n"+tc.spec)
			rl, ok, out, err := hKRM(t, p, []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if tc.errPath != "" {
				if ok {
					t.Fatalf("rendered:\n%s", out)
				}
				if errs := hErrors(rl); len(errs) != 1 || errs[0].Field == nil || errs[0].Field.Path != tc.errPath || !strings.Contains(errs[0].Message, "write the merged fields out") {
					t.Errorf("want one error at %s; got %s", tc.errPath, hDump(rl))
				}
				if got, want := hMeaning(t, out)["JobSet/js"], hMeaning(t, []byte(in))["JobSet/js"]; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("the refused JobSet changed")
				}
				if hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix) != nil {
					t.Errorf("a ConfigMap was generated for a refused JobSet")
				}
				return
			}
			if !ok {
				t.Fatalf("refused: %s", hDump(rl))
			}
			js := hMeaning(t, out)["JobSet/js"]
			for i, want := range tc.wrapped {
				installers, cmds := hWraps(hPod(t, js, i))
				wrapped := len(cmds[0]) > 0 && cmds[0][0] == plan.EntrypointPath
				if want && (installers != 1 || !wrapped || len(cmds[0]) > 1 && cmds[0][1] == plan.EntrypointPath) || !want && (installers != 0 || wrapped) {
					t.Errorf("replicatedJob %d: %d installers, command %v; want wrapped=%v once", i, installers, cmds[0], want)
				}
			}
			if tc.sidecar != nil {
				if _, cmds := hWraps(hPod(t, js, 0)); fmt.Sprint(cmds[1]) != fmt.Sprint(tc.sidecar) {
					t.Errorf("sidecar command %v, want %v", cmds[1], tc.sidecar)
				}
			}
			_, ok, again, err := hKRM(t, p, out)
			if err != nil || !ok || !bytes.Equal(hItemsOnly(again), hItemsOnly(out)) {
				t.Errorf("a second render changed the output (err %v):\n%s\n---\n%s", err, out, again)
			}
		})
	}
}

// Issue 14, point 3: a key written twice is refused wherever it is: at the
// top of the ResourceList (the whole input: the second items list was
// dropped, the first functionConfig won), in the functionConfig (the
// whole input), in any item (an error on that item, with the path).
func TestDuplicateKeysEverywhere(t *testing.T) {
	p := hProcessor(t)
	cm := "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: v}}\n"
	for _, tc := range []struct {
		name, in, phrase string
	}{
		{"two items keys", hRLHead + cm + "items:\n" + cm, `"items" appears twice`},
		{"two functionConfig keys", hRLHead + cm + "functionConfig: {apiVersion: v1, kind: ConfigMap, data: {port: \"1\"}}\nfunctionConfig: {apiVersion: v1, kind: ConfigMap}\n", `"functionConfig" appears twice`},
		{"two kind keys", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nkind: ResourceList\nitems: []\n", `"kind" appears twice`},
		{"key twice in the functionConfig", hRLHead + cm + "functionConfig: {apiVersion: v1, kind: ConfigMap, data: {port: \"1\", port: \"2\"}}\n", "functionConfig.data.port appears twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := hKRM(t, p, []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.phrase) {
				t.Errorf("err = %v, want one saying %s", err, tc.phrase)
			}
		})
	}
	t.Run("key twice in an untouched item", func(t *testing.T) {
		in := hRLHead + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {x: a, x: b}}}\n"
		rl, ok, _, err := hKRM(t, p, []byte(in))
		if err != nil || ok {
			t.Fatalf("accepted (err %v)", err)
		}
		errs := hErrors(rl)
		if len(errs) != 1 || errs[0].ResourceRef == nil || errs[0].ResourceRef.Name != "a" || errs[0].Field == nil || errs[0].Field.Path != "metadata.labels.x" {
			t.Errorf("want one error on ConfigMap a at metadata.labels.x; got %s", hDump(rl))
		}
	})
}

// Aliases that cannot be expanded are refused, quickly: an alias inside
// its own anchor (which yaml.v3's node parser accepts), and a "billion
// laughs" of aliases of aliases across items.
func TestAliasCycleAndLaughs(t *testing.T) {
	p := hProcessor(t)
	in := hRLHead + hJobSetItem("js", "", "    replicatedJobs:\n    - name: w\n      template: {spec: {template: {spec: {containers: &c [{name: app, image: b, command: [run], args: *c}]}}}}\n")
	start := time.Now()
	rl, ok, _, err := hKRM(t, p, []byte(in))
	if err != nil || ok {
		t.Fatalf("a cycle was accepted (err %v)", err)
	}
	if errs := hErrors(rl); len(errs) != 1 || !strings.Contains(errs[0].Message, "refers to a node that contains it") {
		t.Errorf("want one error about the cycle, got %s", hDump(rl))
	}
	var laughs strings.Builder
	laughs.WriteString(hRLHead + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: l0}, data: &l0 {k: v}}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&laughs, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: l%d}, data: &l%d {a: *l%d, b: *l%d, c: *l%d, d: *l%d, e: *l%d, f: *l%d, g: *l%d, h: *l%d}}\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	if _, _, _, err := hKRM(t, p, []byte(laughs.String())); err == nil || !strings.Contains(err.Error(), "too many nodes") {
		t.Errorf("billion laughs: err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}
