package transform_test

// Issue 19, class 3: every string the function writes into YAML (the
// setup script and the other files of the ConfigMap, the JobSet's own
// annotations, command, args and env, any item it passes through, the
// values quoted in its results) is written so that its own reader and
// kpt's (kyaml) read back exactly that string, and so does libyaml (the
// reader of python3-yaml, Ruby and many tools). Before, a setup text
// whose first line starts with a tab rendered, with exit 0, into a
// literal block every reader refuses, and the same value in an error
// result made the function fail to write anything (exit 3).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// usValues are the strings one input carries: the setup script, another
// annotation, an argument, an env value, and a passed-through
// ConfigMap's data.
type usValues struct{ setup, note, arg, env, data string }

// usScalar writes v for a block map at indent: as a literal block with an
// explicit indentation indicator when block says so and a block can hold
// v (that is how a user writes a first line that starts with a tab),
// else double-quoted.
func usScalar(v string, block bool, indent int) string {
	if !block || !usBlockable(v) {
		return usQuote(v)
	}
	trailing := len(v) - len(strings.TrimRight(v, "\n"))
	body := strings.TrimRight(v, "\n")
	chomp := "-"
	switch {
	case trailing == 1:
		chomp = ""
	case trailing > 1:
		chomp = "+"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "|2%s\n", chomp)
	pad := strings.Repeat(" ", indent+2)
	for _, line := range strings.Split(body, "\n") {
		if line != "" {
			b.WriteString(pad + line)
		}
		b.WriteString("\n")
	}
	for range trailing - 1 {
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// usBlockable reports whether a literal block can hold v: printable text
// and tabs, no carriage return or other line break than \n, something
// other than line breaks.
func usBlockable(v string) bool {
	if strings.Trim(v, "\n") == "" || !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if r != '\n' && r != '\t' && (!unicode.IsPrint(r) || r == '\u2028' || r == '\u2029' || r == '\u0085' || r == '\ufeff' || r > 0xffff) {
			return false
		}
	}
	return true
}

// usQuote writes v double-quoted as YAML reads it (Go's escapes are
// YAML's for valid UTF-8).
func usQuote(v string) string { return strconv.Quote(v) }

// usInput is a ResourceList holding a selected JobSet and a ConfigMap
// with the values, each as a block scalar or quoted as the bits say.
func usInput(v usValues, bits uint8) string {
	b := func(i int) bool { return bits&(1<<i) != 0 }
	return hRLHead + `- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: js
    namespace: ns
    annotations:
      flux-framework.org/enabled: "true"
      flux-framework.org/setup: ` + usScalar(v.setup, b(0), 6) + `
      example.com/note: ` + usScalar(v.note, b(1), 6) + `
  spec:
    replicatedJobs:
    - name: w
      template:
        spec:
          template:
            spec:
              containers:
              - name: app
                image: busybox
                command:
                - run
                - ` + usScalar(v.arg, b(2), 16) + `
                args:
                - ` + usScalar(v.arg, b(3), 16) + `
                env:
                - name: X
                  value: ` + usScalar(v.env, b(4), 18) + `
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: mine
    namespace: ns
  data:
    k: ` + usScalar(v.data, b(5), 4) + `
`
}

// usRead is what a reader makes of a ResourceList's items: the values
// usInput placed, by where they are, and the generated setup.sh.
type usRead map[string]string

// usValuesOf picks the values out of decoded items.
func usValuesOf(items []map[string]any) usRead {
	got := usRead{}
	for _, it := range items {
		meta, _ := it["metadata"].(map[string]any)
		switch fmt.Sprint(it["kind"], "/", meta["name"]) {
		case "JobSet/js":
			ann, _ := meta["annotations"].(map[string]any)
			got["setup"], got["note"] = fmt.Sprint(ann["flux-framework.org/setup"]), fmt.Sprint(ann["example.com/note"])
			c := usContainer(it)
			cmd, args, env := asList(c["command"]), asList(c["args"]), asList(c["env"])
			got["command"], got["args"] = fmt.Sprint(cmd[len(cmd)-1]), fmt.Sprint(args[0])
			got["env"] = fmt.Sprint(env[0].(map[string]any)["value"])
		case "ConfigMap/mine":
			got["data"] = fmt.Sprint(it["data"].(map[string]any)["k"])
		case "ConfigMap/js-flux-entrypoint":
			got["setup.sh"] = fmt.Sprint(it["data"].(map[string]any)["setup.sh"])
		}
	}
	return got
}

func usContainer(js map[string]any) map[string]any {
	rj := asList(js["spec"].(map[string]any)["replicatedJobs"])[0].(map[string]any)
	pod := rj["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return asList(pod["containers"])[0].(map[string]any)
}

// usWant is what every reader must read back from the output.
func usWant(v usValues, rendered bool) usRead {
	want := usRead{"setup": v.setup, "note": v.note, "command": v.arg, "args": v.arg, "env": v.env, "data": v.data}
	if rendered {
		// An empty setting is no setting: no setup.sh then.
		want["setup.sh"] = v.setup
		if v.setup == "" {
			want["setup.sh"] = fmt.Sprint(nil)
		}
	}
	return want
}

// usRender renders the input through the command's KRM path and checks
// what the function's reader and kyaml's read back. It returns the
// output, and false when the input itself does not parse.
func usRender(t *testing.T, v usValues, bits uint8) ([]byte, usRead, bool) {
	t.Helper()
	in := usInput(v, bits)
	var decoded struct {
		Items []map[string]any `yaml:"items"`
	}
	if err := yaml.Unmarshal([]byte(in), &decoded); err != nil || fmt.Sprint(usValuesOf(decoded.Items)) != fmt.Sprint(usWant(v, false)) {
		return nil, nil, false // the test's own writing of the input cannot hold these values
	}
	rl, ok, out, err := hKRM(t, hProcessor(t), []byte(in))
	if err != nil {
		t.Fatalf("the input was refused as a ResourceList: %v", err)
	}
	want := usWant(v, ok)
	if _, err := resourcelist.Parse(out); err != nil {
		t.Fatalf("the function's own reader refuses its output: %v\n%s", err, out)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(out)}).Read()
	if err != nil {
		t.Fatalf("kyaml (kpt's reader) refuses the output: %v\n%s", err, out)
	}
	var items []map[string]any
	for _, n := range nodes {
		m, err := n.Map()
		if err != nil {
			t.Fatalf("kyaml: %v", err)
		}
		items = append(items, m)
	}
	if got := usValuesOf(items); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("kyaml reads back other values:\n got %q\nwant %q\n%s\n%s", got, want, out, hDump(rl))
	}
	return out, want, true
}

// usSeeds are texts that a block scalar, a plain scalar or a reader
// treats specially.
var usSeeds = []string{
	"\techo hi\n", "\t", "\tx\n\ty", " lead\n", "\n\tafter a blank line\n", "a\n\tb\n", "trailing \n", "x\r\ny",
	"---\n...\n", "# not a comment\n", "key: value\n- item\n", "\u2028\u2029\u0085", "é\u00a0\n", "cat <<-EOF\n\tx\n\tEOF\n",
	"y", "on", "0x1f", "", "a\n\n\n",
}

func FuzzUserStrings(f *testing.F) {
	for i, s := range usSeeds {
		f.Add(s, usSeeds[(i+1)%len(usSeeds)], uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, a, b string, bits uint8) {
		usRender(t, usValues{setup: a, note: b, arg: a, env: b, data: a}, bits)
	})
}

// TestUserStringsLibyaml renders every seed in every style and reads the
// outputs with libyaml (python3-yaml's C reader), which must read the
// same values.
func TestUserStringsLibyaml(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import yaml; assert yaml.__with_libyaml__").Run(); err != nil {
		testenv.SkipOrFail(t, "no python3-yaml with libyaml at %s (Debian package python3-yaml, .ci/apt/yaml.txt): %v", python, err)
	}
	dir := t.TempDir()
	wants := map[string]usRead{}
	for i, s := range usSeeds {
		for _, bits := range []uint8{0, 0xff} {
			v := usValues{setup: s, note: usSeeds[(i+3)%len(usSeeds)], arg: s, env: s, data: s}
			out, want, ok := usRender(t, v, bits)
			if !ok {
				continue
			}
			name := fmt.Sprintf("%02d-%d.yaml", i, bits&1)
			if err := os.WriteFile(filepath.Join(dir, name), out, 0o600); err != nil {
				t.Fatal(err)
			}
			wants[name] = want
		}
	}
	// The script prints, per file, the items as JSON, or the error.
	script := `import json, os, sys, yaml
out = {}
for name in sorted(os.listdir(sys.argv[1])):
    try:
        with open(os.path.join(sys.argv[1], name), encoding="utf-8") as f:
            out[name] = {"items": yaml.load(f, Loader=yaml.CSafeLoader)["items"]}
    except Exception as e:
        out[name] = {"error": str(e)}
json.dump(out, sys.stdout)
`
	cmd := exec.Command(python, "-c", script, dir)
	cmd.Stderr = os.Stderr
	text, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var read map[string]struct {
		Items []map[string]any `json:"items"`
		Error string           `json:"error"`
	}
	if err := json.Unmarshal(text, &read); err != nil {
		t.Fatal(err)
	}
	if wants["00-0.yaml"]["setup.sh"] != usSeeds[0] {
		t.Fatalf("the setup text %q was not rendered: %q", usSeeds[0], wants["00-0.yaml"])
	}
	if len(read) != len(wants) || len(wants) < len(usSeeds) {
		t.Fatalf("libyaml read %d files of %d", len(read), len(wants))
	}
	for name, want := range wants {
		r := read[name]
		if r.Error != "" {
			t.Errorf("%s: libyaml refuses the output: %s", name, r.Error)
			continue
		}
		if got := usValuesOf(r.Items); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: libyaml reads back other values:\n got %q\nwant %q", name, got, want)
		}
	}
}

// In standalone mode the command writes each item itself (not through
// Encode): an item the function passes through, holding a block scalar
// the user wrote with an indentation indicator, came out as a block
// without one, which no reader accepts, with exit 0.
func TestStandalonePassThroughBlock(t *testing.T) {
	items, err := resourcelist.Objects("in.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: |2\n    \ttabbed\n    line\n"))
	if err != nil {
		t.Fatal(err)
	}
	rl := &fn.ResourceList{Items: items, FunctionConfig: fn.NewEmptyKubeObject()}
	if ok, err := hProcessor(t).Process(rl); err != nil || !ok {
		t.Fatalf("refused (%v): %s", err, hDump(rl))
	}
	out := rl.Items[0].String()
	var back struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal([]byte(out), &back); err != nil || back.Data["k"] != "\ttabbed\nline\n" {
		t.Errorf("the item reads back as %q (%v):\n%s", back.Data["k"], err, out)
	}
}
