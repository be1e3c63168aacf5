package transform_test

// Hostile input through the Processor: injection payloads in every value
// a user controls, the instance-size limits, and the security properties
// of the output. The catalogue of malformed inputs, run through the
// command, is in fn/main_test.go.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobset-flux/jobset-flux/internal/cputime"
	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// hSeed is public: it only makes these tests' keys reproducible.
const hSeed = "hostile-transform-seed-0123456789abcdef"

func hProcessor(t testing.TB) *transform.Processor {
	t.Helper()
	p, err := transform.New(transform.Options{Seed: []byte(hSeed)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hJobSet describes a JobSet; the zero value of a field means a harmless default.
type hJobSet struct {
	name, namespace, rjName, container, subdomain string
	replicas, completions                         int
	ann                                           map[string]string
	env                                           map[string]string
	command, args                                 []string
	podSecurity, containerSecurity                map[string]any
}

func (j hJobSet) object() map[string]any {
	or := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	replicas, completions := j.replicas, j.completions
	if replicas == 0 {
		replicas = 1
	}
	if completions == 0 {
		completions = 2
	}
	command := []string{"sleep", "1"}
	if j.command != nil {
		command = j.command
	}
	rj := jobsettest.Job(or(j.rjName, "w")).Replicas(replicas).Completions(completions).
		ContainerField("name", or(j.container, "app")).
		ContainerField("image", "busybox:1.36").
		ContainerField("command", command)
	if j.args != nil {
		rj.ContainerField("args", j.args)
	}
	var env []any
	for _, k := range slices.Sorted(mapKeys(j.env)) {
		env = append(env, map[string]any{"name": k, "value": j.env[k]})
	}
	if env != nil {
		rj.ContainerField("env", env)
	}
	if j.containerSecurity != nil {
		rj.ContainerField("securityContext", j.containerSecurity)
	}
	if j.podSecurity != nil {
		rj.PodField("securityContext", j.podSecurity)
	}
	js := jobsettest.New(or(j.name, "js")).Jobs(rj)
	for k, v := range j.ann {
		js.Annotation(k, v)
	}
	if j.namespace != "" {
		js.Namespace(j.namespace)
	}
	if j.subdomain != "" {
		js.Spec("network", map[string]any{"subdomain": j.subdomain})
	}
	return js.Obj()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// hList marshals a ResourceList with the given items and config (nil for none).
func hList(t testing.TB, config map[string]any, items ...map[string]any) []byte {
	t.Helper()
	anyItems := make([]any, len(items))
	for i, it := range items {
		anyItems[i] = it
	}
	rl := map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": anyItems}
	if config != nil {
		rl["functionConfig"] = config
	}
	b, err := yaml.Marshal(rl)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hRun is the command's KRM path: parse, process, write. It also checks
// that the streaming path writes the same (stream_test.go).
func hRun(t testing.TB, p *transform.Processor, in []byte) (*fn.ResourceList, bool, []byte) {
	t.Helper()
	return hRunChecked(t, p, in, true)
}

// hRunChecked is hRun, with the streaming check only when streamCheck is
// set. TestInjectionIntoSettings leaves it off for the variants that put
// the same payload bytes into the list again (after or before a valid
// value) and for environment sources (the list is the baseline's each
// time): 3,969 of its 5,832 runs, which added about 18 s to the
// package's 45 s (go test alone on 2 CPUs) for no bytes the streaming
// scanner had not read in the 1,863 runs still checked.
func hRunChecked(t testing.TB, p *transform.Processor, in []byte, streamCheck bool) (*fn.ResourceList, bool, []byte) {
	t.Helper()
	if streamCheck {
		stSame(t, "hostile", in)
	}
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		t.Fatalf("parsing the input: %v", err)
	}
	ok, err := p.Process(rl)
	if err != nil {
		t.Fatalf("Process: %v", err)
	}
	out, err := rl.ToYAML()
	if err != nil {
		t.Fatalf("writing the output: %v", err)
	}
	return rl, ok, out
}

func hFind(rl *fn.ResourceList, kind, name string) *fn.KubeObject {
	for _, it := range rl.Items {
		if it.GetKind() == kind && it.GetName() == name {
			return it
		}
	}
	return nil
}

func hErrors(rl *fn.ResourceList) []*fn.Result {
	var errs []*fn.Result
	for _, r := range rl.Results {
		if r.Severity == fn.Error {
			errs = append(errs, r)
		}
	}
	return errs
}

// hPayloads are values that try to escape from where they are written.
func hPayloads() map[string]string {
	return map[string]string{
		"command substitution": "$(id)",
		"backticks":            "`id`",
		"semicolon":            "x;id",
		"pipe":                 "x|id",
		"ampersand":            "x&id",
		"redirect":             "x>/etc/passwd",
		"variable":             "${PATH}",
		"newline":              "x\nid",
		"carriage return":      "x\rid",
		"tab":                  "x\tid",
		"NUL":                  "x\x00id",
		"single quote":         "x'id'",
		"double quote":         `x"id"`,
		"backslash":            `x\id`,
		"TOML table":           "\"]\n[bootstrap]",
		"TOML literal table":   "']\n[bootstrap]\nx='",
		"TOML key":             "x\"\ncurve_cert = \"/tmp/evil",
		"percent h":            "%h",
		"percent p":            "%p",
		"double percent":       "%%",
		"Cyrillic e":           "\u0435th0",
		"fullwidth digits":     "\uff18\uff10\uff15\uff10",
		"zero-width space":     "eth\u200b0",
		"right-to-left mark":   "eth0\u200f",
		"glob":                 "*.*",
		"space":                "x id",
		"leading dash":         "--help",
		"very long":            strings.Repeat("a", 1<<20),
	}
}

// hValid is a valid value of every setting, to prefix or suffix payloads with.
var hValid = map[string]string{
	"view-image":      "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble",
	"tasks-per-node":  "2",
	"cores-per-node":  "4",
	"gpus-per-node":   "0",
	"network-device":  "eth0",
	"port":            "8050",
	"queue-policy":    "easy",
	"connect-timeout": "5s",
	"topology":        "kary:64",
	"replicated-jobs": "w",
	"container":       "app",
	"interactive":     "false",
	"run-options":     "-o pmi=pmix",
	"curve-secret":    "my-secret",
	"shm-size":        "1Gi",
}

// hUnsafe are the characters no accepted setting value may hold: they
// mean something to a shell, to TOML, or to a bootstrap URI template.
func hUnsafe(v string) (rune, bool) {
	for _, r := range v {
		if r < ' ' || r == 0x7f || r > unicode.MaxASCII || strings.ContainsRune("'\"$`;|&<>(){}\\%!#~", r) {
			return r, true
		}
	}
	return 0, false
}

// hOutsideQuotes returns the parts of a bash script outside single
// quotes and outside comment lines: where a value would be interpreted.
func hOutsideQuotes(script string) string {
	var out strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		inSingle, inDouble := false, false
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case inSingle:
				if c == '\'' {
					inSingle = false
				}
				continue
			case c == '\\' && i+1 < len(line):
				out.WriteByte(c)
				out.WriteByte(line[i+1])
				i++
				continue
			case c == '"':
				inDouble = !inDouble
			case c == '\'' && !inDouble:
				inSingle = true
				out.WriteString("''")
				continue
			}
			out.WriteByte(c)
		}
		out.WriteByte('\n')
	}
	return out.String()
}

// hOutsideTOMLStrings returns a TOML document without its string values
// (single-line basic and literal strings, which is all the templates write).
func hOutsideTOMLStrings(doc string) string {
	var out strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch c {
			case '\'':
				j := strings.IndexByte(line[i+1:], '\'')
				if j < 0 {
					out.WriteString(line[i:])
					i = len(line)
					continue
				}
				out.WriteString("''")
				i += j + 1
				continue
			case '"':
				j := i + 1
				for j < len(line) && line[j] != '"' {
					if line[j] == '\\' {
						j++
					}
					j++
				}
				out.WriteString(`""`)
				i = j
				continue
			}
			out.WriteByte(c)
		}
		out.WriteByte('\n')
	}
	return out.String()
}

// hCheckFiles checks the generated files of an accepted render: the
// payload appears in no script outside single quotes, in no TOML outside a
// string, broker.toml parses with go-toml and has exactly the expected
// structure, and bash accepts both scripts.
func hCheckFiles(t *testing.T, cm *fn.KubeObject, payload string, baseline map[string]string) {
	t.Helper()
	data, _, err := cm.NestedStringMap("data")
	if err != nil {
		t.Fatal(err)
	}
	needle := payload
	// more reports whether the payload occurs more often than in the
	// files of a plain JobSet (the templates' own "${PATH}" or "%p").
	more := func(text, base string) bool {
		return len(needle) > 1 && strings.Count(text, needle) > strings.Count(base, needle)
	}
	for _, key := range []string{plan.InitScript, plan.EntrypointScript} {
		script := data[key]
		if more(hOutsideQuotes(script), hOutsideQuotes(baseline[key])) {
			t.Errorf("%s holds the payload %q outside single quotes", key, short(needle))
		}
		bash, err := exec.LookPath("bash")
		if err != nil && testenv.CI() {
			t.Fatalf("bash -n %s: %v (required in CI)", key, err)
		}
		if err == nil && !hBashChecked[script] {
			hBashChecked[script] = true
			cmd := exec.Command(bash, "-n")
			cmd.Stdin = strings.NewReader(script)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("bash -n %s: %v\n%s", key, err, out)
			}
		}
	}
	broker := data[plan.BrokerConfig]
	if more(hOutsideTOMLStrings(broker), hOutsideTOMLStrings(baseline[plan.BrokerConfig])) {
		t.Errorf("broker.toml holds the payload %q outside a string", short(needle))
	}
	var doc map[string]any
	if err := toml.Unmarshal([]byte(broker), &doc); err != nil {
		t.Fatalf("broker.toml does not parse: %v\n%s", err, broker)
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
	bootstrap := doc["bootstrap"].(map[string]any)
	if bootstrap["curve_cert"] != plan.CertPath {
		t.Errorf("curve_cert is %v", bootstrap["curve_cert"])
	}
}

// hBashChecked remembers the scripts bash -n already accepted: most
// payloads never reach a script, which is then the same every time.
var hBashChecked = map[string]bool{}

// hCheckKeys walks a parsed TOML document and fails on any key that the
// templates do not write (an injected table or key).
func hCheckKeys(t *testing.T, path string, v any, allowed map[string][]string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if !slices.Contains(allowed[path], k) {
				t.Errorf("broker.toml has an unexpected key %q in %q", k, path)
				continue
			}
			hCheckKeys(t, strings.TrimPrefix(path+"."+k, "."), child, allowed)
		}
	case []any:
		for _, child := range v {
			hCheckKeys(t, path, child, allowed)
		}
	}
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// hOutcome runs one JobSet (and config) and checks the invariants that
// hold whether the input is accepted or refused. It returns the
// generated ConfigMap, or nil when the JobSet was refused.
func hOutcome(t *testing.T, p *transform.Processor, js hJobSet, config map[string]any, payload string, baseline map[string]string) *fn.KubeObject {
	t.Helper()
	return hOutcomeChecked(t, p, js, config, payload, baseline, true)
}

// hOutcomeChecked is hOutcome, with hRunChecked's streaming check only
// when streamCheck is set.
func hOutcomeChecked(t *testing.T, p *transform.Processor, js hJobSet, config map[string]any, payload string, baseline map[string]string, streamCheck bool) *fn.KubeObject {
	t.Helper()
	obj := js.object()
	in := hList(t, config, obj)
	before, err := fn.ParseResourceList(in)
	if err != nil {
		t.Fatal(err)
	}
	rl, ok, out := hRunChecked(t, p, in, streamCheck)
	errs := hErrors(rl)
	if ok != (len(errs) == 0) {
		t.Fatalf("Process returned %v with %d errors", ok, len(errs))
	}
	for _, r := range rl.Results {
		if strings.ContainsFunc(r.Message, unicode.IsControl) {
			t.Errorf("a result message holds a control character: %q", short(r.Message))
		}
		if len(r.Message) > 2048 {
			t.Errorf("a result message is %d bytes long", len(r.Message))
		}
	}
	name := before.Items[0].GetName()
	got := hFind(rl, "JobSet", name)
	cm := hFind(rl, "ConfigMap", name+plan.ConfigMapSuffix)
	if !ok {
		if got == nil || got.String() != before.Items[0].String() {
			t.Errorf("the refused JobSet changed")
		}
		if cm != nil || len(rl.Items) != 1 {
			t.Errorf("objects were generated for a refused JobSet")
		}
		return nil
	}
	if cm == nil {
		t.Fatalf("accepted but no ConfigMap:\n%s", out)
	}
	hCheckFiles(t, cm, payload, baseline)
	// Nothing outside the ConfigMap's files is ever written into a script,
	// and the JobSet's own values stay exactly as they were (YAML-quoted).
	if _, err := fn.ParseResourceList(out); err != nil {
		t.Fatalf("the output does not parse back: %v", err)
	}
	return cm
}

// hBaseline returns the files of a plain JobSet.
func hBaseline(t *testing.T, p *transform.Processor) map[string]string {
	t.Helper()
	rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{}.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	data, _, err := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix).NestedStringMap("data")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Every setting, from every source, with every payload alone and glued to
// a valid value: refused with an error that does not echo control
// characters, or accepted with a value that is safe everywhere it goes.
func TestInjectionIntoSettings(t *testing.T) {
	p := hProcessor(t)
	baseline := hBaseline(t, p)
	payloads := hPayloads()
	accepted := 0
	for _, name := range settings.Names() {
		for pname, payload := range payloads {
			if len(payload) > 1000 {
				continue // TestMegabyteValues
			}
			variants := map[string]string{
				"alone":                payload,
				"after a valid value":  hValid[name] + payload,
				"before a valid value": payload + hValid[name],
			}
			for vname, value := range variants {
				sources := map[string]func() (hJobSet, map[string]any){
					"annotation": func() (hJobSet, map[string]any) {
						return hJobSet{ann: map[string]string{settings.AnnotationPrefix + name: value}}, nil
					},
					"ConfigMap config": func() (hJobSet, map[string]any) {
						return hJobSet{}, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg"}, "data": map[string]any{name: value}}
					},
					"JobSetFlux config": func() (hJobSet, map[string]any) {
						return hJobSet{}, map[string]any{"apiVersion": settings.ConfigAPIVersion, "kind": settings.ConfigKind, "metadata": map[string]any{"name": "cfg"}, "spec": map[string]any{fieldName(name): value}}
					},
				}
				for env, setting := range settings.EnvNames {
					if setting == name {
						sources["env "+env] = func() (hJobSet, map[string]any) {
							return hJobSet{env: map[string]string{env: value}}, nil
						}
					}
				}
				for sname, source := range sources {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", name, pname, vname, sname), func(t *testing.T) {
						streamCheck := vname == "alone" && !strings.HasPrefix(sname, "env ")
						js, config := source()
						cm := hOutcomeChecked(t, p, js, config, value, baseline, streamCheck)
						if cm == nil {
							return
						}
						accepted++
						if r, bad := hUnsafe(value); bad && !verbatim(name) {
							t.Errorf("accepted %s = %q, which holds %q", name, short(value), r)
						}
					})
				}
			}
		}
	}
	t.Logf("%d hostile setting values accepted (all without unsafe characters)", accepted)
}

// Values that come from the JobSet itself rather than from settings.
func TestInjectionThroughJobSetFields(t *testing.T) {
	p := hProcessor(t)
	baseline := hBaseline(t, p)
	for pname, payload := range hPayloads() {
		long := len(payload) > 1000
		cases := map[string]hJobSet{
			"name":               {name: payload},
			"name suffix":        {name: "js" + payload},
			"namespace":          {namespace: payload},
			"subdomain":          {subdomain: "net" + payload},
			"replicatedJob name": {rjName: "w" + payload},
			"container name":     {container: "app" + payload, ann: map[string]string{"flux-framework.org/container": "app" + payload}},
			"command":            {command: []string{"sh", "-c", payload}},
			"args":               {command: []string{"echo"}, args: []string{payload, "--", payload}},
			"other env":          {env: map[string]string{"FLUX_OTHER": payload, "APP": payload}},
			"annotation key":     {ann: map[string]string{"example.com/" + payload: "x", settings.AnnotationPrefix + payload: "x"}},
		}
		for cname, js := range cases {
			if long && !slices.Contains([]string{"name", "namespace", "command", "annotation key"}, cname) {
				continue // a megabyte costs seconds of YAML; a few fields show it
			}
			t.Run(cname+"/"+pname, func(t *testing.T) {
				cm := hOutcome(t, p, js, nil, payload, baseline)
				if cm == nil {
					return
				}
				// Accepted: names reach broker.toml (quoted, checked
				// above); nothing else from the JobSet reaches a file.
				if slices.Contains([]string{"name", "name suffix", "namespace", "subdomain", "replicatedJob name"}, cname) {
					return
				}
				data, _, _ := cm.NestedStringMap("data")
				for key, text := range data {
					if len(payload) > 1 && strings.Count(text, payload) > strings.Count(baseline[key], payload) {
						t.Errorf("%s holds the payload", key)
					}
				}
			})
		}
	}
}

// The wrapped command keeps the user's argv word for word, whatever it
// holds: it is passed through the pod spec's exec form, never a script.
func TestCommandKeptVerbatim(t *testing.T) {
	p := hProcessor(t)
	var argv []string
	for _, v := range hPayloads() {
		if !strings.ContainsRune(v, 0) && len(v) < 1000 {
			argv = append(argv, v)
		}
	}
	slices.Sort(argv)
	rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{command: append([]string{"prog"}, argv...), args: argv}.object()))
	if !ok {
		t.Fatalf("refused: %s", hDump(rl))
	}
	js := hFind(rl, "JobSet", "js")
	c := hContainer(t, js, "containers", 0)
	cmd, _, _ := c.NestedStringSlice("command")
	args, _, _ := c.NestedStringSlice("args")
	if want := append([]string{plan.EntrypointPath, "prog"}, argv...); !slices.Equal(cmd, want) {
		t.Errorf("command changed:\n got %q\nwant %q", cmd, want)
	}
	if !slices.Equal(args, argv) {
		t.Errorf("args changed")
	}
}

func hDump(rl *fn.ResourceList) string {
	var b strings.Builder
	for _, r := range rl.Results {
		fmt.Fprintf(&b, "%s %v: %s\n", r.Severity, r.Field, r.Message)
	}
	return b.String()
}

func hContainer(t *testing.T, js *fn.KubeObject, list string, i int) *fn.SubObject {
	t.Helper()
	items, _, err := js.NestedSlice("spec", "replicatedJobs")
	if err != nil || len(items) == 0 {
		t.Fatalf("no replicatedJobs: %v", err)
	}
	cs, _, err := items[0].NestedSlice("template", "spec", "template", "spec", list)
	if err != nil || len(cs) <= i {
		t.Fatalf("no %s[%d]: %v", list, i, err)
	}
	return cs[i]
}

// A megabyte in a value is refused quickly, and neither the results nor
// the command's stderr line repeat it.
func TestMegabyteValues(t *testing.T) {
	p := hProcessor(t)
	long := strings.Repeat("9", 1<<20)
	// Every setting's validator gets a megabyte in pkg/settings; here a
	// few go the whole way, from each kind of validator.
	for i, name := range []string{"view-image", "port", "run-options", "shm-size", "connect-timeout"} {
		in := hList(t, nil, hJobSet{ann: map[string]string{settings.AnnotationPrefix + name: long}}.object())
		start := cputime.Now()
		var rl *fn.ResourceList
		var ok bool
		if i == 0 {
			rl, ok, _ = hRun(t, p, in) // once through the whole KRM path
		} else {
			var err error
			if rl, err = fn.ParseResourceList(in); err != nil {
				t.Fatal(err)
			}
			if ok, err = p.Process(rl); err != nil {
				t.Fatal(err)
			}
		}
		if ok {
			t.Errorf("%s: a 1 MB value was accepted", name)
		}
		for _, r := range rl.Results {
			if len(r.Message) > 2048 {
				t.Errorf("%s: a %d-byte message", name, len(r.Message))
			}
		}
		if d := cputime.Since(start); d > 10*time.Second {
			t.Errorf("%s: a 1 MB value took %v", name, d)
		}
	}
}

// hBroker renders a JobSet of replicas x completions pods and returns the
// time Process took (best of runs) and the generated ConfigMap's files.
func hBroker(t *testing.T, replicas, completions, runs int) (time.Duration, map[string]string) {
	t.Helper()
	p := hProcessor(t)
	in := hList(t, nil, hJobSet{name: "big", rjName: "w", replicas: replicas, completions: completions}.object())
	best := time.Duration(1<<63 - 1)
	var data map[string]string
	for range runs {
		rl, err := fn.ParseResourceList(in)
		if err != nil {
			t.Fatal(err)
		}
		start := cputime.Now()
		ok, err := p.Process(rl)
		d := cputime.Since(start)
		if err != nil || !ok {
			t.Fatalf("%dx%d refused: %v %s", replicas, completions, err, hDump(rl))
		}
		best = min(best, d)
		cm := hFind(rl, "ConfigMap", "big"+plan.ConfigMapSuffix)
		data, _, _ = cm.NestedStringMap("data")
	}
	return best, data
}

// A million pods renders in time and space linear in the number of
// replicated Jobs (never of pods), with a compact hostlist.
func TestMillionPods(t *testing.T) {
	const runs = 5
	base, _ := hBroker(t, 1, 1000, runs)
	for _, c := range []struct {
		replicas, completions int
		hosts                 string
		maxTOML               int
	}{
		{1, 1_000_000, "big-w-0-[0-999999]", 4096},
		{1_000_000, 1, "big-w-[0-999999]-0", 4096},
		{1000, 1000, "big-w-0-[0-999],big-w-1-[0-999],", 64 << 10},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.replicas, c.completions), func(t *testing.T) {
			d, files := hBroker(t, c.replicas, c.completions, runs)
			broker := files[plan.BrokerConfig]
			t.Logf("%d x %d pods: broker.toml %d bytes, entrypoint.sh %d bytes, Process %v (1k pods: %v)", c.replicas, c.completions, len(broker), len(files[plan.EntrypointScript]), d, base)
			if len(broker) > c.maxTOML {
				t.Errorf("broker.toml is %d bytes, want at most %d", len(broker), c.maxTOML)
			}
			var doc struct {
				Bootstrap struct{ Hosts []struct{ Host string } }
			}
			if err := toml.Unmarshal([]byte(broker), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Bootstrap.Hosts) != 1 || !strings.HasPrefix(doc.Bootstrap.Hosts[0].Host, c.hosts) {
				t.Errorf("hosts = %.80v, want it to start with %s", doc.Bootstrap.Hosts, c.hosts)
			}
			if !strings.Contains(files[plan.EntrypointScript], fmt.Sprintf(`"${flux}" run -N %d `, c.replicas*c.completions)) {
				t.Errorf("the entrypoint does not run on %d nodes", c.replicas*c.completions)
			}
			// Generous against a loaded machine, and still far from what a
			// per-pod loop (1000x) would take.
			if d > 10*base+20*time.Millisecond {
				t.Errorf("1M pods took %v, more than 10x the %v of 1k pods", d, base)
			}
		})
	}
	t.Run("over the limit", func(t *testing.T) {
		p := hProcessor(t)
		for _, rc := range [][2]int{{1001, 1000}, {1, 1_000_001}, {2147483647, 2147483647}} {
			start := cputime.Now()
			rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{replicas: rc[0], completions: rc[1]}.object()))
			if ok || !strings.Contains(hDump(rl), "split it into several JobSets") {
				t.Errorf("%dx%d: %v\n%s", rc[0], rc[1], ok, hDump(rl))
			}
			if d := cputime.Since(start); d > 5*time.Second {
				t.Errorf("%dx%d: refusing took %v", rc[0], rc[1], d)
			}
		}
	})
}

// The generated Secret uses data, and the key material is nowhere else:
// not in the ConfigMap, the JobSet, the results, or the output outside the
// Secret's base64 value.
func TestSecretOutput(t *testing.T) {
	p := hProcessor(t)
	rl, ok, out := hRun(t, p, hList(t, nil, hJobSet{namespace: "team"}.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	keys, err := curve.Derive([]byte(hSeed), "team/js")
	if err != nil {
		t.Fatal(err)
	}
	s := hFind(rl, "Secret", "js"+plan.SecretSuffix)
	if s == nil {
		t.Fatal("no Secret")
	}
	if _, has, _ := s.NestedStringMap("stringData"); has {
		t.Error("the Secret has stringData")
	}
	value, _, _ := s.NestedString("data", plan.CertKey)
	cert, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _, err := curve.ParseCertificate(cert)
	if err != nil || parsed.SecretZ85() != keys.SecretZ85() {
		t.Fatalf("the Secret does not hold the derived keys: %v", err)
	}
	for _, k := range []string{keys.SecretZ85(), keys.PublicZ85(), hSeed} {
		if bytes.Contains(out, []byte(k)) {
			t.Errorf("the output holds key material or the seed in plain text")
		}
		if strings.Contains(hDump(rl), k) {
			t.Errorf("the results hold key material")
		}
	}
	// The same JobSet under another name or namespace gets another key:
	// the key depends on the seed and the identity, never on public data alone.
	other, err := curve.Derive([]byte(hSeed), "team/js2")
	if err != nil || other.SecretZ85() == keys.SecretZ85() {
		t.Errorf("different JobSets share a key")
	}
}

// The init container needs no privilege: it cannot escalate, drops every
// capability, and writes only to emptyDirs, so it runs under the
// restricted Pod Security Standard with runAsNonRoot and a read-only root
// file system set by the pod.
func TestInitContainerUnprivileged(t *testing.T) {
	p := hProcessor(t)
	js := hJobSet{
		podSecurity:       map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		containerSecurity: map[string]any{"readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}}},
	}
	rl, ok, _ := hRun(t, p, hList(t, nil, js.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	obj := hFind(rl, "JobSet", "js")
	init := hContainer(t, obj, "initContainers", 0)
	if name, _, _ := init.NestedString("name"); name != plan.InitContainerName {
		t.Fatalf("initContainers[0] is %q", name)
	}
	if v, found, _ := init.NestedBool("securityContext", "allowPrivilegeEscalation"); !found || v {
		t.Error("the init container may escalate privileges")
	}
	if drop, _, _ := init.NestedStringSlice("securityContext", "capabilities", "drop"); !slices.Equal(drop, []string{"ALL"}) {
		t.Errorf("the init container drops %q, want [ALL]", drop)
	}
	// It writes only to emptyDirs, so its own root file system is read-only
	// (a container-level field: nothing of the pod's is overridden), and it
	// inherits the pod's seccomp profile (it gets RuntimeDefault only when
	// the pod sets none: testdata/golden/seccomp-pod-profile).
	if v, found, _ := init.NestedBool("securityContext", "readOnlyRootFilesystem"); !found || !v {
		t.Error("the init container's root file system is writable")
	}
	if _, found, _ := init.NestedSubObject("securityContext", "seccompProfile"); found {
		t.Error("the init container sets a seccompProfile, overriding the pod's")
	}
	for _, field := range [][]string{{"securityContext", "privileged"}, {"securityContext", "capabilities", "add"}, {"securityContext", "runAsUser"}, {"securityContext", "runAsNonRoot"}} {
		if _, found, _ := init.NestedString(field...); found {
			t.Errorf("the init container sets %s, overriding the pod", strings.Join(field, "."))
		}
		if _, found, _ := init.NestedBool(field...); found {
			t.Errorf("the init container sets %s, overriding the pod", strings.Join(field, "."))
		}
	}
	// The pod's and the app container's security settings are kept.
	items, _, _ := obj.NestedSlice("spec", "replicatedJobs")
	if v, _, _ := items[0].NestedBool("template", "spec", "template", "spec", "securityContext", "runAsNonRoot"); !v {
		t.Error("the pod lost runAsNonRoot")
	}
	app := hContainer(t, obj, "containers", 0)
	if v, _, _ := app.NestedBool("securityContext", "readOnlyRootFilesystem"); !v {
		t.Error("the app container lost readOnlyRootFilesystem")
	}

	// Every path the scripts write to is inside an emptyDir mounted into
	// the container that writes it.
	volumes, _, _ := items[0].NestedSlice("template", "spec", "template", "spec", "volumes")
	emptyDirs := map[string]bool{}
	for _, v := range volumes {
		name, _, _ := v.NestedString("name")
		if _, found, _ := v.NestedSubObject("emptyDir"); found {
			emptyDirs[name] = true
		}
	}
	writable := func(c *fn.SubObject) []string {
		var paths []string
		mounts, _, _ := c.NestedSlice("volumeMounts")
		for _, m := range mounts {
			name, _, _ := m.NestedString("name")
			path, _, _ := m.NestedString("mountPath")
			if ro, _, _ := m.NestedBool("readOnly"); emptyDirs[name] && !ro {
				paths = append(paths, path)
			}
		}
		return paths
	}
	cm := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix)
	data, _, _ := cm.NestedStringMap("data")
	for _, c := range []struct {
		script    string
		container *fn.SubObject
		targets   []string // the variables the script writes below
	}{
		{data[plan.InitScript], init, []string{"view_dir", "software_staging"}},
		{data[plan.EntrypointScript], app, []string{"run_dir", "cert"}},
	} {
		dirs := writable(c.container)
		for _, v := range c.targets {
			m := regexp.MustCompile(`(?m)^` + v + `='([^']*)'$`).FindStringSubmatch(c.script)
			if m == nil {
				t.Errorf("the script no longer sets %s", v)
				continue
			}
			if !slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(m[1]+"/", strings.TrimRight(d, "/")+"/") }) {
				t.Errorf("%s=%s is not inside a writable emptyDir (%s)", v, m[1], strings.Join(dirs, ", "))
			}
		}
		// No write to a fixed path outside those variables (discarding
		// output into /dev/null writes nothing).
		unquoted := strings.ReplaceAll(hOutsideQuotes(c.script), ">/dev/null", "")
		for _, w := range []string{"> /", ">/", "tee /", "mkdir /", "cp /", "mktemp", "/tmp"} {
			if strings.Contains(unquoted, w) {
				t.Errorf("a script writes with %q", w)
			}
		}
	}
}

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

// hROHarness runs one container of a rendered pod in a private mount
// namespace with a read-only root file system: only the emptyDirs are
// writable, everything else (/, /tmp, the view image, the ConfigMap and
// Secret volumes) is read-only, and the script runs as uid 1000. Arguments:
// init|app, the host directories (image, config, curve), then the command.
const hROHarness = `set -euo pipefail
[[ $(readlink /proc/self/ns/mnt) != "$(readlink /proc/1/ns/mnt)" ]] || { echo "not in a private mount namespace" >&2; exit 125; }
role=$1 image=$2 config=$3 curve=$4 state=$5
shift 5
# Everything mounted now is read-only from here on (per-mount flags only:
# this namespace's mounts, never the host's).
while read -r _ _ _ _ point _; do
	case $point in /proc*|/sys*|/dev*) continue ;; esac
	mount -o remount,bind,ro -- "$point" 2>/dev/null || true
done </proc/self/mountinfo
mount -t tmpfs -o mode=0755 jobset-flux-ro /mnt
mkdir -p /mnt/flux/install /mnt/flux/software /mnt/flux/config /mnt/flux/curve
# The emptyDirs persist between the init and the app container in $state.
# (a bind mount inherits the read-only flag of its source: make it rw)
mount --bind -- "$state/install" /mnt/flux/install
mount -o remount,bind,rw /mnt/flux/install
mount --bind -- "$config" /mnt/flux/config
mount -o remount,bind,ro /mnt/flux/config
if [[ $role == init ]]; then
	mount --bind -- "$state/software" /mnt/flux/software
	mount -o remount,bind,rw /mnt/flux/software
	mount --bind -- "$image" /opt
	mount -o remount,bind,ro /opt
else
	mount -t tmpfs -o mode=0755 jobset-flux-ro /opt
	mkdir /opt/software
	mount -o remount,ro /opt
	mount --bind -- "$state/software" /opt/software
	mount -o remount,bind,rw /opt/software
	mount --bind -- "$curve" /mnt/flux/curve
	mount -o remount,bind,ro /mnt/flux/curve
fi
mount -o remount,ro /mnt
cd /
exec setpriv --reuid=1000 --regid=1000 --clear-groups -- "$@"
`

// The init container and the entrypoint really run as a non-root user
// with a read-only root file system: they write only to their emptyDirs.
// Needs root (mount namespaces), unshare, setpriv and bash; skipped
// without them outside CI.
func TestScriptsReadOnlyRootNonRoot(t *testing.T) {
	for _, tool := range []string{"bash", "unshare", "setpriv"} {
		testenv.Tool(t, tool)
	}
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "mount namespaces need root")
	}
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "unshare --mount does not work here: %v %s", err, out)
	}
	p := hProcessor(t)
	rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{command: []string{"app", "--flag"}}.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	data, _, _ := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix).NestedStringMap("data")

	root := t.TempDir()
	dir := func(parts ...string) string {
		d := filepath.Join(append([]string{root}, parts...)...)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	write := func(path, text string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The view image's /opt: view -> views/view -> views/._view/h, whose
	// bin/flux links into the software tree. The stub flux records its
	// arguments on stdout.
	image := dir("image")
	sw := dir("image", "software", "flux-core", "bin")
	write(filepath.Join(sw, "flux"), "#!/bin/bash\nprintf 'flux-stub:'; printf ' %q' \"$@\"; echo\n", 0o755)
	dir("image", "views", "._view", "h", "bin")
	dir("image", "views", "._view", "h", "lib", "python3.12", "site-packages")
	for _, l := range [][2]string{
		{"/opt/software/flux-core/bin/flux", "views/._view/h/bin/flux"},
		{"._view/h", "views/view"},
		{"/opt/views/view", "view"},
	} {
		if err := os.Symlink(l[0], filepath.Join(image, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	config := dir("config")
	for key, text := range data {
		write(filepath.Join(config, key), text, 0o555)
	}
	curveDir := dir("curve")
	write(filepath.Join(curveDir, plan.CertKey), "# a certificate\n", 0o444)
	// emptyDirs: world-writable, so that any runAsUser can use them.
	state := dir("state")
	for _, d := range []string{"install", "software"} {
		if err := os.Chmod(dir("state", d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}

	harness := func(role string, command ...string) string {
		args := append([]string{"--mount", "--propagation", "private", "bash", "-c", hROHarness, "harness", role, image, config, curveDir, state}, command...)
		cmd := exec.Command("unshare", args...)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s container failed: %v\n%s", role, err, out)
		}
		return string(out)
	}
	harness("init", "/mnt/flux/config/init.sh")
	if _, err := os.Lstat(filepath.Join(state, "install", "view", "bin", "flux")); err != nil {
		t.Fatalf("the init container did not install the view: %v", err)
	}
	out := harness("app", "/mnt/flux/config/entrypoint.sh", "app", "--flag")
	if !strings.Contains(out, "flux-stub: start") || !strings.Contains(out, "-- app --flag") {
		t.Errorf("the entrypoint did not start flux with the command:\n%s", out)
	}
	// A write outside the emptyDirs fails in this harness: prove it, or
	// the test proves nothing.
	for _, probe := range []string{"/tmp/jobset-flux-ro-probe", "/jobset-flux-ro-probe", "/mnt/flux/config/probe", "/mnt/flux/curve/probe"} {
		out, err := exec.Command("unshare", "--mount", "--propagation", "private", "bash", "-c", hROHarness, "harness", "app", image, config, curveDir, state, "touch", probe).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Read-only file system") {
			os.Remove(probe)
			t.Fatalf("the harness lets uid 1000 write %s: %v %s", probe, err, out)
		}
	}
}

// hKRM is the command's whole KRM path: resourcelist.Parse, Process,
// Sort and Encode. err is Parse's (the command exits 1 and writes nothing).
func hKRM(t testing.TB, p *transform.Processor, in []byte) (rl *fn.ResourceList, ok bool, out []byte, err error) {
	t.Helper()
	rl, err = resourcelist.Parse(in)
	if err != nil {
		return nil, false, nil, err
	}
	ok, perr := p.Process(rl)
	if perr != nil {
		t.Fatalf("Process: %v", perr)
	}
	out, err = resourcelist.Encode(rl)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return rl, ok, out, nil
}

// hMeaning decodes every item of a ResourceList's text to plain values
// (aliases and merge keys resolved, as a consumer reads them), by
// Kind/name.
func hMeaning(t testing.TB, text []byte) map[string]any {
	t.Helper()
	var doc struct {
		Items []map[string]any `yaml:"items"`
	}
	if err := yaml.Unmarshal(text, &doc); err != nil {
		t.Fatalf("the text does not parse: %v\n%s", err, text)
	}
	m := map[string]any{}
	for _, it := range doc.Items {
		meta, _ := it["metadata"].(map[string]any)
		m[fmt.Sprintf("%v/%v", it["kind"], meta["name"])] = it
	}
	return m
}

const hRLHead = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"

// hJobSetItem is a selected JobSet as a ResourceList item; spec is its
// spec, indented for the item.
func hJobSetItem(name, annotations, spec string) string {
	return `- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: ` + name + `
    annotations: {flux-framework.org/enabled: "true"` + annotations + `}
  spec:
` + spec
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

// hItemsOnly cuts the results off an encoded ResourceList.
func hItemsOnly(out []byte) []byte {
	if i := bytes.Index(out, []byte("\nresults:\n")); i >= 0 {
		return out[:i+1]
	}
	return out
}

// hPod returns replicatedJob i's pod spec of a rendered JobSet's meaning.
func hPod(t *testing.T, js any, i int) map[string]any {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("replicatedJob %d has no pod spec: %v", i, r)
		}
	}()
	rj := js.(map[string]any)["spec"].(map[string]any)["replicatedJobs"].([]any)[i]
	return rj.(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
}

// hWraps counts the flux-installer init containers of a pod spec and
// returns each container's command.
func hWraps(pod map[string]any) (installers int, commands [][]any) {
	for _, c := range asList(pod["initContainers"]) {
		if c.(map[string]any)["name"] == plan.InitContainerName {
			installers++
		}
	}
	for _, c := range asList(pod["containers"]) {
		cmd, _ := c.(map[string]any)["command"].([]any)
		commands = append(commands, cmd)
	}
	return installers, commands
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
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

// hTwice renders in twice (the second time on the first's output) and
// returns both outputs' items.
func hTwice(t *testing.T, in string) (first, second []byte) {
	t.Helper()
	p := hProcessor(t)
	rl, ok, out, err := hKRM(t, p, []byte(in))
	if err != nil || !ok {
		t.Fatalf("first render refused (%v): %s", err, hDump(rl))
	}
	rl, ok, again, err := hKRM(t, p, out)
	if err != nil || !ok {
		t.Fatalf("second render refused (%v): %s", err, hDump(rl))
	}
	return hItemsOnly(out), hItemsOnly(again)
}

// Issue 14, points 6 and 9: a re-render removes only what the function
// itself added (recognised by its whole shape), so it changes nothing:
// an unselected replicatedJob's own flux-config volume survived the
// first render and was deleted by the second; a flow-style command: []
// came back in block style; a /dev//shm mount got a second /dev/shm.
func TestRerenderChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, annotations, spec string
		check                   func(t *testing.T, js any)
	}{
		{
			name:        "unselected replicatedJob with its own flux-config volume",
			annotations: `, flux-framework.org/replicated-jobs: w`,
			spec: `    - name: w
      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, command: [run]}]}}}}
    - name: v
      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, volumeMounts: [{name: flux-config, mountPath: /cfg}]}], volumes: [{name: flux-config, configMap: {name: mine}}]}}}}
`,
			check: func(t *testing.T, js any) {
				if vols := fmt.Sprint(hPod(t, js, 1)["volumes"]); !strings.Contains(vols, "mine") {
					t.Errorf("the user's flux-config volume is gone: %s", vols)
				}
			},
		},
		{
			name: "empty flow-style command",
			spec: "    - name: w\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, command: []}]}}}}\n",
		},
		{
			name: "no command",
			spec: "    - name: w\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox}]}}}}\n",
		},
		{
			name: "own /dev//shm",
			spec: "    - name: w\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, volumeMounts: [{name: shm, mountPath: /dev//shm}]}], volumes: [{name: shm, emptyDir: {medium: Memory}}]}}}}\n",
			check: func(t *testing.T, js any) {
				mounts := fmt.Sprint(asList(hPod(t, js, 0)["containers"])[0].(map[string]any)["volumeMounts"])
				if strings.Contains(mounts, plan.ShmVolume) {
					t.Errorf("a second /dev/shm was mounted: %s", mounts)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second := hTwice(t, hRLHead+hJobSetItem("js", tc.annotations, "    replicatedJobs:\n"+tc.spec))
			if !bytes.Equal(first, second) {
				t.Errorf("the second render changed the output:\n%s\n---\n%s", first, second)
			}
			if tc.check != nil {
				tc.check(t, hMeaning(t, second)["JobSet/js"])
			}
		})
	}
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

// Every golden output, given back to the function with the same seed,
// comes out byte for byte the same: kpt render's rule, over every mode
// and shape the golden cases cover (an image with its own Flux, which
// has no installer to be recognised by, included).
func TestGoldenOutputsRerenderUnchanged(t *testing.T) {
	p, err := transform.New(transform.Options{Seed: []byte("jobset-flux-test-seed-0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/golden/*/_expected.yaml")
	if err != nil || len(files) < 25 {
		t.Fatalf("golden outputs: %d files, %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rl, err := resourcelist.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rl.Results {
				if r.Severity == fn.Error {
					t.Skip("the case is refused; its output is its input")
				}
			}
			rl.Results = nil
			want, err := resourcelist.Encode(rl)
			if err != nil {
				t.Fatal(err)
			}
			_, ok, got, err := hKRM(t, p, want)
			if err != nil || !ok {
				t.Fatalf("the re-render was refused (%v)", err)
			}
			if !bytes.Equal(hItemsOnly(got), hItemsOnly(want)) {
				t.Errorf("the re-render changed the output: %s", testenv.FirstDifference(hItemsOnly(got), hItemsOnly(want)))
			}
		})
	}
}

// verbatim reports whether a setting's value is shell text shipped as a
// file of its own (setup.sh), exempt from the checks for shell, TOML and
// URI syntax (pkg/settings' TestOnlySetupIsVerbatim keeps it true).
func verbatim(name string) bool { return name == "setup" }

// fieldName is the JobSetFlux spec field of a setting name.
func fieldName(name string) string {
	for _, field := range settings.Fields() {
		if n, _, _ := settings.OfField(field); n == name {
			return field
		}
	}
	return ""
}
