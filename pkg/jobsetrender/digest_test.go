package jobsetrender

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// dgGenerated is a ConfigMap as the function writes one, with its digest.
const dgGenerated = `apiVersion: v1
kind: ConfigMap
metadata:
  name: js-flux-entrypoint
  namespace: hpc
  labels:
    app.kubernetes.io/managed-by: jobset-flux
    flux-framework.org/jobset: js
data:
  broker.toml: |
    [bootstrap]
    curve_cert = "/mnt/flux/install/run/curve.cert"
  entrypoint.sh: |
    #!/bin/bash
    exec flux start
  port: "8050"
`

func dgDigest(t testing.TB, text string) string {
	t.Helper()
	rn, err := yaml.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := digestOf(rn.YNode())
	if !ok {
		t.Fatalf("no digest for\n%s", text)
	}
	return d
}

// TestDigestIgnoresForm: what kpt, kustomize and formatters change
// without changing a value leaves the digest as it was.
func TestDigestIgnoresForm(t *testing.T) {
	want := dgDigest(t, dgGenerated)
	for name, text := range map[string]string{
		"flow style and quotes":                 `{apiVersion: "v1", kind: 'ConfigMap', metadata: {name: js-flux-entrypoint, namespace: "hpc", labels: {app.kubernetes.io/managed-by: jobset-flux, "flux-framework.org/jobset": js}}, data: {"broker.toml": "[bootstrap]\ncurve_cert = \"/mnt/flux/install/run/curve.cert\"\n", entrypoint.sh: "#!/bin/bash\nexec flux start\n", port: '8050'}}`,
		"keys reordered, comments, indentation": "# head\nkind: ConfigMap # kind\ndata:\n    port: \"8050\"\n    entrypoint.sh: |\n        #!/bin/bash\n        exec flux start\n    broker.toml: |\n        [bootstrap]\n        curve_cert = \"/mnt/flux/install/run/curve.cert\"\nmetadata:\n    labels:\n        flux-framework.org/jobset: js\n        app.kubernetes.io/managed-by: jobset-flux\n    namespace: hpc\n    name: js-flux-entrypoint\napiVersion: v1\n# foot\n",
		"kpt's and kustomize's bookkeeping":     strings.Replace(dgGenerated, "  labels:", "  annotations:\n    config.kubernetes.io/path: a.yaml\n    config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/path: a.yaml\n    internal.config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/id: '3'\n    internal.config.kubernetes.io/seqindent: wide\n    config.k8s.io/id: '3'\n    kustomize.config.k8s.io/id: |\n      kind: ConfigMap\n    "+plan.DigestAnnotation+": sha256:anything\n  labels:", 1),
		"an empty annotations map":              strings.Replace(dgGenerated, "  labels:", "  annotations: {}\n  labels:", 1),
		"as kpt pkg get fetched it":             strings.Replace(dgGenerated, "metadata:\n", "metadata: # kpt-merge: hpc/js-flux-entrypoint\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|hpc|js-flux-entrypoint'\n", 1),
	} {
		if got := dgDigest(t, text); got != want {
			t.Errorf("%s: digest %s, want %s", name, got, want)
		}
	}
}

// TestDigestCoversEveryValue: every change of a value, and every field,
// label or annotation added, changes the digest; so does a string that
// becomes another type.
func TestDigestCoversEveryValue(t *testing.T) {
	base := dgDigest(t, dgGenerated)
	seen := map[string]string{base: "the original"}
	for name, edit := range map[string][2]string{
		"name":                     {"name: js-flux-entrypoint", "name: js-flux-entrypoint2"},
		"namespace":                {"namespace: hpc", "namespace: hpc2"},
		"kind":                     {"kind: ConfigMap", "kind: Secret"},
		"a label value":            {"jobset: js", "jobset: jt"},
		"a label added":            {"  labels:\n", "  labels:\n    team: a\n"},
		"an annotation added":      {"  labels:\n", "  annotations:\n    example.com/x: y\n  labels:\n"},
		"kpt's depends-on":         {"  labels:\n", "  annotations:\n    config.kubernetes.io/depends-on: x\n  labels:\n"},
		"a data value":             {"exec flux start", "exec flux stop"},
		"the final newline":        {"entrypoint.sh: |", "entrypoint.sh: |-"},
		"a string made a number":   {`port: "8050"`, `port: 8050`},
		"a data key":               {"port:", "prt:"},
		"immutable":                {"data:\n", "immutable: true\ndata:\n"},
		"type":                     {"data:\n", "type: Opaque\ndata:\n"},
		"binaryData":               {"data:\n", "binaryData: {x: eA==}\ndata:\n"},
		"a null made empty string": {"data:\n", "x: ''\ndata:\n"},
		"a null":                   {"data:\n", "x: null\ndata:\n"},
		"a list":                   {"data:\n", "x: [a, b]\ndata:\n"},
		"a list reordered":         {"data:\n", "x: [b, a]\ndata:\n"},
		"a key moved into a value": {"  port: \"8050\"\n", "  port: \"8050\\n\"\n"},
		"a tagged string":          {`port: "8050"`, `port: !!binary ODA1MA==`},
	} {
		text := strings.Replace(dgGenerated, edit[0], edit[1], 1)
		if text == dgGenerated {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		d := dgDigest(t, text)
		if other, dup := seen[d]; dup {
			t.Errorf("%s: same digest as %s", name, other)
		}
		seen[d] = name
	}
}

// TestDigestRefusesAliases: an object with an alias has no digest (the
// function never writes one, and expanding one may cost without bound).
func TestDigestRefusesAliases(t *testing.T) {
	rn, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: &n a}\ndata: {b: *n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := digestOf(rn.YNode()); ok {
		t.Error("an object with an alias got a digest")
	}
}

// BenchmarkDigest hashes a generated ConfigMap of realistic size.
func BenchmarkDigest(b *testing.B) {
	text := strings.Replace(dgGenerated, "    exec flux start\n", strings.Repeat("    exec flux start # a line of a long script\n", 300), 1)
	rn, err := yaml.Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := digestOf(rn.YNode()); !ok {
			b.Fatal("no digest")
		}
	}
}
