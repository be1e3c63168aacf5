package settings

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
)

// The typed function config.
const (
	ConfigAPIVersion = "fn.flux-framework.org/v1alpha1"
	ConfigKind       = "JobSetFlux"
)

// FromFunctionConfig reads the function config (a ConfigMap or a
// JobSetFlux; nil or empty: none) and resolves it over the defaults
// (Config): the settings every JobSet starts from.
// Every value is parsed here, once, so that a bad config is reported
// against the config object and not against every JobSet.
func FromFunctionConfig(cfg *fn.KubeObject) (Settings, finding.List) {
	base := Defaults()
	layer := Layer{Kind: FromConfig, Values: map[string]Raw{}}
	var found finding.List
	if cfg == nil || cfg.IsEmpty() {
		return base, found
	}
	if found = finding.DuplicateKeys(yamltree.NodeOf(cfg)); len(found) > 0 {
		return base, found
	}
	switch {
	case cfg.GetKind() == "ConfigMap" && (cfg.GetAPIVersion() == "v1" || cfg.GetAPIVersion() == ""):
		found.Add(configMapData(cfg, layer.Values))
		if found.HasErrors() {
			return base, found
		}
	case cfg.GetKind() == ConfigKind:
		if cfg.GetAPIVersion() != ConfigAPIVersion {
			found.Errorf("apiVersion", "must be %s for kind %s, got %q", ConfigAPIVersion, ConfigKind, cfg.GetAPIVersion())
			return base, found
		}
		// The values that were read are checked below even when other
		// fields have errors, so that one run reports every mistake.
		found.Add(typedValues(cfg, layer.Values))
	default:
		found.Errorf("kind", "the function config must be a ConfigMap or a %s (%s), got apiVersion %s, kind %s", ConfigKind, ConfigAPIVersion, finding.Quote(cfg.GetAPIVersion()), finding.Quote(cfg.GetKind()))
		return base, found
	}
	s, f := Config(layer)
	found.Add(f)
	return s, found
}

// configMapData reads a ConfigMap config's data from its YAML nodes. Every
// entry must be a scalar (a string, or a number or boolean left unquoted)
// under a string key. The SDK's string-map reader is not used: it fails
// with only a line number of the whole input, and silently skips entries
// it cannot read (an anchored empty key, for one).
func configMapData(cfg *fn.KubeObject, values map[string]Raw) finding.List {
	var found finding.List
	field := cfg.CopyToResourceNode().Field("data")
	if field == nil || field.Value == nil {
		return found
	}
	data := yamltree.Deref(field.Value.YNode())
	switch {
	case data.Kind == yaml.ScalarNode && data.ShortTag() == "!!null":
		return found
	case data.Kind != yaml.MappingNode:
		found.Errorf("data", "must map setting names to string values, got %s", yamltree.Describe(data))
		return found
	}
	for i := 0; i+1 < len(data.Content); i += 2 {
		k, v := yamltree.Deref(data.Content[i]), yamltree.Deref(data.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			found.Errorf("data", "has a key that is %s, not a setting name; the keys are setting names such as port or view-image", yamltree.Describe(k))
			continue
		}
		path := "data." + k.Value
		switch {
		case v.Kind != yaml.ScalarNode:
			found.Errorf(path, "must be a string (quote numbers and booleans), got %s", yamltree.Describe(v))
		case v.ShortTag() == "!!null":
			values[k.Value] = Raw{Value: "", Path: path}
		default:
			values[k.Value] = Raw{Value: v.Value, Path: path}
		}
	}
	return found
}

// schemaMismatch starts the message of every error in the shape of a
// JobSetFlux config: krmfunction.yaml is the published contract, and
// schema_test.go proves that typedValues refuses what its schema refuses.
const schemaMismatch = ConfigKind + " does not match the schema in krmfunction.yaml: "

// typedValues reads a JobSetFlux config into raw values for the shared
// parsers, checking its shape as the schema in krmfunction.yaml declares
// it: at the top only apiVersion, kind (both checked by FromFunctionConfig),
// metadata (a map) and spec; in spec only the settings' fields, each of
// the type the settings table gives it. The schema's bounds (minimum,
// maximum, enum, maxLength, minItems, maxItems) are the limits of the
// settings' own parsers, which FromFunctionConfig runs on every value read here.
//
// No schema validator runs here: linking one would make its package
// initialisation most of the function's start-up (docs/contributing/performance.md);
// fn/deps_test.go keeps it out.
func typedValues(cfg *fn.KubeObject, values map[string]Raw) finding.List {
	var found finding.List
	// A key that is a list or a map cannot be decoded into a Go map at
	// all ("invalid map key: []interface {}{...}"): report it at its path.
	var complexKey string
	yamltree.Walk(yamltree.NodeOf(cfg), "", func(n *yaml.Node, path string) {
		for i := 0; complexKey == "" && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := yamltree.Deref(n.Content[i]); k.Kind != yaml.ScalarNode {
				complexKey = path
				found.Errorf(path, "has a key that is %s: %s fields are named by strings", yamltree.Describe(k), ConfigKind)
			}
		}
	})
	if complexKey != "" {
		return found
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(cfg.String()), &obj); err != nil {
		// The decoder's errors span lines; a result is one line.
		msg := strings.NewReplacer(":\n", ": ", "\n", "; ").Replace(err.Error())
		msg = strings.Join(strings.Fields(msg), " ")
		found.Errorf("", "cannot read the %s config: %s", ConfigKind, msg)
		return found
	}
	// JSON, which the schema describes, has no keys but strings.
	if path, bad, ok := nonStringKey(obj, ""); ok {
		found.Errorf(path, "has the key %v, which is not a string: %s fields are named by strings (quote it)", bad, ConfigKind)
		return found
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		v := obj[key]
		switch key {
		case "apiVersion", "kind":
		case "metadata":
			if _, ok := v.(map[string]any); !ok {
				found.Errorf(key, schemaMismatch+"metadata must be a map (such as {name: flux}), got %s", describe(v))
			}
		case "spec":
			found.Add(specValues(v, values))
		default:
			hint := ""
			if _, _, ok := OfField(key); ok {
				hint = fmt.Sprintf("; settings go under spec (spec.%s)", key)
			}
			found.Errorf(key, schemaMismatch+"unknown field %s; the known fields are apiVersion, kind, metadata, spec%s", finding.Quote(key), hint)
		}
	}
	return found
}

// specValues reads the fields of a JobSetFlux spec into values.
func specValues(spec any, values map[string]Raw) finding.List {
	var found finding.List
	fields, ok := spec.(map[string]any)
	if !ok {
		found.Errorf("spec", schemaMismatch+"spec must be a map of settings (such as {port: 8050}), got %s", describe(spec))
		return found
	}
	for _, field := range slices.Sorted(maps.Keys(fields)) {
		path := "spec." + field
		name, typ, known := OfField(field)
		if !known {
			found.Errorf(path, schemaMismatch+"unknown field %s; the known fields are %s", finding.Quote(field), strings.Join(Fields(), ", "))
			continue
		}
		v := fields[field]
		var raw string
		switch typ.JSON {
		case "array":
			items, ok := v.([]any)
			if !ok {
				found.Errorf(path, schemaMismatch+"%s must be a list of strings, one item each (such as [a, b]), got %s%s", field, describe(v), nullHint(v))
				continue
			}
			var bad finding.List
			raw, bad = joinItems(name, path, typ.Sep, items)
			if len(bad) > 0 {
				found.Add(bad)
				continue
			}
		default:
			if raw, ok = scalar(typ, v); !ok {
				found.Errorf(path, schemaMismatch+"%s %s, got %s%s", field, expected(typ, v), describe(v), nullHint(v))
				continue
			}
		}
		values[name] = Raw{Value: raw, Path: path}
	}
	return found
}

// joinItems joins the items of an array field with sep for the setting's
// parser, which reads the value an annotation would hold. An item that
// holds the separator or a space, or is empty, is an error: the parser
// would silently read it as two items, or as none.
func joinItems(name, path, sep string, items []any) (string, finding.List) {
	var found finding.List
	if len(items) == 0 && Check(name, "") != nil {
		found.Errorf(path, "must list at least one item; remove the field to get the default")
		return "", found
	}
	words := make([]string, len(items))
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", path, i)
		w, ok := item.(string)
		switch {
		case !ok:
			found.Errorf(at, schemaMismatch+"the items must be strings, got %s%s", describe(item), quoteHint(item))
		case w == "":
			found.Errorf(at, "must not be empty; remove the item")
		case strings.Contains(w, sep) || strings.Contains(w, " "):
			in := sep
			if !strings.Contains(w, sep) {
				in = " "
			}
			found.Errorf(at, "must be one item: %s holds %q; make each its own list item", finding.Quote(w), in)
		}
		words[i] = w
	}
	return strings.Join(words, sep), found
}

// scalar returns the raw value of a string, integer or boolean field, and
// false when v is not of that type. An integer may be written as a number
// with no fraction (8050.0, 1e3), as JSON allows, up to 2^53 like the
// schema validator.
func scalar(typ Type, v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, typ == String
	case bool:
		return strconv.FormatBool(v), typ == Boolean
	case int:
		return strconv.Itoa(v), typ == Integer
	case int64:
		return strconv.FormatInt(v, 10), typ == Integer
	case uint64:
		return strconv.FormatUint(v, 10), typ == Integer
	case float64:
		whole := v == math.Trunc(v) && math.Abs(v) <= 1<<53
		return strconv.FormatFloat(v, 'f', -1, 64), whole && typ == Integer
	}
	return "", false
}

// expected says what a field of type typ must hold and, for a value of
// another type, how to write it.
func expected(typ Type, v any) string {
	switch typ {
	case Integer:
		if _, ok := v.(string); ok {
			return "must be a whole number written without quotes"
		}
		return "must be a whole number"
	case Boolean:
		if _, ok := v.(string); ok {
			return "must be true or false, written without quotes"
		}
		return "must be true or false"
	}
	return "must be a string" + quoteHint(v)
}

// nullHint tells what to do with a field left empty (port: or port: null).
func nullHint(v any) string {
	if v == nil {
		return "; give it a value, or remove the field to get the default"
	}
	return ""
}

// quoteHint tells how to write a number, boolean or date as a string.
func quoteHint(v any) string {
	switch v.(type) {
	case bool, int, int64, uint64, float64, time.Time:
		return " (put it in quotes)"
	}
	return ""
}

// describe names a value the YAML decoder produced, for a message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + finding.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case int, int64, uint64:
		return fmt.Sprintf("the number %d", v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		// YAML reads an unquoted 2001-12-14 as a date.
		return "a date (" + v.Format(time.DateOnly) + ")"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("a value of type %T", v)
}

// nonStringKey converts the maps under v that the YAML decoder made with
// interface keys into map[string]any, in place, and returns the path and
// the first key that is not a string (null included). Keys are visited in
// order, so that the same config always gets the same error.
func nonStringKey(v any, path string) (string, any, bool) {
	_, at, bad, found := withStringKeys(v, path)
	return at, bad, found
}

// withStringKeys returns v, at field path path, with every map below it
// keyed by strings, or the path of a map and its first key that is not a
// string, in printed order.
func withStringKeys(v any, path string) (any, string, any, bool) {
	switch v := v.(type) {
	case map[any]any:
		conv := make(map[string]any, len(v))
		var bad []any
		for k, c := range v {
			if s, ok := k.(string); ok {
				conv[s] = c
			} else {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			return nil, path, slices.MinFunc(bad, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }), true
		}
		return withStringKeys(conv, path)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			at := k
			if path != "" {
				at = path + "." + k
			}
			c, p, bad, found := withStringKeys(v[k], at)
			if found {
				return nil, p, bad, true
			}
			v[k] = c
		}
	case []any:
		for i := range v {
			c, p, bad, found := withStringKeys(v[i], fmt.Sprintf("%s[%d]", path, i))
			if found {
				return nil, p, bad, true
			}
			v[i] = c
		}
	}
	return v, "", nil, false
}
