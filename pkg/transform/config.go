package transform

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The typed function config.
const (
	ConfigAPIVersion = "fn.flux-framework.org/v1alpha1"
	ConfigKind       = "JobSetFlux"
)

// loadSchema extracts the JobSetFlux schema from the function definition.
func loadSchema(definition []byte) (*spec.Schema, error) {
	gvk := resid.Gvk{Group: "fn.flux-framework.org", Version: "v1alpha1", Kind: ConfigKind}
	schema, err := framework.SchemaFromFunctionDefinition(gvk, string(definition))
	if err != nil {
		return nil, fmt.Errorf("reading the JobSetFlux schema from krmfunction.yaml: %w", err)
	}
	return schema, nil
}

// readConfig turns the function config into the config layer of the
// settings. Every value is validated here, once, so that a bad config is
// reported against the config object and not against every JobSet.
func (p *Processor) readConfig(cfg *fn.KubeObject) (settings.Layer, finding.List) {
	layer := settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{}}
	var found finding.List
	if cfg == nil || cfg.IsEmpty() {
		return layer, found
	}
	switch {
	case cfg.GetKind() == "ConfigMap" && (cfg.GetAPIVersion() == "v1" || cfg.GetAPIVersion() == ""):
		found.Add(configMapData(cfg, layer.Values))
		if found.HasErrors() {
			return layer, found
		}
	case cfg.GetKind() == ConfigKind:
		if cfg.GetAPIVersion() != ConfigAPIVersion {
			found.Errorf("apiVersion", "must be %s for kind %s, got %q", ConfigAPIVersion, ConfigKind, cfg.GetAPIVersion())
			return layer, found
		}
		found.Add(p.validateTyped(cfg))
		if found.HasErrors() {
			return layer, found
		}
		found.Add(typedValues(cfg, layer.Values))
	default:
		found.Errorf("kind", "the function config must be a ConfigMap or a %s (%s), got %s %s", ConfigKind, ConfigAPIVersion, cfg.GetAPIVersion(), cfg.GetKind())
		return layer, found
	}
	for _, name := range slices.Sorted(maps.Keys(layer.Values)) {
		raw := layer.Values[name]
		if err := settings.Check(name, raw.Value); err != nil {
			found = append(found, finding.Finding{Severity: finding.Error, Path: raw.Path, Current: raw.Value,
				Message: fmt.Sprintf("invalid %s: %v", name, err)})
		}
	}
	return layer, found
}

// configMapData reads a ConfigMap config's data from its YAML nodes. Every
// entry must be a scalar (a string, or a number or boolean left unquoted)
// under a string key. The SDK's string-map reader is not used: it fails
// with only a line number of the whole input, and silently skips entries
// it cannot read (an anchored empty key, for one).
func configMapData(cfg *fn.KubeObject, values map[string]settings.Raw) finding.List {
	var found finding.List
	field := cfg.CopyToResourceNode().Field("data")
	if field == nil || field.Value == nil {
		return found
	}
	data := deref(field.Value.YNode())
	switch {
	case data.Kind == yaml.ScalarNode && data.ShortTag() == "!!null":
		return found
	case data.Kind != yaml.MappingNode:
		found.Errorf("data", "must map setting names to string values, got %s", nodeKind(data))
		return found
	}
	for i := 0; i+1 < len(data.Content); i += 2 {
		k, v := deref(data.Content[i]), deref(data.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			found.Errorf("data", "has a key that is %s, not a setting name; the keys are setting names such as port or view-image", nodeKind(k))
			continue
		}
		path := "data." + k.Value
		switch {
		case v.Kind != yaml.ScalarNode:
			found.Errorf(path, "must be a string (quote numbers and booleans), got %s", nodeKind(v))
		case v.ShortTag() == "!!null":
			values[k.Value] = settings.Raw{Value: "", Path: path}
		default:
			values[k.Value] = settings.Raw{Value: v.Value, Path: path}
		}
	}
	return found
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!null" {
		return "null"
	}
	return "a " + n.ShortTag()
}

// validateTyped checks a JobSetFlux object against the schema in krmfunction.yaml.
func (p *Processor) validateTyped(cfg *fn.KubeObject) finding.List {
	var found finding.List
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(cfg.String()), &obj); err != nil {
		found.Errorf("", "cannot read the %s config: %s", ConfigKind, strings.ReplaceAll(err.Error(), "\n", "; "))
		return found
	}
	// The validator expects JSON-shaped values and panics on a map the
	// YAML decoder made for keys that are not strings ({0: a}).
	if path, bad, ok := nonStringKey(obj, ""); ok {
		found.Errorf(path, "has the key %v, which is not a string: %s fields are named by strings (quote it)", bad, ConfigKind)
		return found
	}
	res := validate.NewSchemaValidator(p.schema, nil, "", strfmt.Default).Validate(obj)
	var msgs []string
	for _, e := range res.Errors {
		msgs = append(msgs, flatten(e)...)
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		path, msg, _ := strings.Cut(m, "\x00")
		found.Errorf(path, "%s does not match the schema in krmfunction.yaml: %s", ConfigKind, msg)
	}
	return found
}

// nonStringKey converts the maps under v that the YAML decoder made with
// interface keys into map[string]any, in place, and returns the path and
// the first key that is not a string (null included).
func nonStringKey(v any, path string) (string, any, bool) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if m, ok := c.(map[any]any); ok {
				conv := make(map[string]any, len(m))
				for mk, mc := range m {
					s, ok := mk.(string)
					if !ok {
						return join(k), mk, true
					}
					conv[s] = mc
				}
				v[k], c = conv, conv
			}
			if p, bad, found := nonStringKey(c, join(k)); found {
				return p, bad, true
			}
		}
	case []any:
		for i, c := range v {
			if m, ok := c.(map[any]any); ok {
				conv := make(map[string]any, len(m))
				for mk, mc := range m {
					s, ok := mk.(string)
					if !ok {
						return fmt.Sprintf("%s[%d]", path, i), mk, true
					}
					conv[s] = mc
				}
				v[i], c = conv, conv
			}
			if p, bad, found := nonStringKey(c, fmt.Sprintf("%s[%d]", path, i)); found {
				return p, bad, true
			}
		}
	}
	return "", nil, false
}

func flatten(err error) []string {
	switch e := err.(type) {
	case *errors.CompositeError:
		var out []string
		for _, inner := range e.Errors {
			out = append(out, flatten(inner)...)
		}
		return out
	case *errors.Validation:
		if key, ok := e.Value.(string); ok && e.Code() == errors.UnallowedPropertyCode {
			// The schema's message names the object, not the field, and
			// does not say which fields there are.
			path := key
			if e.Name != "" && e.Name != "." {
				path = e.Name + "." + key
			}
			return []string{path + "\x00" + fmt.Sprintf("unknown field %q; the known fields are %s", key, strings.Join(knownFields(e.Name), ", "))}
		}
		return []string{e.Name + "\x00" + e.Error()}
	}
	return []string{"\x00" + err.Error()}
}

// knownFields lists the fields the schema allows in the object at path.
func knownFields(path string) []string {
	if path != "spec" {
		return []string{"apiVersion", "kind", "metadata", "spec"}
	}
	var fields []string
	for _, name := range settings.Names() {
		fields = append(fields, settings.FieldName(name))
	}
	return fields
}

// typedValues converts the typed spec into raw strings for the shared parsers.
func typedValues(cfg *fn.KubeObject, values map[string]settings.Raw) finding.List {
	var found finding.List
	specObj, ok, err := cfg.NestedSubObject("spec")
	if err != nil || !ok {
		return found
	}
	var fields map[string]any
	if err := yaml.Unmarshal([]byte(specObj.String()), &fields); err != nil {
		found.Errorf("spec", "cannot read spec: %v", err)
		return found
	}
	for _, field := range slices.Sorted(maps.Keys(fields)) {
		name, known := settings.NameOfField(field)
		if !known {
			found.Errorf("spec."+field, "unknown field")
			continue
		}
		var raw string
		switch v := fields[field].(type) {
		case string:
			raw = v
		case bool:
			raw = strconv.FormatBool(v)
		case int:
			raw = strconv.Itoa(v)
		case int64:
			raw = strconv.FormatInt(v, 10)
		case float64:
			raw = strconv.FormatFloat(v, 'f', -1, 64)
		case []any:
			sep := ","
			if name == "run-options" {
				sep = " "
			}
			words := make([]string, len(v))
			split := false
			for i, w := range v {
				words[i] = fmt.Sprint(w)
				// The items are joined for the shared parser: an item
				// holding the separator would silently become two.
				if strings.Contains(words[i], sep) {
					found.Errorf(fmt.Sprintf("spec.%s[%d]", field, i), "must be one item: %q holds %q; make each its own list item", words[i], sep)
					split = true
				}
			}
			if split {
				continue
			}
			raw = strings.Join(words, sep)
		default:
			found.Errorf("spec."+field, "has an unsupported type %T", v)
			continue
		}
		values[name] = settings.Raw{Value: raw, Path: "spec." + field}
	}
	return found
}
