package settings

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The function reads a JobSetFlux config with its settings table instead
// of a schema validator (see typedValues). These tests hold it to the
// published contract, the openAPIV3Schema in krmfunction.yaml, by running
// kube-openapi's validator (test-only: it is not linked into the binary)
// and the function on the same configs:
//
//   - every config the schema refuses, the function refuses, with an
//     error at each field path the schema names;
//   - every config the schema accepts, the function accepts too, unless a
//     value fails one of the checks the schema cannot express: a
//     setting's own parser ("invalid port: ..."), the list-item checks of
//     joinItems, or a date where a string belongs (the validator panics
//     on those; Kubernetes would read a string).
//
// So the function accepts exactly the configs the schema accepts whose
// values its settings parsers accept.

// schemaVerdict validates doc against s as kube-openapi does and returns
// the field paths of its errors (none when it accepts). A document with a
// key that is not a string is no JSON document: it is refused at its root.
func schemaVerdict(s *spec.Schema, doc string) (paths []string, ok bool) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return []string{""}, false
	}
	if _, _, bad := nonStringKey(obj, ""); bad {
		return []string{""}, false
	}
	res := validate.NewSchemaValidator(s, nil, "", strfmt.Default).Validate(jsonShaped(obj))
	for _, e := range res.Errors {
		paths = append(paths, errorPaths(e)...)
	}
	return paths, res.IsValid()
}

// jsonShaped turns the dates the YAML decoder makes into the strings a
// Kubernetes client would send (the validator panics on a time.Time).
func jsonShaped(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			v[k] = jsonShaped(c)
		}
	case []any:
		for i, c := range v {
			v[i] = jsonShaped(c)
		}
	case time.Time:
		return v.Format(time.RFC3339)
	}
	return v
}

// errorPaths returns the field paths kube-openapi's errors name.
func errorPaths(err error) []string {
	switch e := err.(type) {
	case *errors.CompositeError:
		var out []string
		for _, inner := range e.Errors {
			out = append(out, errorPaths(inner)...)
		}
		return out
	case *errors.Validation:
		if key, ok := e.Value.(string); ok && e.Code() == errors.UnallowedPropertyCode {
			if e.Name == "" || e.Name == "." {
				return []string{key}
			}
			return []string{e.Name + "." + key}
		}
		if e.Name == "." {
			return []string{""}
		}
		return []string{e.Name}
	}
	return []string{""}
}

// sameField reports whether two error paths are about the same field: a
// list's items are checked by its setting's parser as one value, so the
// function may name the list where the schema names an item, and the
// other way round.
func sameField(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"[") || strings.HasPrefix(b, a+"[")
}

// fnVerdict runs the function's config reader on doc.
func fnVerdict(t testing.TB, doc string) (finding.List, bool) {
	t.Helper()
	cfg, err := fn.ParseKubeObject([]byte(doc))
	if err != nil {
		t.Fatalf("the test made a config the SDK cannot parse: %v\n%s", err, doc)
	}
	_, found := FromFunctionConfig(cfg)
	return found, !found.HasErrors()
}

// beyondSchema reports whether a finding is one of the value checks the
// schema cannot express.
func beyondSchema(f finding.Finding) bool {
	for _, prefix := range []string{"invalid ", "must be one item: ", "must not be empty", "must list at least one item"} {
		if strings.HasPrefix(f.Message, prefix) {
			return true
		}
	}
	return strings.HasPrefix(f.Message, schemaMismatch) && strings.Contains(f.Message, "got a date (")
}

// agreement counts the verdicts of a corpus, to show it covers each case.
type agreement struct {
	bothAccept, bothRefuse, onlyFnRefuses int
}

// check holds the function to the schema on one config.
func (a *agreement) check(t *testing.T, s *spec.Schema, doc string) {
	t.Helper()
	schemaPaths, schemaOK := schemaVerdict(s, doc)
	found, fnOK := fnVerdict(t, doc)
	switch {
	case schemaOK && fnOK:
		a.bothAccept++
	case !schemaOK && fnOK:
		t.Errorf("the schema refuses (at %q) a config the function accepts:\n%s", schemaPaths, doc)
	case !schemaOK:
		a.bothRefuse++
		var fnPaths []string
		for _, f := range found {
			if f.Severity == finding.Error {
				fnPaths = append(fnPaths, f.Path)
			}
		}
		for _, path := range schemaPaths {
			if path != "" && !slices.ContainsFunc(fnPaths, func(fp string) bool { return sameField(path, fp) }) {
				t.Errorf("the schema refuses %s; the function reports only %q:\n%s", path, fnPaths, doc)
			}
		}
	default:
		a.onlyFnRefuses++
		for _, f := range found {
			if f.Severity == finding.Error && !beyondSchema(f) {
				t.Errorf("the schema accepts a config the function refuses for its shape: %s: %s\n%s", f.Path, f.Message, doc)
			}
		}
	}
}

// config writes a JobSetFlux config with the given top-level lines
// (YAML, after apiVersion and kind).
func config(lines ...string) string {
	return "apiVersion: " + ConfigAPIVersion + "\nkind: " + ConfigKind + "\n" + strings.Join(lines, "\n") + "\n"
}

// specOf writes a config whose spec holds the given fields, each a YAML
// flow value.
func specOf(fields map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		fmt.Fprintf(&b, "\n  %s: %s", k, fields[k])
	}
	if b.Len() == 0 {
		return config("metadata: {name: cfg}", "spec: {}")
	}
	return config("metadata: {name: cfg}", "spec:"+b.String())
}

// schemaValues are YAML flow values of every type the decoder makes, and
// around every bound the schema and the settings parsers declare.
func schemaValues() []string {
	vals := []string{
		// strings a setting takes, and ones none does
		"eth0", `"*"`, "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble", "fcfs", "easy", "lifo",
		"5s", "500ms", "0s", "kary:2", "kary:65536", "kary:0", "binomial", "app", "my-secret", "1Gi", "0", `"-1Gi"`,
		`""`, `" "`, `"8050"`, `"true"`, `"a b"`, `"-o pmi=pmix"`, `"w,v"`, `"eth0\n[x]"`, "yes", "on", "Ghcr.io/X",
		// numbers
		"0", "1", "-1", "2", "8", "64", "256", "257", "4096", "4097", "8050", "65535", "65536", "65537",
		"9223372036854775807", "18446744073709551615", "99999999999999999999", "0x10", "0o17", "1_000", "+4",
		"1.0", "1.5", "4.5", "8050.0", "1e3", "1e20", "-0.0", ".inf", "-.inf", ".nan", "1000.0000001", "9007199254740992", "9007199254740993.0",
		// booleans, nulls, dates, tags
		"true", "false", "True", "null", "~", "2001-12-14", "2001-12-14T21:59:43.10-05:00",
		`!!str 1`, `!!int "1"`, `!!binary aGVsbG8=`, `!!float 2`, `!foo 1`,
		// lists and maps
		"[]", "[a]", "[w]", "[w, v]", "[a, a]", "[-o, pmi=pmix]", "[-o, cpu-affinity=per-task]", "[-N, '2']", `["w,v"]`, `["-o x"]`, `[" w"]`,
		`[""]`, `[-o, ""]`, "[1]", "[true]", "[null]", "[[a]]", "[{a: b}]", "[2001-12-14]", "{}", "{a: b}", "{port: 1}",
	}
	// Strings at and past each maxLength of the schema, of characters
	// most settings take.
	for _, n := range []int{15, 16, 20, 21, 32, 33, 63, 64, 253, 254, 256, 257, 512, 513} {
		vals = append(vals, strings.Repeat("a", n), "'"+strings.Repeat("1", n)+"'", "["+strings.Repeat("a", n)+"]")
	}
	// Lists at and past runOptions' maxItems.
	for _, n := range []int{64, 65} {
		vals = append(vals, "["+strings.TrimSuffix(strings.Repeat("-x, ", n), ", ")+"]", "[-o, "+strings.TrimSuffix(strings.Repeat(`"", `, n), ", ")+"]")
	}
	return vals
}

// Every setting with values of every type and around every bound.
func TestSchemaAgreesEveryField(t *testing.T) {
	s := schema(t)
	var a agreement
	for _, field := range Fields() {
		for _, v := range schemaValues() {
			a.check(t, s, specOf(map[string]string{field: v}))
		}
	}
	t.Logf("%+v", a)
	if a.bothAccept == 0 || a.bothRefuse == 0 || a.onlyFnRefuses == 0 {
		t.Errorf("the corpus misses a case: %+v", a)
	}
}

// The config's shape: unknown fields at every level, and every type
// where a map belongs.
func TestSchemaAgreesShape(t *testing.T) {
	s := schema(t)
	var a agreement
	docs := []string{
		config(),
		config("metadata: {name: cfg}"),
		config("metadata: {name: cfg, labels: {a: b}, annotations: {config.kubernetes.io/local-config: 'true'}}"),
		config("metadata: {name: cfg}", "spec: {}"),
		config("metadata: {name: cfg}", "spec: {port: 8050}", "status: {}"),
		config("metadata: {name: cfg}", "extra: 1"),
		config("metadata: {name: cfg}", "port: 8050"),
		config("metadata: {name: cfg}", "Spec: {port: 8050}"),
		config("metadata: {name: cfg}", "spec: {taskPerNode: 4}"),
		config("metadata: {name: cfg}", "spec: {port: 8050, Port: 1}"),
		config("metadata: {name: cfg}", "spec: {'': 1}"),
		config("metadata: {name: cfg}", "spec: {port: 8050}", "x: {0: a}"),
		config("metadata: {name: cfg}", "spec: {runOptions: [{~: a}]}"),
		config("metadata: {name: cfg}", "b: &a {port: 1}", "spec: {<<: *a}"),
		config("metadata: {name: cfg}", "spec: &a {port: 1}", "x: *a"),
		config("metadata: {name: cfg}", "spec: {port: &p 2, tasksPerNode: *p}"),
	}
	for _, v := range []string{"", "null", "[]", "[a]", "a", "1", "true", "2001-12-14", "{}", "{a: b}"} {
		docs = append(docs, config("metadata: "+v, "spec: {}"), config("metadata: {name: cfg}", "spec: "+v))
	}
	for _, doc := range docs {
		a.check(t, s, doc)
	}
	t.Logf("%+v", a)
	if a.bothAccept == 0 || a.bothRefuse == 0 {
		t.Errorf("the corpus misses a case: %+v", a)
	}
}

// Random configs: several fields at once, known and unknown, each with a
// value of any type.
func TestSchemaAgreesRandom(t *testing.T) {
	s := schema(t)
	rng := rand.New(rand.NewPCG(7, 11))
	values := schemaValues()
	fields := append(Fields(), "taskPerNode", "colour", "spec", "metadata", "port2")
	n := 3000
	if testing.Short() {
		n = 300
	}
	var a agreement
	for range n {
		set := map[string]string{}
		for range rng.IntN(5) {
			set[fields[rng.IntN(len(fields))]] = values[rng.IntN(len(values))]
		}
		doc := specOf(set)
		if rng.IntN(8) == 0 {
			doc += fmt.Sprintf("%s: %s\n", fields[rng.IntN(len(fields))], values[rng.IntN(len(values))])
		}
		a.check(t, s, doc)
	}
	t.Logf("%+v", a)
	if a.bothAccept == 0 || a.bothRefuse == 0 || a.onlyFnRefuses == 0 {
		t.Errorf("the corpus misses a case: %+v", a)
	}
}
