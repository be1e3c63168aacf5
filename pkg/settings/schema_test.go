package settings

import (
	"fmt"
	"slices"
	"testing"

	jobsetflux "github.com/jobset-flux/jobset-flux"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// schema is the JobSetFlux schema users read in krmfunction.yaml
// (config_schema_test.go holds the config reader to it).
func schema(t testing.TB) *spec.Schema {
	t.Helper()
	gvk := resid.Gvk{Group: "fn.flux-framework.org", Version: "v1alpha1", Kind: "JobSetFlux"}
	s, err := framework.SchemaFromFunctionDefinition(gvk, string(jobsetflux.FunctionDefinition))
	if err != nil {
		t.Fatalf("reading the JobSetFlux schema from krmfunction.yaml: %v", err)
	}
	return s
}

// The settings table and the schema declare the same fields, in the same
// order as README lists them, with the same types, defaults, enums and
// integer bounds.
func TestSchemaDeclaresSettingsTable(t *testing.T) {
	props := schema(t).Properties["spec"].Properties
	if len(props) != len(Fields()) {
		t.Errorf("the schema has %d spec fields, the settings table %d", len(props), len(Fields()))
	}
	for _, row := range table {
		field := row.Field
		prop, ok := props[field]
		if !ok {
			t.Errorf("krmfunction.yaml does not declare spec.%s", field)
			continue
		}
		if !prop.Type.Contains(row.Type.JSON) || len(prop.Type) != 1 {
			t.Errorf("spec.%s: the schema says %v, the settings table %s", field, prop.Type, row.Type.JSON)
		}
		if row.Type.JSON == "array" && (prop.Items == nil || prop.Items.Schema == nil || !prop.Items.Schema.Type.Contains("string")) {
			t.Errorf("spec.%s: the schema's items are not strings", field)
		}
		// The schema's default, written as an annotation would write it.
		def := ""
		if prop.Default != nil {
			def = fmt.Sprint(prop.Default)
		}
		if def != row.Default {
			t.Errorf("spec.%s: the schema's default is %q, the settings table's %q", field, def, row.Default)
		}
		var enum []string
		for _, v := range prop.Enum {
			enum = append(enum, fmt.Sprint(v))
		}
		if !slices.Equal(enum, row.rule.enum) {
			t.Errorf("spec.%s: the schema's enum is %q, the settings table's %q", field, enum, row.rule.enum)
		}
		lo, hi, bounded := row.rule.lo, row.rule.hi, row.rule.bounded
		switch {
		case bounded && (prop.Minimum == nil || prop.Maximum == nil):
			t.Errorf("spec.%s: the schema has no minimum and maximum; the settings table says %d..%d", field, lo, hi)
		case bounded && (*prop.Minimum != float64(lo) || *prop.Maximum != float64(hi)):
			t.Errorf("spec.%s: the schema says %v..%v, the settings table %d..%d", field, *prop.Minimum, *prop.Maximum, lo, hi)
		case !bounded && (prop.Minimum != nil || prop.Maximum != nil):
			t.Errorf("spec.%s: the schema has bounds, the settings table none", field)
		}
	}
}

// Only setup is shell text shipped as a file of its own: the hostile and
// fuzz tests of pkg/transform exempt it by name from the checks that
// every other accepted value is free of shell, TOML and URI syntax.
func TestOnlySetupIsVerbatim(t *testing.T) {
	for _, row := range table {
		if row.Verbatim != (row.Name == "setup") {
			t.Errorf("%s: Verbatim is %v", row.Name, row.Verbatim)
		}
	}
}
