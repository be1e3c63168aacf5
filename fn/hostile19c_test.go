package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Issue 19, classes 6, 7 and 9, as hostile cases: every broker attribute
// that bootstrap, ranks or the instance's paths depend on, from a JobSet
// and from the function config; an unknown one; an error result an
// earlier function left; and every case of the main catalogue and of
// this one read from a file must be answered exactly as on stdin.
func catalogue19c(t *testing.T) []hostileCase {
	var cases []hostileCase
	for _, name := range slices.Sorted(maps.Keys(settings.RefusedBrokerAttributes)) {
		attr := strings.Replace(name, "*", "x", 1)
		cases = append(cases,
			hostileCase{name: "broker attribute " + attr, ann: map[string]string{"flux-framework.org/broker-attributes": "broker.quorum=1 " + attr + "=node-0"},
				exit: 1, scope: scopeJobSet, field: ann("broker-attributes"), phrase: "attribute " + attr + " cannot be set"},
			hostileCase{name: "broker attribute " + attr + " in the config", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {broker-attributes: \"" + attr + "=1\"}\n",
				exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data.broker-attributes", phrase: settings.RefusedBrokerAttributes[name][:30]})
	}
	return append(cases,
		hostileCase{name: "unknown broker attribute", ann: map[string]string{"flux-framework.org/broker-attributes": "broker.qourum=2"},
			exit: 1, scope: scopeJobSet, field: ann("broker-attributes"), phrase: "did you mean broker.quorum?"},
		hostileCase{name: "hostname in typed config", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {brokerAttributes: [hostname=a]}\n",
			exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.brokerAttributes", phrase: "same rank"},
	)
}

func TestHostileCatalogue19c(t *testing.T) {
	for _, c := range catalogue19c(t) {
		t.Run(c.name, func(t *testing.T) {
			in := c.input(t)
			code, stdout, stderr := runFn(t, nil, in)
			if code != c.exit {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, c.exit, stderr)
			}
			checkErrorResult(t, c, stdout, stderr)
			checkUntouched(t, c, in, stdout)
		})
	}
}

// Class 6 over both catalogues: the same input from a file and from
// stdin gives the same exit code, stdout and stderr (an input whose first
// document is not a ResourceList is plain YAML in a file, rendered as
// such: those are skipped).
func TestHostileCataloguesFromFile(t *testing.T) {
	dir := t.TempDir()
	for i, c := range append(catalogue(t), catalogue19c(t)...) {
		in := c.input(t)
		if !resourcelist.IsResourceList([]byte(in)) {
			continue // plain YAML in a file: rendered as such, by design
		}
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, fmt.Sprintf("case-%03d.yaml", i))
			if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runFn(t, nil, in)
			fcode, fout, ferrs := runFn(t, []string{file}, "")
			if fcode != code || fout != out || ferrs != errs {
				t.Errorf("from the file: exit %d, %d bytes, stderr %q\nfrom stdin:    exit %d, %d bytes, stderr %q", fcode, len(fout), ferrs, code, len(out), errs)
			}
		})
	}
}
