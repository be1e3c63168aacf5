package settings

import (
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Every error of a JobSetFlux config's shape names the field and says what
// to write instead.
func TestTypedConfigErrors(t *testing.T) {
	cases := []struct {
		name   string
		lines  []string
		path   string
		phrase string
	}{
		{"metadata a list", []string{"metadata: [a]"}, "metadata", "metadata must be a map (such as {name: flux}), got a list"},
		{"metadata null", []string{"metadata:"}, "metadata", "metadata must be a map (such as {name: flux}), got null"},
		{"unknown top-level field", []string{"status: {}"}, "status", `unknown field "status"; the known fields are apiVersion, kind, metadata, spec`},
		{"setting at the top level", []string{"port: 8050"}, "port", "settings go under spec (spec.port)"},
		{"spec null", []string{"spec:"}, "spec", "spec must be a map of settings (such as {port: 8050}), got null"},
		{"spec a list", []string{"spec: [port]"}, "spec", "spec must be a map of settings (such as {port: 8050}), got a list"},
		{"unknown spec field", []string{"spec: {taskPerNode: 4}"}, "spec.taskPerNode", `unknown field "taskPerNode"; the known fields are viewImage, viewMount, viewCopyMedium, tasksPerNode,`},
		{"integer quoted", []string{`spec: {port: "8050"}`}, "spec.port", `port must be a whole number written without quotes, got the string "8050"`},
		{"integer with a fraction", []string{"spec: {tasksPerNode: 4.5}"}, "spec.tasksPerNode", "tasksPerNode must be a whole number, got the number 4.5"},
		{"integer too large for JSON", []string{"spec: {port: 1e20}"}, "spec.port", "port must be a whole number, got the number 1e+20"},
		{"integer null", []string{"spec: {port: null}"}, "spec.port", "port must be a whole number, got null; give it a value, or remove the field to get the default"},
		{"integer a boolean", []string{"spec: {gpusPerNode: true}"}, "spec.gpusPerNode", "gpusPerNode must be a whole number, got true"},
		{"boolean quoted", []string{`spec: {interactive: "true"}`}, "spec.interactive", `interactive must be true or false, written without quotes, got the string "true"`},
		{"boolean as yes", []string{"spec: {interactive: yes}"}, "spec.interactive", `interactive must be true or false, written without quotes, got the string "yes"`},
		{"boolean a number", []string{"spec: {interactive: 1}"}, "spec.interactive", "interactive must be true or false, got the number 1"},
		{"string a number", []string{"spec: {container: 12}"}, "spec.container", "container must be a string (put it in quotes), got the number 12"},
		{"string a date", []string{"spec: {container: 2001-12-14}"}, "spec.container", "container must be a string (put it in quotes), got a date (2001-12-14)"},
		{"string a map", []string{"spec: {viewImage: {a: b}}"}, "spec.viewImage", "viewImage must be a string, got a map"},
		{"list null", []string{"spec:", "  runOptions:"}, "spec.runOptions", "runOptions must be a list of strings, one item each (such as [a, b]), got null; give it a value, or remove the field"},
		{"list a string", []string{"spec: {runOptions: -o pmi=pmix}"}, "spec.runOptions", `runOptions must be a list of strings, one item each (such as [a, b]), got the string "-o pmi=pmix"`},
		{"list item a number", []string{"spec: {replicatedJobs: [w, 2]}"}, "spec.replicatedJobs[1]", "the items must be strings, got the number 2 (put it in quotes)"},
		{"list item a list", []string{"spec: {replicatedJobs: [[w]]}"}, "spec.replicatedJobs[0]", "the items must be strings, got a list"},
		{"list item empty", []string{`spec: {runOptions: [-o, ""]}`}, "spec.runOptions[1]", "must not be empty; remove the item"},
		{"list item with a space", []string{`spec: {replicatedJobs: [" w"]}`}, "spec.replicatedJobs[0]", `must be one item: " w" holds " "; make each its own list item`},
		{"list item with the separator", []string{`spec: {replicatedJobs: ["w,v"]}`}, "spec.replicatedJobs[0]", `must be one item: "w,v" holds ","; make each its own list item`},
		{"empty list of a setting that needs one", []string{"spec: {replicatedJobs: []}"}, "spec.replicatedJobs", "must list at least one item; remove the field to get the default"},
		{"value out of the schema's bounds", []string{"spec: {tasksPerNode: 0}"}, "spec.tasksPerNode", "invalid tasks-per-node: must be from 1 to 4096, got 0"},
		{"value past the schema's maxLength", []string{"spec: {networkDevice: abcdefghijklmnop}"}, "spec.networkDevice", "invalid network-device: must be a network interface name"},
		// A key written twice is refused with its path before the config is decoded.
		{"duplicate key", []string{"spec: {port: 1, port: 2}"}, "spec.port", "appears twice in the same map"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := config(append([]string{"metadata: {name: cfg}"}, c.lines...)...)
			if strings.HasPrefix(c.lines[0], "metadata") {
				doc = config(c.lines...)
			}
			found, ok := fnVerdict(t, doc)
			if ok {
				t.Fatalf("accepted:\n%s", doc)
			}
			if !hasError(found, c.path, c.phrase) {
				t.Errorf("no error at %q saying %q; got %+v", c.path, c.phrase, found)
			}
		})
	}
}

// Several mistakes are reported in one run: shape errors and the values
// of the fields that were read.
func TestTypedConfigAllErrorsAtOnce(t *testing.T) {
	found, _ := fnVerdict(t, config("metadata: {name: cfg}", "spec: {port: '1', queuePolicy: lifo, colour: blue}", "extra: 1"))
	for path, phrase := range map[string]string{
		"spec.port":        "written without quotes",
		"spec.queuePolicy": "must be one of fcfs, easy, conservative, hybrid",
		"spec.colour":      `unknown field "colour"`,
		"extra":            `unknown field "extra"`,
	} {
		if !hasError(found, path, phrase) {
			t.Errorf("no error at %q saying %q; got %+v", path, phrase, found)
		}
	}
}

// A config with several keys that are not strings gets the same error on
// every run (the output must not depend on map order): the first such key
// in field order, here in metadata before other and spec, and the smallest
// of its map's bad keys.
func TestTypedConfigNonStringKeysDeterministic(t *testing.T) {
	cfg := config("metadata: {name: cfg, 4: d, 3: c}", "spec: {0: a, 1: b}", "other: [{5: e}]")
	for range 50 {
		found, _ := fnVerdict(t, cfg)
		if len(found) != 1 || found[0].Path != "metadata" || !strings.Contains(found[0].Message, "has the key 3,") {
			t.Fatalf("got %+v, want one error at metadata naming the key 3", found)
		}
	}
}

// Values a JobSetFlux config may write in more than one way.
func TestTypedConfigAccepts(t *testing.T) {
	for _, spec := range []string{
		"{}",
		"{port: 8050.0, tasksPerNode: 1e1, coresPerNode: !!int '20'}",
		"{runOptions: []}",
		"{runOptions: [-o, pmi=pmix], replicatedJobs: [w, v], interactive: false}",
		"{viewImage: !!str ghcr.io/x/y}",
	} {
		doc := config("metadata: {name: cfg}", "spec: "+spec)
		found, ok := fnVerdict(t, doc)
		if !ok {
			t.Errorf("refused %s: %+v", spec, found)
		}
	}
	s, found := FromFunctionConfig(mustParse(t, config("spec: {port: 8050.0, runOptions: [-o, pmi=pmix], replicatedJobs: [w, v], interactive: true}")))
	if len(found) > 0 || s.Port != 8050 || !slices.Equal(s.RunOptions, []string{"-o", "pmi=pmix"}) ||
		!slices.Equal(s.ReplicatedJobs, []string{"w", "v"}) || s.Interactive == nil || !*s.Interactive {
		t.Errorf("read %+v, %v; want port 8050, run-options -o pmi=pmix, replicated-jobs w,v, interactive true", s, found)
	}
	for name, want := range map[string]string{"port": "spec.port", "run-options": "spec.runOptions", "replicated-jobs": "spec.replicatedJobs", "interactive": "spec.interactive"} {
		if got := s.Origin(name); got != want {
			t.Errorf("%s was read from %q, want %q", name, got, want)
		}
	}
}

func hasError(found finding.List, path, phrase string) bool {
	for _, f := range found {
		if f.Severity == finding.Error && f.Path == path && strings.Contains(f.Message, phrase) {
			return true
		}
	}
	return false
}

func mustParse(t *testing.T, doc string) *fn.KubeObject {
	t.Helper()
	obj, err := fn.ParseKubeObject([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
