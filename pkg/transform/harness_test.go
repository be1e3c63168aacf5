package transform_test

// Hostile input through the Processor: injection payloads in every value
// a user controls, the instance-size limits, and the security properties
// of the output. The catalogue of malformed inputs, run through the
// command, is in fn/main_test.go.

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
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
		"":                       {"bootstrap", "resource", "sched-fluxion-qmanager", "access", "kvs"},
		"kvs":                    {"checkpoint-period"},
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
