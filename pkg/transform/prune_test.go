package transform_test

// The hostile catalogue of pruning (issue 19, class 1): objects labelled
// as generated for a JobSet that is gone, which the function must keep
// unless it wrote exactly that object and nothing names it any more.

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// pOrphans renders JobSet team/gone and returns its ConfigMap and Secret
// exactly as the function wrote them, and the rendered JobSet: what a kpt
// package holds after a render, before the JobSet is renamed or removed.
func pOrphans(t testing.TB) (cm, secret, js string) {
	t.Helper()
	rl, ok, _ := hRun(t, hProcessor(t), hList(t, nil, hJobSet{name: "gone", namespace: "team"}.object()))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(rl))
	}
	return hFind(rl, "ConfigMap", "gone-flux-entrypoint").String(), hFind(rl, "Secret", "gone-flux-curve").String(), hFind(rl, "JobSet", "gone").String()
}

// pItems is a ResourceList of the given documents, with a function config
// (a ConfigMap's data, in YAML) unless it is "".
func pItems(config string, docs ...string) []byte {
	var b strings.Builder
	b.WriteString(hRLHead)
	for _, d := range docs {
		b.WriteString(indentDoc(d))
	}
	if config != "" {
		b.WriteString("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: flux}\n  data:\n" + indentLines(config, "    "))
	}
	return []byte(b.String())
}

// indentDoc makes a YAML document a list item of items:.
func indentDoc(doc string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(doc, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString("- " + l)
		} else {
			b.WriteString("  " + l)
		}
	}
	return b.String() + "\n"
}

func indentLines(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
		b.WriteString(prefix + l)
	}
	return b.String() + "\n"
}

// pEdit parses doc, applies edit to it, and writes it back.
func pEdit(t testing.TB, doc string, edit func(rn *yaml.RNode) error) string {
	t.Helper()
	rn, err := yaml.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := edit(rn); err != nil {
		t.Fatal(err)
	}
	return rn.MustString()
}

// pSet sets the string at the path of keys, creating maps on the way.
func pSet(value string, keys ...string) func(*yaml.RNode) error {
	return pSetNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: value}, keys...)
}

func pSetNode(v *yaml.Node, keys ...string) func(*yaml.RNode) error {
	return func(rn *yaml.RNode) error {
		return rn.PipeE(yaml.LookupCreate(yaml.MappingNode, keys[:len(keys)-1]...), yaml.SetField(keys[len(keys)-1], yaml.NewRNode(v)))
	}
}

// pYAML is an object as a YAML document.
func pYAML(t testing.TB, obj map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A JobSet of the same namespace that names the orphans in its own way.
const pUserJobSet = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: other
  namespace: team
  annotations:
    flux-framework.org/enabled: "true"
    flux-framework.org/curve-secret: gone-flux-curve
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        completions: 2
        template:
          spec:
            containers:
            - {name: app, image: busybox:1.36, command: [sleep, "1"]}
`

// pPod is a Pod in namespace ns ("" for none) with the given spec.
func pPod(ns, spec string) string {
	meta := "  name: user\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	return "apiVersion: v1\nkind: Pod\nmetadata:\n" + meta + "spec:\n" + indentLines(spec, "  ")
}

type pruneCase struct {
	name string
	// cm and secret edit the orphans (nil: as the function wrote them).
	cm, secret func(t testing.TB, doc string) string
	// extra items and a function config (ConfigMap data).
	extra  []string
	config string
	// Which orphan the render removes, and the phrase of the warning on
	// each one it keeps.
	removeCM, removeSecret bool
	phrase                 string
}

func edits(fs ...func(*yaml.RNode) error) func(testing.TB, string) string {
	return func(t testing.TB, doc string) string {
		for _, f := range fs {
			doc = pEdit(t, doc, f)
		}
		return doc
	}
}

func replaced(text string) func(testing.TB, string) string {
	return func(testing.TB, string) string { return text }
}

const (
	noDigest = "has no " + plan.DigestAnnotation + " annotation"
	changed  = "is no longer what jobset-flux wrote"
	refers   = "still refers to it at"
)

var userConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: gone-flux-entrypoint
  namespace: team
  labels:
    app.kubernetes.io/managed-by: jobset-flux
    flux-framework.org/jobset: gone
data:
  app.conf: mine
`

func pruneCatalogue(t testing.TB, js string) []pruneCase {
	digestOf := func(doc string) string {
		rn, err := yaml.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		return rn.GetAnnotations()[plan.DigestAnnotation]
	}
	cm, _, _ := pOrphans(t)
	off := pEdit(t, js, pSet("false", "metadata", "annotations", "flux-framework.org/enabled"))
	return []pruneCase{
		// What the function wrote, as kpt and kustomize pass it back.
		{name: "as written", removeCM: true, removeSecret: true},
		{name: "with kpt's and kustomize's bookkeeping", removeCM: true, removeSecret: true,
			cm: edits(pSet("configmap_gone-flux-entrypoint.yaml", "metadata", "annotations", "config.kubernetes.io/path"),
				pSet("0", "metadata", "annotations", "internal.config.kubernetes.io/index"),
				pSet("compact", "metadata", "annotations", "internal.config.kubernetes.io/seqindent"),
				pSet("7", "metadata", "annotations", "config.k8s.io/id")),
			secret: edits(pSet("kind: Secret\nname: gone-flux-curve\n", "metadata", "annotations", "kustomize.config.k8s.io/id"),
				pSet("/pkg", "metadata", "annotations", "internal.config.kubernetes.io/package-path"))},
		{name: "as kpt pkg get fetched them", removeCM: true, removeSecret: true,
			cm: func(t testing.TB, doc string) string {
				return pEdit(t, strings.Replace(doc, "metadata:\n", "metadata: # kpt-merge: team/gone-flux-entrypoint\n", 1), pSet("|ConfigMap|team|gone-flux-entrypoint", "metadata", "annotations", "internal.kpt.dev/upstream-identifier"))
			},
			secret: edits(pSet("|Secret|team|gone-flux-curve", "metadata", "annotations", "internal.kpt.dev/upstream-identifier"))},
		{name: "reformatted, reordered, commented", removeCM: true, removeSecret: true,
			cm:     func(t testing.TB, doc string) string { return "# a comment a user wrote\n" + reflow(t, doc) },
			secret: func(t testing.TB, doc string) string { return reflow(t, doc) }},

		// Issue 19's cases: objects the function did not write, or that
		// something changed since.
		{name: "user ConfigMap with the labels and its own data", cm: replaced(userConfigMap), removeSecret: true, phrase: noDigest},
		{name: "user ConfigMap with the labels and a copied digest", removeSecret: true, phrase: changed,
			cm: replaced(strings.Replace(userConfigMap, "\ndata:", "\n  annotations:\n    "+plan.DigestAnnotation+": "+digestOf(cm)+"\ndata:", 1))},
		{name: "generated ConfigMap edited", removeSecret: true, phrase: changed,
			cm: edits(pSet("# mine now\n", "data", "broker.toml"))},
		{name: "generated ConfigMap with a key added", removeSecret: true, phrase: changed,
			cm: edits(pSet("echo mine\n", "data", "extra.sh"))},
		{name: "Secret with an extra label", removeCM: true, phrase: changed,
			secret: edits(pSet("hpc", "metadata", "labels", "team"))},
		// No longer labelled as generated: kept, and nothing to say.
		{name: "Secret with a label changed", removeCM: true, phrase: "",
			secret: edits(pSet("JobSet-Flux", "metadata", "labels", "app.kubernetes.io/managed-by"))},
		{name: "Secret of its own type", removeCM: true, phrase: changed,
			secret: edits(pSet("example.com/curve", "type"))},
		{name: "immutable Secret", removeCM: true, phrase: changed,
			secret: edits(pSetNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: "true"}, "immutable"))},
		{name: "Secret with another tool's annotations", removeCM: true, phrase: changed,
			secret: edits(pSet("true", "metadata", "annotations", "sealedsecrets.bitnami.com/managed"))},
		{name: "Secret with kpt's depends-on", removeCM: true, phrase: changed,
			secret: edits(pSet("/namespaces/team/Secret/root", "metadata", "annotations", "config.kubernetes.io/depends-on"))},
		{name: "Secret with stringData", removeCM: true, phrase: changed,
			secret: edits(pSet("mine", "stringData", "note"))},
		{name: "Secret with its certificate replaced", removeCM: true, phrase: changed,
			secret: edits(pSet("bWluZQ==", "data", "curve.cert"))},
		{name: "Secret copied under another name", removeCM: true, removeSecret: false, phrase: changed,
			secret: edits(pSet("gone-flux-curve-copy", "metadata", "name"))},
		{name: "Secret moved to another namespace", removeCM: true, phrase: changed,
			secret: edits(pSet("elsewhere", "metadata", "namespace"))},
		{name: "digest annotation tampered", removeCM: true, phrase: changed,
			secret: edits(pSet("sha256:00", "metadata", "annotations", plan.DigestAnnotation))},
		{name: "alias inside", removeSecret: true, phrase: changed,
			cm: func(t testing.TB, doc string) string {
				return strings.Replace(doc, "  name: gone-flux-entrypoint\n", "  name: &n gone-flux-entrypoint\n", 1) + "binaryData: {x: *n}\n"
			}},
		// Outputs of versions before the digest: kept (docs/user/kustomize-kpt.md).
		{name: "output of an earlier version (no digest)", phrase: noDigest,
			cm:     edits(dropDigest),
			secret: edits(dropDigest)},

		// What the function wrote, but still named by something.
		{name: "Secret another JobSet uses through curve-secret", removeCM: true, phrase: `JobSet "team/other" ` + refers + " metadata.annotations[flux-framework.org/curve-secret]",
			extra: []string{pUserJobSet}},
		{name: "Secret the function config names as curve-secret", removeCM: true, phrase: refers,
			config: "curve-secret: gone-flux-curve\n"},
		{name: "ConfigMap mounted as a volume", removeSecret: true, phrase: `Pod "team/user" ` + refers + " spec.volumes[0].configMap.name",
			extra: []string{pPod("team", "volumes:\n- name: c\n  configMap: {name: gone-flux-entrypoint}\ncontainers: [{name: a, image: busybox}]\n")}},
		{name: "Secret mounted as a volume by a Pod without a namespace", removeCM: true, phrase: refers,
			extra: []string{pPod("", "volumes:\n- name: c\n  secret: {secretName: gone-flux-curve}\ncontainers: [{name: a, image: busybox}]\n")}},
		{name: "Secret in a projected volume", removeCM: true, phrase: refers,
			extra: []string{pPod("team", "volumes:\n- name: p\n  projected:\n    sources:\n    - secret: {name: gone-flux-curve}\ncontainers: [{name: a, image: busybox}]\n")}},
		{name: "both through envFrom and a key reference", phrase: refers,
			extra: []string{pPod("team", "containers:\n- name: a\n  image: busybox\n  envFrom: [{secretRef: {name: gone-flux-curve}}]\n  env: [{name: X, valueFrom: {configMapKeyRef: {name: gone-flux-entrypoint, key: init.sh}}}]\n")}},
		{name: "Secret named by namespace/name in another namespace", removeCM: true, phrase: refers,
			extra: []string{"apiVersion: example.com/v1\nkind: Copy\nmetadata: {name: c, namespace: ops}\nspec: {from: team/gone-flux-curve}\n"}},
		// Switching a rendered JobSet off removes its rendering
		// (unrenderDisabled), so nothing mounts the two any more.
		{name: "the switched-off JobSet mounts neither once unrendered", removeCM: true, removeSecret: true,
			extra: []string{off}},
		// A name used in another namespace does not keep anything.
		{name: "Secret of the same name mounted in another namespace", removeCM: true, removeSecret: true,
			extra: []string{pPod("ops", "volumes:\n- name: c\n  secret: {secretName: gone-flux-curve}\ncontainers: [{name: a, image: busybox}]\n")}},
	}
}

func dropDigest(rn *yaml.RNode) error {
	return rn.PipeE(yaml.Lookup("metadata", "annotations"), yaml.Clear(plan.DigestAnnotation))
}

// reflow writes doc again in flow style with its keys reversed: every
// value stays, the text changes.
func reflow(t testing.TB, doc string) string {
	t.Helper()
	rn, err := yaml.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i, j := 0, len(n.Content)-2; i < j; i, j = i+2, j-2 {
				n.Content[i], n.Content[j] = n.Content[j], n.Content[i]
				n.Content[i+1], n.Content[j+1] = n.Content[j+1], n.Content[i+1]
			}
		}
		if n.Kind == yaml.ScalarNode && !strings.Contains(n.Value, "\n") && n.Tag == "!!str" {
			n.Style = yaml.DoubleQuotedStyle
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(rn.YNode())
	rn.YNode().Style = yaml.FlowStyle
	return rn.MustString()
}

// TestPruneCatalogue: each orphan is removed only when the function
// wrote exactly it and nothing names it; every other one comes out
// byte for byte as it went in, with a warning that says why; a second
// render changes nothing.
func TestPruneCatalogue(t *testing.T) {
	cm, secret, js := pOrphans(t)
	for _, c := range pruneCatalogue(t, js) {
		t.Run(c.name, func(t *testing.T) {
			cmDoc, secretDoc := cm, secret
			if c.cm != nil {
				cmDoc = c.cm(t, cm)
			}
			if c.secret != nil {
				secretDoc = c.secret(t, secret)
			}
			docs := append([]string{pYAML(t, hJobSet{name: "two", namespace: "team"}.object()), cmDoc, secretDoc}, c.extra...)
			in := pItems(c.config, docs...)
			rl, ok, out := hRun(t, hProcessor(t), in)
			if !ok {
				t.Fatalf("render failed:\n%s", hDump(rl))
			}
			pCheck(t, rl, in, "ConfigMap", c.removeCM, c.phrase)
			pCheck(t, rl, in, "Secret", c.removeSecret, c.phrase)
			again, _ := rerender(t, hProcessor(t), out)
			if b, err := again.ToYAML(); err != nil || string(hItemsOnly(b)) != string(hItemsOnly(out)) {
				t.Errorf("a second render changed the output (%v)", err)
			}
		})
	}
}

// pCheck checks what became of the orphan of kind: removed with an info,
// or kept unchanged with a warning saying phrase (with none when phrase
// is "": it no longer claims to be generated).
func pCheck(t *testing.T, rl *fn.ResourceList, in []byte, kind string, removed bool, phrase string) {
	t.Helper()
	orig, err := fn.ParseResourceList(in)
	if err != nil {
		t.Fatal(err)
	}
	var want *fn.KubeObject
	for _, it := range orig.Items {
		if it.GetKind() == kind && it.GetNamespace() != "ops" && it.GetAnnotation("flux-framework.org/enabled") == "" && it.GetLabel(plan.JobSetLabel) == "gone" {
			want = it
		}
	}
	var got *fn.KubeObject
	for _, it := range rl.Items {
		if it.GetKind() == kind && it.GetName() == want.GetName() && it.GetNamespace() == want.GetNamespace() {
			got = it
		}
	}
	var said []*fn.Result
	for _, r := range rl.Results {
		if r.ResourceRef != nil && r.ResourceRef.Kind == kind && r.ResourceRef.Name == want.GetName() {
			said = append(said, r)
		}
	}
	switch {
	case removed && got != nil:
		t.Errorf("the %s %s was kept, want it removed:\n%s", kind, want.GetName(), hDump(rl))
	case removed && (len(said) != 1 || said[0].Severity != fn.Info || !strings.HasPrefix(said[0].Message, "removed: jobset-flux generated this "+kind)):
		t.Errorf("the removed %s has no removal info:\n%s", kind, hDump(rl))
	case removed:
	case got == nil:
		t.Errorf("the %s %s was removed, want it kept:\n%s", kind, want.GetName(), hDump(rl))
	case got.String() != want.String():
		t.Errorf("the kept %s changed:\n--- in\n%s\n--- out\n%s", kind, want.String(), got.String())
	case phrase == "" && len(said) != 0:
		t.Errorf("the %s is not labelled as generated, yet the function says:\n%s", kind, hDump(rl))
	case phrase == "":
	case len(said) != 1 || said[0].Severity != fn.Warning || !strings.HasPrefix(said[0].Message, "kept: ") || !strings.Contains(said[0].Message, phrase):
		t.Errorf("the kept %s has no warning saying %q:\n%s", kind, phrase, hDump(rl))
	}
}
